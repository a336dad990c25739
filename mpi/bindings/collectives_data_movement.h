// The bodies of the data-movement collectives (MPI_Gather(v),
// MPI_Scatter(v), MPI_Allgather(v), MPI_Alltoall(v,w)): one per call,
// shared by every form of it. The exported forms (blocking, nonblocking,
// persistent, each with int and MPI_Count counts) are one-statement
// wrappers in collectives_gather_scatter.cc and
// collectives_allgather_alltoall.cc; each names itself in the messages.
#ifndef MINIMPI_MPI_BINDINGS_COLLECTIVES_DATA_MOVEMENT_H_
#define MINIMPI_MPI_BINDINGS_COLLECTIVES_DATA_MOVEMENT_H_

#include "mpi/bindings/collective_util.h"

namespace minimpi {

// One side (send or receive) of a call: `count` items of `type` at
// `buffer`, or in a v-form (`variable`) counts[rank] items at
// displacements[rank]. coll::CountArray takes int and MPI_Count/MPI_Aint
// arrays alike, so both widths of a call share its body.
struct DataSide {
  const void* buffer = nullptr;
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  coll::CountArray counts;
  coll::CountArray displacements;
  bool variable = false;
};
inline DataSide Block(const void* buffer, MPI_Count count, MPI_Datatype type) {
  return {buffer, count, type, nullptr, nullptr, false};
}
inline DataSide Blocks(const void* buffer, coll::CountArray counts,
                       coll::CountArray displacements, MPI_Datatype type) {
  return {buffer, 0, type, counts, displacements, true};
}

// Gather: each process sends one block, the root receives them all
// (Gatherv: counts and displacements at the root); Scatter the reverse.
enum class RootedKind : uint8_t { kGather, kScatter };
int RootedDataMovement(const char* call, RootedKind kind, const DataSide& send,
                       const DataSide& receive, int root, MPI_Comm comm,
                       MPI_Info info, MPI_Request* request, CallForm form);

// Allgather(v) and Alltoall(v): every process sends and receives.
enum class EveryoneKind : uint8_t { kAllgather, kAlltoall };
int EveryoneDataMovement(const char* call, EveryoneKind kind,
                         const DataSide& send, const DataSide& receive,
                         MPI_Comm comm, MPI_Info info, MPI_Request* request,
                         CallForm form);

// MPI_Alltoallw: a count, a byte displacement and a datatype per rank.
int Alltoallw(const char* call, const void* send_buffer,
              coll::CountArray send_counts, coll::CountArray send_displacements,
              const MPI_Datatype* send_types, void* receive_buffer,
              coll::CountArray receive_counts,
              coll::CountArray receive_displacements,
              const MPI_Datatype* receive_types, MPI_Comm comm, MPI_Info info,
              MPI_Request* request, CallForm form);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_COLLECTIVES_DATA_MOVEMENT_H_
