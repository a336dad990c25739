// Tests of NumCores and BindToCore against what the kernel reports.

#include "runtime/topology.h"

#include <sched.h>

#include "gtest/gtest.h"

namespace minimpi::runtime {
namespace {

int AllowedCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  return CPU_COUNT(&set);
}

TEST(TopologyTest, NumCoresIsPositiveAndAtMostAllowedCpus) {
  int cores = NumCores();
  EXPECT_GE(cores, 1);
  EXPECT_LE(cores, AllowedCpuCount());
}

TEST(TopologyTest, BindToCoreShrinksAffinityToOneCore) {
  int before = AllowedCpuCount();
  int cores = NumCores();
  ASSERT_TRUE(BindToCore(0).ok());
  int after = AllowedCpuCount();
  EXPECT_GE(after, 1);
  // One core holds before/cores hardware threads (rounded up for odd
  // machines); binding must never leave more than that.
  EXPECT_LE(after, (before + cores - 1) / cores);
}

TEST(TopologyTest, BindToCoreWrapsAroundRoundRobin) {
  // A local rank beyond the core count reuses cores instead of failing.
  EXPECT_TRUE(BindToCore(NumCores() + 1).ok());
  EXPECT_GE(AllowedCpuCount(), 1);
}

TEST(TopologyTest, NegativeLocalRankIsAnError) {
  EXPECT_EQ(BindToCore(-1).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace minimpi::runtime
