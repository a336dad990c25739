#include "runtime/settings.h"

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace minimpi::runtime {
namespace {

// Lists shaped like the library's (mpi/instance/choice_lists_test.cc checks
// the real ones against their owners' tables).
ChoiceLists ExampleChoices() {
  ChoiceLists lists;
  lists.transports = {{"auto", "by place"},
                      {"shm", "one node"},
                      {"tcp", "sockets"},
                      {"ib", "RDMA"}};
  lists.match_engines = {{"colpnp", "the default"}, {"ll", "one list"}};
  lists.part_aggregators = {{"adaptive", "measured"}, {"none", "early bird"}};
  lists.part_backends = {{"native", "writes"}, {"persist", "messages"}};
  return lists;
}

absl::StatusOr<Settings> Read() {
  return Settings::FromEnvironment(ExampleChoices());
}

TEST(SettingsTest, DefaultsWhenUnset) {
  unsetenv("MINIMPI_NUM_VCIS");
  auto settings = Read();
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->num_vcis, Settings().num_vcis);
}

TEST(SettingsTest, ReadsIntegers) {
  setenv("MINIMPI_NUM_VCIS", "7", 1);
  auto settings = Read();
  unsetenv("MINIMPI_NUM_VCIS");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->num_vcis, 7);
}

// Every waiting setting is read (one was once described but never read).
TEST(SettingsTest, ReadsTheWaitingSettingsAndAuto) {
  setenv("MINIMPI_WAIT_POLICY", "yield", 1);
  setenv("MINIMPI_WAIT_SPIN_US", "auto", 1);
  setenv("MINIMPI_WAIT_YIELD_US", "20", 1);
  setenv("MINIMPI_WAIT_SLEEP_MAX_US", "300", 1);
  setenv("MINIMPI_WAIT_MOVE", "0", 1);
  auto settings = Read();
  setenv("MINIMPI_WAIT_SPIN_US", "7", 1);
  setenv("MINIMPI_WAIT_YIELD_US", "auto", 1);
  auto again = Read();
  setenv("MINIMPI_WAIT_YIELD_US", "-2", 1);
  auto bad = Read();
  for (const char* name :
       {"MINIMPI_WAIT_POLICY", "MINIMPI_WAIT_SPIN_US", "MINIMPI_WAIT_YIELD_US",
        "MINIMPI_WAIT_SLEEP_MAX_US", "MINIMPI_WAIT_MOVE"}) {
    unsetenv(name);
  }
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->wait_policy, "yield");
  EXPECT_EQ(settings->wait_spin_us, -1);
  EXPECT_EQ(settings->wait_yield_us, 20);
  EXPECT_EQ(settings->wait_sleep_max_us, 300);
  EXPECT_FALSE(settings->wait_move);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->wait_spin_us, 7);
  EXPECT_EQ(again->wait_yield_us, -1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("MINIMPI_WAIT_YIELD_US"),
            std::string::npos);
}

TEST(SettingsTest, ReadsTheAcrossNodesSettings) {
  setenv("MINIMPI_TRANSPORT", "tcp", 1);
  setenv("MINIMPI_NODE_SPLIT", "3", 1);
  setenv("MINIMPI_TCP_IF", "eth7", 1);
  setenv("MINIMPI_TCP_CONNECT_TIMEOUT_MS", "2500", 1);
  setenv("MINIMPI_TCP_PROGRESS_US", "0", 1);
  setenv("MINIMPI_TCP_CONGESTION", "cubic", 1);
  setenv("MINIMPI_IB_CREDITS", "8", 1);
  setenv("MINIMPI_IB_RECEIVE_BUFFERS", "512", 1);
  auto settings = Read();
  setenv("MINIMPI_TRANSPORT", "udp", 1);
  auto bad_transport = Read();
  setenv("MINIMPI_TRANSPORT", "auto", 1);
  setenv("MINIMPI_NODE_SPLIT", "0", 1);
  auto bad_split = Read();
  setenv("MINIMPI_NODE_SPLIT", "1", 1);
  setenv("MINIMPI_TCP_CONGESTION", "a-name-far-too-long", 1);
  auto bad_congestion = Read();
  for (const char* name :
       {"MINIMPI_TRANSPORT", "MINIMPI_NODE_SPLIT", "MINIMPI_TCP_IF",
        "MINIMPI_TCP_CONNECT_TIMEOUT_MS", "MINIMPI_TCP_PROGRESS_US",
        "MINIMPI_TCP_CONGESTION", "MINIMPI_IB_CREDITS",
        "MINIMPI_IB_RECEIVE_BUFFERS"}) {
    unsetenv(name);
  }
  auto defaults = Read();
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->transport, "tcp");
  EXPECT_EQ(settings->node_split, 3);
  EXPECT_EQ(settings->tcp_interface, "eth7");
  EXPECT_EQ(settings->tcp_connect_timeout_ms, 2500);
  EXPECT_EQ(settings->tcp_progress_us, 0);
  EXPECT_EQ(settings->tcp_congestion, "cubic");
  EXPECT_EQ(settings->ib_credits, 8);
  EXPECT_EQ(settings->ib_receive_buffers, 512);
  ASSERT_FALSE(bad_transport.ok());
  EXPECT_NE(bad_transport.status().message().find("auto, shm, tcp, ib"),
            std::string::npos)
      << bad_transport.status();
  ASSERT_FALSE(bad_split.ok());
  EXPECT_NE(bad_split.status().message().find("MINIMPI_NODE_SPLIT"),
            std::string::npos);
  ASSERT_FALSE(bad_congestion.ok());
  EXPECT_NE(bad_congestion.status().message().find("MINIMPI_TCP_CONGESTION"),
            std::string::npos);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->tcp_congestion, "reno");
}

