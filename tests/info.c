/* Info objects, against a reference list of (key, value) pairs kept here:
 *
 *   - used before MPI_Init and after MPI_Finalize (MPI-4 allows it), and
 *     objects made before MPI_Init stay valid through it;
 *   - set, replace (the key keeps its place), get, get_valuelen,
 *     get_string, delete, dup, get_nkeys and get_nthkey in random sequences;
 *   - truncation: MPI_Info_get's valuelen excludes the terminator,
 *     MPI_Info_get_string's buflen includes it and reports what the value
 *     needs; keys and values at the length limits;
 *   - MPI_INFO_ENV and MPI_Info_create_env: the host, working directory,
 *     command and arguments of this process, the thread level, and the job
 *     size as maxprocs.
 *
 * Usage: info [extra arguments, echoed back by MPI_Info_create_env] */
#include <unistd.h>

#include "test_util.h"

#ifdef MINIMPI_TAG_UB
#define MINIMPI_ONLY 1
#else
#define MINIMPI_ONLY 0
#endif

enum { kKeys = 12, kSteps = 3000 };

struct Reference {
  int count;
  char keys[kKeys][32];
  char values[kKeys][64];
};

static int find(const struct Reference* reference, const char* key) {
  for (int i = 0; i < reference->count; ++i)
    if (strcmp(reference->keys[i], key) == 0) return i;
  return -1;
}

static unsigned g_seed = 99;
static unsigned next_random(void) {
  g_seed = g_seed * 1103515245u + 12345u;
  return (g_seed >> 8) & 0xffffff;
}

/* Checks `info` holds exactly the reference, in order. */
static void check_against(MPI_Info info, const struct Reference* reference,
                          const char* what) {
  int nkeys = -1;
  MPI_CHECK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == reference->count, "%s: %d keys, expected %d", what, nkeys,
        reference->count);
  for (int i = 0; i < reference->count; ++i) {
    char key[MPI_MAX_INFO_KEY];
    MPI_CHECK(MPI_Info_get_nthkey(info, i, key));
    CHECK(strcmp(key, reference->keys[i]) == 0,
          "%s: key %d is \"%s\", expected \"%s\"", what, i, key,
          reference->keys[i]);
    char value[MPI_MAX_INFO_VAL];
    int flag = 0, length = -1;
    MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, value, &flag));
    CHECK(flag && strcmp(value, reference->values[i]) == 0,
          "%s: value of %s is \"%s\", expected \"%s\"", what, key, value,
          reference->values[i]);
    MPI_CHECK(MPI_Info_get_valuelen(info, key, &length, &flag));
    CHECK(flag && length == (int)strlen(reference->values[i]),
          "%s: valuelen of %s is %d", what, key, length);
  }
}

static void random_operations(MPI_Info info, struct Reference* reference,
                              int steps) {
  for (int step = 0; step < steps; ++step) {
    char key[32], value[64];
    snprintf(key, sizeof key, "key_%u", next_random() % kKeys);
    snprintf(value, sizeof value, "value %u", next_random());
    const int at = find(reference, key);
    int flag = -1;
    char got[MPI_MAX_INFO_VAL];
    switch (next_random() % 4) {
      case 0:
      case 1:
        MPI_CHECK(MPI_Info_set(info, key, value));
        if (at >= 0) {
          strcpy(reference->values[at], value);
        } else {
          strcpy(reference->keys[reference->count], key);
          strcpy(reference->values[reference->count++], value);
        }
        break;
      case 2:
        if (at < 0) break; /* deleting a missing key is an error */
        MPI_CHECK(MPI_Info_delete(info, key));
        for (int i = at; i + 1 < reference->count; ++i) {
          strcpy(reference->keys[i], reference->keys[i + 1]);
          strcpy(reference->values[i], reference->values[i + 1]);
        }
        --reference->count;
        break;
      default:
        MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, got, &flag));
        CHECK(flag == (at >= 0), "Info_get(%s): flag %d", key, flag);
        if (flag)
          CHECK(strcmp(got, reference->values[at]) == 0, "Info_get(%s) = %s",
                key, got);
    }
  }
}

/* What an info object made before MPI_Init, used across it, holds. */
static struct Reference g_early_reference;

