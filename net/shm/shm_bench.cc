// Microbenchmark of net/shm between two forked processes (not a test):
// one-way latency of small ring messages (half a ping-pong round trip) and
// single-copy RdmaRead bandwidth next to a plain memcpy of the same size.
//
// Usage: shm_bench [iterations of the ping-pong, default 200000]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "net/testing/fake_bootstrap.h"
#include "net/transport.h"
#include "runtime/settings.h"

namespace minimpi::net {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class CountingHandler : public CompletionHandler {
 public:
  void OnCompletion(int, const Completion&) override { ++count; }
  int count = 0;
};

void WaitFor(Transport& transport, CountingHandler& handler, int target) {
  while (handler.count < target) transport.Poll(0, handler, 16);
}

absl::Status PingPong(Transport& transport, int me, int iterations,
                      size_t bytes) {
  std::vector<char> message(bytes, 'x');
  const int peer = 1 - me;
  CountingHandler handler;
  auto send = [&] {
    while (transport.Send(0, {peer, 0}, message.data(), bytes, nullptr, 0) ==
           PostResult::kRetry) {
      transport.Poll(0, handler, 16);
    }
  };
  const int warmup = iterations / 10;
  Clock::time_point start;
  for (int i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) start = Clock::now();
    if (me == 0) {
      send();
      WaitFor(transport, handler, i + 1);
    } else {
      WaitFor(transport, handler, i + 1);
      send();
    }
  }
  if (me == 0) {
    std::printf("ring one-way latency, %zu B: %.3f us (half round trip)\n",
                bytes, SecondsSince(start) / iterations / 2 * 1e6);
  }
  return absl::OkStatus();
}

absl::Status ReadBandwidth(Transport& transport, runtime::Bootstrap& boot,
                           size_t bytes, int iterations) {
  const int me = boot.rank();
  std::vector<char> source(bytes, static_cast<char>(me + 1));
  std::vector<char> target(bytes, 0);
  absl::StatusOr<MemoryRegion> region =
      transport.RegisterMemory(target.data(), bytes);
  if (!region.ok()) return region.status();
  absl::Status status = boot.Put(
      "bench", absl::StrCat(reinterpret_cast<uint64_t>(source.data())));
  if (status.ok()) status = boot.Commit();
  if (status.ok()) status = boot.Fence();
  if (!status.ok()) return status;
  if (me == 0) {
    absl::StatusOr<std::string> peer = boot.Get(1, "bench");
    if (!peer.ok()) return peer.status();
    const uint64_t address = std::strtoull(peer->c_str(), nullptr, 10);
    CountingHandler handler;
    Clock::time_point start = Clock::now();
    for (int i = 0; i < iterations; ++i) {
      transport.RdmaRead(0, {1, 0}, target.data(), *region, RemoteBuffer{address, 0},
                         bytes, i);
      WaitFor(transport, handler, i + 1);
    }
    const double cma = SecondsSince(start);
    if (target[bytes - 1] != 2) return absl::InternalError("wrong data");
    start = Clock::now();
    for (int i = 0; i < iterations; ++i) {
      std::memcpy(target.data(), source.data(), bytes);
      asm volatile("" ::: "memory");  // keep every copy
    }
    const double copy = SecondsSince(start);
    std::printf(
        "RdmaRead (CMA) %zu KiB: %.2f GB/s; memcpy in one process: %.2f "
        "GB/s; ratio %.2f\n",
        bytes >> 10, bytes * double(iterations) / cma / 1e9,
        bytes * double(iterations) / copy / 1e9, copy / cma);
  }
  return boot.Fence();
}

}  // namespace
}  // namespace minimpi::net

int main(int argc, char** argv) {
  using namespace minimpi;
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 200000;
  net::testing::FakeJobOptions options;
  options.size = 2;
  absl::Status status = net::testing::RunRanks(
      options, [&](runtime::Bootstrap& boot) -> absl::Status {
        runtime::Settings settings;
        settings.transport = "shm";
        settings.num_vcis = 1;
        absl::StatusOr<std::unique_ptr<net::Transport>> transport =
            net::CreateTransport(boot, settings);
        if (!transport.ok()) return transport.status();
        for (size_t bytes : {8, 1024}) {
          absl::Status s =
              net::PingPong(**transport, boot.rank(), iterations, bytes);
          if (!s.ok()) return s;
          s = boot.Fence();
          if (!s.ok()) return s;
        }
        absl::Status s = net::ReadBandwidth(**transport, boot, 1 << 20, 2000);
        if (s.ok()) s = net::ReadBandwidth(**transport, boot, 64 << 20, 30);
        return s;
      });
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
