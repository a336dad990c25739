// A Bootstrap for tests that runs a "job" as N processes forked from the
// test: Put/Commit/Fence/Get go through an anonymous shared mapping created
// before fork, so no PMIx server or launcher is needed. Ranks can be placed
// on pretend nodes to exercise what happens when some ranks are off-node.
//
// Owned by: net/. Called by: transport tests and benchmarks (and any test
// that needs a multi-process job without a launcher).
#ifndef MINIMPI_NET_TESTING_FAKE_BOOTSTRAP_H_
#define MINIMPI_NET_TESTING_FAKE_BOOTSTRAP_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "runtime/bootstrap.h"

namespace minimpi::net::testing {

struct FakeJobOptions {
  int size = 2;
  // Names shared memory; empty picks one unique to this test process.
  std::string job_id;
  // node_of_rank[r] is rank r's pretend node; empty puts all on node 0.
  std::vector<int> node_of_rank;
  // The parent kills every rank and fails when they take longer.
  absl::Duration timeout = absl::Seconds(300);
};

// Key-value store and barrier shared by the ranks of one job; create it
// before fork, then give each child BootstrapFor(its rank).
class FakeJob {
 public:
  static constexpr int kMaxRanks = 256;
  static constexpr int kMaxKeysPerRank = 32;
  static constexpr size_t kMaxKeyBytes = 63;
  static constexpr size_t kMaxValueBytes = 4096;

  explicit FakeJob(FakeJobOptions options);
  ~FakeJob();
  FakeJob(const FakeJob&) = delete;
  FakeJob& operator=(const FakeJob&) = delete;

  const FakeJobOptions& options() const { return options_; }
  std::unique_ptr<runtime::Bootstrap> BootstrapFor(int rank);

 private:
  friend class FakeBootstrap;
  struct SharedState;
  FakeJobOptions options_;
  SharedState* shared_ = nullptr;
  size_t shared_bytes_ = 0;
};

// Forks options.size processes; rank r runs body(its bootstrap) and exits 0
// when body returns OK, else prints the status and exits 1. Returns OK when
// every rank succeeded; otherwise an error naming each failed rank (exit
// code or signal). If one rank fails, or the timeout passes, the others are
// killed, so a broken test never hangs; shared memory that killed ranks
// left in /dev/shm under the job's id is removed.
absl::Status RunRanks(
    const FakeJobOptions& options,
    const std::function<absl::Status(runtime::Bootstrap&)>& body);

}  // namespace minimpi::net::testing

#endif  // MINIMPI_NET_TESTING_FAKE_BOOTSTRAP_H_
