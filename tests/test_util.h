/* Helpers shared by the multi-rank test programs.
 *
 * Every check names the failing rank, the source line and what was expected,
 * then aborts the whole job, so a failure can never be mistaken for success
 * and never leaves the other ranks hanging.  Kept C11 (and C++-compatible)
 * so the C programs prove mpi.h is C-clean. */
#ifndef MINIMPI_TESTS_TEST_UTIL_H_
#define MINIMPI_TESTS_TEST_UTIL_H_

#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline int test_world_rank(void) {
  int initialized = 0, finalized = 0, rank = -1;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

static inline void test_fail(const char* file, int line, const char* fmt, ...) {
  char message[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  fprintf(stderr, "FAIL [rank %d] %s:%d: %s\n", test_world_rank(), file, line,
          message);
  fflush(stderr);
  fflush(stdout);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

/* CHECK(condition, printf-style explanation of what was wrong). */
#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) test_fail(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

/* Checks that an MPI call succeeded and names the call on failure. */
#define MPI_CHECK(call)                                                  \
  do {                                                                   \
    int mpi_check_rc_ = (call);                                          \
    if (mpi_check_rc_ != MPI_SUCCESS) {                                  \
      char mpi_check_text_[MPI_MAX_ERROR_STRING];                        \
      int mpi_check_len_ = 0;                                            \
      mpi_check_text_[0] = '\0';                                         \
      MPI_Error_string(mpi_check_rc_, mpi_check_text_, &mpi_check_len_); \
      test_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call,        \
                mpi_check_rc_, mpi_check_text_);                         \
    }                                                                    \
  } while (0)

/* The error class of a code an MPI call returned (MPI_SUCCESS for success). */
static inline int test_error_class(int code) {
  int error_class = -1;
  if (code == MPI_SUCCESS) return MPI_SUCCESS;
  MPI_CHECK(MPI_Error_class(code, &error_class));
  return error_class;
}

/* Checks that `call` returns an error of class `expected` (MPI_SUCCESS for
 * none), naming the call and the library's message on failure. */
#define CHECK_ERROR_CLASS(call, expected)                                     \
  do {                                                                        \
    const int expect_code_ = (call);                                          \
    const int expect_class_ = test_error_class(expect_code_);                 \
    char expect_text_[MPI_MAX_ERROR_STRING] = "";                             \
    int expect_len_ = 0;                                                      \
    if (expect_code_ != MPI_SUCCESS)                                          \
      MPI_Error_string(expect_code_, expect_text_, &expect_len_);             \
    CHECK(expect_class_ == (expected),                                        \
          "%s returned class %d (%s), expected %s (%d)", #call, expect_class_, \
          expect_text_, #expected, (expected));                               \
  } while (0)

/* Expected content of byte `index` of a message from `source` with `tag`.
 * Mixing the high bits of the index in keeps the pattern from repeating
 * every 256 bytes, so a misplaced chunk of a large message is caught too. */
static inline unsigned char test_pattern_byte(int source, int tag,
                                              size_t index) {
  uint32_t x = (uint32_t)source * 2654435761u ^ (uint32_t)tag * 40503u ^
               (uint32_t)index ^ (uint32_t)(index >> 8) * 131u ^
               (uint32_t)(index >> 16) * 17u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return (unsigned char)x;
}

static inline void test_fill(void* buffer, size_t bytes, int source, int tag) {
  unsigned char* p = (unsigned char*)buffer;
  for (size_t i = 0; i < bytes; ++i) p[i] = test_pattern_byte(source, tag, i);
}

/* Verifies every byte; reports the first mismatch and how many differ. */
#define CHECK_PATTERN(buffer, bytes, source, tag, what)                      \
  do {                                                                       \
    const unsigned char* check_p_ = (const unsigned char*)(buffer);          \
    size_t check_bad_ = 0, check_first_ = 0;                                 \
    for (size_t check_i_ = 0; check_i_ < (size_t)(bytes); ++check_i_) {      \
      if (check_p_[check_i_] !=                                              \
          test_pattern_byte((source), (tag), check_i_)) {                    \
        if (check_bad_++ == 0) check_first_ = check_i_;                      \
      }                                                                      \
    }                                                                        \
    if (check_bad_ != 0)                                                     \
      test_fail(__FILE__, __LINE__,                                          \
                "%s: %zu of %zu bytes wrong (from source %d tag %d); first " \
                "at byte %zu: got 0x%02x, expected 0x%02x",                  \
                (what), check_bad_, (size_t)(bytes), (int)(source),          \
                (int)(tag), check_first_, check_p_[check_first_],            \
                test_pattern_byte((source), (tag), check_first_));           \
  } while (0)

/* Checks a status field by field, and the element count in `datatype`. */
#define CHECK_STATUS(status, source, tag, datatype, count, what)             \
  do {                                                                       \
    int check_count_ = -12345;                                               \
    MPI_Get_count(&(status), (datatype), &check_count_);                     \
    CHECK((status).MPI_SOURCE == (source) && (status).MPI_TAG == (tag) &&    \
              check_count_ == (count),                                       \
          "%s: status source %d tag %d count %d, expected source %d tag %d " \
          "count %d",                                                        \
          (what), (status).MPI_SOURCE, (status).MPI_TAG, check_count_,       \
          (int)(source), (int)(tag), (int)(count));                          \
  } while (0)

static inline void* test_malloc(size_t bytes) {
  void* p = malloc(bytes ? bytes : 1);
  if (p == NULL) {
    fprintf(stderr, "FAIL: out of memory allocating %zu bytes\n", bytes);
    exit(1);
  }
  return p;
}

/* Prints one line from rank 0 so a passing run says what it covered. */
static inline void test_report_pass(const char* program, MPI_Comm comm) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank == 0) printf("%s: all checks passed at %d ranks\n", program, size);
  fflush(stdout);
}

/* A small deterministic random generator (splitmix64), for orders and
 * choices both ranks of a test can agree on from one seed. */
static inline uint64_t test_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

typedef struct {
  uint64_t state;
} TestRng;

static inline uint64_t test_rng_next(TestRng* rng) {
  rng->state += 0x9e3779b97f4a7c15ull;
  return test_mix64(rng->state);
}

/* Uniform in [0, n); 0 when n <= 1. */
static inline int test_rng_below(TestRng* rng, int n) {
  return n <= 1 ? 0 : (int)(test_rng_next(rng) % (uint64_t)n);
}

/* The main of a program whose feature the MPI library lacks (an MPI-3
 * library has no partitioned communication, say): it says the program was
 * skipped and passes, so cross-checks against other MPIs still build. */
#define TEST_SKIPPED_MAIN(program, reason)                          \
  int main(int argc, char** argv) {                                 \
    MPI_Init(&argc, &argv);                                         \
    if (test_world_rank() == 0) {                                   \
      printf("%s: skipped: %s\n", program, reason);                 \
    }                                                               \
    MPI_Finalize();                                                 \
    return 0;                                                       \
  }

#ifdef __cplusplus
}
#endif

#endif /* MINIMPI_TESTS_TEST_UTIL_H_ */
