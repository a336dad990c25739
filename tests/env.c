/* The environment: Initialized/Finalized around Init and Finalize,
 * Query_thread and Is_thread_main (false on another thread), versions,
 * processor name, Wtime/Wtick, the size and extent of every predefined
 * datatype, and Error_string/Error_class of every error class.
 *
 * Usage: env [init|single|funneled|serialized|multiple|above]
 *   init (the default): MPI_Init, which provides MPI_THREAD_SINGLE, as in
 *     MPICH and Open MPI;
 *   single ... multiple: MPI_Init_thread asking for that level, which must
 *     be provided exactly (not a higher one);
 *   above: MPI_Init_thread asking for MPI_THREAD_MULTIPLE + 1, which names
 *     no level: MPI_THREAD_MULTIPLE, the highest, must be provided.
 * MPI_Query_thread must then report the same level. */
#define _POSIX_C_SOURCE 200809L

#include <complex.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>
#include <wchar.h>

#include "test_util.h"

static void check_versions(const char* when) {
  int version = -1, subversion = -1;
  MPI_CHECK(MPI_Get_version(&version, &subversion));
  CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION,
        "%s: Get_version says %d.%d, mpi.h says %d.%d", when, version, subversion, MPI_VERSION,
        MPI_SUBVERSION);
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = -1;
  memset(library, 'x', sizeof library);
  MPI_CHECK(MPI_Get_library_version(library, &length));
  /* resultlen excludes the terminating '\0' (stored at version[resultlen]);
   * Open MPI 4.1, a reference only, counts it. */
#if defined(OPEN_MPI)
  if (length > 0 && strnlen(library, sizeof library) == (size_t)length - 1) --length;
#endif
  CHECK(length > 0 && length < MPI_MAX_LIBRARY_VERSION_STRING &&
            strlen(library) == (size_t)length,
        "%s: Get_library_version length %d, string length %zu", when, length,
        strnlen(library, sizeof library));
}

static void check_init_state(int expect_initialized, int expect_finalized, const char* when) {
  int initialized = -1, finalized = -1;
  MPI_CHECK(MPI_Initialized(&initialized));
  MPI_CHECK(MPI_Finalized(&finalized));
  CHECK(initialized == expect_initialized && finalized == expect_finalized,
        "%s: Initialized %d Finalized %d, expected %d and %d", when, initialized, finalized,
        expect_initialized, expect_finalized);
}

static void* other_thread(void* result) {
  int is_main = -1;
  MPI_Is_thread_main(&is_main);
  *(int*)result = is_main;
  return NULL;
}

static void check_time(void) {
  const double tick = MPI_Wtick();
  CHECK(tick > 0.0 && tick < 1.0, "Wtick is %g, expected in (0, 1)", tick);
  double previous = MPI_Wtime();
  for (int i = 0; i < 100000; ++i) {
    const double now = MPI_Wtime();
    CHECK(now >= previous, "Wtime went backwards: %.9f after %.9f", now, previous);
    previous = now;
  }
  const double start = MPI_Wtime();
  struct timespec delay = {0, 50 * 1000000L};
  nanosleep(&delay, NULL);
  const double elapsed = MPI_Wtime() - start;
  CHECK(elapsed >= 0.045 && elapsed < 5.0, "Wtime measured %.6f s over a 50 ms sleep", elapsed);
}

typedef struct {
  MPI_Datatype type;
  const char* name;
  size_t size;
  size_t extent;
} TypeExpectation;

