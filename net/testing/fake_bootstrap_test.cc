#include "net/testing/fake_bootstrap.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace minimpi::net::testing {
namespace {

TEST(FakeBootstrapTest, ExchangesKeysAcrossFences) {
  FakeJobOptions options;
  options.size = 4;
  absl::Status status = RunRanks(options, [](runtime::Bootstrap& boot) {
    for (int round = 0; round < 3; ++round) {
      absl::Status s =
          boot.Put("key", absl::StrCat("rank", boot.rank(), "round", round));
      if (s.ok()) s = boot.Commit();
      if (s.ok()) s = boot.Fence();
      if (!s.ok()) return s;
      for (int peer = 0; peer < boot.size(); ++peer) {
        absl::StatusOr<std::string> value = boot.Get(peer, "key");
        if (!value.ok()) return value.status();
        if (*value != absl::StrCat("rank", peer, "round", round)) {
          return absl::InternalError(absl::StrCat("got ", *value));
        }
      }
      // Nobody overwrites "key" before everyone has read it.
      s = boot.Fence();
      if (!s.ok()) return s;
    }
    if (boot.Get(0, "missing").ok()) return absl::InternalError("missing");
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST(FakeBootstrapTest, PlacesRanksOnPretendNodes) {
  FakeJobOptions options;
  options.size = 4;
  options.node_of_rank = {0, 1, 0, 1};
  absl::Status status = RunRanks(options, [](runtime::Bootstrap& boot) {
    const std::vector<int> expected =
        boot.rank() % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3};
    if (boot.local_ranks() != expected || boot.local_rank() != boot.rank() / 2)
      return absl::InternalError("wrong local ranks");
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// The harness itself must be able to fail: a failing rank is reported, and
// the ranks left waiting in a fence for it are killed instead of hanging.
TEST(FakeBootstrapTest, ReportsFailedRankAndKillsTheRest) {
  FakeJobOptions options;
  options.size = 3;
  absl::Status status = RunRanks(options, [](runtime::Bootstrap& boot) {
    if (boot.rank() == 1) return absl::InternalError("deliberate");
    return boot.Fence();  // never completes: rank 1 is gone
  });
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("rank 1 exited with code 1"),
            std::string::npos)
      << status;
}

}  // namespace
}  // namespace minimpi::net::testing
