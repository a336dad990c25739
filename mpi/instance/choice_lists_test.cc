// Each MINIMPI_* choice, walked through its owner's table: the settings take
// every name of the table and nothing else, list the names in the table's
// order (in the error and in the description), and default to one of them.
// A new table entry is covered here without a new line.
#include "mpi/instance/choice_lists.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "mpi/coll/algorithms.h"
#include "mpi/match/match_engine.h"
#include "mpi/part/aggregator.h"
#include "mpi/part/backend_choice.h"
#include "net/transport.h"

namespace minimpi {
namespace {

using runtime::ChoiceLists;
using runtime::Settings;

struct Kind {
  const char* variable;
  std::vector<std::string> owner_names;  // from the owner's table
  std::string Settings::*field;
};

std::vector<Kind> Kinds() {
  return {
      {"MINIMPI_TRANSPORT", net::TransportNames(), &Settings::transport},
      {"MINIMPI_MATCH", match::MatchEngineNames(), &Settings::match},
      {"MINIMPI_PART_AGGR", part::AggregatorNames(),
       &Settings::part_aggregator},
      {"MINIMPI_PART_BACKEND", part::BackendNames(), &Settings::part_backend},
  };
}

// The lists follow the tables, in order; names are unique and described.
TEST(ChoiceListsTest, ListsFollowTheTablesWithUniqueDescribedNames) {
  const ChoiceLists& lists = LibraryChoiceLists();
  const std::vector<runtime::Choice>* listed[] = {
      &lists.transports, &lists.match_engines, &lists.part_aggregators,
      &lists.part_backends};
  const std::vector<Kind> kinds = Kinds();
  ASSERT_EQ(std::size(listed), kinds.size());
  for (size_t k = 0; k < kinds.size(); ++k) {
    std::vector<std::string> names;
    for (const runtime::Choice& choice : *listed[k]) {
      EXPECT_FALSE(choice.description.empty())
          << kinds[k].variable << " " << choice.name;
      EXPECT_EQ(std::count(names.begin(), names.end(), choice.name), 0)
          << kinds[k].variable << " " << choice.name << " twice";
      names.push_back(choice.name);
    }
    EXPECT_EQ(names, kinds[k].owner_names) << kinds[k].variable;
  }
}

TEST(ChoiceListsTest, SettingsTakeEveryNameOfTheOwnersTables) {
  for (const Kind& kind : Kinds()) {
    ASSERT_FALSE(kind.owner_names.empty()) << kind.variable;
    for (const std::string& name : kind.owner_names) {
      setenv(kind.variable, name.c_str(), 1);
      absl::StatusOr<Settings> settings =
          Settings::FromEnvironment(LibraryChoiceLists());
      unsetenv(kind.variable);
      ASSERT_TRUE(settings.ok()) << settings.status();
      EXPECT_EQ((*settings).*kind.field, name);
    }
  }
}

TEST(ChoiceListsTest, SettingsRefuseAnUnknownNameListingTheTable) {
  for (const Kind& kind : Kinds()) {
    setenv(kind.variable, "bogus", 1);
    absl::StatusOr<Settings> settings =
        Settings::FromEnvironment(LibraryChoiceLists());
    unsetenv(kind.variable);
    ASSERT_FALSE(settings.ok()) << kind.variable;
    EXPECT_EQ(settings.status().message(),
              absl::StrCat(kind.variable, "=bogus is not one of: ",
                           absl::StrJoin(kind.owner_names, ", ")));
  }
}

TEST(ChoiceListsTest, DefaultsAreInTheTablesAndDescriptionsListThem) {
  std::vector<runtime::SettingInfo> described =
      runtime::DescribeSettings(Settings(), LibraryChoiceLists());
  for (const Kind& kind : Kinds()) {
    const Settings defaults;
    const std::string& default_name = defaults.*kind.field;
    EXPECT_NE(std::find(kind.owner_names.begin(), kind.owner_names.end(),
                        default_name),
              kind.owner_names.end())
        << kind.variable << "'s default " << default_name;
    bool found = false;
    for (const runtime::SettingInfo& info : described) {
      if (info.name != kind.variable) continue;
      found = true;
      size_t at = 0;  // every name, in the table's order
      for (const std::string& name : kind.owner_names) {
        at = info.description.find(name, at);
        ASSERT_NE(at, std::string::npos) << kind.variable << ": " << name;
        at += name.size();
      }
    }
    EXPECT_TRUE(found) << kind.variable;
  }
}

// The collectives' algorithms are mpi/coll's table (its registry, checked
// by coll::ConfigureAlgorithms); the settings read one MINIMPI_COLL_<NAME>
// per collective of runtime::kCollectiveNames, which must name the same
// collectives.
TEST(ChoiceListsTest, EveryCollectiveOfTheRegistryHasItsSetting) {
  std::set<std::string> registry;
  for (const coll::CollectiveAlgorithms& entry : coll::Registry()) {
    registry.insert(entry.name);
  }
  const std::set<std::string> settings(std::begin(runtime::kCollectiveNames),
                                       std::end(runtime::kCollectiveNames));
  EXPECT_EQ(registry, settings);
}

}  // namespace
}  // namespace minimpi
