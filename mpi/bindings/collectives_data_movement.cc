// MPI_Gather(v), MPI_Scatter(v), MPI_Allgather(v), MPI_Alltoall(v) and their
// nonblocking forms. Arguments are checked only where the standard makes
// them significant (e.g. Gather's receive side only at the root), and the
// side that MPI_IN_PLACE stands in for is not checked at all.
#include <algorithm>

#include "absl/strings/str_format.h"
#include "mpi/bindings/collective_util.h"

using minimpi::Communicator;
namespace coll = minimpi::coll;

namespace {

// A counts array and its displacements, one entry per rank; on success
// *any_data says whether some count is positive and *largest is the largest.
int CheckCountsAndDisplacements(const char* call, Communicator* comm,
                                coll::CountArray counts,
                                coll::CountArray displacements,
                                const char* what, bool* any_data,
                                MPI_Count* largest) {
  if (counts == nullptr) {
    return minimpi::RaiseError(comm, call, MPI_ERR_COUNT,
                               absl::StrFormat("null %s counts array", what));
  }
  if (displacements == nullptr) {
    return minimpi::RaiseError(
        comm, call, MPI_ERR_ARG,
        absl::StrFormat("null %s displacements array", what));
  }
  *any_data = false;
  *largest = 0;
  for (int rank = 0; rank < comm->peer_count(); ++rank) {
    if (counts[rank] < 0) {
      return minimpi::RaiseError(
          comm, call, MPI_ERR_COUNT,
          absl::StrFormat("negative %s count %d for rank %d", what,
                          counts[rank], rank));
    }
    *any_data = *any_data || counts[rank] > 0;
    *largest = std::max(*largest, counts[rank]);
  }
  return MPI_SUCCESS;
}

// --- Gather, Gatherv ---------------------------------------------------------

// Gather and Gatherv share everything but the root's receive layout:
// `receive_counts` == nullptr means Gather (one `receive_count`).
int Gather(const char* call, const void* send_buffer, MPI_Count send_count,
           MPI_Datatype send_type, void* receive_buffer,
           MPI_Count receive_count, coll::CountArray receive_counts,
           coll::CountArray displacements, MPI_Datatype receive_type, int root,
           MPI_Comm comm, MPI_Request* request, minimpi::CallForm form,
           bool variable) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  if (int error = minimpi::CheckCollectiveCommunicator(call, comm, &c))
    return error;
  if (int error = minimpi::CheckRoot(call, c, root)) return error;
  const bool is_root = minimpi::IsRoot(c, root);
  coll::Arguments arguments;
  arguments.root = root;

  if (minimpi::TakesNoPart(c, root) || (c->inter && is_root)) {
    // Nothing sent from here (an intercommunicator's root group).
  } else if (send_buffer == MPI_IN_PLACE) {
    if (!is_root || c->inter) return minimpi::InPlaceNotAllowed(call, c);
    arguments.in_place = true;
  } else {
    if (int error =
            minimpi::CheckTypedCount(call, c, send_buffer, send_count,
                                     send_type, &arguments.send_extent)) {
      return error;
    }
    arguments.send_buffer = send_buffer;
    arguments.send_count = send_count;
    arguments.send_type = send_type;
  }

  if (is_root) {
    if (receive_buffer == MPI_IN_PLACE)
      return minimpi::InPlaceNotAllowed(call, c);
    bool receives_data = false;
    MPI_Count checked_count = receive_count;
    if (variable) {
      if (int error = CheckCountsAndDisplacements(
              call, c, receive_counts, displacements, "receive", &receives_data,
              &checked_count)) {
        return error;
      }
    } else {
      receives_data = receive_count > 0;
    }
    if (int error =
            minimpi::CheckTypedCount(call, c, receive_buffer, checked_count,
                                     receive_type, &arguments.receive_extent)) {
      return error;
    }
    if (!arguments.in_place && !c->inter) {
      if (int error =
              minimpi::CheckNoAlias(call, c, send_buffer, send_count > 0,
                                    receive_buffer, receives_data)) {
        return error;
      }
    }
    arguments.receive_buffer = receive_buffer;
    arguments.receive_count = receive_count;
    arguments.receive_type = receive_type;
    arguments.receive_counts = receive_counts;
    arguments.receive_displacements = displacements;
  }
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  return minimpi::RunCollective(
      call, c,
      variable ? coll::Collective::kGatherv : coll::Collective::kGather,
      arguments, request, form);
}

