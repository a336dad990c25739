// Argument checks shared by the datatype bindings (constructors, decoding,
// queries, packing): each returns MPI_SUCCESS, or raises the error on
// MPI_COMM_WORLD's handler (datatype calls name no communicator) and
// returns its code. The messages name the argument, as in
//   MPI_Type_vector(rank 0): invalid count -1
//
// Owned by: mpi/bindings. Called by: datatype_*.cc, datatypes.cc, pack.cc.
#ifndef MINIMPI_MPI_BINDINGS_DATATYPE_UTIL_H_
#define MINIMPI_MPI_BINDINGS_DATATYPE_UTIL_H_

#include <climits>
#include <cstdint>

#include "mpi/bindings/object_handles.h"
#include "mpi/objects/datatype.h"
#include "mpi/mpi.h"

namespace minimpi {

[[gnu::cold, gnu::noinline]] int DatatypeError(const char* call,
                                               MPI_Datatype handle,
                                               const char* what);

// The datatype `handle` names (predefined or derived, committed or not);
// MPI_ERR_TYPE otherwise. `what` names the argument ("datatype",
// "oldtype", "array_of_types[2]"). Inline: a receiver's MPI_Get_count on
// each message of a window runs it.
[[gnu::always_inline]] inline int CheckDatatype(const char* call,
                                                MPI_Datatype handle,
                                                const char* what,
                                                const Datatype** type) {
  *type = LookupDatatype(handle);
  if (*type != nullptr) [[likely]]
    return MPI_SUCCESS;
  return DatatypeError(call, handle, what);
}

// MPI_ERR_ARG for a null pointer where the call writes or reads a value.
int NullPointerError(const char* call, const char* what);

// An output pointer the call writes: MPI_ERR_ARG when null.
template <typename T>
int CheckOutput(const char* call, T* pointer, const char* what) {
  return pointer != nullptr ? MPI_SUCCESS : NullPointerError(call, what);
}

// A count: MPI_ERR_COUNT when negative.
int CheckCount(const char* call, int64_t count, const char* what);

// A value that must not be negative and is no count (a blocklength, a
// size): MPI_ERR_ARG.
int CheckNotNegative(const char* call, int64_t value, const char* what);

// An input array of `count` entries: MPI_ERR_ARG when null with entries to
// read (a null array of no entries is fine).
int CheckArray(const char* call, const void* array, int64_t count,
               const char* what);

// Every entry of an array not negative: MPI_ERR_ARG naming the first that
// is.
template <typename T>
int CheckEntriesNotNegative(const char* call, const T* array, int64_t count,
                            const char* what);

// A 64-bit result for an int output: MPI_UNDEFINED when it does not fit, as
// the int forms of the queries report values only the _c forms can hold.
inline int ClampToInt(int64_t value) {
  return value > INT_MAX || value < INT_MIN ? MPI_UNDEFINED
                                            : static_cast<int>(value);
}

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_DATATYPE_UTIL_H_
