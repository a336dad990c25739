// Buffered sends as the bindings see them: the checked send of one message
// through the BufferedSends (mpi/p2p/buffered_sends.h) that serves its
// communicator, shared by MPI_Bsend, MPI_Ibsend and each MPI_Start of an
// MPI_Bsend_init request; and the attach and detach bodies the process's,
// communicators' and sessions' buffer calls share.
//
// Owned by: mpi/bindings. Called by: buffered_send.cc, completion.cc
// (MPI_Start), environment.cc (MPI_Finalize), session_buffers.cc.
#ifndef MINIMPI_MPI_BINDINGS_BUFFERED_SEND_H_
#define MINIMPI_MPI_BINDINGS_BUFFERED_SEND_H_

#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "mpi/objects/comm.h"
#include "mpi/mpi.h"
#include "mpi/p2p/buffered_sends.h"
#include "mpi/vci/request.h"

namespace minimpi {

// Copies `send`'s data into the buffer attached to `comm`, else to its
// session, else to the process (MPI-4.1 section 3.6.1), and starts sending
// it. MPI_ERR_BUFFER (raised on `comm`) when no buffer is attached or the
// one in use has no room for the message.
int BufferedSend(const char* call, Communicator* comm,
                 const vci::SendArguments& send);

// MPI_Finalize: waits until every buffered message has left, so none is
// lost when the job ends (as MPI_Buffer_detach would).
void FlushBufferedSends();

// The buffered sends of the session `comm` was made from, or nullptr (a
// communicator of the world model, or none attached yet). Defined in
// session_buffers.cc, beside the MPI_Session_*_buffer calls.
p2p::BufferedSends* SessionBufferedSendsOf(Communicator* comm);

// A session's buffered sends, made on first use. A communicator created
// from a session keeps it (Communicator::session_buffered_sends); ending
// the session forgets it (MPI_Session_finalize).
std::shared_ptr<p2p::BufferedSends> SessionBufferedSends(MPI_Session session);
void ForgetSessionBufferedSends(MPI_Session session);

// Raises an error class with a one-line problem where the calling binding's
// errors go (a communicator's handler, a session's), returning the code.
using RaiseBufferError =
    absl::FunctionRef<int(int error_class, const std::string& problem)>;

// The bodies of the attach and detach calls the session calls share
// (MPI_Session_*_buffer, int and _c forms); errors go to `raise`. Detaching
// from nullptr `sends` answers a null buffer of size 0.
int AttachBufferedSendsBuffer(RaiseBufferError raise, p2p::BufferedSends& sends,
                              void* buffer, MPI_Count size);
int DetachBufferedSendsBuffer(RaiseBufferError raise, p2p::BufferedSends* sends,
                              void* buffer_addr, int* size);
int DetachBufferedSendsBuffer(RaiseBufferError raise, p2p::BufferedSends* sends,
                              void* buffer_addr, MPI_Count* size);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_BUFFERED_SEND_H_
