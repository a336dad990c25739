#include "mpi/coll/algorithms.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mpi/coll/families.h"
#include "mpi/coll/intercomm.h"
#include "mpi/coll/tool_variables.h"

namespace minimpi::coll {
namespace {

// The chosen algorithm per collective (nullptr: automatic). Written at
// MPI_Init, and again when a tool writes MINIMPI_COLL_<NAME> through MPI_T
// (each call reads it, so the next call runs the new choice): atomic, read
// relaxed (a plain load on x86).
std::atomic<const Algorithm*>
    chosen[static_cast<size_t>(Collective::kExscan) + 1] = {};

constexpr size_t kCollectives = static_cast<size_t>(Collective::kExscan) + 1;

// The registry's entries indexed by collective, built once.
const CollectiveAlgorithms& Entry(Collective collective) {
  static const auto* const by_collective = [] {
    auto* table = new std::array<const CollectiveAlgorithms*, kCollectives>{};
    for (const CollectiveAlgorithms& entry : Registry()) {
      (*table)[static_cast<size_t>(entry.collective)] = &entry;
    }
    for (size_t i = 0; i < kCollectives; ++i) {
      if ((*table)[i] == nullptr) {
        std::fprintf(stderr, "minimpi: collective %zu has no algorithms\n", i);
        std::abort();
      }
    }
    return table;
  }();
  return *(*by_collective)[static_cast<size_t>(collective)];
}

const Algorithm* Find(const CollectiveAlgorithms& entry, const char* name) {
  // `choose` returns the same literal the entry holds (one per source
  // file), so the pointer test finds it on the hot path without strcmp.
  for (const Algorithm& algorithm : entry.algorithms) {
    if (algorithm.name == name) return &algorithm;
  }
  for (const Algorithm& algorithm : entry.algorithms) {
    if (std::strcmp(algorithm.name, name) == 0) return &algorithm;
  }
  return nullptr;
}

}  // namespace

const std::vector<CollectiveAlgorithms>& Registry() {
  static const std::vector<CollectiveAlgorithms> registry = [] {
    std::vector<CollectiveAlgorithms> all;
    AddBarrierAndBcast(all);
    AddReductions(all);
    AddReduceScatterAndScans(all);
    AddGatherScatter(all);
    AddAllgatherAlltoall(all);
    AddNodeAlgorithm(all);
    return all;
  }();
  return registry;
}

absl::Status ConfigureAlgorithms(
    const std::map<std::string, std::string>& choices) {
  for (const auto& [collective_name, algorithm_name] : choices) {
    const CollectiveAlgorithms* entry = nullptr;
    for (const CollectiveAlgorithms& candidate : Registry()) {
      if (collective_name == candidate.name) entry = &candidate;
    }
    if (entry == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("no collective named '", collective_name, "'"));
    }
    const size_t index = static_cast<size_t>(entry->collective);
    if (algorithm_name == "auto") {
      chosen[index].store(nullptr, std::memory_order_relaxed);
      continue;
    }
    const Algorithm* algorithm = Find(*entry, algorithm_name.c_str());
    if (algorithm == nullptr) {
      std::vector<std::string> names = {"auto"};
      for (const Algorithm& a : entry->algorithms) names.push_back(a.name);
      std::string upper = collective_name;
      for (char& c : upper) c = static_cast<char>(std::toupper(c));
      return absl::InvalidArgumentError(
          absl::StrCat("MINIMPI_COLL_", upper, "=", algorithm_name,
                       " is not one of: ", absl::StrJoin(names, ", ")));
    }
    chosen[index].store(algorithm, std::memory_order_relaxed);
  }
  return absl::OkStatus();
}

std::string ConfiguredAlgorithm(Collective collective) {
  const Algorithm* algorithm =
      chosen[static_cast<size_t>(collective)].load(std::memory_order_relaxed);
  return algorithm == nullptr ? "auto" : algorithm->name;
}

const char* ChosenAlgorithm(Collective collective) {
  const Algorithm* algorithm =
      chosen[static_cast<size_t>(collective)].load(std::memory_order_relaxed);
  return algorithm == nullptr ? nullptr : algorithm->name;
}

std::unique_ptr<Schedule> Build(Collective collective, Communicator& comm,
                                const Arguments& arguments) {
  if (comm.inter) {
    NoteIntercomm(comm, collective);
    return BuildIntercomm(collective, comm, arguments);
  }
  const CollectiveAlgorithms& entry = Entry(collective);
  const Algorithm* algorithm =
      chosen[static_cast<size_t>(collective)].load(std::memory_order_relaxed);
  if (algorithm == nullptr ||
      (algorithm->serves != nullptr && !algorithm->serves(comm, arguments))) {
    algorithm = Find(entry, entry.choose(comm, arguments));
  }
  NoteAlgorithm(comm, entry, *algorithm);
  return algorithm->build(comm, arguments);
}

}  // namespace minimpi::coll
