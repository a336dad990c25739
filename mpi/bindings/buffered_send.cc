// Buffered sends (MPI-4.1 section 3.6): MPI_Buffer_attach, MPI_Buffer_detach,
// MPI_Buffer_flush, MPI_Buffer_iflush, MPI_Bsend, MPI_Ibsend and
// MPI_Bsend_init. The data is packed into the attached buffer at the call,
// which returns at once; the message leaves from there and its space comes
// back when it has (mpi/p2p/buffered_sends.h).
#include "mpi/bindings/buffered_send.h"

#include <climits>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/p2p/buffered_sends.h"

using minimpi::Communicator;
using minimpi::Datatype;
using minimpi::Instance;
using minimpi::NullRequestPointer;
using minimpi::RaiseError;
namespace p2p = minimpi::p2p;
namespace vci = minimpi::vci;

static_assert(MPI_BSEND_OVERHEAD == p2p::BsendBuffer::kMessageOverhead,
              "a buffered message takes at most MPI_BSEND_OVERHEAD bytes "
              "beyond its data");

namespace minimpi {

int BufferedSend(const char* call, Communicator* comm,
                 const vci::SendArguments& send) {
  switch (p2p::ProcessBufferedSends().Send(Instance::Get().p2p(), send)) {
    case p2p::BufferedSends::SendResult::kSent:
      return MPI_SUCCESS;
    case p2p::BufferedSends::SendResult::kNoBuffer:
      return RaiseError(comm, call, MPI_ERR_BUFFER,
                        "no buffer is attached for buffered sends (call "
                        "MPI_Buffer_attach first)");
    case p2p::BufferedSends::SendResult::kNoRoom:
      break;
  }
  return RaiseError(
      comm, call, MPI_ERR_BUFFER,
      absl::StrFormat("the attached buffer has no room for a message of %d "
                      "bytes (it takes %d bytes with MPI_BSEND_OVERHEAD, and "
                      "the messages still in the buffer hold the rest)",
                      send.bytes, send.bytes + MPI_BSEND_OVERHEAD));
}

void FlushBufferedSends() {
  p2p::ProcessBufferedSends().Flush(Instance::Get().p2p());
}

}  // namespace minimpi

extern "C" {

int PMPI_Buffer_attach(void* buffer, int size) {
  constexpr const char* kCall = "MPI_Buffer_attach";
  MINIMPI_REQUIRE_INIT(kCall);
  p2p::BufferedSends& sends = p2p::ProcessBufferedSends();
  if (buffer == MPI_BUFFER_AUTOMATIC) {
    if (!sends.AttachAutomatic()) {
      return RaiseError(nullptr, kCall, MPI_ERR_BUFFER,
                        "a buffer is attached already (detach it first)");
    }
    return MPI_SUCCESS;
  }
  if (size < 0) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid size %d", size));
  }
  if (buffer == nullptr && size > 0) {
    return RaiseError(nullptr, kCall, MPI_ERR_BUFFER,
                      absl::StrFormat("null buffer with size %d", size));
  }
  if (!sends.Attach(static_cast<std::byte*>(buffer),
                    static_cast<size_t>(size))) {
    return RaiseError(nullptr, kCall, MPI_ERR_BUFFER,
                      "a buffer is attached already (detach it first)");
  }
  return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  constexpr const char* kCall = "MPI_Buffer_detach";
  MINIMPI_REQUIRE_INIT(kCall);
  if (buffer_addr == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG, "null buffer_addr pointer");
  }
  if (size == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG, "null size pointer");
  }
  // buffer_addr is really the address of a void*. With no buffer attached
  // the answer is a null buffer of size 0, as MPICH gives.
  void** address = static_cast<void**>(buffer_addr);
  const auto detached =
      p2p::ProcessBufferedSends().Detach(Instance::Get().p2p());
  if (!detached.has_value()) {
    *address = nullptr;
    *size = 0;
  } else if (detached->automatic) {
    *address = MPI_BUFFER_AUTOMATIC;
    *size = 0;
  } else {
    *address = detached->base;
    *size = static_cast<int>(detached->size);  // attached as an int
  }
  return MPI_SUCCESS;
}

int PMPI_Buffer_flush(void) {
  MINIMPI_REQUIRE_INIT("MPI_Buffer_flush");
  minimpi::FlushBufferedSends();
  return MPI_SUCCESS;
}

int PMPI_Buffer_iflush(MPI_Request* request) {
  constexpr const char* kCall = "MPI_Buffer_iflush";
  MINIMPI_REQUIRE_INIT(kCall);
  if (request == nullptr) return NullRequestPointer(kCall, nullptr);
  Instance& instance = Instance::Get();
  vci::Request* r = p2p::ProcessBufferedSends().StartFlush(
      instance.p2p(), instance.world()->vci);
  r->owner = minimpi::OwnerValue(instance.world());
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm) {
  constexpr const char* kCall = "MPI_Bsend";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckSend(kCall, buf, count, datatype, dest, tag,
                                     comm, &c, &type)) {
    return error;
  }
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  return minimpi::BufferedSend(kCall, c,
                               minimpi::MakeSend(c, buf, count, type, dest, tag,
                                                 vci::SendMode::kStandard));
}

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest,
                int tag, MPI_Comm comm, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Ibsend";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckSend(kCall, buf, count, datatype, dest, tag,
                                     comm, &c, &type)) {
    return error;
  }
  if (request == nullptr) return NullRequestPointer(kCall, c);
  vci::Status status;
  if (dest == MPI_PROC_NULL) {
    status = minimpi::ProcNullStatus();
  } else if (int error = minimpi::BufferedSend(
                 kCall, c,
                 minimpi::MakeSend(c, buf, count, type, dest, tag,
                                   vci::SendMode::kStandard))) {
    return error;
  }
  // The data is in the attached buffer: the program's buffer is free now,
  // so the request is complete from the start.
  vci::Request* r = Instance::Get().p2p().NewCompletedRequest(status, c->vci);
  r->owner = minimpi::OwnerValue(c);
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                    int tag, MPI_Comm comm, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Bsend_init";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckSend(kCall, buf, count, datatype, dest, tag,
                                     comm, &c, &type)) {
    return error;
  }
  if (request == nullptr) return NullRequestPointer(kCall, c);
  p2p::PointToPoint& engine = Instance::Get().p2p();
  vci::Request* r;
  if (dest == MPI_PROC_NULL) {
    // Completes at once at each start.
    r = engine.NewCompletedRequest(minimpi::ProcNullStatus(), c->vci);
    r->persistent = true;
    r->state.store(vci::RequestState::kInactive);
  } else {
    // Each MPI_Start packs the data into the attached buffer (completion.cc).
    r = engine.NewPersistentSend(minimpi::MakeSend(
        c, buf, count, type, dest, tag, vci::SendMode::kBuffered));
  }
  r->owner = minimpi::OwnerValue(c);
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Buffer_attach)
MINIMPI_EXPORT(Buffer_detach)
MINIMPI_EXPORT(Buffer_flush)
MINIMPI_EXPORT(Buffer_iflush)
MINIMPI_EXPORT(Bsend)
MINIMPI_EXPORT(Ibsend)
MINIMPI_EXPORT(Bsend_init)
