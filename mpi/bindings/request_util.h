// What the request bindings (completion.cc, request_lifecycle.cc) say
// alike about a handle that names no request.
#ifndef MINIMPI_MPI_BINDINGS_REQUEST_UTIL_H_
#define MINIMPI_MPI_BINDINGS_REQUEST_UTIL_H_

#include "mpi/bindings/binding_util.h"

namespace minimpi {

inline constexpr char kStaleRequest[] =
    "invalid request handle (already completed, freed, or never a request)";

// MPI_ERR_REQUEST, raised on no communicator (the request names none).
[[gnu::cold]] inline int InvalidRequest(const char* call, const char* what) {
  return RaiseError(nullptr, call, MPI_ERR_REQUEST, what);
}

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_REQUEST_UTIL_H_
