// The `auto` partitioned backend's rule and its calibration file, checked
// against the thresholds written by hand.
#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "mpi/part/partitioned.h"

namespace minimpi::part {
namespace {

TEST(ChooseBackendTest, ThresholdsByPlace) {
  const AutoBackendRule rule{.on_node_persist_max = 4096,
                             .between_nodes_persist_max = 1024};
  EXPECT_EQ(ChooseBackend(rule, true, 64), Backend::kPersist);
  EXPECT_EQ(ChooseBackend(rule, true, 4096), Backend::kPersist);
  EXPECT_EQ(ChooseBackend(rule, true, 4097), Backend::kNative);
  EXPECT_EQ(ChooseBackend(rule, false, 1024), Backend::kPersist);
  EXPECT_EQ(ChooseBackend(rule, false, 2048), Backend::kNative);
  EXPECT_EQ(ChooseBackend(AutoBackendRule{}, true, 0), Backend::kPersist);
  EXPECT_EQ(ChooseBackend(AutoBackendRule{}, false, 1), Backend::kNative);
}

TEST(ChooseBackendTest, NamesRoundTrip) {
  for (const char* name : kBackendNames) {
    absl::StatusOr<Backend> backend = BackendByName(name);
    ASSERT_TRUE(backend.ok()) << name;
    EXPECT_STREQ(BackendName(*backend), name);
  }
  EXPECT_FALSE(BackendByName("fast").ok());
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(::testing::TempDir()) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ReadBackendTableTest, ReadsWhatTheToolWrites) {
  absl::StatusOr<AutoBackendRule> rule = ReadBackendTable(WriteFile(
      "good.txt",
      "# made by hand\non_node_persist_max 4096\n# note\n"
      "between_nodes_persist_max 65536  # trailing comment\n"));
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->on_node_persist_max, 4096);
  EXPECT_EQ(rule->between_nodes_persist_max, 65536);
}

TEST(ReadBackendTableTest, RefusesWhatItCannotRead) {
  EXPECT_FALSE(ReadBackendTable("/nonexistent/backends.txt").ok());
  for (const char* text : {"on_node_persist_max\nbetween_nodes_persist_max 1\n",
                           "on_node_persist_max -1\nbetween_nodes_persist_max 1\n",
                           "on_node_persist_max 1 2\nbetween_nodes_persist_max 1\n",
                           "fastest 1\n", "on_node_persist_max 1\n"}) {
    absl::StatusOr<AutoBackendRule> rule =
        ReadBackendTable(WriteFile("bad.txt", text));
    EXPECT_FALSE(rule.ok()) << text;
    if (!rule.ok()) {
      EXPECT_NE(std::string(rule.status().message()).find("bad.txt"),
                std::string::npos);
    }
  }
}

}  // namespace
}  // namespace minimpi::part
