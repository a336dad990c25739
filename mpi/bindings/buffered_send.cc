// Buffered sends (MPI-4.1 section 3.6): MPI_Buffer_attach, MPI_Buffer_detach,
// MPI_Buffer_flush, MPI_Buffer_iflush, MPI_Bsend, MPI_Ibsend and
// MPI_Bsend_init, their _c forms, and MPI-4.1's per-communicator buffers
// (MPI_Comm_attach_buffer and friends). The data is packed into the attached
// buffer at the call, which returns at once; the message leaves from there and
// its space comes back when it has (mpi/p2p/buffered_sends.h).
#include "mpi/bindings/buffered_send.h"

#include <climits>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
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

namespace {

// The buffered sends that serve a communicator's MPI_Bsend, in MPI-4.1's
// order (section 3.6.1): its own buffer, else its session's, else the
// process's. A level with nothing attached answers kNoBuffer and the next
// one is asked.
p2p::BufferedSends::SendResult SendThroughAttachedBuffer(
    Communicator* comm, const vci::SendArguments& send) {
  p2p::PointToPoint& engine = Instance::Get().p2p();
  if (p2p::BufferedSends* own =
          comm->buffered_sends.load(std::memory_order_acquire)) {
    const auto result = own->Send(engine, send);
    if (result != p2p::BufferedSends::SendResult::kNoBuffer) return result;
  }
  if (p2p::BufferedSends* session = minimpi::SessionBufferedSendsOf(comm)) {
    const auto result = session->Send(engine, send);
    if (result != p2p::BufferedSends::SendResult::kNoBuffer) return result;
  }
  return p2p::ProcessBufferedSends().Send(engine, send);
}

// MPI_Buffer_attach, MPI_Comm_attach_buffer, MPI_Session_attach_buffer and
// their _c forms: `size` is the call's count, int or MPI_Count.
int AttachBuffer(minimpi::RaiseBufferError raise, p2p::BufferedSends& sends,
                 void* buffer, MPI_Count size) {
  if (buffer == MPI_BUFFER_AUTOMATIC) {
    if (!sends.AttachAutomatic()) {
      return raise(MPI_ERR_BUFFER,
                   "a buffer is attached already (detach it first)");
    }
    return MPI_SUCCESS;
  }
  if (size < 0) {
    return raise(MPI_ERR_ARG, absl::StrFormat("invalid size %d", size));
  }
  if (buffer == nullptr && size > 0) {
    return raise(MPI_ERR_BUFFER,
                 absl::StrFormat("null buffer with size %d", size));
  }
  if (!sends.Attach(static_cast<std::byte*>(buffer),
                    static_cast<size_t>(size))) {
    return raise(MPI_ERR_BUFFER,
                 "a buffer is attached already (detach it first)");
  }
  return MPI_SUCCESS;
}

// The detach calls: waits for the buffer's messages to leave, then hands
// the buffer back. SizeType is the call's int or MPI_Count; a size the int
// form cannot hold comes back as MPI_UNDEFINED.
template <typename SizeType>
int DetachBuffer(minimpi::RaiseBufferError raise, p2p::BufferedSends* sends,
                 void* buffer_addr, SizeType* size) {
  if (buffer_addr == nullptr) {
    return raise(MPI_ERR_ARG, "null buffer_addr pointer");
  }
  if (size == nullptr) {
    return raise(MPI_ERR_ARG, "null size pointer");
  }
  // buffer_addr is really the address of a void*. With no buffer attached
  // the answer is a null buffer of size 0, as MPICH gives.
  void** address = static_cast<void**>(buffer_addr);
  const auto detached =
      sends == nullptr ? std::nullopt : sends->Detach(Instance::Get().p2p());
  if (!detached.has_value()) {
    *address = nullptr;
    *size = 0;
  } else if (detached->automatic) {
    *address = MPI_BUFFER_AUTOMATIC;
    *size = 0;
  } else {
    *address = detached->base;
    *size = detached->size >
                    static_cast<size_t>(std::numeric_limits<SizeType>::max())
                ? static_cast<SizeType>(MPI_UNDEFINED)
                : static_cast<SizeType>(detached->size);
  }
  return MPI_SUCCESS;
}

// The same bodies, raising on `comm` (nullptr: no communicator).
int AttachBuffer(const char* call, Communicator* comm,
                 p2p::BufferedSends& sends, void* buffer, MPI_Count size) {
  return AttachBuffer(
      [&](int error_class, const std::string& problem) {
        return RaiseError(comm, call, error_class, problem);
      },
      sends, buffer, size);
}

template <typename SizeType>
int DetachBuffer(const char* call, Communicator* comm,
                 p2p::BufferedSends* sends, void* buffer_addr, SizeType* size) {
  return DetachBuffer(
      [&](int error_class, const std::string& problem) {
        return RaiseError(comm, call, error_class, problem);
      },
      sends, buffer_addr, size);
}

// A communicator's own buffered sends, made on first use.
p2p::BufferedSends& CommunicatorBufferedSends(Communicator* comm) {
  if (p2p::BufferedSends* sends =
          comm->buffered_sends.load(std::memory_order_acquire)) {
    return *sends;
  }
  static absl::Mutex making;
  absl::MutexLock lock(&making);
  if (p2p::BufferedSends* sends =
          comm->buffered_sends.load(std::memory_order_acquire)) {
    return *sends;
  }
  comm->buffered_sends_owner = std::make_shared<p2p::BufferedSends>();
  comm->buffered_sends.store(comm->buffered_sends_owner.get(),
                             std::memory_order_release);
  return *comm->buffered_sends_owner;
}

int BlockingBufferedSend(const char* call, const void* buf, MPI_Count count,
                         MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckSend(call, buf, count, datatype, dest, tag,
                                     comm, &c, &type)) {
    return error;
  }
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  return minimpi::BufferedSend(call, c,
                               minimpi::MakeSend(c, buf, count, type, dest, tag,
                                                 vci::SendMode::kStandard));
}

