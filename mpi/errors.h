// Error classes, their strings, and raising an error on a communicator's
// error handler: MPI_ERRORS_RETURN hands the class back to the caller;
// MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT print one line naming the call,
// the rank and the problem, e.g.
//   MPI_Send(rank 3): invalid destination 7 (communicator size 4)
// and end the job through the launcher.
//
// Owned by: mpi/. Called by: the bindings.
#ifndef MINIMPI_MPI_ERRORS_H_
#define MINIMPI_MPI_ERRORS_H_

#include <string>

#include "mpi/comm.h"
#include "mpi/mpi.h"

namespace minimpi {

// The standard's description of an error class; nullptr for unknown codes.
const char* ErrorClassDescription(int error_class);

// Raises `error_class` on `comm`'s error handler (MPI_COMM_SELF's when comm
// is nullptr: an error tied to no valid communicator). Returns the class
// when the handler returns.
int RaiseError(Communicator* comm, const char* call, int error_class,
               const std::string& problem);

// The same for a call made before MPI_Init or after MPI_Finalize: always
// fatal, since no handler exists yet.
int RaiseNotInitialized(const char* call);

}  // namespace minimpi

#endif  // MINIMPI_MPI_ERRORS_H_