// --- Scatter, Scatterv -------------------------------------------------------

int Scatter(const char* call, const void* send_buffer, MPI_Count send_count,
            coll::CountArray send_counts, coll::CountArray displacements,
            MPI_Datatype send_type, void* receive_buffer,
            MPI_Count receive_count, MPI_Datatype receive_type, int root,
            MPI_Comm comm, MPI_Request* request, minimpi::CallForm form,
            bool variable) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  if (int error = minimpi::CheckCollectiveCommunicator(call, comm, &c))
    return error;
  if (int error = minimpi::CheckRoot(call, c, root)) return error;
  const bool is_root = minimpi::IsRoot(c, root);
  coll::Arguments arguments;
  arguments.root = root;

  if (minimpi::TakesNoPart(c, root) || (c->inter && is_root)) {
    // Nothing received here (an intercommunicator's root group).
  } else if (receive_buffer == MPI_IN_PLACE) {
    if (!is_root || c->inter) return minimpi::InPlaceNotAllowed(call, c);
    arguments.in_place = true;
  } else {
    if (int error =
            minimpi::CheckTypedCount(call, c, receive_buffer, receive_count,
                                     receive_type, &arguments.receive_extent)) {
      return error;
    }
    arguments.receive_buffer = receive_buffer;
    arguments.receive_count = receive_count;
    arguments.receive_type = receive_type;
  }

  if (is_root) {
    if (send_buffer == MPI_IN_PLACE) return minimpi::InPlaceNotAllowed(call, c);
    bool sends_data = false;
    MPI_Count checked_count = send_count;
    if (variable) {
      if (int error = CheckCountsAndDisplacements(
              call, c, send_counts, displacements, "send", &sends_data,
              &checked_count)) {
        return error;
      }
    } else {
      sends_data = send_count > 0;
    }
    if (int error =
            minimpi::CheckTypedCount(call, c, send_buffer, checked_count,
                                     send_type, &arguments.send_extent)) {
      return error;
    }
    if (!arguments.in_place && !c->inter) {
      if (int error =
              minimpi::CheckNoAlias(call, c, send_buffer, sends_data,
                                    receive_buffer, receive_count > 0)) {
        return error;
      }
    }
    arguments.send_buffer = send_buffer;
    arguments.send_count = send_count;
    arguments.send_type = send_type;
    arguments.send_counts = send_counts;
    arguments.send_displacements = displacements;
  }
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  return minimpi::RunCollective(
      call, c,
      variable ? coll::Collective::kScatterv : coll::Collective::kScatter,
      arguments, request, form);
}

// --- Allgather, Allgatherv ---------------------------------------------------

int Allgather(const char* call, const void* send_buffer, MPI_Count send_count,
              MPI_Datatype send_type, void* receive_buffer,
              MPI_Count receive_count, coll::CountArray receive_counts,
              coll::CountArray displacements, MPI_Datatype receive_type,
              MPI_Comm comm, MPI_Request* request, minimpi::CallForm form,
              bool variable) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  if (int error = minimpi::CheckCollectiveCommunicator(call, comm, &c))
    return error;
  coll::Arguments arguments;

  if (send_buffer == MPI_IN_PLACE) {
    if (c->inter) return minimpi::InPlaceNotAllowed(call, c);
    arguments.in_place = true;
  } else {
    if (int error =
            minimpi::CheckTypedCount(call, c, send_buffer, send_count,
                                     send_type, &arguments.send_extent)) {
      return error;
    }
    arguments.send_buffer = send_buffer;
    arguments.send_count = send_count;
    arguments.send_type = send_type;
  }

  if (receive_buffer == MPI_IN_PLACE)
    return minimpi::InPlaceNotAllowed(call, c);
  bool receives_data = receive_count > 0;
  MPI_Count checked_count = receive_count;
  if (variable) {
    if (int error = CheckCountsAndDisplacements(
            call, c, receive_counts, displacements, "receive", &receives_data,
            &checked_count)) {
      return error;
    }
  }
  if (int error =
          minimpi::CheckTypedCount(call, c, receive_buffer, checked_count,
                                   receive_type, &arguments.receive_extent)) {
    return error;
  }
  if (!arguments.in_place) {
    if (int error = minimpi::CheckNoAlias(call, c, send_buffer, send_count > 0,
                                          receive_buffer, receives_data)) {
      return error;
    }
  }
  arguments.receive_buffer = receive_buffer;
  arguments.receive_count = receive_count;
  arguments.receive_type = receive_type;
  arguments.receive_counts = receive_counts;
  arguments.receive_displacements = displacements;
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  return minimpi::RunCollective(
      call, c,
      variable ? coll::Collective::kAllgatherv : coll::Collective::kAllgather,
      arguments, request, form);
}

