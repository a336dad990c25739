#include "mpi/coll/tool_variables.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mpi/coll/node_collectives.h"
#include "mpi/tool/registry.h"

namespace minimpi::coll {
namespace {

constexpr int kKinds = static_cast<int>(Collective::kExscan) + 1;
static_assert(kKinds == Communicator::CollectiveCounts::kKinds,
              "mpi/objects/comm.h counts a collective kind per coll::Collective");

// Numbers 0 and 1; "none" (0) is what a communicator starts with.
constexpr int kIntercomm = 1;

// Every algorithm name of Registry() once, numbered for the MPI_T
// enumeration (after "none" and "intercomm"), and each entry's algorithms'
// numbers, by collective and position in the entry.
struct AlgorithmNumbers {
  std::vector<std::string> names;
  std::array<std::vector<int>, kKinds> by_position;
  int node_path = -1;
};

const AlgorithmNumbers& Numbers() {
  static const AlgorithmNumbers* const numbers = [] {
    auto* made = new AlgorithmNumbers;
    made->names = {"none", "intercomm"};
    for (const CollectiveAlgorithms& entry : Registry()) {
      std::vector<int>& ids =
          made->by_position[static_cast<int>(entry.collective)];
      for (const Algorithm& algorithm : entry.algorithms) {
        int id = 0;
        while (id < static_cast<int>(made->names.size()) &&
               made->names[id] != algorithm.name) {
          ++id;
        }
        if (id == static_cast<int>(made->names.size())) {
          made->names.push_back(algorithm.name);
        }
        ids.push_back(id);
        if (made->names[id] == kNodeAlgorithmName) made->node_path = id;
      }
    }
    return made;
  }();
  return *numbers;
}

void Note(Communicator& comm, Collective collective, int algorithm) {
  Communicator::CollectiveCounts& counts = comm.collective_counts;
  const int kind = static_cast<int>(collective);
  counts.calls[kind].Add();
  counts.last_algorithm[kind].store(algorithm, std::memory_order_relaxed);
}

const Communicator& CommOf(const void* object) {
  return *static_cast<const Communicator*>(object);
}

void RegisterPerKind(std::string name, std::string description,
                     const vci::OwnedCounter (
                         Communicator::CollectiveCounts::*counters)[kKinds]) {
  tool::PerformanceVariable variable;
  variable.name = std::move(name);
  variable.description = std::move(description);
  variable.category = "collectives";
  variable.var_class = MPI_T_PVAR_CLASS_COUNTER;
  variable.binding = tool::Binding::kComm;
  variable.count = kKinds;
  variable.read = [counters](const void* object, void* values) {
    const auto& all = CommOf(object).collective_counts.*counters;
    for (int kind = 0; kind < kKinds; ++kind) {
      static_cast<uint64_t*>(values)[kind] = all[kind].Read();
    }
  };
  tool::RegisterPerformanceVariable(std::move(variable));
}

}  // namespace

void NoteAlgorithm(Communicator& comm, const CollectiveAlgorithms& entry,
                   const Algorithm& algorithm) {
  const size_t position = &algorithm - entry.algorithms.data();
  Note(comm, entry.collective,
       Numbers().by_position[static_cast<int>(entry.collective)][position]);
}

void NoteNodePath(Communicator& comm, Collective collective) {
  Note(comm, collective, Numbers().node_path);
  comm.collective_counts.node_path_calls[static_cast<int>(collective)].Add();
}

void NoteIntercomm(Communicator& comm, Collective collective) {
  Note(comm, collective, kIntercomm);
}

void RegisterCollectiveToolVariables() {
  const AlgorithmNumbers& numbers = Numbers();
  tool::PerformanceVariable algorithm;
  algorithm.name = "coll_algorithm";
  algorithm.description =
      "The algorithm the last call of each collective kind ran on the "
      "communicator, one element per kind (barrier, bcast, reduce, "
      "allreduce, gather, gatherv, scatter, scatterv, allgather, allgatherv, "
      "alltoall, alltoallv, reduce_scatter, reduce_scatter_block, scan, "
      "exscan): 'shm' is the node path, 'none' no call yet, any other a "
      "point-to-point schedule.";
  algorithm.category = "collectives";
  algorithm.var_class = MPI_T_PVAR_CLASS_STATE;
  algorithm.type = tool::ValueType::kInt;
  algorithm.binding = tool::Binding::kComm;
  algorithm.count = kKinds;
  algorithm.enum_name = "coll_algorithms";
  for (int id = 0; id < static_cast<int>(numbers.names.size()); ++id) {
    algorithm.enum_items.emplace_back(id, numbers.names[id]);
  }
  algorithm.read = [](const void* object, void* values) {
    const Communicator::CollectiveCounts& counts =
        CommOf(object).collective_counts;
    for (int kind = 0; kind < kKinds; ++kind) {
      static_cast<int*>(values)[kind] =
          counts.last_algorithm[kind].load(std::memory_order_relaxed);
    }
  };
  tool::RegisterPerformanceVariable(std::move(algorithm));
  RegisterPerKind("coll_calls",
                  "Collective calls on the communicator that chose an "
                  "algorithm, per kind (as coll_algorithm).",
                  &Communicator::CollectiveCounts::calls);
  RegisterPerKind("coll_node_path_calls",
                  "Of coll_calls, those that ran through the node's shared "
                  "memory region (the 'shm' algorithm), per kind.",
                  &Communicator::CollectiveCounts::node_path_calls);
}

}  // namespace minimpi::coll