static void check_truncation(void) {
  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));
  MPI_CHECK(MPI_Info_set(info, "k", "0123456789"));
  char value[32];
  int flag = 0;
  /* valuelen excludes the terminator: 4 characters and a '\0'. (MPICH
   * 4.0 refuses a short valuelen instead of truncating.) */
#if !defined(MPICH)
  memset(value, 'X', sizeof value);
  MPI_CHECK(MPI_Info_get(info, "k", 4, value, &flag));
  CHECK(flag && strcmp(value, "0123") == 0 && value[5] == 'X',
        "Info_get with valuelen 4 gave \"%s\"", value);
#endif
  MPI_CHECK(MPI_Info_get(info, "missing", 4, value, &flag));
  CHECK(!flag, "Info_get of a missing key set the flag");
#if MPI_VERSION >= 4
  /* buflen includes the terminator and returns what the value needs. */
  int buflen = 5;
  memset(value, 'X', sizeof value);
  MPI_CHECK(MPI_Info_get_string(info, "k", &buflen, value, &flag));
  CHECK(flag && buflen == 11 && strcmp(value, "0123") == 0 && value[5] == 'X',
        "Info_get_string with buflen 5: flag %d buflen %d value \"%s\"", flag,
        buflen, value);
  buflen = 0;
  MPI_CHECK(MPI_Info_get_string(info, "k", &buflen, value, &flag));
  CHECK(flag && buflen == 11, "Info_get_string with buflen 0: buflen %d",
        buflen);
  buflen = 32;
  MPI_CHECK(MPI_Info_get_string(info, "k", &buflen, value, &flag));
  CHECK(flag && buflen == 11 && strcmp(value, "0123456789") == 0,
        "Info_get_string whole: buflen %d value \"%s\"", buflen, value);
  buflen = 32;
  MPI_CHECK(MPI_Info_get_string(info, "missing", &buflen, value, &flag));
  CHECK(!flag && buflen == 32,
        "Info_get_string of a missing key: flag %d buflen %d", flag, buflen);
#endif
  /* The longest key and value there is room for. */
  char key[MPI_MAX_INFO_KEY];
  memset(key, 'k', sizeof key - 1);
  key[sizeof key - 1] = '\0';
  char* long_value = (char*)test_malloc(MPI_MAX_INFO_VAL);
  memset(long_value, 'v', MPI_MAX_INFO_VAL - 1);
  long_value[MPI_MAX_INFO_VAL - 1] = '\0';
  MPI_CHECK(MPI_Info_set(info, key, long_value));
  char* got = (char*)test_malloc(MPI_MAX_INFO_VAL);
  MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, got, &flag));
  CHECK(flag && strcmp(got, long_value) == 0,
        "the longest value did not round-trip");
  char nth[MPI_MAX_INFO_KEY];
  MPI_CHECK(MPI_Info_get_nthkey(info, 1, nth));
  CHECK(strcmp(nth, key) == 0, "the longest key did not round-trip");
  free(long_value);
  free(got);
  MPI_CHECK(MPI_Info_free(&info));
  CHECK(info == MPI_INFO_NULL, "Info_free did not reset the handle");
}

static int env_value(MPI_Info info, const char* key, char* value) {
  int flag = 0;
  MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, value, &flag));
  return flag;
}

