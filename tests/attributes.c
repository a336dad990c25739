/* Attribute caching on communicators.
 *
 *   - the predefined attributes of MPI_COMM_WORLD (MPI_TAG_UB, MPI_HOST,
 *     MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE, MPI_APPNUM,
 *     MPI_LASTUSEDCODE, which follows MPI_Add_error_class);
 *   - user keyvals with recording callbacks: which copy and delete callbacks
 *     run, with which communicator and value, in which order, on
 *     MPI_Comm_dup, MPI_Comm_idup, replacement, MPI_Comm_delete_attr and
 *     MPI_Comm_free; MPI_COMM_NULL_COPY_FN / MPI_COMM_DUP_FN and the MPI-1
 *     names (MPI_Keyval_create, MPI_Attr_put, ..., MPI_DUP_FN);
 *   - callbacks that fail: the dup fails and returns MPI_COMM_NULL, a failed
 *     delete keeps the attribute (and the communicator);
 *   - a keyval freed while attributes use it keeps working until they are
 *     gone;
 *   - MPI_Finalize deletes MPI_COMM_SELF's attributes first, most recent
 *     first, while MPI is still fully usable (a barrier runs in a callback),
 *     then MPI_COMM_WORLD's. Checked after MPI_Finalize returns. */
#include "test_util.h"

#ifdef MINIMPI_TAG_UB
#define MINIMPI_ONLY 1
#else
#define MINIMPI_ONLY 0
#endif

static int g_rank, g_size;

/* ---- Recording callbacks ------------------------------------------------ */

enum { kMaxEvents = 256 };
struct Event {
  char kind; /* 'c' copy, 'd' delete */
  int key;   /* test-local number of the keyval (its extra_state) */
  MPI_Comm comm;
  intptr_t value;
};
static struct Event g_events[kMaxEvents];
static int g_event_count;
static int g_fail_copy_of = -1, g_fail_delete_of = -1, g_copy_flag = 1;

static void record(char kind, int key, MPI_Comm comm, void* value) {
  CHECK(g_event_count < kMaxEvents, "too many callback events");
  g_events[g_event_count++] = (struct Event){kind, key, comm, (intptr_t)value};
}

static int copy_callback(MPI_Comm old, int keyval, void* extra, void* in,
                         void* out, int* flag) {
  (void)keyval;
  const int key = (int)(intptr_t)extra;
  record('c', key, old, in);
  if (key == g_fail_copy_of) return MPI_ERR_OTHER;
  *(void**)out = (void*)((intptr_t)in + 1000); /* the copy's value */
  *flag = g_copy_flag;
  return MPI_SUCCESS;
}

static int delete_callback(MPI_Comm comm, int keyval, void* value,
                           void* extra) {
  (void)keyval;
  const int key = (int)(intptr_t)extra;
  record('d', key, comm, value);
  return key == g_fail_delete_of ? MPI_ERR_ARG : MPI_SUCCESS;
}

/* The events as text ("c1:5 d2:7" = copy of key 1 with value 5, delete of
 * key 2 with value 7); sorted when the order is not checked. */
static void describe_events(const char* const* tokens, int count, char* out,
                            size_t room) {
  size_t used = 0;
  out[0] = '\0';
  for (int i = 0; i < count; ++i)
    used += (size_t)snprintf(out + used, room - used, "%s%s", i ? " " : "",
                             tokens[i]);
}

