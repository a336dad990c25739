// Generalized requests (MPI_Grequest_start / MPI_Grequest_complete, MPI-4.1
// section 13.2): operations a program or a layered library carries out
// itself, waited on and tested with MPI's own calls. p2p keeps only the
// request (kind kGeneralized) and its completed state; the callbacks and
// the bookkeeping live here, in the request's `extension`:
//
//   Wait/Test (every form), once completed: query_fn fills the status, then
//     free_fn runs and the request is gone;
//   MPI_Request_get_status: query_fn only;
//   MPI_Cancel: cancel_fn, told whether the request has completed;
//   MPI_Request_free: free_fn at once if completed, else when the program
//     calls MPI_Grequest_complete (which it still must).
//
// A callback's error code is what the MPI call returns (or, from the calls
// that return several statuses, what that request's MPI_ERROR says).
//
// Owned by: mpi/bindings. Called by: completion.cc.
#ifndef MINIMPI_MPI_BINDINGS_GENERALIZED_REQUESTS_H_
#define MINIMPI_MPI_BINDINGS_GENERALIZED_REQUESTS_H_

#include "mpi/mpi.h"
#include "mpi/vci/request.h"

namespace minimpi {

inline bool IsGeneralized(const vci::Request* r) {
  return r != nullptr && r->kind == vci::RequestKind::kGeneralized;
}

// A completed generalized request is being collected by a Wait or Test:
// runs query_fn (into `status` unless MPI_STATUS_IGNORE; the status's
// MPI_ERROR is left as it was) and free_fn, and retires the request.
// Returns the first callback error, or MPI_SUCCESS.
int CollectGeneralized(vci::Request* r, MPI_Status* status);

// MPI_Request_get_status of a completed generalized request: query_fn only.
int QueryGeneralized(vci::Request* r, MPI_Status* status);

// MPI_Cancel: cancel_fn(extra_state, completed).
int CancelGeneralized(vci::Request* r);

// MPI_Request_free.
int FreeGeneralized(vci::Request* r);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_GENERALIZED_REQUESTS_H_
