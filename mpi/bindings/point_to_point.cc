// Point-to-point calls: sends in every mode, receives, probes, persistent
// requests.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/datatype/pack.h"
#include "mpi/tool/events.h"

using minimpi::Communicator;
using minimpi::Datatype;
using minimpi::Instance;
using minimpi::RaiseError;
namespace p2p = minimpi::p2p;
namespace vci = minimpi::vci;

namespace {

// The checks every send shares; `request` is nullptr for blocking sends.
// On success *comm and *type describe the send. Inline: the message rate
// pays for every call level of a post.
[[gnu::always_inline]] inline int PrepareSend(
    const char* call, const void* buf, MPI_Count count, MPI_Datatype datatype,
    int dest, int tag, MPI_Comm comm, MPI_Request* request, Communicator** c,
    const Datatype** type, bool needs_request) {
  if (int error = minimpi::CheckSend(call, buf, count, datatype, dest, tag,
                                     comm, c, type)) {
    return error;
  }
  if (needs_request && request == nullptr) [[unlikely]] {
    return minimpi::NullRequestPointer(call, *c);
  }
  return MPI_SUCCESS;
}

// The same for receives.
[[gnu::always_inline]] inline int PrepareReceive(
    const char* call, void* buf, MPI_Count count, MPI_Datatype datatype,
    int source, int tag, MPI_Comm comm, MPI_Request* request, Communicator** c,
    const Datatype** type) {
  if (int error = minimpi::CheckReceive(call, buf, count, datatype, source, tag,
                                        comm, c, type)) {
    return error;
  }
  if (request == nullptr) [[unlikely]] {
    return minimpi::NullRequestPointer(call, *c);
  }
  return MPI_SUCCESS;
}

// MPI_Sendrecv once its arguments are checked: the receive is posted first,
// so two ranks sending to each other never wait on each other.
int SendReceive(const char* call, Communicator* c,
                const vci::SendArguments& send, int dest,
                const vci::ReceiveArguments& receive_arguments, int source,
                MPI_Status* status) {
  p2p::PointToPoint& engine = Instance::Get().p2p();
  vci::Request* receive = nullptr;
  if (source != MPI_PROC_NULL) receive = engine.Irecv(receive_arguments);
  if (dest != MPI_PROC_NULL) {
    vci::Request* sending = engine.Isend(send);
    engine.Wait(sending);
    engine.Retire(sending);
  }
  if (receive == nullptr) {
    minimpi::ToMpiStatus(minimpi::ProcNullStatus(), status);
    return MPI_SUCCESS;
  }
  engine.Wait(receive);
  minimpi::ToMpiStatus(receive->status, status);
  int error = minimpi::RaiseRequestError(call, receive, c);
  engine.Retire(receive);
  return error;
}

// A handle for a message a matched probe took out of the matching engine.
MPI_Message NewMessageHandle(p2p::UnexpectedRecord* record, Communicator* c) {
  record->owner = minimpi::OwnerValue(c);
  return reinterpret_cast<MPI_Message>(
      Instance::Get().messages().Insert(record));
}

// MPI_Probe, MPI_Iprobe, MPI_Mprobe and MPI_Improbe: one body. A matched
// probe (`message` given) takes the message out of the matching engine; a
// nonblocking one sets *flag and, finding nothing, moves the other VCIs
// forward (a polling loop must; not other endpoints': see ProgressBeyond).
// Inline, so each call keeps only its own path.
[[gnu::always_inline]] inline int Probe(const char* call, int source, int tag,
                                        MPI_Comm comm, bool blocking, int* flag,
                                        MPI_Message* message,
                                        MPI_Status* status) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  if (int error = minimpi::CheckProbe(call, source, tag, comm, &c)) {
    return error;
  }
  if (source == MPI_PROC_NULL) {
    if (!blocking) *flag = 1;
    if (message != nullptr) *message = MPI_MESSAGE_NO_PROC;
    minimpi::ToMpiStatus(minimpi::ProcNullStatus(), status);
    return MPI_SUCCESS;
  }
  vci::Status found;
  p2p::PointToPoint& engine = Instance::Get().p2p();
  const auto wanted = minimpi::MakeEnvelope(c, source, tag);
  bool matched = true;
  if (message != nullptr) {
    p2p::UnexpectedRecord* record =
        blocking ? engine.Mprobe(wanted, c->vci, &found)
                 : engine.Improbe(wanted, c->vci, &found);
    matched = record != nullptr;
    if (matched) *message = NewMessageHandle(record, c);
  } else if (blocking) {
    engine.Probe(wanted, c->vci, &found);
  } else {
    matched = engine.Iprobe(wanted, c->vci, &found);
  }
  if (!blocking) *flag = matched;
  if (!matched) {
    Instance::Get().vcis().ProgressBeyond(c->vci);
    return MPI_SUCCESS;
  }
  minimpi::ToMpiStatus(found, status);
  return MPI_SUCCESS;
}

