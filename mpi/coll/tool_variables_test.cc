// What collectives show MPI_T, read as the MPI_T layer reads it (through
// the catalogue's read functions) from a communicator no call has touched:
// the algorithm enumeration names every algorithm once, after "none" and
// "intercomm"; each noted call moves its kind's counter and state only.
#include "mpi/coll/tool_variables.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/tool/catalogue.h"

namespace minimpi::coll {
namespace {

constexpr int kKinds = Communicator::CollectiveCounts::kKinds;

class CollectiveToolVariablesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { RegisterCollectiveToolVariables(); }

  static const tool::PerformanceVariable& Variable(const char* name,
                                                   int var_class) {
    const int index = tool::FindPerformanceVariable(name, var_class);
    EXPECT_GE(index, 0) << name;
    return tool::PerformanceVariableAt(index);
  }
  static std::vector<uint64_t> Counts(const char* name,
                                      const Communicator& comm) {
    const tool::PerformanceVariable& variable =
        Variable(name, MPI_T_PVAR_CLASS_COUNTER);
    EXPECT_EQ(variable.count, kKinds);
    std::vector<uint64_t> values(kKinds, 12345);
    variable.read(&comm, values.data());
    return values;
  }
  // The name of the algorithm each kind last ran, through the enumeration.
  static std::vector<std::string> Algorithms(const Communicator& comm) {
    const tool::PerformanceVariable& variable =
        Variable("coll_algorithm", MPI_T_PVAR_CLASS_STATE);
    std::vector<int> values(kKinds, -1);
    variable.read(&comm, values.data());
    std::vector<std::string> names;
    for (int value : values) {
      std::string name = "(not in the enumeration)";
      for (const auto& [item, item_name] : variable.enum_items) {
        if (item == value) name = item_name;
      }
      names.push_back(name);
    }
    return names;
  }
  static const CollectiveAlgorithms& EntryOf(Collective collective) {
    for (const CollectiveAlgorithms& entry : Registry()) {
      if (entry.collective == collective) return entry;
    }
    ADD_FAILURE() << "no entry";
    return Registry().front();
  }
};

TEST_F(CollectiveToolVariablesTest, EnumerationNamesEveryAlgorithmOnce) {
  const tool::PerformanceVariable& variable =
      Variable("coll_algorithm", MPI_T_PVAR_CLASS_STATE);
  EXPECT_EQ(variable.type, tool::ValueType::kInt);
  EXPECT_EQ(variable.binding, tool::Binding::kComm);
  EXPECT_EQ(variable.count, kKinds);
  ASSERT_GE(variable.enum_items.size(), 3u);
  EXPECT_EQ(variable.enum_items[0], std::make_pair(0, std::string("none")));
  EXPECT_EQ(variable.enum_items[1],
            std::make_pair(1, std::string("intercomm")));
  std::set<std::string> names;
  for (size_t i = 0; i < variable.enum_items.size(); ++i) {
    EXPECT_EQ(variable.enum_items[i].first, static_cast<int>(i));
    EXPECT_TRUE(names.insert(variable.enum_items[i].second).second)
        << variable.enum_items[i].second << " twice";
  }
  for (const CollectiveAlgorithms& entry : Registry()) {
    for (const Algorithm& algorithm : entry.algorithms) {
      EXPECT_TRUE(names.count(algorithm.name)) << algorithm.name;
    }
  }
  EXPECT_TRUE(names.count("shm"));
}

TEST_F(CollectiveToolVariablesTest, EachCallMovesItsKindOnly) {
  Communicator comm;
  const std::vector<std::string> fresh = Algorithms(comm);
  for (int kind = 0; kind < kKinds; ++kind) {
    EXPECT_EQ(fresh[kind], "none") << kind;
  }
  EXPECT_EQ(Counts("coll_calls", comm), std::vector<uint64_t>(kKinds, 0));

  const CollectiveAlgorithms& bcast = EntryOf(Collective::kBcast);
  ASSERT_GE(bcast.algorithms.size(), 2u);
  NoteAlgorithm(comm, bcast, bcast.algorithms[0]);
  NoteAlgorithm(comm, bcast, bcast.algorithms[1]);
  NoteNodePath(comm, Collective::kAllreduce);
  NoteNodePath(comm, Collective::kAllreduce);
  NoteNodePath(comm, Collective::kAllreduce);
  NoteIntercomm(comm, Collective::kScan);

  const int bcast_kind = static_cast<int>(Collective::kBcast);
  const int allreduce_kind = static_cast<int>(Collective::kAllreduce);
  const int scan_kind = static_cast<int>(Collective::kScan);
  std::vector<uint64_t> calls(kKinds, 0), node(kKinds, 0);
  calls[bcast_kind] = 2;
  calls[allreduce_kind] = 3;
  calls[scan_kind] = 1;
  node[allreduce_kind] = 3;
  EXPECT_EQ(Counts("coll_calls", comm), calls);
  EXPECT_EQ(Counts("coll_node_path_calls", comm), node);
  std::vector<std::string> expected(kKinds, "none");
  expected[bcast_kind] = bcast.algorithms[1].name;
  expected[allreduce_kind] = "shm";
  expected[scan_kind] = "intercomm";
  EXPECT_EQ(Algorithms(comm), expected);

  // Another communicator's counts are its own.
  Communicator other;
  EXPECT_EQ(Counts("coll_calls", other), std::vector<uint64_t>(kKinds, 0));
}

}  // namespace
}  // namespace minimpi::coll
