// Setting, getting and creating communicator error handlers, with the name
// of the call the program made: shared by MPI_Comm_set_errhandler and
// friends (errors.cc) and the MPI-1 names MPI-3.0 removed
// (MPI_Errhandler_set, _get, _create; removed_mpi1.cc).
//
// Owned by: mpi/bindings. Called by: errors.cc, removed_mpi1.cc.
#ifndef MINIMPI_MPI_BINDINGS_ERRHANDLER_UTIL_H_
#define MINIMPI_MPI_BINDINGS_ERRHANDLER_UTIL_H_

#include "mpi/mpi.h"

namespace minimpi {

class Errhandler;
// The handler a handle names (predefined or the program's), or nullptr.
Errhandler* LookupErrhandler(MPI_Errhandler handle);

int SetCommErrhandler(const char* call, MPI_Comm comm,
                      MPI_Errhandler errhandler);
int GetCommErrhandler(const char* call, MPI_Comm comm,
                      MPI_Errhandler* errhandler);
int CreateCommErrhandler(const char* call,
                         MPI_Comm_errhandler_function* function,
                         MPI_Errhandler* errhandler);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_ERRHANDLER_UTIL_H_
