// Neighbourhood collectives, blocking and nonblocking, on Cartesian, graph
// and distributed-graph communicators: the bindings check arguments,
// describe each neighbour's block (coll::NeighborBlock: count items of a
// datatype, predefined or derived, at a byte displacement) and run the
// schedule mpi/coll/neighborhood builds. MPI_IN_PLACE has no meaning here
// and is refused.
#include "mpi/coll/neighborhood.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/collective_util.h"

using minimpi::Communicator;
using minimpi::RaiseError;
namespace coll = minimpi::coll;
namespace topo = minimpi::topo;

namespace {

// The communicator and its neighbours (after BeginCollective's checks);
// MPI_ERR_TOPOLOGY without a topology.
int CheckNeighbors(const char* call, MPI_Comm comm, MPI_Info info,
                   minimpi::CallForm form, Communicator** c,
                   topo::NeighborLists* neighbors) {
  if (int error = minimpi::BeginCollective(call, comm, info, form, c,
                                           /*intracommunicator_only=*/true)) {
    return error;
  }
  if ((*c)->topology == nullptr) {
    return RaiseError(*c, call, MPI_ERR_TOPOLOGY,
                      "the communicator has no process topology");
  }
  *neighbors = (*c)->topology->NeighborsOf((*c)->rank);
  return MPI_SUCCESS;
}

// One side's buffer: no MPI_IN_PLACE; type and count checked; the buffer
// itself only when some neighbour on that side needs it.
int CheckSide(const char* call, Communicator* c, const void* buffer,
              MPI_Count count, MPI_Datatype type, bool used,
              const minimpi::Datatype** datatype) {
  if (buffer == MPI_IN_PLACE) return minimpi::InPlaceNotAllowed(call, c);
  // An unused side may pass a null buffer; a negative count is wrong
  // anyway.
  return minimpi::CheckBuffer(call, c, buffer, used || count < 0 ? count : 0,
                              type, datatype);
}

// Counts (and displacements) for each of `degree` neighbours.
int CheckCounts(const char* call, Communicator* c, coll::CountArray counts,
                const void* displacements, size_t degree, const char* what) {
  if (degree == 0) return MPI_SUCCESS;
  if (counts == nullptr || displacements == nullptr) {
    return RaiseError(c, call, MPI_ERR_ARG,
                      absl::StrFormat("null %s counts or displacements", what));
  }
  for (size_t i = 0; i < degree; ++i) {
    if (counts[i] < 0) {
      return RaiseError(c, call, MPI_ERR_COUNT,
                        absl::StrFormat("negative %s count %d for neighbour "
                                        "%d",
                                        what, counts[i], i));
    }
  }
  return MPI_SUCCESS;
}

int RequestCheck(const char* call, Communicator* c, MPI_Request* request,
                 minimpi::CallForm form) {
  return minimpi::CheckRequestPointer(call, c, request, form);
}

// Runs the exchange to the end, or starts it and hands back its request.
int Run(const char* call, Communicator* c, coll::CollectiveKind kind,
        const topo::NeighborLists& neighbors, const void* send_buffer,
        const std::vector<coll::NeighborBlock>& send_blocks,
        void* receive_buffer,
        const std::vector<coll::NeighborBlock>& receive_blocks,
        MPI_Request* request, minimpi::CallForm form) {
  if (form == minimpi::CallForm::kPersistent) {
    // Send blocks of datatypes that are not dense travel as packed copies
    // made while building: such a schedule is built again at each start.
    const bool rebuild_each_start =
        std::any_of(send_blocks.begin(), send_blocks.end(),
                    [](const coll::NeighborBlock& b) {
                      return b.count > 0 && !b.type->dense();
                    });
    return minimpi::InitPersistentCollective(
        call, c,
        [c, kind, neighbors, send_buffer, send_blocks, receive_buffer,
         receive_blocks] {
          return coll::BuildNeighborExchange(*c, kind, neighbors, send_buffer,
                                             send_blocks, receive_buffer,
                                             receive_blocks);
        },
        rebuild_each_start, request);
  }
  minimpi::p2p::PointToPoint& p2p = minimpi::Instance::Get().p2p();
  auto schedule =
      coll::BuildNeighborExchange(*c, kind, neighbors, send_buffer, send_blocks,
                                  receive_buffer, receive_blocks);
  if (form == minimpi::CallForm::kNonblocking) {
    minimpi::vci::Request* started = schedule.release()->Start(p2p);
    started->owner = minimpi::OwnerValue(c);
    *request = minimpi::ToHandle(started);
    return MPI_SUCCESS;
  }
  if (coll::Schedule::Run(std::move(schedule), p2p)) return MPI_SUCCESS;
  return RaiseError(c, call, MPI_ERR_TRUNCATE,
                    "message truncated: neighbours passed counts or types "
                    "that do not match");
}

// Allgather: the same block to every destination; block i of the receive
// buffer from source i (Allgatherv: at displs[i], recvcounts[i] items).
int NeighborAllgather(const char* call, const void* sendbuf,
                      MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                      MPI_Count recvcount, coll::CountArray recvcounts,
                      coll::CountArray displs, MPI_Datatype recvtype,
                      MPI_Comm comm, MPI_Info info, MPI_Request* request,
                      minimpi::CallForm form, bool variable) {
  Communicator* c = nullptr;
  topo::NeighborLists neighbors;
  if (int error = CheckNeighbors(call, comm, info, form, &c, &neighbors))
    return error;
  const size_t in = neighbors.sources.size();
  const size_t out = neighbors.destinations.size();
  const minimpi::Datatype* send_type;
  const minimpi::Datatype* receive_type;
  if (int error = CheckSide(call, c, sendbuf, sendcount, sendtype, out > 0,
                            &send_type)) {
    return error;
  }
  if (variable) {
    if (int error =
            CheckCounts(call, c, recvcounts, displs.data(), in, "receive")) {
      return error;
    }
  }
  MPI_Count largest = recvcount;
  if (variable) {
    largest = 0;
    for (size_t i = 0; i < in; ++i) largest = std::max(largest, recvcounts[i]);
  }
  if (int error = CheckSide(call, c, recvbuf, largest, recvtype, in > 0,
                            &receive_type)) {
    return error;
  }
  if (int error = RequestCheck(call, c, request, form)) return error;
  std::vector<coll::NeighborBlock> send_blocks(out, {0, sendcount, send_type});
  std::vector<coll::NeighborBlock> receive_blocks(in);
  const MPI_Aint unit = static_cast<MPI_Aint>(receive_type->extent());
  for (size_t i = 0; i < in; ++i) {
    receive_blocks[i] =
        variable
            ? coll::NeighborBlock{displs[i] * unit, recvcounts[i], receive_type}
            : coll::NeighborBlock{static_cast<MPI_Aint>(i) * recvcount * unit,
                                  recvcount, receive_type};
  }
  return Run(call, c, coll::CollectiveKind::kAllgather, neighbors, sendbuf,
             send_blocks, recvbuf, receive_blocks, request, form);
}

// Alltoall and Alltoallv: block i of the send buffer to destination i,
// block i of the receive buffer from source i.
int NeighborAlltoall(const char* call, const void* sendbuf, MPI_Count sendcount,
                     coll::CountArray sendcounts, coll::CountArray sdispls,
                     MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                     coll::CountArray recvcounts, coll::CountArray rdispls,
                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                     MPI_Request* request, minimpi::CallForm form,
                     bool variable) {
  Communicator* c = nullptr;
  topo::NeighborLists neighbors;
  if (int error = CheckNeighbors(call, comm, info, form, &c, &neighbors))
    return error;
  const size_t in = neighbors.sources.size();
  const size_t out = neighbors.destinations.size();
  MPI_Count largest_send = sendcount, largest_receive = recvcount;
  if (variable) {
    if (int error =
            CheckCounts(call, c, sendcounts, sdispls.data(), out, "send")) {
      return error;
    }
    if (int error =
            CheckCounts(call, c, recvcounts, rdispls.data(), in, "receive")) {
      return error;
    }
    largest_send = largest_receive = 0;
    for (size_t i = 0; i < out; ++i) {
      largest_send = std::max(largest_send, sendcounts[i]);
    }
    for (size_t i = 0; i < in; ++i) {
      largest_receive = std::max(largest_receive, recvcounts[i]);
    }
  }
  const minimpi::Datatype* send_type;
  const minimpi::Datatype* receive_type;
  if (int error = CheckSide(call, c, sendbuf, largest_send, sendtype, out > 0,
                            &send_type)) {
    return error;
  }
  if (int error = CheckSide(call, c, recvbuf, largest_receive, recvtype, in > 0,
                            &receive_type)) {
    return error;
  }
  if (int error = RequestCheck(call, c, request, form)) return error;
  // Block i: at displs[i] (v-form) or i blocks in, in items of the type.
  auto block = [&](size_t i, MPI_Count count, coll::CountArray counts,
                   coll::CountArray displs, const minimpi::Datatype* type) {
    const MPI_Aint unit = static_cast<MPI_Aint>(type->extent());
    return variable ? coll::NeighborBlock{displs[i] * unit, counts[i], type}
                    : coll::NeighborBlock{
                          static_cast<MPI_Aint>(i) * count * unit, count, type};
  };
  std::vector<coll::NeighborBlock> send_blocks(out), receive_blocks(in);
  for (size_t i = 0; i < out; ++i) {
    send_blocks[i] = block(i, sendcount, sendcounts, sdispls, send_type);
  }
  for (size_t i = 0; i < in; ++i) {
    receive_blocks[i] = block(i, recvcount, recvcounts, rdispls, receive_type);
  }
  return Run(call, c, coll::CollectiveKind::kAlltoall, neighbors, sendbuf,
             send_blocks, recvbuf, receive_blocks, request, form);
}

// One side of Alltoallw: per-neighbour counts, byte displacements and
// datatypes.
int AlltoallwSide(const char* call, Communicator* c, const void* buffer,
                  coll::CountArray counts, const MPI_Aint* displacements,
                  const MPI_Datatype* types, size_t degree, const char* what,
                  std::vector<coll::NeighborBlock>* blocks) {
  if (buffer == MPI_IN_PLACE) return minimpi::InPlaceNotAllowed(call, c);
  if (int error = CheckCounts(call, c, counts, displacements, degree, what)) {
    return error;
  }
  if (degree > 0 && types == nullptr) {
    return RaiseError(c, call, MPI_ERR_ARG,
                      absl::StrFormat("null %s datatypes array", what));
  }
  blocks->resize(degree);
  for (size_t i = 0; i < degree; ++i) {
    const minimpi::Datatype* type;
    if (int error = minimpi::CheckBuffer(
            call, c, minimpi::BlockAddress(buffer, displacements[i]), counts[i],
            types[i], &type)) {
      return error;
    }
    (*blocks)[i] = {displacements[i], counts[i], type};
  }
  return MPI_SUCCESS;
}

int NeighborAlltoallw(const char* call, const void* sendbuf,
                      coll::CountArray sendcounts, const MPI_Aint* sdispls,
                      const MPI_Datatype* sendtypes, void* recvbuf,
                      coll::CountArray recvcounts, const MPI_Aint* rdispls,
                      const MPI_Datatype* recvtypes, MPI_Comm comm,
                      MPI_Info info, MPI_Request* request,
                      minimpi::CallForm form) {
  Communicator* c = nullptr;
  topo::NeighborLists neighbors;
  if (int error = CheckNeighbors(call, comm, info, form, &c, &neighbors))
    return error;
  std::vector<coll::NeighborBlock> send_blocks, receive_blocks;
  if (int error =
          AlltoallwSide(call, c, sendbuf, sendcounts, sdispls, sendtypes,
                        neighbors.destinations.size(), "send", &send_blocks)) {
    return error;
  }
  if (int error =
          AlltoallwSide(call, c, recvbuf, recvcounts, rdispls, recvtypes,
                        neighbors.sources.size(), "receive", &receive_blocks)) {
    return error;
  }
  if (int error = RequestCheck(call, c, request, form)) return error;
  return Run(call, c, coll::CollectiveKind::kAlltoall, neighbors, sendbuf,
             send_blocks, recvbuf, receive_blocks, request, form);
}

}  // namespace