// --- Alltoall, Alltoallv -----------------------------------------------------

int Alltoall(const char* call, const void* send_buffer, MPI_Count send_count,
             coll::CountArray send_counts, coll::CountArray send_displacements,
             MPI_Datatype send_type, void* receive_buffer,
             MPI_Count receive_count, coll::CountArray receive_counts,
             coll::CountArray receive_displacements, MPI_Datatype receive_type,
             MPI_Comm comm, MPI_Request* request, minimpi::CallForm form,
             bool variable) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  if (int error = minimpi::CheckCollectiveCommunicator(call, comm, &c))
    return error;
  coll::Arguments arguments;

  bool sends_data = false;
  if (send_buffer == MPI_IN_PLACE) {
    if (c->inter) return minimpi::InPlaceNotAllowed(call, c);
    arguments.in_place = true;
  } else {
    MPI_Count checked_count = send_count;
    sends_data = send_count > 0;
    if (variable) {
      if (int error = CheckCountsAndDisplacements(
              call, c, send_counts, send_displacements, "send", &sends_data,
              &checked_count)) {
        return error;
      }
    }
    if (int error =
            minimpi::CheckTypedCount(call, c, send_buffer, checked_count,
                                     send_type, &arguments.send_extent)) {
      return error;
    }
    arguments.send_buffer = send_buffer;
    arguments.send_count = send_count;
    arguments.send_type = send_type;
    arguments.send_counts = send_counts;
    arguments.send_displacements = send_displacements;
  }

  if (receive_buffer == MPI_IN_PLACE)
    return minimpi::InPlaceNotAllowed(call, c);
  bool receives_data = receive_count > 0;
  MPI_Count checked_count = receive_count;
  if (variable) {
    if (int error = CheckCountsAndDisplacements(
            call, c, receive_counts, receive_displacements, "receive",
            &receives_data, &checked_count)) {
      return error;
    }
  }
  if (int error =
          minimpi::CheckTypedCount(call, c, receive_buffer, checked_count,
                                   receive_type, &arguments.receive_extent)) {
    return error;
  }
  if (!arguments.in_place) {
    if (int error = minimpi::CheckNoAlias(call, c, send_buffer, sends_data,
                                          receive_buffer, receives_data)) {
      return error;
    }
  }
  arguments.receive_buffer = receive_buffer;
  arguments.receive_count = receive_count;
  arguments.receive_type = receive_type;
  arguments.receive_counts = receive_counts;
  arguments.receive_displacements = receive_displacements;
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  return minimpi::RunCollective(
      call, c,
      variable ? coll::Collective::kAlltoallv : coll::Collective::kAlltoall,
      arguments, request, form);
}

// --- Alltoallw -------------------------------------------------------------

// One side of MPI_Alltoallw: counts, byte displacements and a datatype per
// rank, each type committed, each buffer present where there is data.
int CheckAlltoallwSide(const char* call, Communicator* comm, const void* buffer,
                       coll::CountArray counts, coll::CountArray displacements,
                       const MPI_Datatype* types, const char* what) {
  if (counts == nullptr || displacements == nullptr || types == nullptr) {
    return minimpi::RaiseError(
        comm, call, MPI_ERR_ARG,
        absl::StrFormat("null %s counts, displacements or types array", what));
  }
  for (int rank = 0; rank < comm->peer_count(); ++rank) {
    const minimpi::Datatype* type;
    if (int error = minimpi::CheckBuffer(call, comm, buffer, counts[rank],
                                         types[rank], &type)) {
      return error;
    }
  }
  return MPI_SUCCESS;
}

