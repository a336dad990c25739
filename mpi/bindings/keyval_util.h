// Keyvals of the objects other than communicators (datatypes, windows),
// shared by their attribute bindings: creating, freeing and looking up a
// keyval of one object kind, each raising MPI_ERR_KEYVAL in the same words.
// Communicator keyvals, with their predefined attributes and MPI-1 names,
// are bindings/attributes.cc.
//
// Owned by: mpi/bindings. Called by: datatype_attributes.cc, windows.cc.
#ifndef MINIMPI_MPI_BINDINGS_KEYVAL_UTIL_H_
#define MINIMPI_MPI_BINDINGS_KEYVAL_UTIL_H_

#include "mpi/objects/attributes.h"
#include "mpi/mpi.h"

namespace minimpi {

// MPI_Type_create_keyval / MPI_Win_create_keyval.
int CreateKeyval(const char* call, const Keyval::Callbacks& callbacks,
                 int* keyval, void* extra_state);

// MPI_Type_free_keyval / MPI_Win_free_keyval: MPI_ERR_KEYVAL for an id that
// names no live keyval of `kind`; *keyval becomes MPI_KEYVAL_INVALID.
int FreeKeyval(const char* call, AttributeObjectKind kind, int* keyval);

// The keyval `keyval` of `kind`, retained for the caller (who releases it
// with ProcessKeyvals().Release); MPI_ERR_KEYVAL otherwise.
int AcquireKeyval(const char* call, AttributeObjectKind kind, int keyval,
                  Keyval** acquired);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_KEYVAL_UTIL_H_