extern "C" {

int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  return NeighborAllgather("MPI_Neighbor_allgather", sendbuf, sendcount,
                           sendtype, recvbuf, recvcount, nullptr, nullptr,
                           recvtype, comm, MPI_INFO_NULL, nullptr,
                           minimpi::CallForm::kBlocking, false);
}

int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf,
                             int recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request) {
  return NeighborAllgather("MPI_Ineighbor_allgather", sendbuf, sendcount,
                           sendtype, recvbuf, recvcount, nullptr, nullptr,
                           recvtype, comm, MPI_INFO_NULL, request,
                           minimpi::CallForm::kNonblocking, false);
}

int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return NeighborAllgather("MPI_Neighbor_allgatherv", sendbuf, sendcount,
                           sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                           comm, MPI_INFO_NULL, nullptr,
                           minimpi::CallForm::kBlocking, true);
}

int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount,
                              MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request* request) {
  return NeighborAllgather("MPI_Ineighbor_allgatherv", sendbuf, sendcount,
                           sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                           comm, MPI_INFO_NULL, request,
                           minimpi::CallForm::kNonblocking, true);
}

int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  return NeighborAlltoall("MPI_Neighbor_alltoall", sendbuf, sendcount, nullptr,
                          nullptr, sendtype, recvbuf, recvcount, nullptr,
                          nullptr, recvtype, comm, MPI_INFO_NULL, nullptr,
                          minimpi::CallForm::kBlocking, false);
}

