// Attributes on datatypes (MPI-4.1 section 7.7.4): what MPI_Type_dup and
// MPI_Type_free do with them. The MPI_Type_*_attr and *_keyval calls are
// datatype_attributes.cc.
//
// Owned by: mpi/bindings. Called by: datatype_constructors.cc.
#ifndef MINIMPI_MPI_BINDINGS_DATATYPE_ATTRIBUTES_H_
#define MINIMPI_MPI_BINDINGS_DATATYPE_ATTRIBUTES_H_

#include "mpi/objects/datatype.h"
#include "mpi/mpi.h"

namespace minimpi {

// MPI_Type_dup's last step: runs the copy callbacks of `old` (which the
// program named `old_handle`) into the new type `*newtype`, in the order
// the attributes were set. If one fails, what was copied is deleted again,
// the new type is freed, *newtype becomes MPI_DATATYPE_NULL and the
// callback's error is raised.
int CopyTypeAttributesOrUndo(const char* call, const Datatype* old,
                             MPI_Datatype old_handle, MPI_Datatype* newtype);

// MPI_Type_free's first step: when `handle` is the last handle the program
// holds to `type`, runs the delete callbacks (the most recently set
// first). If one fails, the type keeps that attribute and those set before
// it, stays allocated, and the callback's error is raised.
int DeleteTypeAttributesOnFree(const char* call, const Datatype* type,
                               MPI_Datatype handle);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_DATATYPE_ATTRIBUTES_H_
