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
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mpi/coll/schedule.h"
#include "mpi/comm.h"
#include "mpi/mpi.h"
#include "mpi/op.h"

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
  int count = 0;
  MPI_Datatype type = nullptr;
  size_t extent = 0;  // bytes per item of `type`
  const Op* op = nullptr;

  // Gather, scatter, allgather, alltoall and their v-variants.
  int send_count = 0;
  MPI_Datatype send_type = nullptr;
  size_t send_extent = 0;
  int receive_count = 0;
  MPI_Datatype receive_type = nullptr;
  size_t receive_extent = 0;
  const int* send_counts = nullptr;            // scatterv, alltoallv
  const int* send_displacements = nullptr;     // in items of send_type
  const int* receive_counts = nullptr;         // gatherv, allgatherv,
  const int* receive_displacements = nullptr;  // alltoallv, reduce_scatter
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
// the accepted ones. Called once at MPI_Init.
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