int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  return NeighborAlltoall("MPI_Ineighbor_alltoall", sendbuf, sendcount, nullptr,
                          nullptr, sendtype, recvbuf, recvcount, nullptr,
                          nullptr, recvtype, comm, MPI_INFO_NULL, request,
                          minimpi::CallForm::kNonblocking, false);
}

int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm) {
  return NeighborAlltoall("MPI_Neighbor_alltoallv", sendbuf, 0, sendcounts,
                          sdispls, sendtype, recvbuf, 0, recvcounts, rdispls,
                          recvtype, comm, MPI_INFO_NULL, nullptr,
                          minimpi::CallForm::kBlocking, true);
}

int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                             const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request) {
  return NeighborAlltoall("MPI_Ineighbor_alltoallv", sendbuf, 0, sendcounts,
                          sdispls, sendtype, recvbuf, 0, recvcounts, rdispls,
                          recvtype, comm, MPI_INFO_NULL, request,
                          minimpi::CallForm::kNonblocking, true);
}

int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf,
                            const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return NeighborAlltoallw("MPI_Neighbor_alltoallw", sendbuf, sendcounts,
                           sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes, comm, MPI_INFO_NULL, nullptr,
                           minimpi::CallForm::kBlocking);
}

int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                             const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf,
                             const int recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request* request) {
  return NeighborAlltoallw("MPI_Ineighbor_alltoallw", sendbuf, sendcounts,
                           sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes, comm, MPI_INFO_NULL, request,
                           minimpi::CallForm::kNonblocking);
}