int Alltoallw(const char* call, const void* send_buffer,
              coll::CountArray send_counts, coll::CountArray send_displacements,
              const MPI_Datatype* send_types, void* receive_buffer,
              coll::CountArray receive_counts,
              coll::CountArray receive_displacements,
              const MPI_Datatype* receive_types, MPI_Comm comm,
              MPI_Request* request, minimpi::CallForm form) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  if (int error = minimpi::CheckCollectiveCommunicator(call, comm, &c))
    return error;
  const bool in_place = send_buffer == MPI_IN_PLACE;
  if (in_place && c->inter) return minimpi::InPlaceNotAllowed(call, c);
  if (!in_place) {
    if (int error =
            CheckAlltoallwSide(call, c, send_buffer, send_counts,
                               send_displacements, send_types, "send")) {
      return error;
    }
  }
  if (receive_buffer == MPI_IN_PLACE) {
    return minimpi::InPlaceNotAllowed(call, c);
  }
  if (int error =
          CheckAlltoallwSide(call, c, receive_buffer, receive_counts,
                             receive_displacements, receive_types, "receive")) {
    return error;
  }
  if (int error = minimpi::CheckRequestPointer(call, c, request, form)) {
    return error;
  }
  const int ranks = c->peer_count();
  return minimpi::RunCollective(
      call, c, coll::Collective::kAlltoallv, coll::Arguments{}, request, form,
      [=](coll::CollectiveStaging& staging, coll::Arguments& arguments) {
        staging.StageAlltoallw(send_buffer, send_counts, send_displacements,
                               send_types, receive_buffer, receive_counts,
                               receive_displacements, receive_types, ranks,
                               in_place, &arguments);
      });
}

}  // namespace

extern "C" {

int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return Alltoallw("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes,
                   recvbuf, recvcounts, rdispls, recvtypes, comm, nullptr,
                   minimpi::CallForm::kBlocking);
}

int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[],
                    const int sdispls[], const MPI_Datatype sendtypes[],
                    void* recvbuf, const int recvcounts[], const int rdispls[],
                    const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request) {
  return Alltoallw("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes,
                   recvbuf, recvcounts, rdispls, recvtypes, comm, request,
                   minimpi::CallForm::kNonblocking);
}

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  return Gather("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                nullptr, nullptr, recvtype, root, comm, nullptr,
                minimpi::CallForm::kBlocking, /*variable=*/false);
}

int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  return Gather("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                nullptr, nullptr, recvtype, root, comm, request,
                minimpi::CallForm::kNonblocking, /*variable=*/false);
}

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return Gather("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                recvcounts, displs, recvtype, root, comm, nullptr,
                minimpi::CallForm::kBlocking, /*variable=*/true);
}

int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int displs[],
                  MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  return Gather("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                recvcounts, displs, recvtype, root, comm, request,
                minimpi::CallForm::kNonblocking, /*variable=*/true);
}

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
  return Scatter("MPI_Scatter", sendbuf, sendcount, nullptr, nullptr, sendtype,
                 recvbuf, recvcount, recvtype, root, comm, nullptr,
                 minimpi::CallForm::kBlocking, /*variable=*/false);
}

int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request) {
  return Scatter("MPI_Iscatter", sendbuf, sendcount, nullptr, nullptr, sendtype,
                 recvbuf, recvcount, recvtype, root, comm, request,
                 minimpi::CallForm::kNonblocking, /*variable=*/false);
}

int PMPI_Scatterv(const void* sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm) {
  return Scatter("MPI_Scatterv", sendbuf, 0, sendcounts, displs, sendtype,
                 recvbuf, recvcount, recvtype, root, comm, nullptr,
                 minimpi::CallForm::kBlocking, /*variable=*/true);
}