static int compare_strings(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* Expects the recorded events to be `expected`, all on `comm`, then
 * forgets them. MPI leaves the order of callbacks open, so only minimpi is
 * held to its order (set order for copies, reverse for deletes). */
static void expect_events(const char* expected, MPI_Comm comm,
                          const char* what) {
  char tokens[kMaxEvents][32];
  const char* got[kMaxEvents];
  for (int i = 0; i < g_event_count; ++i) {
    snprintf(tokens[i], sizeof tokens[i], "%c%d:%ld", g_events[i].kind,
             g_events[i].key, (long)g_events[i].value);
    got[i] = tokens[i];
    CHECK(g_events[i].comm == comm, "%s: callback %d got another communicator",
          what, i);
  }
  char copy[1024];
  const char* wanted[kMaxEvents];
  int wanted_count = 0;
  snprintf(copy, sizeof copy, "%s", expected);
  for (char* token = strtok(copy, " "); token != NULL;
       token = strtok(NULL, " ")) {
    wanted[wanted_count++] = token;
  }
  if (!MINIMPI_ONLY) {
    qsort(got, (size_t)g_event_count, sizeof got[0], compare_strings);
    qsort(wanted, (size_t)wanted_count, sizeof wanted[0], compare_strings);
  }
  char got_text[1024], wanted_text[1024];
  describe_events(got, g_event_count, got_text, sizeof got_text);
  describe_events(wanted, wanted_count, wanted_text, sizeof wanted_text);
  CHECK(strcmp(got_text, wanted_text) == 0,
        "%s: callbacks were \"%s\", expected \"%s\"", what, got_text,
        wanted_text);
  g_event_count = 0;
}

/* The class a failing callback's call returns: the callback's own class
 * in minimpi and MPICH; Open MPI 4.1 returns MPI_ERR_OTHER whatever the
 * callback said. */
static int callback_class(int callback_class_returned) {
#if defined(OPEN_MPI)
  (void)callback_class_returned;
  return MPI_ERR_OTHER;
#else
  return callback_class_returned;
#endif
}

/* ---- Predefined attributes ---------------------------------------------- */

static int predefined(MPI_Comm comm, int keyval, int* value) {
  int* address = NULL;
  int flag = 0;
  MPI_CHECK(MPI_Comm_get_attr(comm, keyval, &address, &flag));
  if (flag) *value = *address;
  return flag;
}

static void check_predefined(void) {
  int value = -12345;
  CHECK(predefined(MPI_COMM_WORLD, MPI_TAG_UB, &value) && value >= 32767,
        "MPI_TAG_UB missing or %d", value);
#if MINIMPI_ONLY
  CHECK(value == MINIMPI_TAG_UB, "MPI_TAG_UB is %d", value);
#endif
  CHECK(predefined(MPI_COMM_WORLD, MPI_HOST, &value) &&
            (value == MPI_PROC_NULL || (value >= 0 && value < g_size)),
        "MPI_HOST missing or %d", value);
  CHECK(predefined(MPI_COMM_WORLD, MPI_IO, &value) &&
            (value == MPI_ANY_SOURCE || value == MPI_PROC_NULL ||
             (value >= 0 && value < g_size)),
        "MPI_IO missing or %d", value);
#if MINIMPI_ONLY
  CHECK(value == g_rank, "MPI_IO is %d: every rank can do I/O", value);
  CHECK(predefined(MPI_COMM_WORLD, MPI_HOST, &value) && value == MPI_PROC_NULL,
        "MPI_HOST %d", value);
  CHECK(predefined(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &value) && value == 0,
        "MPI_WTIME_IS_GLOBAL %d", value);
  CHECK(
      predefined(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &value) && value == g_size,
      "MPI_UNIVERSE_SIZE %d", value);
  CHECK(predefined(MPI_COMM_WORLD, MPI_APPNUM, &value) && value == 0,
        "MPI_APPNUM %d", value);
  /* The same on any communicator, at the same address. */
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  int *first = NULL, *second = NULL, flag = 0;
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &first, &flag));
  MPI_CHECK(MPI_Comm_get_attr(dup, MPI_TAG_UB, &second, &flag));
  CHECK(flag && first == second && *second == MINIMPI_TAG_UB,
        "MPI_TAG_UB on a duplicate differs");
  MPI_CHECK(MPI_Comm_free(&dup));
#endif
  int last = 0;
  CHECK(predefined(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last) &&
            last >= MPI_ERR_LASTCODE,
        "MPI_LASTUSEDCODE missing or %d", last);
  int added_class, added_code;
  MPI_CHECK(MPI_Add_error_class(&added_class));
  MPI_CHECK(MPI_Add_error_code(added_class, &added_code));
#if defined(MPICH) /* MPICH 4.0 counts classes only */
  added_code = added_class;
#endif
  CHECK(predefined(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &value) &&
            value >= added_code && value >= added_class && value >= last,
        "MPI_LASTUSEDCODE %d after adding class %d and code %d", value,
        added_class, added_code);
  /* The MPI-1 name reads the same. */
  int* old_address = NULL;
  int old_flag = 0;
  MPI_CHECK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &old_address, &old_flag));
  CHECK(old_flag && *old_address >= 32767, "MPI_Attr_get(MPI_TAG_UB)");
}

/* ---- User attributes ---------------------------------------------------- */

static int new_keyval(int key, MPI_Comm_copy_attr_function* copy,
                      MPI_Comm_delete_attr_function* destroy) {
  int keyval = MPI_KEYVAL_INVALID;
  MPI_CHECK(
      MPI_Comm_create_keyval(copy, destroy, &keyval, (void*)(intptr_t)key));
  CHECK(keyval != MPI_KEYVAL_INVALID,
        "Comm_create_keyval gave MPI_KEYVAL_INVALID");
  return keyval;
}

