// The collective algorithms, by collective, and how one is chosen: by the
// user with MINIMPI_COLL_<NAME>=<algorithm> (read once at MPI_Init), else by
// a rule on message size and communicator size. Algorithms are swappable by
// name so their difference can be measured.
//
// Every algorithm is a function that builds a Schedule from the call's
// arguments; blocking and nonblocking calls run the same schedule.
//
// Owned by: mpi/coll. Called by: the bindings and minimpi_info.
#ifndef MINIMPI_MPI_COLL_ALGORITHMS_H_
#define MINIMPI_MPI_COLL_ALGORITHMS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mpi/coll/schedule.h"
#include "mpi/objects/comm.h"
#include "mpi/mpi.h"
#include "mpi/objects/op.h"

namespace minimpi::coll {

enum class Collective : uint8_t {
  kBarrier,
  kBcast,
  kReduce,
  kAllreduce,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kAllgather,
  kAllgatherv,
  kAlltoall,
  kAlltoallv,
  kReduceScatter,
  kReduceScatterBlock,
  kScan,
  kExscan,
};

// A count or displacement array as the program passed it: int elements
// (the classic calls) or 64-bit ones (the _c calls, MPI_Count and
// MPI_Aint); read as 64-bit either way, so one algorithm serves both.
class CountArray {
 public:
  constexpr CountArray() = default;
  constexpr CountArray(std::nullptr_t) {}
  constexpr CountArray(const int* items) : narrow_(items) {}
  constexpr CountArray(const int64_t* items) : wide_(items) {}
  CountArray(const long long* items)
      : wide_(reinterpret_cast<const int64_t*>(items)) {}

  int64_t operator[](size_t i) const {
    return wide_ != nullptr ? wide_[i] : narrow_[i];
  }
  bool operator==(std::nullptr_t) const {
    return narrow_ == nullptr && wide_ == nullptr;
  }
  bool operator==(const CountArray&) const = default;
  // The elements' address (for the identity tests of unit tests).
  const void* data() const {
    return wide_ != nullptr ? static_cast<const void*>(wide_) : narrow_;
  }

 private:
  const int* narrow_ = nullptr;
  const int64_t* wide_ = nullptr;
};

// Everything a collective call passed, validated by the bindings. Buffers
// are as the user gave them, except that MPI_IN_PLACE is turned into
// `in_place` (and the send buffer set to nullptr). Sizes are in bytes where a
// name says so; counts are in items of the named type.
struct Arguments {
  const void* send_buffer = nullptr;
  void* receive_buffer = nullptr;
  bool in_place = false;
  int root = 0;

  // Bcast and the reductions: one count and type for both sides.
  int64_t count = 0;
  MPI_Datatype type = nullptr;
  size_t extent = 0;  // bytes per item of `type`
  const Op* op = nullptr;

  // Gather, scatter, allgather, alltoall and their v-variants.
  int64_t send_count = 0;
  MPI_Datatype send_type = nullptr;
  size_t send_extent = 0;
  int64_t receive_count = 0;
  MPI_Datatype receive_type = nullptr;
  size_t receive_extent = 0;
  CountArray send_counts;            // scatterv, alltoallv
  CountArray send_displacements;     // in items of send_type
  CountArray receive_counts;         // gatherv, allgatherv,
  CountArray receive_displacements;  // alltoallv, reduce_scatter
};

using Builder = std::unique_ptr<Schedule> (*)(Communicator& comm,
                                              const Arguments& arguments);

struct Algorithm {
  const char* name;
  const char* description;
  // nullptr for "shm" (the node path, node_collectives.h), which runs
  // blocking calls directly and builds no schedule; its `serves` says no.
  Builder build;
  // Whether the algorithm can serve these arguments (e.g. some need a
  // commutative operation); nullptr means always. A user's choice that
  // cannot serve a call falls back to the automatic choice.
  bool (*serves)(const Communicator& comm,
                 const Arguments& arguments) = nullptr;
};

struct CollectiveAlgorithms {
  Collective collective;
  const char* name;  // "bcast": MINIMPI_COLL_BCAST, minimpi_info
  std::vector<Algorithm> algorithms;
  // The automatic choice, by message and communicator size.
  const char* (*choose)(const Communicator& comm, const Arguments& arguments);
};

// Every collective and its algorithms.
const std::vector<CollectiveAlgorithms>& Registry();

// Applies the user's MINIMPI_COLL_<NAME> choices (collective name ->
// algorithm name, "auto" for the rule). Unknown names are an error that lists
// the accepted ones. Called at MPI_Init, and by MPI_T_cvar_write of a
// MINIMPI_COLL_<NAME> (every process must write the same value at the same
// point of its collective calls, as with any MPI_T_SCOPE_ALL_EQ variable).
absl::Status ConfigureAlgorithms(
    const std::map<std::string, std::string>& choices);

// The algorithm in force for `collective` ("auto" when none was chosen).
std::string ConfiguredAlgorithm(Collective collective);

// The name of the algorithm MINIMPI_COLL_<NAME> chose for `collective`, or
// nullptr when the automatic choice is in force (no allocation: the hot
// path asks on every call).
const char* ChosenAlgorithm(Collective collective);

// Builds the schedule of one call with the chosen algorithm.
std::unique_ptr<Schedule> Build(Collective collective, Communicator& comm,
                                const Arguments& arguments);

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_ALGORITHMS_H_
