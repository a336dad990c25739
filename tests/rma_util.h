/* Helpers the rma_* test programs share: byte-for-byte checks against the
 * model, the data patterns each origin writes, and window attributes. */
#ifndef MINIMPI_TESTS_RMA_UTIL_H_
#define MINIMPI_TESTS_RMA_UTIL_H_

#include "test_util.h"

/* Compares `bytes` bytes of `got` with `expected`, naming the first
 * difference; the remaining arguments are a printf-style context. */
#define RMA_CHECK_BYTES(got, expected, bytes, ...)                               \
  do {                                                                           \
    const unsigned char* rma_got_ = (const unsigned char*)(got);                 \
    const unsigned char* rma_exp_ = (const unsigned char*)(expected);            \
    size_t rma_bad_ = 0, rma_first_ = 0;                                         \
    for (size_t rma_i_ = 0; rma_i_ < (size_t)(bytes); ++rma_i_)                  \
      if (rma_got_[rma_i_] != rma_exp_[rma_i_] && rma_bad_++ == 0) rma_first_ = rma_i_; \
    if (rma_bad_ != 0) {                                                         \
      char rma_what_[512];                                                       \
      snprintf(rma_what_, sizeof rma_what_, __VA_ARGS__);                        \
      test_fail(__FILE__, __LINE__,                                              \
                "%s: %zu of %zu bytes differ from the model; first at byte %zu: " \
                "got 0x%02x, expected 0x%02x",                                   \
                rma_what_, rma_bad_, (size_t)(bytes), rma_first_,                \
                rma_got_[rma_first_], rma_exp_[rma_first_]);                     \
    }                                                                            \
  } while (0)

/* Byte `index` of the data `origin` sends to `target` in `round` of test
 * `test` (origin 9999: a window's initial content). */
static inline unsigned char rma_byte(int test, int origin, int target, int round, size_t index) {
  return test_pattern_byte(origin * 4099 + target, (test * 131 + round) * 7 + 3, index);
}

static inline void rma_fill(void* buffer, size_t bytes, int test, int origin, int target, int round) {
  unsigned char* p = (unsigned char*)buffer;
  for (size_t i = 0; i < bytes; ++i) p[i] = rma_byte(test, origin, target, round, i);
}

/* A deterministic 64-bit value for (a, b, c, d). */
static inline uint64_t rma_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return test_mix64(a * 0x9e3779b97f4a7c15ull ^ test_mix64(b + 0x632be59bd9b4e019ull) ^
                    test_mix64(c * 0x85ebca6bull + 17) ^ (d << 32 | d >> 32));
}

/* An attribute MPI returns as a pointer to int. */
static inline int int_attr(MPI_Win win, int keyval, const char* what) {
  int* value = NULL;
  int flag = 0;
  MPI_CHECK(MPI_Win_get_attr(win, keyval, &value, &flag));
  CHECK(flag && value != NULL, "%s: attribute not set", what);
  return *value;
}

#endif  /* MINIMPI_TESTS_RMA_UTIL_H_ */