static void expect_attribute(MPI_Comm comm, int keyval, int present,
                             intptr_t value, const char* what) {
  void* got = NULL;
  int flag = -1;
  MPI_CHECK(MPI_Comm_get_attr(comm, keyval, &got, &flag));
  CHECK(flag == present, "%s: flag %d, expected %d", what, flag, present);
  if (present)
    CHECK((intptr_t)got == value, "%s: value %ld, expected %ld", what,
          (long)got, (long)value);
}

static void check_user_attributes(void) {
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  int k[5];
  k[0] = new_keyval(0, copy_callback, delete_callback);
  k[1] = new_keyval(1, MPI_COMM_DUP_FN, delete_callback);
  k[2] = new_keyval(2, MPI_COMM_NULL_COPY_FN, delete_callback);
  k[3] = new_keyval(3, copy_callback, MPI_COMM_NULL_DELETE_FN);
  k[4] = new_keyval(4, copy_callback, delete_callback);

  expect_attribute(comm, k[0], 0, 0, "unset attribute");
  MPI_CHECK(MPI_Comm_set_attr(comm, k[3], (void*)30));
  MPI_CHECK(MPI_Comm_set_attr(comm, k[0], (void*)1));
  MPI_CHECK(MPI_Comm_set_attr(comm, k[1], (void*)10));
  MPI_CHECK(MPI_Comm_set_attr(comm, k[2], (void*)20));
  MPI_CHECK(MPI_Comm_set_attr(comm, k[0], (void*)2)); /* replaces: deletes 1 */
  expect_events("d0:1", comm, "replacing an attribute");
  expect_attribute(comm, k[0], 1, 2, "replaced attribute");
  expect_attribute(MPI_COMM_WORLD, k[0], 0, 0,
                   "the same key on another communicator");

  /* Dup: copy callbacks in the order the attributes were set (k3, k1,
   * k2, k0 -- k0 moved last when set again); NULL_COPY drops k2, DUP
   * keeps 10, user callbacks add 1000. */
  MPI_Comm copy;
  MPI_CHECK(MPI_Comm_dup(comm, &copy));
  expect_events("c3:30 c0:2", comm, "Comm_dup copy callbacks");
  expect_attribute(copy, k[3], 1, 1030, "copied by the user callback");
  expect_attribute(copy, k[0], 1, 1002, "copied by the user callback");
  expect_attribute(copy, k[1], 1, 10, "copied by MPI_COMM_DUP_FN");
  expect_attribute(copy, k[2], 0, 0, "not copied (MPI_COMM_NULL_COPY_FN)");

  /* A copy callback that says "do not copy". */
  g_copy_flag = 0;
  MPI_Comm bare;
  MPI_CHECK(MPI_Comm_dup(comm, &bare));
  g_copy_flag = 1;
  g_event_count = 0;
  expect_attribute(bare, k[0], 0, 0, "copy flag 0");
  expect_attribute(bare, k[1], 1, 10, "MPI_COMM_DUP_FN with another flag");
  MPI_Comm freed_bare = bare;
  MPI_CHECK(MPI_Comm_free(&bare));
  expect_events("d1:10", freed_bare, "freeing bare");

  /* Idup copies at once, with the same callbacks. */
  MPI_Comm idup;
  MPI_Request request;
  MPI_CHECK(MPI_Comm_idup(comm, &idup, &request));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  expect_events("c3:30 c0:2", comm, "Comm_idup copy callbacks");
  expect_attribute(idup, k[0], 1, 1002, "copied by idup");

  /* delete_attr runs the delete callback; deleting again is no error (as
   * in MPICH; Open MPI 4.1 raises MPI_ERR_OTHER). */
  MPI_CHECK(MPI_Comm_delete_attr(copy, k[0]));
  expect_events("d0:1002", copy, "Comm_delete_attr");
  expect_attribute(copy, k[0], 0, 0, "deleted attribute");
#if !defined(OPEN_MPI)
  MPI_CHECK(MPI_Comm_delete_attr(copy, k[0]));
  CHECK(g_event_count == 0, "deleting an unset attribute ran a callback");
#endif

  /* Free: delete callbacks for what is left (k3 has none). MPI leaves the
   * order open; minimpi deletes the most recently set first. */
  MPI_Comm freed = copy;
  MPI_CHECK(MPI_Comm_free(&copy));
  CHECK(copy == MPI_COMM_NULL, "Comm_free did not reset the handle");
  expect_events("d1:10", freed, "Comm_free of the copy");
  freed = idup;
  MPI_CHECK(MPI_Comm_free(&idup));
  expect_events("d0:1002 d1:10", freed, "Comm_free of the idup");

  /* Failing callbacks. */
  MPI_CHECK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  g_fail_copy_of = 0;
  MPI_Comm failed = MPI_COMM_WORLD;
  int rc = MPI_Comm_dup(comm, &failed);
  CHECK(rc != MPI_SUCCESS && test_error_class(rc) == MPI_ERR_OTHER,
        "a failing copy callback gave class %d, expected MPI_ERR_OTHER",
        test_error_class(rc));
  CHECK(failed == MPI_COMM_NULL, "a failed dup did not return MPI_COMM_NULL");
#if MINIMPI_ONLY
  /* What was copied before the failure (k3 and k1) is deleted again, most
   * recent first, on the discarded communicator: k1 runs its callback, k3
   * has the null one. */
  CHECK(g_event_count == 3 && g_events[2].kind == 'd' && g_events[2].key == 1 &&
            g_events[2].value == 10 && g_events[2].comm != comm,
        "failed dup: %d callbacks, the undo not as expected", g_event_count);
  g_event_count = 2;
  expect_events("c3:30 c0:2", comm, "failed dup");
#else
  g_event_count = 0;
#endif
  g_fail_copy_of = -1;
  g_fail_delete_of = 0;
  rc = MPI_Comm_set_attr(comm, k[0], (void*)3);
  CHECK(test_error_class(rc) == callback_class(MPI_ERR_ARG),
        "a failing delete on replacement gave class %d", test_error_class(rc));
  expect_attribute(comm, k[0], 1, 2, "attribute whose replacement failed");
  rc = MPI_Comm_delete_attr(comm, k[0]);
  CHECK(test_error_class(rc) == callback_class(MPI_ERR_ARG),
        "a failing delete_attr gave class %d", test_error_class(rc));
  expect_attribute(comm, k[0], 1, 2, "attribute whose deletion failed");
  g_event_count = 0;
#if MINIMPI_ONLY
  MPI_Comm kept = comm;
  rc = MPI_Comm_free(&comm);
  CHECK(test_error_class(rc) == callback_class(MPI_ERR_ARG) && comm == kept,
        "a failing delete in Comm_free gave class %d and %s the handle",
        test_error_class(rc), comm == kept ? "kept" : "changed");
  g_event_count = 0;
#endif
  g_fail_delete_of = -1;

  /* A freed keyval lives while an attribute uses it. */
  int short_lived = k[4];
  MPI_CHECK(MPI_Comm_set_attr(comm, k[4], (void*)44));
  MPI_CHECK(MPI_Comm_free_keyval(&k[4]));
  CHECK(k[4] == MPI_KEYVAL_INVALID,
        "Comm_free_keyval did not reset the keyval");
  MPI_Comm after;
  MPI_CHECK(MPI_Comm_dup(comm, &after));
  expect_attribute(after, short_lived, 1, 1044, "copied with a freed keyval");
  g_event_count = 0;
  MPI_CHECK(MPI_Comm_free(&after));
  g_event_count = 0;

  freed = comm;
  MPI_CHECK(MPI_Comm_free(&comm));
  /* Most recent first: k4, k0 (set again last of the rest), k2, k1; k3
   * has no delete callback. */
  expect_events("d4:44 d0:2 d2:20 d1:10", freed, "Comm_free order");
  for (int i = 0; i < 4; ++i) MPI_CHECK(MPI_Comm_free_keyval(&k[i]));
#if MINIMPI_ONLY
  /* Now it is gone: freeing it again is an error. */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  rc = MPI_Comm_free_keyval(&short_lived);
  CHECK(test_error_class(rc) == MPI_ERR_KEYVAL,
        "freeing a gone keyval gave class %d", test_error_class(rc));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
#endif
}