int StartBufferedSend(const char* call, const void* buf, MPI_Count count,
                      MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckSend(call, buf, count, datatype, dest, tag,
                                     comm, &c, &type)) {
    return error;
  }
  if (request == nullptr) return NullRequestPointer(call, c);
  vci::Status status;
  if (dest == MPI_PROC_NULL) {
    status = minimpi::ProcNullStatus();
  } else if (int error = minimpi::BufferedSend(
                 call, c,
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

int MakePersistentBufferedSend(const char* call, const void* buf,
                               MPI_Count count, MPI_Datatype datatype, int dest,
                               int tag, MPI_Comm comm, MPI_Request* request) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  const Datatype* type;
  if (int error = minimpi::CheckSend(call, buf, count, datatype, dest, tag,
                                     comm, &c, &type)) {
    return error;
  }
  if (request == nullptr) return NullRequestPointer(call, c);
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

}  // namespace

namespace minimpi {

int BufferedSend(const char* call, Communicator* comm,
                 const vci::SendArguments& send) {
  switch (SendThroughAttachedBuffer(comm, send)) {
    case p2p::BufferedSends::SendResult::kSent:
      return MPI_SUCCESS;
    case p2p::BufferedSends::SendResult::kNoBuffer:
      return RaiseError(comm, call, MPI_ERR_BUFFER,
                        "no buffer is attached for buffered sends (call "
                        "MPI_Buffer_attach or MPI_Comm_attach_buffer first)");
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

int AttachBufferedSendsBuffer(RaiseBufferError raise, p2p::BufferedSends& sends,
                              void* buffer, MPI_Count size) {
  return AttachBuffer(raise, sends, buffer, size);
}

int DetachBufferedSendsBuffer(RaiseBufferError raise, p2p::BufferedSends* sends,
                              void* buffer_addr, int* size) {
  return DetachBuffer(raise, sends, buffer_addr, size);
}

int DetachBufferedSendsBuffer(RaiseBufferError raise, p2p::BufferedSends* sends,
                              void* buffer_addr, MPI_Count* size) {
  return DetachBuffer(raise, sends, buffer_addr, size);
}

}  // namespace minimpi

extern "C" {

int PMPI_Buffer_attach(void* buffer, int size) {
  MINIMPI_REQUIRE_INIT("MPI_Buffer_attach");
  return AttachBuffer("MPI_Buffer_attach", nullptr, p2p::ProcessBufferedSends(),
                      buffer, size);
}

int PMPI_Buffer_attach_c(void* buffer, MPI_Count size) {
  MINIMPI_REQUIRE_INIT("MPI_Buffer_attach_c");
  return AttachBuffer("MPI_Buffer_attach_c", nullptr,
                      p2p::ProcessBufferedSends(), buffer, size);
}

int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  MINIMPI_REQUIRE_INIT("MPI_Buffer_detach");
  return DetachBuffer("MPI_Buffer_detach", nullptr,
                      &p2p::ProcessBufferedSends(), buffer_addr, size);
}

int PMPI_Buffer_detach_c(void* buffer_addr, MPI_Count* size) {
  MINIMPI_REQUIRE_INIT("MPI_Buffer_detach_c");
  return DetachBuffer("MPI_Buffer_detach_c", nullptr,
                      &p2p::ProcessBufferedSends(), buffer_addr, size);
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

int PMPI_Comm_attach_buffer(MPI_Comm comm, void* buffer, int size) {
  constexpr const char* kCall = "MPI_Comm_attach_buffer";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(kCall, comm, &c)) {
    return error;
  }
  return AttachBuffer(kCall, c, CommunicatorBufferedSends(c), buffer, size);
}

int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void* buffer, MPI_Count size) {
  constexpr const char* kCall = "MPI_Comm_attach_buffer_c";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(kCall, comm, &c)) {
    return error;
  }
  return AttachBuffer(kCall, c, CommunicatorBufferedSends(c), buffer, size);
}

int PMPI_Comm_detach_buffer(MPI_Comm comm, void* buffer_addr, int* size) {
  constexpr const char* kCall = "MPI_Comm_detach_buffer";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(kCall, comm, &c)) {
    return error;
  }
  return DetachBuffer(kCall, c,
                      c->buffered_sends.load(std::memory_order_acquire),
                      buffer_addr, size);
}