// net/tcp's eager limit follows MINIMPI_EAGER_MAX unless set; read pieces
// are 0 (one read) or at least a page.
TEST(SettingsTest, ReadsTheEagerLimitsAndReadPieces) {
  setenv("MINIMPI_EAGER_MAX", "256", 1);
  auto derived = Read();
  setenv("MINIMPI_EAGER_MAX", "524288", 1);
  auto capped = Read();
  setenv("MINIMPI_TCP_EAGER_MAX", "1000", 1);
  setenv("MINIMPI_NET_READ_PIECE", "0", 1);
  auto explicit_values = Read();
  setenv("MINIMPI_NET_READ_PIECE", "4095", 1);
  auto tiny_piece = Read();
  for (const char* name : {"MINIMPI_EAGER_MAX", "MINIMPI_TCP_EAGER_MAX",
                           "MINIMPI_NET_READ_PIECE"}) {
    unsetenv(name);
  }
  auto defaults = Read();
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->tcp_eager_max, 8 * Settings().eager_max);
  EXPECT_EQ(defaults->network_read_piece, 524288u);
  ASSERT_TRUE(derived.ok()) << derived.status();
  EXPECT_EQ(derived->tcp_eager_max, 2048u);
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(capped->tcp_eager_max, size_t{1} << 20);
  ASSERT_TRUE(explicit_values.ok()) << explicit_values.status();
  EXPECT_EQ(explicit_values->eager_max, 524288u);
  EXPECT_EQ(explicit_values->tcp_eager_max, 1000u);
  EXPECT_EQ(explicit_values->network_read_piece, 0u);
  ASSERT_FALSE(tiny_piece.ok());
  EXPECT_NE(tiny_piece.status().message().find("MINIMPI_NET_READ_PIECE"),
            std::string::npos);
}

TEST(SettingsTest, RejectsOutOfRangeAndNamesTheVariable) {
  setenv("MINIMPI_NUM_VCIS", "0", 1);
  auto settings = Read();
  unsetenv("MINIMPI_NUM_VCIS");
  ASSERT_FALSE(settings.ok());
  EXPECT_NE(settings.status().message().find("MINIMPI_NUM_VCIS"),
            std::string::npos);
}

TEST(SettingsTest, RejectsUnknownChoice) {
  setenv("MINIMPI_TRANSPORT", "carrier-pigeon", 1);
  auto settings = Read();
  unsetenv("MINIMPI_TRANSPORT");
  ASSERT_FALSE(settings.ok());
  EXPECT_NE(settings.status().message().find("shm"), std::string::npos);
}

// Each choice takes exactly the names its list gives, and an unknown one is
// an error that names the variable and lists them in order.
TEST(SettingsTest, ListedChoicesTakeTheirListsNames) {
  const ChoiceLists lists = ExampleChoices();
  const struct {
    const char* variable;
    const std::vector<Choice>& choices;
    std::string Settings::*field;
  } kinds[] = {
      {"MINIMPI_TRANSPORT", lists.transports, &Settings::transport},
      {"MINIMPI_MATCH", lists.match_engines, &Settings::match},
      {"MINIMPI_PART_AGGR", lists.part_aggregators, &Settings::part_aggregator},
      {"MINIMPI_PART_BACKEND", lists.part_backends, &Settings::part_backend},
  };
  for (const auto& kind : kinds) {
    std::string names;
    for (const Choice& choice : kind.choices) {
      setenv(kind.variable, choice.name.c_str(), 1);
      absl::StatusOr<Settings> settings = Settings::FromEnvironment(lists);
      ASSERT_TRUE(settings.ok()) << settings.status();
      EXPECT_EQ((*settings).*kind.field, choice.name);
      names += (names.empty() ? "" : ", ") + choice.name;
    }
    setenv(kind.variable, "bogus", 1);
    absl::StatusOr<Settings> bad = Settings::FromEnvironment(lists);
    // An empty list checks nothing (a caller that reads other settings).
    absl::StatusOr<Settings> unchecked =
        Settings::FromEnvironment(ChoiceLists());
    unsetenv(kind.variable);
    ASSERT_FALSE(bad.ok()) << kind.variable;
    EXPECT_EQ(bad.status().message(),
              absl::StrCat(kind.variable, "=bogus is not one of: ", names));
    ASSERT_TRUE(unchecked.ok()) << unchecked.status();
    EXPECT_EQ((*unchecked).*kind.field, "bogus");
  }
}

TEST(SettingsTest, DescriptionsListTheChoices) {
  const ChoiceLists lists = ExampleChoices();
  std::map<std::string, std::string> description;
  for (const SettingInfo& info : DescribeSettings(Settings(), lists)) {
    description[info.name] = info.description;
  }
  EXPECT_EQ(description["MINIMPI_TRANSPORT"],
            "transport for every pair of ranks: auto (by place), shm (one "
            "node), tcp (sockets), ib (RDMA)");
  EXPECT_EQ(description["MINIMPI_MATCH"],
            "matching engine: colpnp, ll (minimpi_info describes them)");
  EXPECT_EQ(description["MINIMPI_PART_AGGR"],
            "partitioned aggregator: adaptive, none (MPI_Info key "
            "minimpi_part_aggr overrides it per request)");
  EXPECT_EQ(description["MINIMPI_PART_BACKEND"],
            "partitioned: how transport partitions travel: native (writes), "
            "persist (messages); info key minimpi_part_backend overrides it");
}

TEST(SettingsTest, DescribesEveryVariable) {
  auto described = DescribeSettings(Settings(), ExampleChoices());
  ASSERT_FALSE(described.empty());
  for (const auto& info : described) {
    EXPECT_EQ(info.name.rfind("MINIMPI_", 0), 0u) << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
  }
}

}  // namespace
}  // namespace minimpi::runtime
