#include "mpi/datatype/layout_builder.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "absl/base/macros.h"
#include "mpi/datatype/layout.h"
#include "mpi/datatype/predefined.h"

namespace minimpi::datatype {

void LayoutBuilder::AppendBlocks(const Layout& old, int64_t count,
                                 int64_t blocklength, int64_t stride,
                                 int64_t displacement) {
  ABSL_ASSERT(count >= 0 && blocklength >= 0);
  // No copy at all adds no typemap entry, not even a bound marker.
  if (count == 0 || blocklength == 0) return;
  const bool old_has_data = old.size() > 0;
  if (!old_has_data && !old.has_explicit_bounds()) return;  // empty typemap

  // The copies lie at displacement + i * stride + k * extent; the extreme
  // displacements bound everything they contribute.
  const int64_t extent = old.extent();
  const int64_t block_span = (blocklength - 1) * extent;
  const int64_t blocks_span = (count - 1) * stride;
  const int64_t lowest = displacement + std::min<int64_t>(0, block_span) +
                         std::min<int64_t>(0, blocks_span);
  const int64_t highest = displacement + std::max<int64_t>(0, block_span) +
                          std::max<int64_t>(0, blocks_span);
  if (old.has_explicit_bounds()) {
    has_markers_ = true;
    marker_lb_ = std::min(marker_lb_, lowest + old.lb());
    marker_ub_ = std::max(marker_ub_, highest + old.ub());
  } else {
    data_lb_ = std::min(data_lb_, lowest + old.lb());
    data_ub_ = std::max(data_ub_, highest + old.ub());
  }
  if (!old_has_data) return;
  has_data_ = true;
  true_lb_ = std::min(true_lb_, lowest + old.true_lb());
  true_ub_ = std::max(true_ub_, highest + old.true_ub());
  alignment_ = std::max(alignment_, old.alignment());
  AppendSignature(old.signature(), count * blocklength);

  // The common cases collapse to a single run: one block of copies is one
  // run, and the blocks continue it (a vector of single doubles).
  const std::span<const Run> runs = old.runs();
  if (runs.size() == 1) {
    const std::optional<Run> block = RunOfCopies(runs[0], blocklength, extent);
    if (block.has_value()) {
      const std::optional<Run> all = RunOfCopies(*block, count, stride);
      if (all.has_value()) {
        AppendRun(Run{all->offset + displacement, all->length, all->count,
                      all->stride});
        return;
      }
      for (int64_t i = 0; i < count; ++i) {
        AppendRun(Run{block->offset + displacement + i * stride, block->length,
                      block->count, block->stride});
      }
      return;
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t k = 0; k < blocklength; ++k) {
      const int64_t shift = displacement + i * stride + k * extent;
      for (const Run& run : runs) {
        AppendRun(Run{run.offset + shift, run.length, run.count, run.stride});
      }
    }
  }
}

void LayoutBuilder::AppendRun(const Run& run) {
  runs_.push_back(run);
  // A merge can enable another with the run before (two blocks that became
  // equal after the second grew), so keep merging backwards.
  while (runs_.size() >= 2) {
    const std::optional<Run> merged =
        MergedRun(runs_[runs_.size() - 2], runs_.back());
    if (!merged.has_value()) break;
    runs_.pop_back();
    runs_.back() = *merged;
  }
}

void LayoutBuilder::AppendSignature(std::span<const SignatureRun> signature,
                                    int64_t times) {
  if (signature.size() == 1) {  // one predefined type: just multiply
    const SignatureRun entry{signature[0].basic, signature[0].count * times};
    if (!signature_.empty() && signature_.back().basic == entry.basic) {
      signature_.back().count += entry.count;
    } else {
      signature_.push_back(entry);
    }
    return;
  }
  for (int64_t i = 0; i < times; ++i) {
    for (const SignatureRun& entry : signature) {
      if (!signature_.empty() && signature_.back().basic == entry.basic) {
        signature_.back().count += entry.count;
      } else {
        signature_.push_back(entry);
      }
    }
  }
}

LayoutRef LayoutBuilder::Build(Bounds bounds, int64_t lb, int64_t extent) {
  Layout* layout = new Layout;
  layout->runs_ = std::move(runs_);
  layout->signature_ = std::move(signature_);
  layout->alignment_ = alignment_;
  if (has_data_) {
    layout->true_lb_ = true_lb_;
    layout->true_ub_ = true_ub_;
  }
  if (bounds == Bounds::kExplicit) {
    layout->has_explicit_bounds_ = true;
    layout->lb_ = lb;
    layout->ub_ = lb + extent;
  } else if (has_markers_) {
    // Only markers define the bounds once there are any (MPI-4.1 5.1.6),
    // and a type with markers is never padded.
    layout->has_explicit_bounds_ = true;
    layout->lb_ = marker_lb_;
    layout->ub_ = marker_ub_;
  } else if (has_data_) {
    layout->lb_ = data_lb_;
    layout->ub_ = data_ub_;
    if (bounds == Bounds::kStructPadding) {
      // The standard's epsilon: the least increment that makes the extent
      // a multiple of the largest alignment among the members.
      const int64_t remainder = (layout->ub_ - layout->lb_) % alignment_;
      if (remainder != 0) layout->ub_ += alignment_ - remainder;
    }
  }
  layout->ComputeDerivedFields();
  return LayoutRef::Adopt(layout);
}

const Layout* LayoutBuilder::BuildPredefined(const PredefinedType& type) {
  LayoutBuilder builder;
  for (int i = 0; i < type.member_count; ++i) {
    const NumberMember& member = type.members[i];
    builder.AppendRun(Run{
        member.offset, int64_t{member.native_size} * member.components, 1, 0});
  }
  Layout* layout = new Layout;
  layout->immortal_ = true;
  layout->predefined_ = &type;
  layout->runs_ = std::move(builder.runs_);
  layout->signature_ = {SignatureRun{type.handle, 1}};
  layout->lb_ = 0;
  layout->ub_ = type.extent;
  layout->true_lb_ = 0;
  const NumberMember& last = type.members[type.member_count - 1];
  layout->true_ub_ = last.offset + int64_t{last.native_size} * last.components;
  layout->alignment_ = type.alignment;
  layout->ComputeDerivedFields();
  return layout;
}

LayoutRef LayoutBuilder::BuildRunsOnly(std::span<const Run> runs,
                                       int64_t extent) {
  LayoutBuilder builder;
  for (const Run& run : runs) {
    if (run.length > 0 && run.count > 0) builder.AppendRun(run);
  }
  Layout* layout = new Layout;
  layout->runs_ = std::move(builder.runs_);
  int64_t bytes = 0;
  int64_t true_lb = kMax;
  int64_t true_ub = kMin;
  for (const Run& run : layout->runs_) {
    bytes += run.bytes();
    const int64_t last = run.offset + (run.count - 1) * run.stride;
    true_lb = std::min({true_lb, run.offset, last});
    true_ub = std::max({true_ub, run.offset + run.length, last + run.length});
  }
  if (bytes > 0) {
    layout->signature_ = {SignatureRun{MPI_BYTE, bytes}};
    layout->true_lb_ = true_lb;
    layout->true_ub_ = true_ub;
  }
  layout->lb_ = 0;
  layout->ub_ = extent;
  layout->has_explicit_bounds_ = true;
  layout->ComputeDerivedFields();
  return LayoutRef::Adopt(layout);
}

}  // namespace minimpi::datatype