static void check_environment(int argc, char** argv, int size) {
  char value[MPI_MAX_INFO_VAL], expected[MPI_MAX_INFO_VAL];
  MPI_Info env = MPI_INFO_ENV;
#if MINIMPI_ONLY
  int length;
  MPI_CHECK(MPI_Get_processor_name(expected, &length));
  CHECK(env_value(env, "host", value) && strcmp(value, expected) == 0,
        "MPI_INFO_ENV host \"%s\", expected \"%s\"", value, expected);
  CHECK(getcwd(expected, sizeof expected) != NULL, "getcwd failed");
  CHECK(env_value(env, "wdir", value) && strcmp(value, expected) == 0,
        "MPI_INFO_ENV wdir \"%s\", expected \"%s\"", value, expected);
  CHECK(env_value(env, "thread_level", value) &&
            strcmp(value, "MPI_THREAD_MULTIPLE") == 0,
        "MPI_INFO_ENV thread_level \"%s\"", value);
  snprintf(expected, sizeof expected, "%d", size);
  CHECK(env_value(env, "maxprocs", value) && strcmp(value, expected) == 0,
        "MPI_INFO_ENV maxprocs \"%s\", expected %d", value, size);
  CHECK(env_value(env, "command", value) && strcmp(value, argv[0]) == 0,
        "MPI_INFO_ENV command \"%s\", expected \"%s\"", value, argv[0]);
#else
  (void)size;
  (void)expected;
#endif
  MPI_Info copy;
  MPI_CHECK(MPI_Info_dup(MPI_INFO_ENV, &copy));
  int nkeys = -1, env_keys = -2;
  MPI_CHECK(MPI_Info_get_nkeys(copy, &nkeys));
  MPI_CHECK(MPI_Info_get_nkeys(env, &env_keys));
  CHECK(nkeys == env_keys, "dup of MPI_INFO_ENV has %d keys, it has %d", nkeys,
        env_keys);
  MPI_CHECK(MPI_Info_free(&copy));
#if MPI_VERSION >= 4
  /* MPI_Info_create_env: command and arguments as given. */
  MPI_Info created;
  MPI_CHECK(MPI_Info_create_env(argc, argv, &created));
  if (env_value(created, "command", value))
    CHECK(strcmp(value, argv[0]) == 0, "Info_create_env command \"%s\"", value);
#if MINIMPI_ONLY
  size_t used = 0;
  expected[0] = '\0';
  for (int i = 1; i < argc; ++i)
    used += (size_t)snprintf(expected + used, sizeof expected - used, "%s%s",
                             i > 1 ? " " : "", argv[i]);
  CHECK(env_value(created, "argv", value) && strcmp(value, expected) == 0,
        "Info_create_env argv \"%s\", expected \"%s\"", value, expected);
#endif
  MPI_CHECK(MPI_Info_free(&created));
#else
  (void)argc;
#endif
}

int main(int argc, char** argv) {
  /* Before MPI_Init (allowed since MPI-4.0). */
  MPI_Info early;
#if MPI_VERSION >= 4
  MPI_CHECK(MPI_Info_create(&early));
  random_operations(early, &g_early_reference, kSteps);
  check_against(early, &g_early_reference, "info made before MPI_Init");
  MPI_Info early_env;
  MPI_CHECK(MPI_Info_create_env(argc, argv, &early_env));
#endif

  MPI_CHECK(MPI_Init(&argc, &argv));
#if MPI_VERSION < 4
  MPI_CHECK(MPI_Info_create(&early));
#endif
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  g_seed += (unsigned)rank;
  check_against(early, &g_early_reference,
                "info made before MPI_Init, after it");
  random_operations(early, &g_early_reference, kSteps);
  check_against(early, &g_early_reference, "info after random operations");
  MPI_Info copy;
  MPI_CHECK(MPI_Info_dup(early, &copy));
  check_against(copy, &g_early_reference, "Info_dup");
  struct Reference copy_reference = g_early_reference;
  random_operations(copy, &copy_reference, 500);
  check_against(early, &g_early_reference, "original after changing its dup");
  check_against(copy, &copy_reference, "dup after changing it");
  MPI_CHECK(MPI_Info_free(&copy));
  check_truncation();
  check_environment(argc, argv, size);
#if MPI_VERSION >= 4
  /* Made before MPI_Init, the same as made after (MINIMPI leaves maxprocs
   * out of both). */
  MPI_Info late_env;
  MPI_CHECK(MPI_Info_create_env(argc, argv, &late_env));
  int early_keys, late_keys;
  MPI_CHECK(MPI_Info_get_nkeys(early_env, &early_keys));
  MPI_CHECK(MPI_Info_get_nkeys(late_env, &late_keys));
  CHECK(early_keys == late_keys,
        "Info_create_env: %d keys before MPI_Init, %d after", early_keys,
        late_keys);
  MPI_CHECK(MPI_Info_free(&late_env));
  MPI_CHECK(MPI_Info_free(&early_env));
#endif
#if MPI_VERSION < 4
  MPI_CHECK(MPI_Info_free(&early));
#endif
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("info", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());

#if MPI_VERSION >= 4
  /* After MPI_Finalize. */
  random_operations(early, &g_early_reference, kSteps);
  check_against(early, &g_early_reference, "info after MPI_Finalize");
  MPI_CHECK(MPI_Info_free(&early));
#endif
  return 0;
}