// A persistent request for a PROC_NULL peer: completes at once each start.
vci::Request* NewProcNullPersistent(Communicator* c) {
  vci::Request* r = Instance::Get().p2p().NewCompletedRequest(
      minimpi::ProcNullStatus(), c->vci);
  r->persistent = true;
  r->state.store(vci::RequestState::kInactive);
  return r;
}

int StartSend(const char* call, const void* buf, MPI_Count count,
              MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              vci::SendMode mode, MPI_Request* request) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = PrepareSend(call, buf, count, datatype, dest, tag, comm,
                              request, &c, &type, /*needs_request=*/true)) {
    return error;
  }
  p2p::PointToPoint& engine = Instance::Get().p2p();
  vci::Request* r =
      dest == MPI_PROC_NULL
          ? engine.NewCompletedRequest(minimpi::ProcNullStatus(), c->vci)
          : engine.Isend(
                minimpi::MakeSend(c, buf, count, type, dest, tag, mode));
  r->owner = minimpi::OwnerValue(c);
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

int BlockingSend(const char* call, const void* buf, MPI_Count count,
                 MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                 vci::SendMode mode) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = PrepareSend(call, buf, count, datatype, dest, tag, comm,
                              nullptr, &c, &type, /*needs_request=*/false)) {
    return error;
  }
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  p2p::PointToPoint& engine = Instance::Get().p2p();
  vci::SendArguments send =
      minimpi::MakeSend(c, buf, count, type, dest, tag, mode);
  if (mode == vci::SendMode::kSynchronous) {
    vci::Request* r = engine.Isend(send);
    engine.Wait(r);
    engine.Retire(r);
  } else {
    engine.Send(send);
  }
  return MPI_SUCCESS;
}

int MakePersistentSend(const char* call, const void* buf, MPI_Count count,
                       MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                       vci::SendMode mode, MPI_Request* request) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = PrepareSend(call, buf, count, datatype, dest, tag, comm,
                              request, &c, &type, /*needs_request=*/true)) {
    return error;
  }
  vci::Request* r =
      dest == MPI_PROC_NULL
          ? NewProcNullPersistent(c)
          : Instance::Get().p2p().NewPersistentSend(
                minimpi::MakeSend(c, buf, count, type, dest, tag, mode));
  r->owner = minimpi::OwnerValue(c);
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

int PostReceive(const char* call, void* buf, MPI_Count count,
                MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                MPI_Request* request) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = PrepareReceive(call, buf, count, datatype, source, tag, comm,
                                 request, &c, &type)) {
    return error;
  }
  p2p::PointToPoint& engine = Instance::Get().p2p();
  vci::Request* r =
      source == MPI_PROC_NULL
          ? engine.NewCompletedRequest(minimpi::ProcNullStatus(), c->vci)
          : engine.Irecv(
                minimpi::MakeReceive(c, buf, count, type, source, tag));
  r->owner = minimpi::OwnerValue(c);
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

int BlockingReceive(const char* call, void* buf, MPI_Count count,
                    MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                    MPI_Status* status) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckReceive(call, buf, count, datatype, source, tag,
                                        comm, &c, &type)) {
    return error;
  }
  if (source == MPI_PROC_NULL) {
    minimpi::ToMpiStatus(minimpi::ProcNullStatus(), status);
    return MPI_SUCCESS;
  }
  p2p::PointToPoint& engine = Instance::Get().p2p();
  vci::Request* r =
      engine.Irecv(minimpi::MakeReceive(c, buf, count, type, source, tag));
  engine.Wait(r);
  minimpi::ToMpiStatus(r->status, status);
  int error = minimpi::RaiseRequestError(call, r, c);
  engine.Retire(r);
  // MPI_T callbacks that asked for a context free of locks run here.
  minimpi::tool::DeliverEventsIfPending();
  return error;
}

