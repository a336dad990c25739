// Helpers for tests of transports, which run their ranks as forked
// processes (net/testing/fake_bootstrap.h): checks that return a status
// naming the line (gtest assertions in a forked rank would not reach the
// parent), a completion handler from a lambda, patterned data that catches
// shifted, torn or stale bytes, and the exchange of a registered buffer.
//
// Owned by: net/. Called by: the conformance suite and each transport's own
// tests.
#ifndef MINIMPI_NET_TESTING_TRANSPORT_CHECKS_H_
#define MINIMPI_NET_TESTING_TRANSPORT_CHECKS_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "net/transport.h"
#include "runtime/bootstrap.h"

// In a forked rank, gtest assertions would not reach the parent: checks
// return a status that names the line instead.
#define RETURN_IF_FALSE(condition, ...)                           \
  do {                                                            \
    if (!(condition)) {                                           \
      return absl::InternalError(                                 \
          absl::StrCat(__FILE__, ":", __LINE__, ": ", #condition, \
                       " failed. " __VA_OPT__(, ) __VA_ARGS__));  \
    }                                                             \
  } while (0)

#define RETURN_IF_ERROR(expression)      \
  do {                                   \
    absl::Status status_ = (expression); \
    if (!status_.ok()) return status_;   \
  } while (0)

namespace minimpi::net::testing {

// Calls `function` for each completion Poll hands out.
class FunctionHandler : public CompletionHandler {
 public:
  explicit FunctionHandler(std::function<void(int, const Completion&)> f)
      : function_(std::move(f)) {}
  void OnCompletion(int vci, const Completion& completion) override {
    function_(vci, completion);
  }

 private:
  std::function<void(int, const Completion&)> function_;
};

// A 64-bit mixer (splitmix64's finalizer), for seeds and patterns.
inline uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Byte i of a message or buffer identified by `seed`: every 8-byte block
// differs, so shifted, swapped, torn or stale data is caught.
inline uint8_t PatternByte(uint64_t seed, size_t i) {
  return static_cast<uint8_t>(Mix(seed ^ (i / 8) * 0x100000001B3ULL) >>
                              ((i % 8) * 8));
}

inline void FillPattern(uint64_t seed, uint8_t* data, size_t length) {
  for (size_t i = 0; i < length; ++i) data[i] = PatternByte(seed, i);
}

// Offset of the first wrong byte, or -1.
inline int64_t FirstMismatch(uint64_t seed, const uint8_t* data,
                             size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (data[i] != PatternByte(seed, i)) return static_cast<int64_t>(i);
  }
  return -1;
}

// Every rank publishes a registered buffer under `key` (collective: a
// fence); returns where rank `from`'s is.
inline absl::StatusOr<RemoteBuffer> ExchangeBuffer(
    runtime::Bootstrap& bootstrap, const std::string& key, const void* address,
    const MemoryRegion& region, int from) {
  absl::Status status =
      bootstrap.Put(key, absl::StrCat(reinterpret_cast<uint64_t>(address), " ",
                                      region.remote_key));
  if (status.ok()) status = bootstrap.Commit();
  if (status.ok()) status = bootstrap.Fence();
  if (!status.ok()) return status;
  absl::StatusOr<std::string> text = bootstrap.Get(from, key);
  if (!text.ok()) return text.status();
  unsigned long long remote_address = 0;
  unsigned remote_key = 0;
  if (std::sscanf(text->c_str(), "%llu %u", &remote_address, &remote_key) !=
      2) {
    return absl::InternalError(absl::StrCat("malformed buffer '", *text, "'"));
  }
  return RemoteBuffer{remote_address, remote_key};
}

}  // namespace minimpi::net::testing

#endif  // MINIMPI_NET_TESTING_TRANSPORT_CHECKS_H_
