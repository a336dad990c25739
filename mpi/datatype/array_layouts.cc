#include "mpi/datatype/array_layouts.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mpi/datatype/layout.h"
#include "mpi/datatype/layout_builder.h"

namespace minimpi::datatype {
namespace {

// The dimensions in the order their elements vary, fastest first.
std::vector<size_t> FastestFirst(size_t ndims, int order) {
  std::vector<size_t> dims(ndims);
  for (size_t i = 0; i < ndims; ++i) {
    dims[i] = order == MPI_ORDER_C ? ndims - 1 - i : i;
  }
  return dims;
}

absl::Status CheckOrder(int order) {
  if (order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "order is ", order, ", neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"));
}

// Whether the whole array, `elements` items of `extent` bytes, has a byte
// size int64 can hold (every displacement inside it then fits too).
absl::Status CheckArrayBytes(int64_t elements, int64_t extent) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(elements, extent < 0 ? -extent : extent, &bytes)) {
    return absl::InvalidArgumentError(
        "the array has more bytes than a 64-bit integer can count");
  }
  return absl::OkStatus();
}

// cyclic(darg, gsize, r, psize, oldtype) of MPI-4.1 section 5.1.4: the
// blocks of `darg` items (the last one possibly shorter) that process
// coordinate `r` owns when blocks are dealt round robin to `psize`
// processes, with lb 0 and the extent of the whole dimension.
LayoutRef CyclicDimension(int64_t darg, int64_t gsize, int64_t r, int64_t psize,
                          const Layout& old) {
  const int64_t extent = old.extent();
  // The standard's code fragments, kept as written there.
  const int64_t nblocks = (gsize + (darg - 1)) / darg;
  int64_t count = nblocks / psize;
  const int64_t left_over = nblocks - count * psize;
  if (r < left_over) count = count + 1;
  int64_t darg_last = darg;
  const int64_t num_in_last_cyclic = gsize % (psize * darg);
  if (num_in_last_cyclic != 0) darg_last = num_in_last_cyclic - darg * r;
  if (darg_last > darg) darg_last = darg;
  if (darg_last <= 0) darg_last = darg;

  LayoutBuilder builder;
  if (count > 0) {
    const int64_t cycle = psize * darg * extent;
    builder.AppendBlocks(old, count - 1, darg, cycle, r * darg * extent);
    builder.AppendBlocks(old, 1, darg_last, 0,
                         r * darg * extent + (count - 1) * cycle);
  }
  return builder.FinishResized(0, gsize * extent);
}

}  // namespace

absl::StatusOr<LayoutRef> Subarray(std::span<const int64_t> sizes,
                                   std::span<const int64_t> subsizes,
                                   std::span<const int64_t> starts, int order,
                                   const Layout& old) {
  const size_t ndims = sizes.size();
  if (ndims == 0 || subsizes.size() != ndims || starts.size() != ndims) {
    return absl::InvalidArgumentError(
        "sizes, subsizes and starts need one entry per dimension (at least "
        "one)");
  }
  if (absl::Status status = CheckOrder(order); !status.ok()) return status;
  int64_t elements = 1;
  for (size_t i = 0; i < ndims; ++i) {
    if (sizes[i] < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("sizes[", i, "] is ", sizes[i], ", not positive"));
    }
    if (subsizes[i] < 0 || subsizes[i] > sizes[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("subsizes[", i, "] is ", subsizes[i],
                       ", outside [0, sizes[", i, "] = ", sizes[i], "]"));
    }
    if (starts[i] < 0 || starts[i] > sizes[i] - subsizes[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "starts[", i, "] is ", starts[i], ", outside [0, sizes[", i,
          "] - subsizes[", i, "] = ", sizes[i] - subsizes[i], "]"));
    }
    if (__builtin_mul_overflow(elements, sizes[i], &elements)) {
      return absl::InvalidArgumentError("the array has too many elements");
    }
  }
  if (absl::Status status = CheckArrayBytes(elements, old.extent());
      !status.ok()) {
    return status;
  }

  // Each dimension, fastest first, repeats the part built so far
  // subsizes[i] times at that dimension's stride; the starts shift the
  // whole. This is the standard's recursive definition, dimension by
  // dimension.
  LayoutRef part = LayoutRef::Share(&old);
  int64_t stride = old.extent();
  int64_t start_offset = 0;
  for (const size_t i : FastestFirst(ndims, order)) {
    part = Hvector(subsizes[i], 1, stride, *part);
    start_offset += starts[i] * stride;
    stride *= sizes[i];
  }
  LayoutBuilder builder;
  builder.AppendBlocks(*part, 1, 1, 0, start_offset);
  return builder.FinishResized(0, stride);
}

