// The constructors the MPI-1 names MPI-3.0 removed build on, with the name
// of the call the program made, so an error names MPI_Type_hvector when
// that is what the program called.
//
// Owned by: mpi/bindings. Called by: removed_mpi1.cc.
#ifndef MINIMPI_MPI_BINDINGS_DATATYPE_CONSTRUCTORS_H_
#define MINIMPI_MPI_BINDINGS_DATATYPE_CONSTRUCTORS_H_

#include "mpi/mpi.h"

namespace minimpi {

// MPI_Type_create_hvector, _hindexed and _struct under the name `call`.
int TypeCreateHvector(const char* call, int count, int blocklength,
                      MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype* newtype);
int TypeCreateHindexed(const char* call, int count, const int blocklengths[],
                       const MPI_Aint displacements[], MPI_Datatype oldtype,
                       MPI_Datatype* newtype);
int TypeCreateStruct(const char* call, int count, const int blocklengths[],
                     const MPI_Aint displacements[], const MPI_Datatype types[],
                     MPI_Datatype* newtype);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_DATATYPE_CONSTRUCTORS_H_