int PMPI_Neighbor_allgather_init(const void* sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  return NeighborAllgather("MPI_Neighbor_allgather_init", sendbuf, sendcount,
                           sendtype, recvbuf, recvcount, nullptr, nullptr,
                           recvtype, comm, info, request,
                           minimpi::CallForm::kPersistent, false);
}

int PMPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void* recvbuf,
                                  const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request* request) {
  return NeighborAllgather("MPI_Neighbor_allgatherv_init", sendbuf, sendcount,
                           sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                           comm, info, request, minimpi::CallForm::kPersistent,
                           true);
}

int PMPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount,
                                MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  return NeighborAlltoall("MPI_Neighbor_alltoall_init", sendbuf, sendcount,
                          nullptr, nullptr, sendtype, recvbuf, recvcount,
                          nullptr, nullptr, recvtype, comm, info, request,
                          minimpi::CallForm::kPersistent, false);
}

int PMPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[],
                                 const int sdispls[], MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  return NeighborAlltoall("MPI_Neighbor_alltoallv_init", sendbuf, 0, sendcounts,
                          sdispls, sendtype, recvbuf, 0, recvcounts, rdispls,
                          recvtype, comm, info, request,
                          minimpi::CallForm::kPersistent, true);
}

int PMPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void* recvbuf,
                                 const int recvcounts[],
                                 const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request) {
  return NeighborAlltoallw("MPI_Neighbor_alltoallw_init", sendbuf, sendcounts,
                           sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes, comm, info, request,
                           minimpi::CallForm::kPersistent);
}