#define BASIC(type, c_type) {type, #type, sizeof(c_type), sizeof(c_type)}
#define PAIR(type, first, second)                                      \
  {type, #type, sizeof(first) + sizeof(second), sizeof(struct { first a; second b; })}

static void check_datatypes(void) {
  const TypeExpectation expectations[] = {
      BASIC(MPI_CHAR, char),
      BASIC(MPI_SIGNED_CHAR, signed char),
      BASIC(MPI_UNSIGNED_CHAR, unsigned char),
      BASIC(MPI_BYTE, unsigned char),
      BASIC(MPI_WCHAR, wchar_t),
      BASIC(MPI_SHORT, short),
      BASIC(MPI_UNSIGNED_SHORT, unsigned short),
      BASIC(MPI_INT, int),
      BASIC(MPI_UNSIGNED, unsigned),
      BASIC(MPI_LONG, long),
      BASIC(MPI_UNSIGNED_LONG, unsigned long),
      BASIC(MPI_LONG_LONG_INT, long long),
      BASIC(MPI_LONG_LONG, long long),
      BASIC(MPI_UNSIGNED_LONG_LONG, unsigned long long),
      BASIC(MPI_FLOAT, float),
      BASIC(MPI_DOUBLE, double),
      BASIC(MPI_LONG_DOUBLE, long double),
      BASIC(MPI_C_BOOL, _Bool),
      BASIC(MPI_INT8_T, int8_t),
      BASIC(MPI_INT16_T, int16_t),
      BASIC(MPI_INT32_T, int32_t),
      BASIC(MPI_INT64_T, int64_t),
      BASIC(MPI_UINT8_T, uint8_t),
      BASIC(MPI_UINT16_T, uint16_t),
      BASIC(MPI_UINT32_T, uint32_t),
      BASIC(MPI_UINT64_T, uint64_t),
      BASIC(MPI_AINT, MPI_Aint),
      BASIC(MPI_OFFSET, MPI_Offset),
      BASIC(MPI_COUNT, MPI_Count),
      BASIC(MPI_C_COMPLEX, float _Complex),
      BASIC(MPI_C_FLOAT_COMPLEX, float _Complex),
      BASIC(MPI_C_DOUBLE_COMPLEX, double _Complex),
      BASIC(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
      BASIC(MPI_PACKED, unsigned char),
      /* The Fortran names C programs use, with their usual C equivalents. */
      BASIC(MPI_INTEGER, int),
      BASIC(MPI_REAL, float),
      BASIC(MPI_DOUBLE_PRECISION, double),
      PAIR(MPI_FLOAT_INT, float, int),
      PAIR(MPI_DOUBLE_INT, double, int),
      PAIR(MPI_LONG_INT, long, int),
      PAIR(MPI_2INT, int, int),
      PAIR(MPI_SHORT_INT, short, int),
      PAIR(MPI_LONG_DOUBLE_INT, long double, int),
  };
  for (size_t i = 0; i < sizeof expectations / sizeof expectations[0]; ++i) {
    const TypeExpectation* e = &expectations[i];
    int size = -1;
    MPI_Aint lower_bound = -1, extent = -1;
    MPI_CHECK(MPI_Type_size(e->type, &size));
    MPI_CHECK(MPI_Type_get_extent(e->type, &lower_bound, &extent));
    CHECK((size_t)size == e->size && lower_bound == 0 && (size_t)extent == e->extent,
          "%s: size %d lb %ld extent %ld, expected size %zu lb 0 extent %zu", e->name, size,
          (long)lower_bound, (long)extent, e->size, e->extent);
  }
}

static void check_error_classes(void) {
  const struct {
    int error_class;
    const char* name;
  } classes[] = {
      {MPI_SUCCESS, "MPI_SUCCESS"},       {MPI_ERR_BUFFER, "MPI_ERR_BUFFER"},
      {MPI_ERR_COUNT, "MPI_ERR_COUNT"},   {MPI_ERR_TYPE, "MPI_ERR_TYPE"},
      {MPI_ERR_TAG, "MPI_ERR_TAG"},       {MPI_ERR_COMM, "MPI_ERR_COMM"},
      {MPI_ERR_RANK, "MPI_ERR_RANK"},     {MPI_ERR_REQUEST, "MPI_ERR_REQUEST"},
      {MPI_ERR_ROOT, "MPI_ERR_ROOT"},     {MPI_ERR_GROUP, "MPI_ERR_GROUP"},
      {MPI_ERR_OP, "MPI_ERR_OP"},         {MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY"},
      {MPI_ERR_DIMS, "MPI_ERR_DIMS"},     {MPI_ERR_ARG, "MPI_ERR_ARG"},
      {MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN"}, {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"},
      {MPI_ERR_OTHER, "MPI_ERR_OTHER"},   {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
      {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS"}, {MPI_ERR_PENDING, "MPI_ERR_PENDING"},
  };
  const int class_count = (int)(sizeof classes / sizeof classes[0]);
  for (int i = 0; i < class_count; ++i) {
    char text[MPI_MAX_ERROR_STRING];
    int length = -1, error_class = -1;
    memset(text, 0, sizeof text);
    MPI_CHECK(MPI_Error_string(classes[i].error_class, text, &length));
    CHECK(length > 0 && length < MPI_MAX_ERROR_STRING && strlen(text) == (size_t)length,
          "Error_string(%s): length %d, text \"%s\"", classes[i].name, length, text);
    MPI_CHECK(MPI_Error_class(classes[i].error_class, &error_class));
    CHECK(error_class == classes[i].error_class, "Error_class(%s) = %d, expected %d",
          classes[i].name, error_class, classes[i].error_class);
    /* Classes must be distinct values, and all below MPI_ERR_LASTCODE. */
    CHECK(classes[i].error_class <= MPI_ERR_LASTCODE, "%s = %d is above MPI_ERR_LASTCODE %d",
          classes[i].name, classes[i].error_class, MPI_ERR_LASTCODE);
    for (int j = 0; j < i; ++j)
      CHECK(classes[i].error_class != classes[j].error_class, "%s and %s have the same value %d",
            classes[i].name, classes[j].name, classes[i].error_class);
  }
}

int main(int argc, char** argv) {
  static const struct {
    const char* mode;
    int required; /* -1: MPI_Init */
    int expected;
  } kModes[] = {
      {"init", -1, MPI_THREAD_SINGLE},
      {"single", MPI_THREAD_SINGLE, MPI_THREAD_SINGLE},
      {"funneled", MPI_THREAD_FUNNELED, MPI_THREAD_FUNNELED},
      {"serialized", MPI_THREAD_SERIALIZED, MPI_THREAD_SERIALIZED},
      {"multiple", MPI_THREAD_MULTIPLE, MPI_THREAD_MULTIPLE},
      {"above", MPI_THREAD_MULTIPLE + 1, MPI_THREAD_MULTIPLE},
  };
  const char* mode = argc > 1 ? argv[1] : "init";
  int which = -1;
  for (int i = 0; i < (int)(sizeof kModes / sizeof kModes[0]); ++i)
    if (strcmp(mode, kModes[i].mode) == 0) which = i;
  CHECK(which >= 0, "unknown mode %s", mode);
  const int expected = kModes[which].expected;
  check_init_state(0, 0, "before Init");
  check_versions("before Init");
  int provided = -1;
  if (kModes[which].required < 0) {
    MPI_CHECK(MPI_Init(&argc, &argv));
    provided = expected; /* what MPI_Init gives, checked through Query_thread */
  } else {
    MPI_CHECK(MPI_Init_thread(&argc, &argv, kModes[which].required, &provided));
    CHECK(provided == expected, "%s: Init_thread(%d) provided %d, expected %d", mode,
          kModes[which].required, provided, expected);
  }
  check_init_state(1, 0, "after Init");
  int level = -1;
  MPI_CHECK(MPI_Query_thread(&level));
  CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
            MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
        "thread level constants are not ordered");
  CHECK(level == provided, "%s: Query_thread says %d, expected %d", mode, level, provided);
  int is_main = -1;
  MPI_CHECK(MPI_Is_thread_main(&is_main));
  CHECK(is_main, "Is_thread_main is false on the thread that called Init");
  /* Only these levels let another thread call MPI. */
  if (provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE) {
    pthread_t thread;
    int other_is_main = -1;
    CHECK(pthread_create(&thread, NULL, other_thread, &other_is_main) == 0, "pthread_create");
    pthread_join(thread, NULL);
    CHECK(other_is_main == 0, "Is_thread_main gave %d on another thread, expected 0",
          other_is_main);
  }
  check_versions("after Init");
  char name[MPI_MAX_PROCESSOR_NAME];
  int name_length = -1;
  memset(name, 'x', sizeof name);
  MPI_CHECK(MPI_Get_processor_name(name, &name_length));
  CHECK(name_length > 0 && name_length < MPI_MAX_PROCESSOR_NAME &&
            strlen(name) == (size_t)name_length,
        "Get_processor_name length %d, string length %zu", name_length,
        strnlen(name, sizeof name));
  check_time();
  check_datatypes();
  check_error_classes();
  test_report_pass("env", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  check_init_state(1, 1, "after Finalize");
  check_versions("after Finalize");
  return 0;
}
