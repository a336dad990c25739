// Datatypes. This issue covers the predefined ones only, all contiguous:
// a message of `count` items is count * extent bytes, copied as they lie.
//
// Owned by: mpi/. Called by: the bindings (argument checks, byte counts).
#ifndef MINIMPI_MPI_DATATYPE_H_
#define MINIMPI_MPI_DATATYPE_H_

#include "mpi/mpi.h"

namespace minimpi {

struct Datatype {
  const char* name = nullptr;
  int size = 0;          // MPI_Type_size: bytes of data, padding excluded
  MPI_Aint extent = 0;   // bytes one item occupies in a buffer
  int basic_elements = 1;  // 2 for the pair types (value, index)
  int first_member_size = 0;  // pair types: size of the value member
};

// The datatype a handle names, or nullptr when the handle names none.
const Datatype* LookupDatatype(MPI_Datatype handle);

}  // namespace minimpi

#endif  // MINIMPI_MPI_DATATYPE_H_
