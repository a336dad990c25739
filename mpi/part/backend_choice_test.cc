// The `auto` partitioned backend's rule and its calibration file, checked
// against the thresholds written by hand.
#include "mpi/part/backend_choice.h"

#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

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

// Every entry's name gives its backend and back, and an unknown name is an
// error that lists the table's names (mpi/instance/choice_lists_test.cc
// checks the names are unique and that the settings take them).
TEST(ChooseBackendTest, EveryTableEntryRoundTrips) {
  std::set<Backend> backends;
  for (const BackendChoice& choice : kBackends) {
    EXPECT_TRUE(backends.insert(choice.backend).second) << choice.name;
    absl::StatusOr<Backend> backend = BackendByName(choice.name);
    ASSERT_TRUE(backend.ok()) << choice.name;
    EXPECT_EQ(*backend, choice.backend);
    EXPECT_STREQ(BackendName(*backend), choice.name);
  }
  absl::StatusOr<Backend> unknown = BackendByName("fast");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "unknown partitioned backend \"fast\" (one of: " +
                absl::StrJoin(BackendNames(), ", ") + ")");
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = std::string(::testing::TempDir()) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ReadBackendTableTest, ReadsWhatTheToolWrites) {
  absl::StatusOr<AutoBackendRule> rule = ReadBackendTable(
      WriteFile("good.txt",
                "# made by hand\non_node_persist_max 4096\n# note\n"
                "between_nodes_persist_max 65536  # trailing comment\n"));
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_EQ(rule->on_node_persist_max, 4096);
  EXPECT_EQ(rule->between_nodes_persist_max, 65536);
}

TEST(ReadBackendTableTest, RefusesWhatItCannotRead) {
  EXPECT_FALSE(ReadBackendTable("/nonexistent/backends.txt").ok());
  for (const char* text :
       {"on_node_persist_max\nbetween_nodes_persist_max 1\n",
        "on_node_persist_max -1\nbetween_nodes_persist_max 1\n",
        "on_node_persist_max 1 2\nbetween_nodes_persist_max 1\n", "fastest 1\n",
        "on_node_persist_max 1\n"}) {
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
