// Steps and helpers the reduction families share (reductions.cc,
// reduce_scatter_scan.cc): a binomial reduction toward a root and a ring
// reduce-scatter, each added to a schedule, and the arithmetic of buffers.
//
// Owned by: mpi/coll. Internal to the reduction sources.
#ifndef MINIMPI_MPI_COLL_REDUCTION_STEPS_H_
#define MINIMPI_MPI_COLL_REDUCTION_STEPS_H_

#include <cstddef>
#include <vector>

#include "mpi/coll/algorithms.h"
#include "mpi/coll/schedule.h"

namespace minimpi::coll::reduction {

inline std::byte* Bytes(void* pointer) {
  return static_cast<std::byte*>(pointer);
}
inline const std::byte* Bytes(const void* pointer) {
  return static_cast<const std::byte*>(pointer);
}

inline size_t MessageBytes(const Arguments& arguments) {
  return static_cast<size_t>(arguments.count) * arguments.extent;
}

// The input of the calling rank: the send buffer, or the receive buffer for
// MPI_IN_PLACE.
inline const void* Input(const Arguments& arguments) {
  return arguments.in_place ? arguments.receive_buffer : arguments.send_buffer;
}

inline bool Commutative(const Communicator&, const Arguments& arguments) {
  return arguments.op->commutative();
}

// Adds the steps of a binomial reduction of `count` items of every rank's
// `input` toward `tree_root`, on ranks relative to it. Returns where the
// result lies on `tree_root` (nullptr on the other ranks). The result is in
// rank order for a non-commutative operation only when tree_root == 0: then
// every subtree covers a contiguous range of ranks. `input` is only read.
const void* AddBinomialReduce(Schedule& schedule, const void* input,
                              int64_t count, const Arguments& arguments,
                              int tree_root);

// Ring reduce-scatter over n blocks of `vector` (block b: items
// [offsets[b], offsets[b + 1])): in step s every rank sends block
// (rank - s - 1) to the right and reduces block (rank - s - 2) from the left
// into its own, so after n - 1 steps rank r holds block r fully reduced.
// Block order differs per block, so only for commutative operations.
void AddRingReduceScatter(Schedule& schedule, const Arguments& arguments,
                          std::byte* vector,
                          const std::vector<int64_t>& offsets);

}  // namespace minimpi::coll::reduction

#endif  // MINIMPI_MPI_COLL_REDUCTION_STEPS_H_