int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[],
                   const int displs[], MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, int root,
                   MPI_Comm comm, MPI_Request* request) {
  return Scatter("MPI_Iscatterv", sendbuf, 0, sendcounts, displs, sendtype,
                 recvbuf, recvcount, recvtype, root, comm, request,
                 minimpi::CallForm::kNonblocking, /*variable=*/true);
}

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm) {
  return Allgather("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf,
                   recvcount, nullptr, nullptr, recvtype, comm, nullptr,
                   minimpi::CallForm::kBlocking, /*variable=*/false);
}

int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, int recvcount, MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  return Allgather("MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf,
                   recvcount, nullptr, nullptr, recvtype, comm, request,
                   minimpi::CallForm::kNonblocking, /*variable=*/false);
}

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm) {
  return Allgather("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                   recvcounts, displs, recvtype, comm, nullptr,
                   minimpi::CallForm::kBlocking, /*variable=*/true);
}

int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, const int recvcounts[], const int displs[],
                     MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  return Allgather("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, 0,
                   recvcounts, displs, recvtype, comm, request,
                   minimpi::CallForm::kNonblocking, /*variable=*/true);
}

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm) {
  return Alltoall("MPI_Alltoall", sendbuf, sendcount, nullptr, nullptr,
                  sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                  comm, nullptr, minimpi::CallForm::kBlocking,
                  /*variable=*/false);
}

int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request* request) {
  return Alltoall("MPI_Ialltoall", sendbuf, sendcount, nullptr, nullptr,
                  sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                  comm, request, minimpi::CallForm::kNonblocking,
                  /*variable=*/false);
}

int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[],
                   MPI_Datatype recvtype, MPI_Comm comm) {
  return Alltoall("MPI_Alltoallv", sendbuf, 0, sendcounts, sdispls, sendtype,
                  recvbuf, 0, recvcounts, rdispls, recvtype, comm, nullptr,
                  minimpi::CallForm::kBlocking, /*variable=*/true);
}

int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[],
                    const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int rdispls[],
                    MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  return Alltoall("MPI_Ialltoallv", sendbuf, 0, sendcounts, sdispls, sendtype,
                  recvbuf, 0, recvcounts, rdispls, recvtype, comm, request,
                  minimpi::CallForm::kNonblocking, /*variable=*/true);
}

int PMPI_Alltoallw_init(const void* sendbuf, const int sendcounts[],
                        const int sdispls[], const MPI_Datatype sendtypes[],
                        void* recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[],
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Alltoallw_init";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Alltoallw(kCall, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                   recvcounts, rdispls, recvtypes, comm, request,
                   minimpi::CallForm::kPersistent);
}

int PMPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, int recvcount, MPI_Datatype recvtype,
                     int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request* request) {
  constexpr const char* kCall = "MPI_Gather_init";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Gather(kCall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                nullptr, nullptr, recvtype, root, comm, request,
                minimpi::CallForm::kPersistent, /*variable=*/false);
}

int PMPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Gatherv_init";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Gather(kCall, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                displs, recvtype, root, comm, request,
                minimpi::CallForm::kPersistent, /*variable=*/true);
}

int PMPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request) {
  constexpr const char* kCall = "MPI_Scatter_init";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Scatter(kCall, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf,
                 recvcount, recvtype, root, comm, request,
                 minimpi::CallForm::kPersistent, /*variable=*/false);
}

int PMPI_Scatterv_init(const void* sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Scatterv_init";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Scatter(kCall, sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                 recvcount, recvtype, root, comm, request,
                 minimpi::CallForm::kPersistent, /*variable=*/true);
}

int PMPI_Allgather_init(const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request) {
  constexpr const char* kCall = "MPI_Allgather_init";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Allgather(kCall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                   nullptr, nullptr, recvtype, comm, request,
                   minimpi::CallForm::kPersistent, /*variable=*/false);
}

int PMPI_Allgatherv_init(const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf,
                         const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request) {
  constexpr const char* kCall = "MPI_Allgatherv_init";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Allgather(kCall, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                   displs, recvtype, comm, request,
                   minimpi::CallForm::kPersistent, /*variable=*/true);
}

int PMPI_Alltoall_init(const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
  constexpr const char* kCall = "MPI_Alltoall_init";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Alltoall(kCall, sendbuf, sendcount, nullptr, nullptr, sendtype,
                  recvbuf, recvcount, nullptr, nullptr, recvtype, comm, request,
                  minimpi::CallForm::kPersistent, /*variable=*/false);
}