int CheckedSendReceive(const char* call, const void* sendbuf,
                       MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                       int sendtag, void* recvbuf, MPI_Count recvcount,
                       MPI_Datatype recvtype, int source, int recvtag,
                       MPI_Comm comm, MPI_Status* status) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* send_type;
  const Datatype* receive_type;
  if (int error = minimpi::CheckSend(call, sendbuf, sendcount, sendtype, dest,
                                     sendtag, comm, &c, &send_type)) {
    return error;
  }
  if (int error =
          minimpi::CheckReceive(call, recvbuf, recvcount, recvtype, source,
                                recvtag, comm, &c, &receive_type)) {
    return error;
  }
  return SendReceive(call, c,
                     minimpi::MakeSend(c, sendbuf, sendcount, send_type, dest,
                                       sendtag, vci::SendMode::kStandard),
                     dest,
                     minimpi::MakeReceive(c, recvbuf, recvcount, receive_type,
                                          source, recvtag),
                     source, status);
}

int SendReceiveReplace(const char* call, void* buf, MPI_Count count,
                       MPI_Datatype datatype, int dest, int sendtag, int source,
                       int recvtag, MPI_Comm comm, MPI_Status* status) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckSend(call, buf, count, datatype, dest, sendtag,
                                     comm, &c, &type)) {
    return error;
  }
  if (int error = minimpi::CheckReceive(call, buf, count, datatype, source,
                                        recvtag, comm, &c, &type)) {
    return error;
  }
  // The outgoing data moves to a packed copy so the receive can land in
  // place; the copy travels as the packed bytes it is.
  vci::SendArguments send = minimpi::MakeSend(
      c, buf, count, type, dest, sendtag, vci::SendMode::kStandard);
  std::vector<std::byte> outgoing(send.bytes);
  if (send.layout == nullptr) {
    if (send.bytes > 0) std::memcpy(outgoing.data(), send.buffer, send.bytes);
  } else {
    minimpi::datatype::Pack(send.buffer, send.count, send.layout, 0,
                            outgoing.data(), static_cast<int64_t>(send.bytes));
  }
  send.buffer = outgoing.data();
  send.layout = nullptr;
  send.count = 0;
  return SendReceive(call, c, send, dest,
                     minimpi::MakeReceive(c, buf, count, type, source, recvtag),
                     source, status);
}

int MatchedReceive(const char* call, void* buf, MPI_Count count,
                   MPI_Datatype datatype, MPI_Message* message,
                   MPI_Request* request) {
  MINIMPI_REQUIRE_INIT(call);
  if (message == nullptr) {
    return RaiseError(nullptr, call, MPI_ERR_ARG, "null message pointer");
  }
  if (request == nullptr) return minimpi::NullRequestPointer(call, nullptr);
  p2p::PointToPoint& engine = Instance::Get().p2p();
  if (*message == MPI_MESSAGE_NO_PROC) {
    const Datatype* type;
    if (int error = minimpi::CheckMessageBuffer(call, nullptr, buf, count,
                                                datatype, &type)) {
      return error;
    }
    *request = minimpi::ToHandle(
        engine.NewCompletedRequest(minimpi::ProcNullStatus(), 0));
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  // The message leaves the table here: a second receive of the same handle
  // (or a copy of it) finds nothing.
  p2p::UnexpectedRecord* record =
      *message == MPI_MESSAGE_NULL
          ? nullptr
          : Instance::Get().messages().Lookup(minimpi::HandleValue(*message));
  if (record == nullptr) {
    return RaiseError(nullptr, call, MPI_ERR_REQUEST,
                      *message == MPI_MESSAGE_NULL
                          ? "invalid message (MPI_MESSAGE_NULL)"
                          : "invalid message handle (already received, or "
                            "never a message)");
  }
  Communicator* c =
      minimpi::ToCommunicator(reinterpret_cast<MPI_Comm>(record->owner));
  const Datatype* type;
  if (int error =
          minimpi::CheckMessageBuffer(call, c, buf, count, datatype, &type)) {
    return error;
  }
  Instance::Get().messages().Remove(minimpi::HandleValue(*message));
  vci::Request* r = engine.Imrecv(
      record, minimpi::MakeReceive(c, buf, count, type, MPI_ANY_SOURCE, 0),
      record->owner);
  *message = MPI_MESSAGE_NULL;
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

int BlockingMatchedReceive(const char* call, void* buf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Message* message,
                           MPI_Status* status) {
  MINIMPI_REQUIRE_INIT(call);
  MPI_Request request;
  if (int error =
          MatchedReceive(call, buf, count, datatype, message, &request)) {
    return error;
  }
  vci::Request* r = minimpi::ToRequest(request);
  p2p::PointToPoint& engine = Instance::Get().p2p();
  engine.Wait(r);
  minimpi::ToMpiStatus(r->status, status);
  int error = minimpi::RaiseRequestError(call, r, minimpi::OwnerOf(r));
  engine.Retire(r);
  return error;
}

int MakePersistentReceive(const char* call, void* buf, MPI_Count count,
                          MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Request* request) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = PrepareReceive(call, buf, count, datatype, source, tag, comm,
                                 request, &c, &type)) {
    return error;
  }
  vci::Request* r =
      source == MPI_PROC_NULL
          ? NewProcNullPersistent(c)
          : Instance::Get().p2p().NewPersistentReceive(
                minimpi::MakeReceive(c, buf, count, type, source, tag));
  r->owner = minimpi::OwnerValue(c);
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest,
              int tag, MPI_Comm comm) {
  return BlockingSend("MPI_Send", buf, count, datatype, dest, tag, comm,
                      vci::SendMode::kStandard);
}

int PMPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                int dest, int tag, MPI_Comm comm) {
  return BlockingSend("MPI_Send_c", buf, count, datatype, dest, tag, comm,
                      vci::SendMode::kStandard);
}

int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm) {
  return BlockingSend("MPI_Ssend", buf, count, datatype, dest, tag, comm,
                      vci::SendMode::kSynchronous);
}

int PMPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm) {
  return BlockingSend("MPI_Ssend_c", buf, count, datatype, dest, tag, comm,
                      vci::SendMode::kSynchronous);
}

int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm) {
  return BlockingSend("MPI_Rsend", buf, count, datatype, dest, tag, comm,
                      vci::SendMode::kReady);
}

int PMPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm) {
  return BlockingSend("MPI_Rsend_c", buf, count, datatype, dest, tag, comm,
                      vci::SendMode::kReady);
}

int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm, MPI_Request* request) {
  return StartSend("MPI_Isend", buf, count, datatype, dest, tag, comm,
                   vci::SendMode::kStandard, request);
}

int PMPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return StartSend("MPI_Isend_c", buf, count, datatype, dest, tag, comm,
                   vci::SendMode::kStandard, request);
}

int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest,
                int tag, MPI_Comm comm, MPI_Request* request) {
  return StartSend("MPI_Issend", buf, count, datatype, dest, tag, comm,
                   vci::SendMode::kSynchronous, request);
}

int PMPI_Issend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                  int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return StartSend("MPI_Issend_c", buf, count, datatype, dest, tag, comm,
                   vci::SendMode::kSynchronous, request);
}

int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest,
                int tag, MPI_Comm comm, MPI_Request* request) {
  return StartSend("MPI_Irsend", buf, count, datatype, dest, tag, comm,
                   vci::SendMode::kReady, request);
}

int PMPI_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                  int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return StartSend("MPI_Irsend_c", buf, count, datatype, dest, tag, comm,
                   vci::SendMode::kReady, request);
}

int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                   int tag, MPI_Comm comm, MPI_Request* request) {
  return MakePersistentSend("MPI_Send_init", buf, count, datatype, dest, tag,
                            comm, vci::SendMode::kStandard, request);
}

int PMPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                     int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return MakePersistentSend("MPI_Send_init_c", buf, count, datatype, dest, tag,
                            comm, vci::SendMode::kStandard, request);
}

int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                    int tag, MPI_Comm comm, MPI_Request* request) {
  return MakePersistentSend("MPI_Ssend_init", buf, count, datatype, dest, tag,
                            comm, vci::SendMode::kSynchronous, request);
}

int PMPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                      int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return MakePersistentSend("MPI_Ssend_init_c", buf, count, datatype, dest, tag,
                            comm, vci::SendMode::kSynchronous, request);
}

int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                    int tag, MPI_Comm comm, MPI_Request* request) {
  return MakePersistentSend("MPI_Rsend_init", buf, count, datatype, dest, tag,
                            comm, vci::SendMode::kReady, request);
}

int PMPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                      int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return MakePersistentSend("MPI_Rsend_init_c", buf, count, datatype, dest, tag,
                            comm, vci::SendMode::kReady, request);
}

int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
               MPI_Comm comm, MPI_Request* request) {
  return PostReceive("MPI_Irecv", buf, count, datatype, source, tag, comm,
                     request);
}

int PMPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                 int tag, MPI_Comm comm, MPI_Request* request) {
  return PostReceive("MPI_Irecv_c", buf, count, datatype, source, tag, comm,
                     request);
}

int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
              MPI_Comm comm, MPI_Status* status) {
  return BlockingReceive("MPI_Recv", buf, count, datatype, source, tag, comm,
                         status);
}

int PMPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                int tag, MPI_Comm comm, MPI_Status* status) {
  return BlockingReceive("MPI_Recv_c", buf, count, datatype, source, tag, comm,
                         status);
}