absl::StatusOr<LayoutRef> Darray(int64_t comm_size, int64_t rank,
                                 std::span<const int64_t> gsizes,
                                 std::span<const int> distribs,
                                 std::span<const int64_t> dargs,
                                 std::span<const int64_t> psizes, int order,
                                 const Layout& old) {
  const size_t ndims = gsizes.size();
  if (ndims == 0 || distribs.size() != ndims || dargs.size() != ndims ||
      psizes.size() != ndims) {
    return absl::InvalidArgumentError(
        "gsizes, distribs, dargs and psizes need one entry per dimension (at "
        "least one)");
  }
  if (comm_size < 1 || rank < 0 || rank >= comm_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rank ", rank, " is not a process of a group of ", comm_size));
  }
  if (absl::Status status = CheckOrder(order); !status.ok()) return status;

  int64_t processes = 1;
  int64_t elements = 1;
  std::vector<int64_t> block_sizes(ndims);
  for (size_t i = 0; i < ndims; ++i) {
    const int64_t gsize = gsizes[i];
    const int64_t psize = psizes[i];
    const int64_t darg = dargs[i];
    if (gsize < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("gsizes[", i, "] is ", gsize, ", not positive"));
    }
    if (psize < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("psizes[", i, "] is ", psize, ", not positive"));
    }
    const bool default_darg = darg == MPI_DISTRIBUTE_DFLT_DARG;
    if (!default_darg && darg < 1 && distribs[i] != MPI_DISTRIBUTE_NONE) {
      return absl::InvalidArgumentError(
          absl::StrCat("dargs[", i, "] is ", darg,
                       ", neither positive nor MPI_DISTRIBUTE_DFLT_DARG"));
    }
    switch (distribs[i]) {
      case MPI_DISTRIBUTE_BLOCK:
        // Default: the smallest block that covers the dimension.
        block_sizes[i] = default_darg ? (gsize + psize - 1) / psize : darg;
        // darg * psize >= gsize, written so it cannot overflow.
        if (block_sizes[i] < (gsize + psize - 1) / psize) {
          return absl::InvalidArgumentError(
              absl::StrCat("dargs[", i, "] = ", darg, " times psizes[", i,
                           "] = ", psize, " does not cover gsizes[", i,
                           "] = ", gsize, " with a block distribution"));
        }
        break;
      case MPI_DISTRIBUTE_CYCLIC:
        block_sizes[i] = default_darg ? 1 : darg;
        break;
      case MPI_DISTRIBUTE_NONE:
        // Not distributed: one process holds the whole dimension.
        if (psize != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("psizes[", i, "] is ", psize,
                           " for MPI_DISTRIBUTE_NONE, which needs 1"));
        }
        block_sizes[i] = gsize;
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("distribs[", i, "] is ", distribs[i],
                         ", not MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE"));
    }
    // A block longer than the dimension deals the same typemap as one of
    // exactly its length (one block, to coordinate 0); clamping keeps
    // psize * darg from overflowing.
    block_sizes[i] = std::min(block_sizes[i], gsize);
    if (__builtin_mul_overflow(processes, psize, &processes) ||
        __builtin_mul_overflow(elements, gsize, &elements)) {
      return absl::InvalidArgumentError("the array or grid is too large");
    }
  }
  if (processes != comm_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("the process grid holds ", processes,
                     " processes, the group ", comm_size));
  }
  if (absl::Status status = CheckArrayBytes(elements, old.extent());
      !status.ok()) {
    return status;
  }

  // The coordinates of `rank` in the grid, numbered row-major whatever the
  // array's order (section 5.1.4).
  std::vector<int64_t> coordinates(ndims);
  int64_t rest = rank;
  int64_t grid_below = comm_size;
  for (size_t i = 0; i < ndims; ++i) {
    grid_below /= psizes[i];
    coordinates[i] = rest / grid_below;
    rest %= grid_below;
  }

  // One cyclic() per dimension, fastest first, each over the previous.
  LayoutRef part = LayoutRef::Share(&old);
  for (const size_t i : FastestFirst(ndims, order)) {
    part = CyclicDimension(block_sizes[i], gsizes[i], coordinates[i], psizes[i],
                           *part);
  }
  return part;
}

}  // namespace minimpi::datatype