int PMPI_Alltoallv_init(const void* sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype,
                        void* recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Alltoallv_init";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Alltoall(kCall, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0,
                  recvcounts, rdispls, recvtype, comm, request,
                  minimpi::CallForm::kPersistent, /*variable=*/true);
}

// The large-count forms: the same bodies, with MPI_Count counts and
// MPI_Aint displacements.

int PMPI_Alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                     void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                     MPI_Comm comm) {
  return Alltoallw("MPI_Alltoallw_c", sendbuf, sendcounts, sdispls, sendtypes,
                   recvbuf, recvcounts, rdispls, recvtypes, comm, nullptr,
                   minimpi::CallForm::kBlocking);
}

int PMPI_Ialltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                      const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                      void* recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                      MPI_Comm comm, MPI_Request* request) {
  return Alltoallw("MPI_Ialltoallw_c", sendbuf, sendcounts, sdispls, sendtypes,
                   recvbuf, recvcounts, rdispls, recvtypes, comm, request,
                   minimpi::CallForm::kNonblocking);
}

int PMPI_Gather_c(const void* sendbuf, MPI_Count sendcount,
                  MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return Gather("MPI_Gather_c", sendbuf, sendcount, sendtype, recvbuf,
                recvcount, nullptr, nullptr, recvtype, root, comm, nullptr,
                minimpi::CallForm::kBlocking, /*variable=*/false);
}

int PMPI_Igather_c(const void* sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request* request) {
  return Gather("MPI_Igather_c", sendbuf, sendcount, sendtype, recvbuf,
                recvcount, nullptr, nullptr, recvtype, root, comm, request,
                minimpi::CallForm::kNonblocking, /*variable=*/false);
}

int PMPI_Gatherv_c(const void* sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, void* recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[],
                   MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return Gather("MPI_Gatherv_c", sendbuf, sendcount, sendtype, recvbuf, 0,
                recvcounts, displs, recvtype, root, comm, nullptr,
                minimpi::CallForm::kBlocking, /*variable=*/true);
}

int PMPI_Igatherv_c(const void* sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, void* recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[],
                    MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request* request) {
  return Gather("MPI_Igatherv_c", sendbuf, sendcount, sendtype, recvbuf, 0,
                recvcounts, displs, recvtype, root, comm, request,
                minimpi::CallForm::kNonblocking, /*variable=*/true);
}

int PMPI_Scatter_c(const void* sendbuf, MPI_Count sendcount,
                   MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return Scatter("MPI_Scatter_c", sendbuf, sendcount, nullptr, nullptr,
                 sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr,
                 minimpi::CallForm::kBlocking, /*variable=*/false);
}

int PMPI_Iscatter_c(const void* sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request* request) {
  return Scatter("MPI_Iscatter_c", sendbuf, sendcount, nullptr, nullptr,
                 sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                 minimpi::CallForm::kNonblocking, /*variable=*/false);
}

int PMPI_Scatterv_c(const void* sendbuf, const MPI_Count sendcounts[],
                    const MPI_Aint displs[], MPI_Datatype sendtype,
                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int root, MPI_Comm comm) {
  return Scatter("MPI_Scatterv_c", sendbuf, 0, sendcounts, displs, sendtype,
                 recvbuf, recvcount, recvtype, root, comm, nullptr,
                 minimpi::CallForm::kBlocking, /*variable=*/true);
}

int PMPI_Iscatterv_c(const void* sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint displs[], MPI_Datatype sendtype,
                     void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int root, MPI_Comm comm, MPI_Request* request) {
  return Scatter("MPI_Iscatterv_c", sendbuf, 0, sendcounts, displs, sendtype,
                 recvbuf, recvcount, recvtype, root, comm, request,
                 minimpi::CallForm::kNonblocking, /*variable=*/true);
}

int PMPI_Allgather_c(const void* sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, MPI_Comm comm) {
  return Allgather("MPI_Allgather_c", sendbuf, sendcount, sendtype, recvbuf,
                   recvcount, nullptr, nullptr, recvtype, comm, nullptr,
                   minimpi::CallForm::kBlocking, /*variable=*/false);
}