// The large-count forms: the same bodies, with MPI_Count counts and
// MPI_Aint displacements.

int PMPI_Neighbor_allgather_c(const void* sendbuf, MPI_Count sendcount,
                              MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return NeighborAllgather("MPI_Neighbor_allgather_c", sendbuf, sendcount,
                           sendtype, recvbuf, recvcount, nullptr, nullptr,
                           recvtype, comm, MPI_INFO_NULL, nullptr,
                           minimpi::CallForm::kBlocking, false);
}

int PMPI_Ineighbor_allgather_c(const void* sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void* recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request* request) {
  return NeighborAllgather("MPI_Ineighbor_allgather_c", sendbuf, sendcount,
                           sendtype, recvbuf, recvcount, nullptr, nullptr,
                           recvtype, comm, MPI_INFO_NULL, request,
                           minimpi::CallForm::kNonblocking, false);
}

int PMPI_Neighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void* recvbuf,
                               const MPI_Count recvcounts[],
                               const MPI_Aint displs[], MPI_Datatype recvtype,
                               MPI_Comm comm) {
  return NeighborAllgather("MPI_Neighbor_allgatherv_c", sendbuf, sendcount,
                           sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                           comm, MPI_INFO_NULL, nullptr,
                           minimpi::CallForm::kBlocking, true);
}

int PMPI_Ineighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount,
                                MPI_Datatype sendtype, void* recvbuf,
                                const MPI_Count recvcounts[],
                                const MPI_Aint displs[], MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Request* request) {
  return NeighborAllgather("MPI_Ineighbor_allgatherv_c", sendbuf, sendcount,
                           sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                           comm, MPI_INFO_NULL, request,
                           minimpi::CallForm::kNonblocking, true);
}

int PMPI_Neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm) {
  return NeighborAlltoall("MPI_Neighbor_alltoall_c", sendbuf, sendcount,
                          nullptr, nullptr, sendtype, recvbuf, recvcount,
                          nullptr, nullptr, recvtype, comm, MPI_INFO_NULL,
                          nullptr, minimpi::CallForm::kBlocking, false);
}

int PMPI_Ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount,
                              MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  return NeighborAlltoall("MPI_Ineighbor_alltoall_c", sendbuf, sendcount,
                          nullptr, nullptr, sendtype, recvbuf, recvcount,
                          nullptr, nullptr, recvtype, comm, MPI_INFO_NULL,
                          request, minimpi::CallForm::kNonblocking, false);
}

int PMPI_Neighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return NeighborAlltoall("MPI_Neighbor_alltoallv_c", sendbuf, 0, sendcounts,
                          sdispls, sendtype, recvbuf, 0, recvcounts, rdispls,
                          recvtype, comm, MPI_INFO_NULL, nullptr,
                          minimpi::CallForm::kBlocking, true);
}

int PMPI_Ineighbor_alltoallv_c(const void* sendbuf,
                               const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype,
                               void* recvbuf, const MPI_Count recvcounts[],
                               const MPI_Aint rdispls[], MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request* request) {
  return NeighborAlltoall("MPI_Ineighbor_alltoallv_c", sendbuf, 0, sendcounts,
                          sdispls, sendtype, recvbuf, 0, recvcounts, rdispls,
                          recvtype, comm, MPI_INFO_NULL, request,
                          minimpi::CallForm::kNonblocking, true);
}

int PMPI_Neighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf,
                              const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return NeighborAlltoallw("MPI_Neighbor_alltoallw_c", sendbuf, sendcounts,
                           sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes, comm, MPI_INFO_NULL, nullptr,
                           minimpi::CallForm::kBlocking);
}

int PMPI_Ineighbor_alltoallw_c(
    const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
    MPI_Request* request) {
  return NeighborAlltoallw("MPI_Ineighbor_alltoallw_c", sendbuf, sendcounts,
                           sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes, comm, MPI_INFO_NULL, request,
                           minimpi::CallForm::kNonblocking);
}

