// Error classes and codes, their strings, and raising an error on a
// communicator's error handler: MPI_ERRORS_RETURN hands the code back to the
// caller; MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT print one line naming the
// call, the rank and the problem, e.g.
//   MPI_Send(rank 3): invalid destination 7 (communicator size 4)
// and end the job through the launcher; a user handler is called with the
// code and may return.
//
// An error code is not just its class: it also names that line, so that
// MPI_Error_string tells a program which argument was wrong and how, as the
// fatal handler would have printed it. Code layout (always positive):
//   bit 30 clear: the library's own codes
//     bits 0..13   the predefined error class (0..62)
//     bits 14..29  1 + the slot of the message in a ring of recent errors
//                  (0: no message, the code is the class itself)
//   bit 30 set: what the program added, all above MPI_ERR_LASTCODE as
//   MPI-4.1 section 9.5 requires
//     bits 0..13   a class slot: a predefined class (0..62), or 63 and up
//                  for MPI_Add_error_class's classes
//     bits 14..29  0: the class of that slot itself (a program's class);
//                  else the number of a code from MPI_Add_error_code
// A code whose ring slot has since been reused still maps to its class;
// its string then says only what the class says.
//
// Owned by: mpi/bindings. Called by: the bindings.
#ifndef MINIMPI_MPI_BINDINGS_ERROR_DISPATCH_H_
#define MINIMPI_MPI_BINDINGS_ERROR_DISPATCH_H_

#include <string>

#include "mpi/objects/comm.h"
#include "mpi/objects/errhandler.h"
#include "mpi/mpi.h"

namespace minimpi {

// The standard's description of a predefined error class; nullptr for
// anything else.
const char* ErrorClassDescription(int error_class);

// The class of an error code (MPI_Error_class), or -1 for a value that is no
// code of this library.
int ErrorClassOf(int code);
// What MPI_Error_string says about `code`; false for an invalid code.
bool ErrorStringOf(int code, std::string* text);

// MPI_Add_error_class, MPI_Add_error_code, MPI_Add_error_string and their
// MPI-4.1 removal (MPI_Remove_error_*). Each returns -1 (or false) when no
// room is left, or the class or code is not one a program may add to or
// remove (a class that still has codes cannot be removed).
int AddErrorClass();
int AddErrorCode(int error_class);
bool AddErrorString(int code, const std::string& text);
bool RemoveErrorClass(int error_class);
bool RemoveErrorCode(int code);
bool RemoveErrorString(int code);
// The value of MPI_LASTUSEDCODE: MPI_ERR_LASTCODE, or the largest class or
// code the program added and has not removed.
int LastUsedCode();

// Raises `error_class` on `comm`'s error handler and returns the code made
// for it when the handler returns. An error tied to no valid communicator
// (comm == nullptr) goes to MPI_COMM_WORLD's handler, unless the program set
// one on MPI_COMM_SELF, the handler MPI-4 names for such errors: so a
// program that sets MPI_ERRORS_RETURN on either gets the code back, as it
// would from MPICH and Open MPI.
int RaiseError(Communicator* comm, const char* call, int error_class,
               const std::string& problem);

// Raises `error_class` on a window's error handler (`handler`, which the
// caller keeps alive; `window` is what a user handler is given), as
// RaiseError does on a communicator's.
int RaiseWindowError(Errhandler* handler, MPI_Win window, const char* call,
                     int error_class, const std::string& problem);

// The same with `code` itself, whatever its class: what
// MPI_Win_call_errhandler hands the window's handler, so that a user handler
// gets exactly the value the program passed.
int RaiseWindowErrorCode(Errhandler* handler, MPI_Win window, const char* call,
                         int code, const std::string& problem);

// The same for an error code made elsewhere (an attribute callback's, say,
// possibly from MPI_Add_error_code): the handler gets, and the call returns,
// that very code, so the program sees the class, code and string it chose.
// `problem` is what the fatal handlers print. A value that is no error code
// of this library is raised as MPI_ERR_OTHER instead.
int RaiseErrorCode(Communicator* comm, const char* call, int code,
                   const std::string& problem);

// The same for a call made before MPI_Init or after MPI_Finalize: always
// fatal, since no handler exists yet.
int RaiseNotInitialized(const char* call);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_ERROR_DISPATCH_H_
