// MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0 section 3.10): one
// request that completes when both the send and the receive have, carrying
// the receive's status. The work is p2p::SendReceive, a small schedule that
// owns the two inner requests.
#include "mpi/p2p/send_receive.h"

#include <cstring>
#include <memory>
#include <optional>

#include "mpi/bindings/binding_util.h"
#include "mpi/datatype/pack.h"

using minimpi::Communicator;
using minimpi::Datatype;
using minimpi::Instance;
using minimpi::RaiseError;
namespace p2p = minimpi::p2p;
namespace vci = minimpi::vci;

namespace {

// Starts the schedule on the communicator's VCI (both halves use it) and
// hands its request to the program.
int Start(Communicator* c, std::optional<vci::SendArguments> send,
          std::optional<vci::ReceiveArguments> receive,
          std::unique_ptr<std::byte[]> staging, MPI_Request* request) {
  auto* schedule = new p2p::SendReceive(
      Instance::Get().p2p(), std::move(send), std::move(receive),
      minimpi::ProcNullStatus(), std::move(staging));
  vci::Request* r = Instance::Get().p2p().StartSchedule(
      schedule, c->vci, vci::RequestKind::kCompound);
  r->owner = minimpi::OwnerValue(c);
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

// MPI_Isendrecv and MPI_Isendrecv_c.
int StartSendReceive(const char* call, const void* sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, int dest, int sendtag,
                     void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm,
                     MPI_Request* request) {
  const char* const kCall = call;
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  const Datatype* send_type;
  const Datatype* receive_type;
  if (int error = minimpi::CheckSend(kCall, sendbuf, sendcount, sendtype, dest,
                                     sendtag, comm, &c, &send_type)) {
    return error;
  }
  if (int error =
          minimpi::CheckReceive(kCall, recvbuf, recvcount, recvtype, source,
                                recvtag, comm, &c, &receive_type)) {
    return error;
  }
  if (request == nullptr) return minimpi::NullRequestPointer(kCall, c);
  std::optional<vci::SendArguments> send;
  if (dest != MPI_PROC_NULL) {
    send = minimpi::MakeSend(c, sendbuf, sendcount, send_type, dest, sendtag,
                             vci::SendMode::kStandard);
  }
  std::optional<vci::ReceiveArguments> receive;
  if (source != MPI_PROC_NULL) {
    receive = minimpi::MakeReceive(c, recvbuf, recvcount, receive_type, source,
                                   recvtag);
  }
  return Start(c, std::move(send), std::move(receive), nullptr, request);
}

// MPI_Isendrecv_replace and MPI_Isendrecv_replace_c.
int StartSendReceiveReplace(const char* call, void* buf, MPI_Count count,
                            MPI_Datatype datatype, int dest, int sendtag,
                            int source, int recvtag, MPI_Comm comm,
                            MPI_Request* request) {
  const char* const kCall = call;
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckSend(kCall, buf, count, datatype, dest, sendtag,
                                     comm, &c, &type)) {
    return error;
  }
  if (int error = minimpi::CheckReceive(kCall, buf, count, datatype, source,
                                        recvtag, comm, &c, &type)) {
    return error;
  }
  if (request == nullptr) return minimpi::NullRequestPointer(kCall, c);
  // The outgoing data moves to a packed copy the schedule owns, so the
  // receive can land in place; the copy travels as the bytes it is.
  std::optional<vci::SendArguments> send;
  std::unique_ptr<std::byte[]> staging;
  if (dest != MPI_PROC_NULL) {
    send = minimpi::MakeSend(c, buf, count, type, dest, sendtag,
                             vci::SendMode::kStandard);
    staging = std::make_unique<std::byte[]>(std::max<size_t>(send->bytes, 1));
    if (send->layout == nullptr) {
      if (send->bytes > 0) {
        std::memcpy(staging.get(), send->buffer, send->bytes);
      }
    } else {
      minimpi::datatype::Pack(send->buffer, send->count, send->layout, 0,
                              staging.get(), static_cast<int64_t>(send->bytes));
    }
    send->buffer = staging.get();
    send->layout = nullptr;
    send->count = 0;
  }
  std::optional<vci::ReceiveArguments> receive;
  if (source != MPI_PROC_NULL) {
    receive = minimpi::MakeReceive(c, buf, count, type, source, recvtag);
  }
  return Start(c, std::move(send), std::move(receive), std::move(staging),
               request);
}

}  // namespace

extern "C" {

int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   int dest, int sendtag, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request* request) {
  return StartSendReceive("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest,
                          sendtag, recvbuf, recvcount, recvtype, source,
                          recvtag, comm, request);
}

int PMPI_Isendrecv_c(const void* sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, int dest, int sendtag,
                     void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm,
                     MPI_Request* request) {
  return StartSendReceive("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest,
                          sendtag, recvbuf, recvcount, recvtype, source,
                          recvtag, comm, request);
}

int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype,
                           int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Request* request) {
  return StartSendReceiveReplace("MPI_Isendrecv_replace", buf, count, datatype,
                                 dest, sendtag, source, recvtag, comm, request);
}

int PMPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype,
                             int dest, int sendtag, int source, int recvtag,
                             MPI_Comm comm, MPI_Request* request) {
  return StartSendReceiveReplace("MPI_Isendrecv_replace_c", buf, count,
                                 datatype, dest, sendtag, source, recvtag, comm,
                                 request);
}

}  // extern "C"

MINIMPI_EXPORT(Isendrecv)
MINIMPI_EXPORT(Isendrecv_replace)
MINIMPI_EXPORT(Isendrecv_c)
MINIMPI_EXPORT(Isendrecv_replace_c)
