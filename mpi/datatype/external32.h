// The external32 data representation (MPI-4.1 section 15.5.2): every
// number big-endian, at the standard's fixed sizes (MPI_LONG in 4 bytes,
// MPI_LONG_DOUBLE as IEEE binary128 in 16, MPI_WCHAR in 2, ...), with no
// padding. MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size
// and the "external32" MPI-IO data representation are built on these.
//
// A number that does not fit its external32 size (an MPI_LONG beyond 32
// bits) keeps its low-order bytes, as MPICH does; the standard leaves that
// case to the implementation. On unpacking, smaller external integers are
// sign- or zero-extended, and booleans and LOGICALs become 0 or 1.
//
// Owned by: mpi/datatype. Called by: the MPI_Pack_external bindings, MPI-IO.
#ifndef MINIMPI_MPI_DATATYPE_EXTERNAL32_H_
#define MINIMPI_MPI_DATATYPE_EXTERNAL32_H_

#include <cstdint>

#include "absl/status/status.h"
#include "mpi/datatype/layout.h"

namespace minimpi::datatype {

// Bytes that `count` items of `layout` take in external32 (a null layout:
// `count` bytes).
int64_t External32Size(const Layout* layout, int64_t count);

// MPI_Pack_external: writes the `count` items of (buffer, layout) in
// external32 to out[*position ...] and advances *position past them. Fails
// with OUT_OF_RANGE (MPI_ERR_TRUNCATE) when out[*position, out_size) is too
// small; nothing is written then.
absl::Status PackExternal32(const void* buffer, int64_t count,
                            const Layout* layout, void* out, int64_t out_size,
                            int64_t* position);

// MPI_Unpack_external: reads `count` items in external32 from
// in[*position ...] into (buffer, layout) and advances *position. Fails
// with OUT_OF_RANGE when in[*position, in_size) holds fewer bytes.
absl::Status UnpackExternal32(const void* in, int64_t in_size,
                              int64_t* position, void* buffer, int64_t count,
                              const Layout* layout);

}  // namespace minimpi::datatype

#endif  // MINIMPI_MPI_DATATYPE_EXTERNAL32_H_
