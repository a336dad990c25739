// What the session bindings share with the rest of the bindings: starting
// the runtime for a user (MPI_Init_thread and MPI_Session_init), and where an
// error tied to no object goes when only sessions are live.
//
// Owned by: mpi/bindings. Called by: environment.cc, error_dispatch.cc,
// sessions.cc, comm_from_group.cc.
#ifndef MINIMPI_MPI_BINDINGS_SESSION_UTIL_H_
#define MINIMPI_MPI_BINDINGS_SESSION_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "mpi/objects/errhandler.h"
#include "mpi/mpi.h"

namespace minimpi {

// Instance::AddUser, with what the whole library needs once the runtime is
// first up (the collective algorithms the settings chose).
absl::Status AddRuntimeUser(int thread_level);

// The handler of the session begun most recently of those still live, with
// a reference the caller releases, and that session's handle; the default
// MPI_ERRORS_ARE_FATAL (and MPI_SESSION_NULL) when none is. Errors tied to
// no object, raised while the world model is not initialized, go there.
Errhandler* AcquireLatestSessionErrhandler(MPI_Session* session);

// Raises `error_class` on `handler`, which a user function receives with
// `session`. Before the runtime ever came up (a failing MPI_Session_init)
// there is no job to abort: a fatal handler prints the line and exits.
int RaiseOnHandler(Errhandler* handler, MPI_Session session, const char* call,
                   int error_class, const std::string& problem);

// An error tied to no session or communicator: MPI_COMM_WORLD's (or
// MPI_COMM_SELF's) handler while the world model is initialized, else the
// newest live session's.
int RaiseUnattached(const char* call, int error_class,
                    const std::string& problem);

// The error handler a handle names; predefined ones even before the
// runtime is up (MPI_Session_init's argument).
Errhandler* FindErrhandler(MPI_Errhandler handle);

// Raises `error_class` on the handler of the session `session` names (the
// handler of errors tied to no object when it names none), for session
// calls made outside sessions.cc (session_buffers.cc).
int RaiseOnSessionHandle(MPI_Session session, const char* call, int error_class,
                         const std::string& problem);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_SESSION_UTIL_H_