int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source,
                   int tag, MPI_Comm comm, MPI_Request* request) {
  return MakePersistentReceive("MPI_Recv_init", buf, count, datatype, source,
                               tag, comm, request);
}

int PMPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype datatype,
                     int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return MakePersistentReceive("MPI_Recv_init_c", buf, count, datatype, source,
                               tag, comm, request);
}

int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype,
                MPI_Message* message, MPI_Request* request) {
  return MatchedReceive("MPI_Imrecv", buf, count, datatype, message, request);
}

int PMPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Message* message, MPI_Request* request) {
  return MatchedReceive("MPI_Imrecv_c", buf, count, datatype, message, request);
}

int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype,
               MPI_Message* message, MPI_Status* status) {
  return BlockingMatchedReceive("MPI_Mrecv", buf, count, datatype, message,
                                status);
}

int PMPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Message* message, MPI_Status* status) {
  return BlockingMatchedReceive("MPI_Mrecv_c", buf, count, datatype, message,
                                status);
}

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                          int sendtag, int source, int recvtag, MPI_Comm comm,
                          MPI_Status* status) {
  return SendReceiveReplace("MPI_Sendrecv_replace", buf, count, datatype, dest,
                            sendtag, source, recvtag, comm, status);
}

int PMPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype,
                            int dest, int sendtag, int source, int recvtag,
                            MPI_Comm comm, MPI_Status* status) {
  return SendReceiveReplace("MPI_Sendrecv_replace_c", buf, count, datatype,
                            dest, sendtag, source, recvtag, comm, status);
}

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  int dest, int sendtag, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                  MPI_Status* status) {
  return CheckedSendReceive("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest,
                            sendtag, recvbuf, recvcount, recvtype, source,
                            recvtag, comm, status);
}

int PMPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int source,
                    int recvtag, MPI_Comm comm, MPI_Status* status) {
  return CheckedSendReceive("MPI_Sendrecv_c", sendbuf, sendcount, sendtype,
                            dest, sendtag, recvbuf, recvcount, recvtype, source,
                            recvtag, comm, status);
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return Probe("MPI_Probe", source, tag, comm, /*blocking=*/true, nullptr,
               nullptr, status);
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag,
                MPI_Status* status) {
  return Probe("MPI_Iprobe", source, tag, comm, /*blocking=*/false, flag,
               nullptr, status);
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
                MPI_Status* status) {
  return Probe("MPI_Mprobe", source, tag, comm, /*blocking=*/true, nullptr,
               message, status);
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag,
                 MPI_Message* message, MPI_Status* status) {
  return Probe("MPI_Improbe", source, tag, comm, /*blocking=*/false, flag,
               message, status);
}

}  // extern "C"

MINIMPI_EXPORT(Send)
MINIMPI_EXPORT(Ssend)
MINIMPI_EXPORT(Rsend)
MINIMPI_EXPORT(Isend)
MINIMPI_EXPORT(Issend)
MINIMPI_EXPORT(Irsend)
MINIMPI_EXPORT(Irecv)
MINIMPI_EXPORT(Recv)
MINIMPI_EXPORT(Sendrecv)
MINIMPI_EXPORT(Sendrecv_replace)
MINIMPI_EXPORT(Probe)
MINIMPI_EXPORT(Iprobe)
MINIMPI_EXPORT(Mprobe)
MINIMPI_EXPORT(Improbe)
MINIMPI_EXPORT(Imrecv)
MINIMPI_EXPORT(Mrecv)
MINIMPI_EXPORT(Send_init)
MINIMPI_EXPORT(Ssend_init)
MINIMPI_EXPORT(Rsend_init)
MINIMPI_EXPORT(Recv_init)
MINIMPI_EXPORT(Send_c)
MINIMPI_EXPORT(Ssend_c)
MINIMPI_EXPORT(Rsend_c)
MINIMPI_EXPORT(Isend_c)
MINIMPI_EXPORT(Issend_c)
MINIMPI_EXPORT(Irsend_c)
MINIMPI_EXPORT(Irecv_c)
MINIMPI_EXPORT(Recv_c)
MINIMPI_EXPORT(Sendrecv_c)
MINIMPI_EXPORT(Sendrecv_replace_c)
MINIMPI_EXPORT(Imrecv_c)
MINIMPI_EXPORT(Mrecv_c)
MINIMPI_EXPORT(Send_init_c)
MINIMPI_EXPORT(Ssend_init_c)
MINIMPI_EXPORT(Rsend_init_c)
MINIMPI_EXPORT(Recv_init_c)
