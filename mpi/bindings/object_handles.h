// Handles of the objects a program makes (derived datatypes, user
// operations): issuing them, finding the object a handle names, ending
// them. The objects themselves (mpi/datatype.h, mpi/objects/op.h) know nothing of
// handle tables; the tables are the Instance's, and translating handles
// is the bindings' work.
//
// Owned by: mpi/bindings. Called by: the bindings (and unit tests).
#ifndef MINIMPI_MPI_BINDINGS_OBJECT_HANDLES_H_
#define MINIMPI_MPI_BINDINGS_OBJECT_HANDLES_H_

#include "absl/status/statusor.h"
#include "mpi/objects/datatype.h"
#include "mpi/mpi.h"
#include "mpi/objects/op.h"

namespace minimpi {

// The datatype a handle names (predefined, or derived and not freed), or
// nullptr. Derived types need MPI_Init. Inline for the predefined types,
// which nearly every call names; LookupDerivedDatatype does the rest.
const Datatype* LookupDerivedDatatype(MPI_Datatype handle);
inline const Datatype* LookupDatatype(MPI_Datatype handle) {
  if (const Datatype* predefined = Datatype::FindPredefined(handle))
      [[likely]] {
    return predefined;
  }
  return LookupDerivedDatatype(handle);
}

// Builds the type `envelope` describes and issues a handle for it (see
// BuildDerivedDatatype).
absl::StatusOr<MPI_Datatype> NewDerivedDatatype(Datatype::Envelope envelope);

// Another handle to an existing derived type, holding a reference of its
// own; MPI_DATATYPE_NULL when the handle table is full.
MPI_Datatype NewHandle(const Datatype* type);

// MPI_Type_free: ends `handle` and gives back its reference. False when the
// handle names no derived type (predefined, freed, garbage).
bool FreeHandle(MPI_Datatype handle);

// The operation a handle names, or nullptr (invalid handle, MPI_OP_NULL).
const Op* LookupOp(MPI_Op handle);

// The handle of a user operation (MPI_Op_create), which takes over the
// caller's reference. FreeUserOp (MPI_Op_free) invalidates the handle and
// drops its reference; the operation lives on while schedules use it.
// False for a handle that names no user operation.
MPI_Op RegisterUserOp(Op* op);
bool FreeUserOp(MPI_Op handle);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_OBJECT_HANDLES_H_
