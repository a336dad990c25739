// Accumulates the typemap of a new datatype, block of copies by block of
// copies, in typemap order, and turns it into a Layout: merges each run
// into the previous one where it can (so the flat list stays short) and
// keeps the bounds by the rules explained in layout.h.
//
// Every constructor of layout.h and array_layouts.h is a few calls of
// AppendBlocks followed by one Finish*.
//
// Owned by: mpi/datatype. Called by: layout.cc, array_layouts.cc.
#ifndef MINIMPI_MPI_DATATYPE_LAYOUT_BUILDER_H_
#define MINIMPI_MPI_DATATYPE_LAYOUT_BUILDER_H_

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "mpi/datatype/layout.h"
#include "mpi/datatype/predefined.h"

namespace minimpi::datatype {

class LayoutBuilder {
 public:
  // Appends `count` blocks of `blocklength` consecutive copies of `old`
  // (each copy old.extent() bytes after the previous one); block i starts
  // at byte displacement + i * stride. count and blocklength >= 0.
  void AppendBlocks(const Layout& old, int64_t count, int64_t blocklength,
                    int64_t stride, int64_t displacement);

  // The new layout, its bounds taken from the copies (and their markers).
  LayoutRef Finish() { return Build(Bounds::kFromCopies, 0, 0); }
  // The same, with a struct's extent rounded up to its members' largest
  // alignment when no member has explicit bounds.
  LayoutRef FinishStruct() { return Build(Bounds::kStructPadding, 0, 0); }
  // Explicit bounds lb and lb + extent replace all others.
  LayoutRef FinishResized(int64_t lb, int64_t extent) {
    return Build(Bounds::kExplicit, lb, extent);
  }

  // The (immortal) layout of a predefined type: its members' bytes, one
  // signature entry, lb 0 and ub the C extent.
  static const Layout* BuildPredefined(const PredefinedType& type);

  // A layout for moving bytes only (see RunsOnly in layout.h).
  static LayoutRef BuildRunsOnly(std::span<const Run> runs, int64_t extent);

 private:
  enum class Bounds { kFromCopies, kStructPadding, kExplicit };
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

  void AppendRun(const Run& run);
  void AppendSignature(std::span<const SignatureRun> signature, int64_t times);
  LayoutRef Build(Bounds bounds, int64_t lb, int64_t extent);

  std::vector<Run> runs_;
  std::vector<SignatureRun> signature_;
  bool has_data_ = false;
  bool has_markers_ = false;
  int64_t marker_lb_ = kMax;  // least lb of the copies that have markers
  int64_t marker_ub_ = kMin;  // greatest ub of those
  int64_t data_lb_ = kMax;    // least lb of the copies without markers
  int64_t data_ub_ = kMin;    // greatest ub (padding included) of those
  int64_t true_lb_ = kMax;
  int64_t true_ub_ = kMin;
  int64_t alignment_ = 1;
};

}  // namespace minimpi::datatype

#endif  // MINIMPI_MPI_DATATYPE_LAYOUT_BUILDER_H_