int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void* buffer_addr,
                              MPI_Count* size) {
  constexpr const char* kCall = "MPI_Comm_detach_buffer_c";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(kCall, comm, &c)) {
    return error;
  }
  return DetachBuffer(kCall, c,
                      c->buffered_sends.load(std::memory_order_acquire),
                      buffer_addr, size);
}

// Flushing a communicator's buffer waits for the messages in it; with no
// buffer of its own there is nothing of this communicator's to wait for
// (MPI-4.1 section 3.6.1 flushes only the buffer attached to it).
int PMPI_Comm_flush_buffer(MPI_Comm comm) {
  constexpr const char* kCall = "MPI_Comm_flush_buffer";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(kCall, comm, &c)) {
    return error;
  }
  if (p2p::BufferedSends* sends =
          c->buffered_sends.load(std::memory_order_acquire)) {
    sends->Flush(Instance::Get().p2p());
  }
  return MPI_SUCCESS;
}

int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Comm_iflush_buffer";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = minimpi::CheckCommunicator(kCall, comm, &c)) return error;
  if (request == nullptr) return NullRequestPointer(kCall, c);
  p2p::PointToPoint& engine = Instance::Get().p2p();
  vci::Request* r = CommunicatorBufferedSends(c).StartFlush(engine, c->vci);
  r->owner = minimpi::OwnerValue(c);
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm) {
  return BlockingBufferedSend("MPI_Bsend", buf, count, datatype, dest, tag,
                              comm);
}

int PMPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm) {
  return BlockingBufferedSend("MPI_Bsend_c", buf, count, datatype, dest, tag,
                              comm);
}

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest,
                int tag, MPI_Comm comm, MPI_Request* request) {
  return StartBufferedSend("MPI_Ibsend", buf, count, datatype, dest, tag, comm,
                           request);
}

int PMPI_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                  int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return StartBufferedSend("MPI_Ibsend_c", buf, count, datatype, dest, tag,
                           comm, request);
}

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                    int tag, MPI_Comm comm, MPI_Request* request) {
  return MakePersistentBufferedSend("MPI_Bsend_init", buf, count, datatype,
                                    dest, tag, comm, request);
}

int PMPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype,
                      int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return MakePersistentBufferedSend("MPI_Bsend_init_c", buf, count, datatype,
                                    dest, tag, comm, request);
}

}  // extern "C"

MINIMPI_EXPORT(Buffer_attach)
MINIMPI_EXPORT(Buffer_detach)
MINIMPI_EXPORT(Buffer_attach_c)
MINIMPI_EXPORT(Buffer_detach_c)
MINIMPI_EXPORT(Comm_attach_buffer)
MINIMPI_EXPORT(Comm_attach_buffer_c)
MINIMPI_EXPORT(Comm_detach_buffer)
MINIMPI_EXPORT(Comm_detach_buffer_c)
MINIMPI_EXPORT(Comm_flush_buffer)
MINIMPI_EXPORT(Comm_iflush_buffer)
MINIMPI_EXPORT(Buffer_flush)
MINIMPI_EXPORT(Buffer_iflush)
MINIMPI_EXPORT(Bsend)
MINIMPI_EXPORT(Ibsend)
MINIMPI_EXPORT(Bsend_init)
MINIMPI_EXPORT(Bsend_c)
MINIMPI_EXPORT(Ibsend_c)
MINIMPI_EXPORT(Bsend_init_c)
