// MPI-4.1's buffers for buffered sends per session: MPI_Session_attach_buffer,
// MPI_Session_detach_buffer (int and _c forms), MPI_Session_flush_buffer
// and MPI_Session_iflush_buffer. A buffered send on a communicator made
// from a session uses the session's buffer when the communicator has none
// of its own (buffered_send.cc asks SessionBufferedSendsOf).
//
// Each session's BufferedSends lives in a table here, keyed by the
// session's handle (handles carry a generation, so a new session never
// meets an old one's entry), made on first use and dropped when the session
// ends. A communicator holds a reference to its session's, so its messages
// in flight outlive both.
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/buffered_send.h"
#include "mpi/bindings/session_util.h"
#include "mpi/objects/session.h"

using minimpi::Communicator;
using minimpi::Instance;
using minimpi::RaiseError;
namespace p2p = minimpi::p2p;
namespace vci = minimpi::vci;

namespace {

struct SessionBufferTable {
  absl::Mutex mutex;
  absl::flat_hash_map<uintptr_t, std::shared_ptr<p2p::BufferedSends>> by_handle
      ABSL_GUARDED_BY(mutex);
};

SessionBufferTable& Table() {
  static auto* table = new SessionBufferTable();  // never destroyed
  return *table;
}

// The session a handle names, or MPI_ERR_SESSION raised (no session to
// raise it on: errors of a bad handle go where errors of no object go).
int CheckSession(const char* call, MPI_Session handle) {
  if (handle != MPI_SESSION_NULL &&
      minimpi::Sessions().Lookup(minimpi::HandleValue(handle)) != nullptr) {
    return MPI_SUCCESS;
  }
  return RaiseError(nullptr, call, MPI_ERR_SESSION,
                    handle == MPI_SESSION_NULL
                        ? "invalid session (MPI_SESSION_NULL)"
                        : "invalid session (finalized, or never a session)");
}

// Errors about a valid session's arguments go to the session's handler,
// not to MPI_COMM_WORLD's (MPI-4.1 section 9.3: a session call raises on
// its session).
auto OnSession(const char* call, MPI_Session session) {
  return [call, session](int error_class, const std::string& problem) {
    return minimpi::RaiseOnSessionHandle(session, call, error_class, problem);
  };
}

// The session's buffered sends, or nullptr when nothing was attached yet.
p2p::BufferedSends* Find(MPI_Session handle) {
  SessionBufferTable& table = Table();
  absl::MutexLock lock(&table.mutex);
  auto it = table.by_handle.find(minimpi::HandleValue(handle));
  return it == table.by_handle.end() ? nullptr : it->second.get();
}

template <typename SizeType>
int Detach(const char* call, MPI_Session session, void* buffer_addr,
           SizeType* size) {
  MINIMPI_REQUIRE_INIT(call);
  if (int error = CheckSession(call, session)) return error;
  return minimpi::DetachBufferedSendsBuffer(OnSession(call, session),
                                            Find(session), buffer_addr, size);
}

}  // namespace

namespace minimpi {

std::shared_ptr<p2p::BufferedSends> SessionBufferedSends(MPI_Session session) {
  SessionBufferTable& table = Table();
  absl::MutexLock lock(&table.mutex);
  std::shared_ptr<p2p::BufferedSends>& sends =
      table.by_handle[HandleValue(session)];
  if (sends == nullptr) sends = std::make_shared<p2p::BufferedSends>();
  return sends;
}

void ForgetSessionBufferedSends(MPI_Session session) {
  SessionBufferTable& table = Table();
  absl::MutexLock lock(&table.mutex);
  table.by_handle.erase(HandleValue(session));
}

p2p::BufferedSends* SessionBufferedSendsOf(Communicator* comm) {
  return comm->session_buffered_sends.get();
}

}  // namespace minimpi

extern "C" {

int PMPI_Session_attach_buffer(MPI_Session session, void* buffer, int size) {
  constexpr const char* kCall = "MPI_Session_attach_buffer";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckSession(kCall, session)) return error;
  return minimpi::AttachBufferedSendsBuffer(
      OnSession(kCall, session), *minimpi::SessionBufferedSends(session),
      buffer, size);
}

int PMPI_Session_attach_buffer_c(MPI_Session session, void* buffer,
                                 MPI_Count size) {
  constexpr const char* kCall = "MPI_Session_attach_buffer_c";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckSession(kCall, session)) return error;
  return minimpi::AttachBufferedSendsBuffer(
      OnSession(kCall, session), *minimpi::SessionBufferedSends(session),
      buffer, size);
}

int PMPI_Session_detach_buffer(MPI_Session session, void* buffer_addr,
                               int* size) {
  return Detach("MPI_Session_detach_buffer", session, buffer_addr, size);
}

int PMPI_Session_detach_buffer_c(MPI_Session session, void* buffer_addr,
                                 MPI_Count* size) {
  return Detach("MPI_Session_detach_buffer_c", session, buffer_addr, size);
}

int PMPI_Session_flush_buffer(MPI_Session session) {
  constexpr const char* kCall = "MPI_Session_flush_buffer";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckSession(kCall, session)) return error;
  if (p2p::BufferedSends* sends = Find(session)) {
    sends->Flush(Instance::Get().p2p());
  }
  return MPI_SUCCESS;
}

int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request* request) {
  constexpr const char* kCall = "MPI_Session_iflush_buffer";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckSession(kCall, session)) return error;
  if (request == nullptr) {
    return minimpi::RaiseOnSessionHandle(session, kCall, MPI_ERR_REQUEST,
                                         "null request pointer");
  }
  Instance& instance = Instance::Get();
  // The request lives on VCI 0 and belongs to no communicator of the
  // program's (as MPI_Buffer_iflush's): the hidden world's handle owns it.
  vci::Request* r = minimpi::SessionBufferedSends(session)->StartFlush(
      instance.p2p(), instance.world()->vci);
  r->owner = minimpi::OwnerValue(instance.world());
  *request = minimpi::ToHandle(r);
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Session_attach_buffer)
MINIMPI_EXPORT(Session_attach_buffer_c)
MINIMPI_EXPORT(Session_detach_buffer)
MINIMPI_EXPORT(Session_detach_buffer_c)
MINIMPI_EXPORT(Session_flush_buffer)
MINIMPI_EXPORT(Session_iflush_buffer)