int PMPI_Iallgather_c(const void* sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request* request) {
  return Allgather("MPI_Iallgather_c", sendbuf, sendcount, sendtype, recvbuf,
                   recvcount, nullptr, nullptr, recvtype, comm, request,
                   minimpi::CallForm::kNonblocking, /*variable=*/false);
}

int PMPI_Allgatherv_c(const void* sendbuf, MPI_Count sendcount,
                      MPI_Datatype sendtype, void* recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm) {
  return Allgather("MPI_Allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, 0,
                   recvcounts, displs, recvtype, comm, nullptr,
                   minimpi::CallForm::kBlocking, /*variable=*/true);
}

int PMPI_Iallgatherv_c(const void* sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void* recvbuf,
                       const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request* request) {
  return Allgather("MPI_Iallgatherv_c", sendbuf, sendcount, sendtype, recvbuf,
                   0, recvcounts, displs, recvtype, comm, request,
                   minimpi::CallForm::kNonblocking, /*variable=*/true);
}

int PMPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  return Alltoall("MPI_Alltoall_c", sendbuf, sendcount, nullptr, nullptr,
                  sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                  comm, nullptr, minimpi::CallForm::kBlocking,
                  /*variable=*/false);
}

int PMPI_Ialltoall_c(const void* sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  return Alltoall("MPI_Ialltoall_c", sendbuf, sendcount, nullptr, nullptr,
                  sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                  comm, request, minimpi::CallForm::kNonblocking,
                  /*variable=*/false);
}

int PMPI_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[], MPI_Datatype sendtype,
                     void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype,
                     MPI_Comm comm) {
  return Alltoall("MPI_Alltoallv_c", sendbuf, 0, sendcounts, sdispls, sendtype,
                  recvbuf, 0, recvcounts, rdispls, recvtype, comm, nullptr,
                  minimpi::CallForm::kBlocking, /*variable=*/true);
}

int PMPI_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                      const MPI_Aint sdispls[], MPI_Datatype sendtype,
                      void* recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype,
                      MPI_Comm comm, MPI_Request* request) {
  return Alltoall("MPI_Ialltoallv_c", sendbuf, 0, sendcounts, sdispls, sendtype,
                  recvbuf, 0, recvcounts, rdispls, recvtype, comm, request,
                  minimpi::CallForm::kNonblocking, /*variable=*/true);
}

int PMPI_Alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[],
                          const MPI_Datatype sendtypes[], void* recvbuf,
                          const MPI_Count recvcounts[],
                          const MPI_Aint rdispls[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm,
                          MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Alltoallw_init_c";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Alltoallw(kCall, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                   recvcounts, rdispls, recvtypes, comm, request,
                   minimpi::CallForm::kPersistent);
}

int PMPI_Gather_init_c(const void* sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Gather_init_c";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Gather(kCall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                nullptr, nullptr, recvtype, root, comm, request,
                minimpi::CallForm::kPersistent, /*variable=*/false);
}

int PMPI_Gatherv_init_c(const void* sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void* recvbuf,
                        const MPI_Count recvcounts[], const MPI_Aint displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Gatherv_init_c";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Gather(kCall, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                displs, recvtype, root, comm, request,
                minimpi::CallForm::kPersistent, /*variable=*/true);
}

int PMPI_Scatter_init_c(const void* sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void* recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Scatter_init_c";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Scatter(kCall, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf,
                 recvcount, recvtype, root, comm, request,
                 minimpi::CallForm::kPersistent, /*variable=*/false);
}

int PMPI_Scatterv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint displs[], MPI_Datatype sendtype,
                         void* recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Scatterv_init_c";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Scatter(kCall, sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                 recvcount, recvtype, root, comm, request,
                 minimpi::CallForm::kPersistent, /*variable=*/true);
}

int PMPI_Allgather_init_c(const void* sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void* recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Allgather_init_c";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Allgather(kCall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                   nullptr, nullptr, recvtype, comm, request,
                   minimpi::CallForm::kPersistent, /*variable=*/false);
}