/* The MPI-1 names. */
static void check_mpi1_names(void) {
  int keyval, dup_keyval, flag;
  MPI_CHECK(MPI_Keyval_create(copy_callback, delete_callback, &keyval,
                              (void*)(intptr_t)7));
  MPI_CHECK(
      MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &dup_keyval, NULL));
  MPI_Comm comm, copy;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  MPI_CHECK(MPI_Attr_put(comm, keyval, (void*)70));
  MPI_CHECK(MPI_Attr_put(comm, dup_keyval, (void*)71));
  void* value = NULL;
  MPI_CHECK(MPI_Attr_get(comm, keyval, &value, &flag));
  CHECK(flag && (intptr_t)value == 70, "Attr_get gave %ld",
        (long)(intptr_t)value);
  MPI_CHECK(MPI_Comm_dup(comm, &copy));
  expect_events("c7:70", comm, "MPI-1 copy callback");
  MPI_CHECK(MPI_Attr_get(copy, dup_keyval, &value, &flag));
  CHECK(flag && (intptr_t)value == 71, "MPI_DUP_FN copy gave %ld",
        (long)(intptr_t)value);
  MPI_CHECK(MPI_Attr_delete(comm, keyval));
  expect_events("d7:70", comm, "Attr_delete");
  MPI_Comm freed = copy;
  MPI_CHECK(MPI_Comm_free(&copy));
  expect_events("d7:1070", freed, "free after MPI-1 copy");
  MPI_CHECK(MPI_Comm_free(&comm));
  MPI_CHECK(MPI_Keyval_free(&keyval));
  MPI_CHECK(MPI_Keyval_free(&dup_keyval));
  CHECK(keyval == MPI_KEYVAL_INVALID, "Keyval_free did not reset the keyval");
}