int PMPI_Neighbor_allgather_init_c(const void* sendbuf, MPI_Count sendcount,
                                   MPI_Datatype sendtype, void* recvbuf,
                                   MPI_Count recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  return NeighborAllgather("MPI_Neighbor_allgather_init_c", sendbuf, sendcount,
                           sendtype, recvbuf, recvcount, nullptr, nullptr,
                           recvtype, comm, info, request,
                           minimpi::CallForm::kPersistent, false);
}

int PMPI_Neighbor_allgatherv_init_c(const void* sendbuf, MPI_Count sendcount,
                                    MPI_Datatype sendtype, void* recvbuf,
                                    const MPI_Count recvcounts[],
                                    const MPI_Aint displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Info info, MPI_Request* request) {
  return NeighborAllgather("MPI_Neighbor_allgatherv_init_c", sendbuf, sendcount,
                           sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                           comm, info, request, minimpi::CallForm::kPersistent,
                           true);
}

int PMPI_Neighbor_alltoall_init_c(const void* sendbuf, MPI_Count sendcount,
                                  MPI_Datatype sendtype, void* recvbuf,
                                  MPI_Count recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  return NeighborAlltoall("MPI_Neighbor_alltoall_init_c", sendbuf, sendcount,
                          nullptr, nullptr, sendtype, recvbuf, recvcount,
                          nullptr, nullptr, recvtype, comm, info, request,
                          minimpi::CallForm::kPersistent, false);
}

int PMPI_Neighbor_alltoallv_init_c(
    const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
    MPI_Info info, MPI_Request* request) {
  return NeighborAlltoall("MPI_Neighbor_alltoallv_init_c", sendbuf, 0,
                          sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
                          rdispls, recvtype, comm, info, request,
                          minimpi::CallForm::kPersistent, true);
}

int PMPI_Neighbor_alltoallw_init_c(
    const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
    MPI_Info info, MPI_Request* request) {
  return NeighborAlltoallw("MPI_Neighbor_alltoallw_init_c", sendbuf, sendcounts,
                           sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes, comm, info, request,
                           minimpi::CallForm::kPersistent);
}

}  // extern "C"

MINIMPI_EXPORT(Neighbor_allgather)
MINIMPI_EXPORT(Ineighbor_allgather)
MINIMPI_EXPORT(Neighbor_allgatherv)
MINIMPI_EXPORT(Ineighbor_allgatherv)
MINIMPI_EXPORT(Neighbor_alltoall)
MINIMPI_EXPORT(Ineighbor_alltoall)
MINIMPI_EXPORT(Neighbor_alltoallv)
MINIMPI_EXPORT(Ineighbor_alltoallv)
MINIMPI_EXPORT(Neighbor_alltoallw)
MINIMPI_EXPORT(Ineighbor_alltoallw)
MINIMPI_EXPORT(Neighbor_allgather_init)
MINIMPI_EXPORT(Neighbor_allgatherv_init)
MINIMPI_EXPORT(Neighbor_alltoall_init)
MINIMPI_EXPORT(Neighbor_alltoallv_init)
MINIMPI_EXPORT(Neighbor_alltoallw_init)
MINIMPI_EXPORT(Neighbor_allgather_c)
MINIMPI_EXPORT(Ineighbor_allgather_c)
MINIMPI_EXPORT(Neighbor_allgatherv_c)
MINIMPI_EXPORT(Ineighbor_allgatherv_c)
MINIMPI_EXPORT(Neighbor_alltoall_c)
MINIMPI_EXPORT(Ineighbor_alltoall_c)
MINIMPI_EXPORT(Neighbor_alltoallv_c)
MINIMPI_EXPORT(Ineighbor_alltoallv_c)
MINIMPI_EXPORT(Neighbor_alltoallw_c)
MINIMPI_EXPORT(Ineighbor_alltoallw_c)
MINIMPI_EXPORT(Neighbor_allgather_init_c)
MINIMPI_EXPORT(Neighbor_allgatherv_init_c)
MINIMPI_EXPORT(Neighbor_alltoall_init_c)
MINIMPI_EXPORT(Neighbor_alltoallv_init_c)
MINIMPI_EXPORT(Neighbor_alltoallw_init_c)