int PMPI_Allgatherv_init_c(const void* sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void* recvbuf,
                           const MPI_Count recvcounts[],
                           const MPI_Aint displs[], MPI_Datatype recvtype,
                           MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Allgatherv_init_c";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Allgather(kCall, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                   displs, recvtype, comm, request,
                   minimpi::CallForm::kPersistent, /*variable=*/true);
}

int PMPI_Alltoall_init_c(const void* sendbuf, MPI_Count sendcount,
                         MPI_Datatype sendtype, void* recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Alltoall_init_c";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Alltoall(kCall, sendbuf, sendcount, nullptr, nullptr, sendtype,
                  recvbuf, recvcount, nullptr, nullptr, recvtype, comm, request,
                  minimpi::CallForm::kPersistent, /*variable=*/false);
}

int PMPI_Alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype,
                          void* recvbuf, const MPI_Count recvcounts[],
                          const MPI_Aint rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Alltoallv_init_c";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = minimpi::CheckCollectiveInfo(kCall, comm, info)) {
    return error;
  }
  return Alltoall(kCall, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0,
                  recvcounts, rdispls, recvtype, comm, request,
                  minimpi::CallForm::kPersistent, /*variable=*/true);
}

}  // extern "C"

MINIMPI_EXPORT(Gather)
MINIMPI_EXPORT(Igather)
MINIMPI_EXPORT(Gatherv)
MINIMPI_EXPORT(Igatherv)
MINIMPI_EXPORT(Scatter)
MINIMPI_EXPORT(Iscatter)
MINIMPI_EXPORT(Scatterv)
MINIMPI_EXPORT(Iscatterv)
MINIMPI_EXPORT(Allgather)
MINIMPI_EXPORT(Iallgather)
MINIMPI_EXPORT(Allgatherv)
MINIMPI_EXPORT(Iallgatherv)
MINIMPI_EXPORT(Alltoall)
MINIMPI_EXPORT(Ialltoall)
MINIMPI_EXPORT(Alltoallv)
MINIMPI_EXPORT(Ialltoallv)
MINIMPI_EXPORT(Alltoallw)
MINIMPI_EXPORT(Ialltoallw)
MINIMPI_EXPORT(Alltoallw_init)
MINIMPI_EXPORT(Gather_init)
MINIMPI_EXPORT(Gatherv_init)
MINIMPI_EXPORT(Scatter_init)
MINIMPI_EXPORT(Scatterv_init)
MINIMPI_EXPORT(Allgather_init)
MINIMPI_EXPORT(Allgatherv_init)
MINIMPI_EXPORT(Alltoall_init)
MINIMPI_EXPORT(Alltoallv_init)
MINIMPI_EXPORT(Alltoallw_c)
MINIMPI_EXPORT(Ialltoallw_c)
MINIMPI_EXPORT(Gather_c)
MINIMPI_EXPORT(Igather_c)
MINIMPI_EXPORT(Gatherv_c)
MINIMPI_EXPORT(Igatherv_c)
MINIMPI_EXPORT(Scatter_c)
MINIMPI_EXPORT(Iscatter_c)
MINIMPI_EXPORT(Scatterv_c)
MINIMPI_EXPORT(Iscatterv_c)
MINIMPI_EXPORT(Allgather_c)
MINIMPI_EXPORT(Iallgather_c)
MINIMPI_EXPORT(Allgatherv_c)
MINIMPI_EXPORT(Iallgatherv_c)
MINIMPI_EXPORT(Alltoall_c)
MINIMPI_EXPORT(Ialltoall_c)
MINIMPI_EXPORT(Alltoallv_c)
MINIMPI_EXPORT(Ialltoallv_c)
MINIMPI_EXPORT(Alltoallw_init_c)
MINIMPI_EXPORT(Gather_init_c)
MINIMPI_EXPORT(Gatherv_init_c)
MINIMPI_EXPORT(Scatter_init_c)
MINIMPI_EXPORT(Scatterv_init_c)
MINIMPI_EXPORT(Allgather_init_c)
MINIMPI_EXPORT(Allgatherv_init_c)
MINIMPI_EXPORT(Alltoall_init_c)
MINIMPI_EXPORT(Alltoallv_init_c)
