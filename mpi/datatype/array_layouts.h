// Layouts of the array constructors: MPI_Type_create_subarray (MPI-4.1
// section 5.1.3) and MPI_Type_create_darray (section 5.1.4). Both are built
// from the constructors of layout.h exactly as the standard defines them,
// and both have explicit bounds: lb 0 and the extent of the whole array.
//
// Their arguments can be inconsistent in ways that take a loop to see, so
// these return an error status (INVALID_ARGUMENT, with a message naming the
// argument) that the bindings turn into MPI_ERR_ARG.
//
// Owned by: mpi/datatype. Called by: the MPI_Type_create_subarray/darray
// bindings, MPI-IO file views (later).
#ifndef MINIMPI_MPI_DATATYPE_ARRAY_LAYOUTS_H_
#define MINIMPI_MPI_DATATYPE_ARRAY_LAYOUTS_H_

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "mpi/datatype/layout.h"
#include "mpi/mpi.h"

namespace minimpi::datatype {

// `order` is MPI_ORDER_C (the last dimension varies fastest) or
// MPI_ORDER_FORTRAN (the first does). The spans have one entry per
// dimension (at least one). sizes[i] >= 1, 0 <= subsizes[i] <= sizes[i],
// 0 <= starts[i] <= sizes[i] - subsizes[i].
absl::StatusOr<LayoutRef> Subarray(std::span<const int64_t> sizes,
                                   std::span<const int64_t> subsizes,
                                   std::span<const int64_t> starts, int order,
                                   const Layout& old);

// The part of a global array that process `rank` of `comm_size` owns, the
// processes forming a grid of psizes (row-major, as MPI_Cart_create numbers
// them). distribs[i] is MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE; dargs[i] a
// positive block size or MPI_DISTRIBUTE_DFLT_DARG (ignored for _NONE).
absl::StatusOr<LayoutRef> Darray(int64_t comm_size, int64_t rank,
                                 std::span<const int64_t> gsizes,
                                 std::span<const int> distribs,
                                 std::span<const int64_t> dargs,
                                 std::span<const int64_t> psizes, int order,
                                 const Layout& old);

}  // namespace minimpi::datatype

#endif  // MINIMPI_MPI_DATATYPE_ARRAY_LAYOUTS_H_
