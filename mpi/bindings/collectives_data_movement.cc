// MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v), MPI_Alltoall(v,w): the
// checks and the call into mpi/coll, shared by every form of each call
// (blocking, nonblocking, persistent, large-count: the bindings are in
// collectives_data_movement_forms.cc). Arguments are checked only where the
// standard makes them significant (e.g. Gather's receive side only at the
// root), and the side that MPI_IN_PLACE stands in for is not checked at all.
#include "mpi/bindings/collectives_data_movement.h"

#include <algorithm>

#include "absl/strings/str_format.h"

using minimpi::Communicator;
namespace coll = minimpi::coll;

namespace minimpi {
namespace {

// A counts array and its displacements, one entry per rank; on success
// *any_data says whether some count is positive and *largest is the largest.
int CheckCountsAndDisplacements(const char* call, Communicator* comm,
                                coll::CountArray counts,
                                coll::CountArray displacements,
                                const char* what, bool* any_data,
                                MPI_Count* largest) {
  if (counts == nullptr) {
    return RaiseError(comm, call, MPI_ERR_COUNT,
                      absl::StrFormat("null %s counts array", what));
  }
  if (displacements == nullptr) {
    return RaiseError(comm, call, MPI_ERR_ARG,
                      absl::StrFormat("null %s displacements array", what));
  }
  *any_data = false;
  *largest = 0;
  for (int rank = 0; rank < comm->peer_count(); ++rank) {
    if (counts[rank] < 0) {
      return RaiseError(comm, call, MPI_ERR_COUNT,
                        absl::StrFormat("negative %s count %d for rank %d",
                                        what, counts[rank], rank));
    }
    *any_data = *any_data || counts[rank] > 0;
    *largest = std::max(*largest, counts[rank]);
  }
  return MPI_SUCCESS;
}

// Checks one side ("send" or "receive") and, on success, records it in
// `arguments`: a buffer of `count` items, or in a v-form a count and a
// displacement per rank (the buffer must then hold the largest count).
// *has_data says whether any item moves from or to the buffer.
int CheckSide(const char* call, Communicator* comm, const DataSide& side,
              bool send, bool* has_data, coll::Arguments* arguments) {
  MPI_Count checked_count = side.count;
  *has_data = side.count > 0;
  if (side.variable) {
    if (int error = CheckCountsAndDisplacements(
            call, comm, side.counts, side.displacements,
            send ? "send" : "receive", has_data, &checked_count)) {
      return error;
    }
  }
  size_t* extent = send ? &arguments->send_extent : &arguments->receive_extent;
  if (int error = CheckTypedCount(call, comm, side.buffer, checked_count,
                                  side.type, extent)) {
    return error;
  }
  if (send) {
    arguments->send_buffer = side.buffer;
    arguments->send_count = side.count;
    arguments->send_type = side.type;
    arguments->send_counts = side.counts;
    arguments->send_displacements = side.displacements;
  } else {
    arguments->receive_buffer = const_cast<void*>(side.buffer);
    arguments->receive_count = side.count;
    arguments->receive_type = side.type;
    arguments->receive_counts = side.counts;
    arguments->receive_displacements = side.displacements;
  }
  return MPI_SUCCESS;
}

// The collective after its checks: the request pointer, then mpi/coll.
int Finish(const char* call, Communicator* comm, coll::Collective collective,
           const coll::Arguments& arguments, MPI_Request* request,
           CallForm form) {
  if (int error = CheckRequestPointer(call, comm, request, form)) {
    return error;
  }
  return RunCollective(call, comm, collective, arguments, request, form);
}

// One side of MPI_Alltoallw: counts, byte displacements and a datatype per
// rank, each type committed, each buffer present where there is data.
int CheckAlltoallwSide(const char* call, Communicator* comm, const void* buffer,
                       coll::CountArray counts, coll::CountArray displacements,
                       const MPI_Datatype* types, const char* what) {
  if (counts == nullptr || displacements == nullptr || types == nullptr) {
    return RaiseError(
        comm, call, MPI_ERR_ARG,
        absl::StrFormat("null %s counts, displacements or types array", what));
  }
  for (int rank = 0; rank < comm->peer_count(); ++rank) {
    const Datatype* type;
    if (int error =
            CheckBuffer(call, comm, buffer, counts[rank], types[rank], &type)) {
      return error;
    }
  }
  return MPI_SUCCESS;
}

}  // namespace

int RootedDataMovement(const char* call, RootedKind kind, const DataSide& send,
                       const DataSide& receive, int root, MPI_Comm comm,
                       MPI_Info info, MPI_Request* request, CallForm form) {
  Communicator* c = nullptr;
  if (int error = BeginCollective(call, comm, info, form, &c)) return error;
  if (int error = CheckRoot(call, c, root)) return error;
  const bool is_root = IsRoot(c, root);
  // Gather: every process sends one block, the root receives them all;
  // Scatter the other way round.
  const bool gathers = kind == RootedKind::kGather;
  const DataSide& each = gathers ? send : receive;
  const DataSide& at_root = gathers ? receive : send;
  coll::Arguments arguments;
  arguments.root = root;
  bool each_has_data = false;
  if (TakesNoPart(c, root) || (c->inter && is_root)) {
    // Nothing moves here but at the root (an intercommunicator's root
    // group).
  } else if (each.buffer == MPI_IN_PLACE) {
    if (!is_root || c->inter) return InPlaceNotAllowed(call, c);
    arguments.in_place = true;
  } else if (int error = CheckSide(call, c, each, /*send=*/gathers,
                                   &each_has_data, &arguments)) {
    return error;
  }
  if (is_root) {
    if (at_root.buffer == MPI_IN_PLACE) return InPlaceNotAllowed(call, c);
    bool root_has_data;
    if (int error = CheckSide(call, c, at_root, /*send=*/!gathers,
                              &root_has_data, &arguments)) {
      return error;
    }
    if (!arguments.in_place && !c->inter) {
      if (int error = CheckNoAlias(
              call, c, send.buffer, gathers ? each_has_data : root_has_data,
              receive.buffer, gathers ? root_has_data : each_has_data)) {
        return error;
      }
    }
  }
  coll::Collective collective =
      gathers ? (at_root.variable ? coll::Collective::kGatherv
                                  : coll::Collective::kGather)
              : (at_root.variable ? coll::Collective::kScatterv
                                  : coll::Collective::kScatter);
  return Finish(call, c, collective, arguments, request, form);
}

int EveryoneDataMovement(const char* call, EveryoneKind kind,
                         const DataSide& send, const DataSide& receive,
                         MPI_Comm comm, MPI_Info info, MPI_Request* request,
                         CallForm form) {
  Communicator* c = nullptr;
  if (int error = BeginCollective(call, comm, info, form, &c)) return error;
  coll::Arguments arguments;
  bool sends_data = false;
  if (send.buffer == MPI_IN_PLACE) {
    if (c->inter) return InPlaceNotAllowed(call, c);
    arguments.in_place = true;
  } else if (int error = CheckSide(call, c, send, /*send=*/true, &sends_data,
                                   &arguments)) {
    return error;
  }
  if (receive.buffer == MPI_IN_PLACE) return InPlaceNotAllowed(call, c);
  bool receives_data;
  if (int error = CheckSide(call, c, receive, /*send=*/false, &receives_data,
                            &arguments)) {
    return error;
  }
  if (!arguments.in_place) {
    if (int error = CheckNoAlias(call, c, send.buffer, sends_data,
                                 receive.buffer, receives_data)) {
      return error;
    }
  }
  coll::Collective collective =
      kind == EveryoneKind::kAllgather
          ? (receive.variable ? coll::Collective::kAllgatherv
                              : coll::Collective::kAllgather)
          : (receive.variable ? coll::Collective::kAlltoallv
                              : coll::Collective::kAlltoall);
  return Finish(call, c, collective, arguments, request, form);
}

int Alltoallw(const char* call, const void* send_buffer,
              coll::CountArray send_counts, coll::CountArray send_displacements,
              const MPI_Datatype* send_types, void* receive_buffer,
              coll::CountArray receive_counts,
              coll::CountArray receive_displacements,
              const MPI_Datatype* receive_types, MPI_Comm comm, MPI_Info info,
              MPI_Request* request, CallForm form) {
  Communicator* c = nullptr;
  if (int error = BeginCollective(call, comm, info, form, &c)) return error;
  const bool in_place = send_buffer == MPI_IN_PLACE;
  if (in_place && c->inter) return InPlaceNotAllowed(call, c);
  if (!in_place) {
    if (int error =
            CheckAlltoallwSide(call, c, send_buffer, send_counts,
                               send_displacements, send_types, "send")) {
      return error;
    }
  }
  if (receive_buffer == MPI_IN_PLACE) return InPlaceNotAllowed(call, c);
  if (int error =
          CheckAlltoallwSide(call, c, receive_buffer, receive_counts,
                             receive_displacements, receive_types, "receive")) {
    return error;
  }
  if (int error = CheckRequestPointer(call, c, request, form)) return error;
  const int ranks = c->peer_count();
  return RunCollective(
      call, c, coll::Collective::kAlltoallv, coll::Arguments{}, request, form,
      [=](coll::CollectiveStaging& staging, coll::Arguments& arguments) {
        staging.StageAlltoallw(send_buffer, send_counts, send_displacements,
                               send_types, receive_buffer, receive_counts,
                               receive_displacements, receive_types, ranks,
                               in_place, &arguments);
      });
}

}  // namespace minimpi
