// Buffered sends as the bindings see them: the checked send of one message
// through the process's BufferedSends (mpi/p2p/buffered_sends.h), shared by
// MPI_Bsend, MPI_Ibsend and each MPI_Start of an MPI_Bsend_init request.
//
// Owned by: mpi/bindings. Called by: buffered_send.cc, completion.cc
// (MPI_Start), environment.cc (MPI_Finalize).
#ifndef MINIMPI_MPI_BINDINGS_BUFFERED_SEND_H_
#define MINIMPI_MPI_BINDINGS_BUFFERED_SEND_H_

#include "mpi/comm.h"
#include "mpi/vci/request.h"

namespace minimpi {

// Copies `send`'s data into the attached buffer and starts sending it.
// MPI_ERR_BUFFER (raised on `comm`) when no buffer is attached or it has no
// room for the message.
int BufferedSend(const char* call, Communicator* comm,
                 const vci::SendArguments& send);

// MPI_Finalize: waits until every buffered message has left, so none is
// lost when the job ends (as MPI_Buffer_detach would).
void FlushBufferedSends();

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_BUFFERED_SEND_H_