/* ---- MPI_Finalize deletes MPI_COMM_SELF's attributes first -------------- */

enum { kFinalizeKeys = 6 };
static int g_finalize_order[2 * kFinalizeKeys];
static int g_finalize_count;
static int g_finalize_problems;

static int finalize_delete(MPI_Comm comm, int keyval, void* value,
                           void* extra) {
  (void)keyval;
  (void)extra;
  const int index = (int)(intptr_t)value;
  const int on_self = index < kFinalizeKeys;
  if (comm != (on_self ? MPI_COMM_SELF : MPI_COMM_WORLD)) ++g_finalize_problems;
  /* MPI_COMM_SELF's callbacks run first thing in MPI_Finalize, with MPI
   * fully usable: a collective on the world. MPI_COMM_WORLD's come later;
   * minimpi runs them before finalizing too, other MPIs may not. */
  if (on_self || MINIMPI_ONLY) {
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (finalized) ++g_finalize_problems;
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS) ++g_finalize_problems;
  }
  if (g_finalize_count < 2 * kFinalizeKeys) {
    g_finalize_order[g_finalize_count++] = index;
  }
  return MPI_SUCCESS;
}

static void set_finalize_hooks(void) {
  /* SELF gets 0..5, WORLD 6..11; keyvals are freed at once. */
  for (int i = 0; i < 2 * kFinalizeKeys; ++i) {
    int keyval;
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_delete,
                                     &keyval, NULL));
    MPI_CHECK(
        MPI_Comm_set_attr(i < kFinalizeKeys ? MPI_COMM_SELF : MPI_COMM_WORLD,
                          keyval, (void*)(intptr_t)i));
    MPI_CHECK(MPI_Comm_free_keyval(&keyval));
  }
}

static int check_finalize_order(void) {
  int bad = g_finalize_problems;
  if (g_finalize_count != 2 * kFinalizeKeys) {
    fprintf(stderr,
            "FAIL [world rank %d]: %d delete callbacks ran in MPI_Finalize, "
            "expected %d\n",
            g_rank, g_finalize_count, 2 * kFinalizeKeys);
    return 1;
  }
  /* SELF's, most recent first (MPI-4.1 11.2.4), then WORLD's. */
  for (int i = 0; i < kFinalizeKeys; ++i)
    bad += g_finalize_order[i] != kFinalizeKeys - 1 - i;
#if MINIMPI_ONLY
  for (int i = 0; i < kFinalizeKeys; ++i)
    bad += g_finalize_order[kFinalizeKeys + i] != 2 * kFinalizeKeys - 1 - i;
#endif
  if (bad) {
    fprintf(stderr, "FAIL [world rank %d]: finalize delete callbacks ran as",
            g_rank);
    for (int i = 0; i < g_finalize_count; ++i)
      fprintf(stderr, " %d", g_finalize_order[i]);
    fprintf(stderr, " (%d problems inside them)\n", g_finalize_problems);
  }
  return bad;
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  check_predefined();
  check_user_attributes();
  check_mpi1_names();
  set_finalize_hooks();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_CHECK(MPI_Finalize());
  if (check_finalize_order()) return 1;
  if (g_rank == 0)
    printf("attributes: all checks passed at %d ranks\n", g_size);
  return 0;
}
