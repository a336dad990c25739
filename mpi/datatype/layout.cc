// Layout's queries and the constructors of layout.h: each constructor is a
// few blocks of copies of older layouts appended to a LayoutBuilder.
#include "mpi/datatype/layout.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/macros.h"
#include "absl/strings/str_cat.h"
#include "mpi/datatype/layout_builder.h"
#include "mpi/datatype/predefined.h"

namespace minimpi::datatype {

// ---- LayoutRef ----

LayoutRef LayoutRef::Share(const Layout* layout) {
  if (layout != nullptr) layout->Retain();
  return LayoutRef(layout);
}

LayoutRef::LayoutRef(const LayoutRef& other) : layout_(other.layout_) {
  if (layout_ != nullptr) layout_->Retain();
}

LayoutRef& LayoutRef::operator=(const LayoutRef& other) {
  if (other.layout_ != nullptr) other.layout_->Retain();
  if (layout_ != nullptr) layout_->Release();
  layout_ = other.layout_;
  return *this;
}

LayoutRef& LayoutRef::operator=(LayoutRef&& other) noexcept {
  if (this != &other) {
    if (layout_ != nullptr) layout_->Release();
    layout_ = other.layout_;
    other.layout_ = nullptr;
  }
  return *this;
}

LayoutRef::~LayoutRef() {
  if (layout_ != nullptr) layout_->Release();
}

// ---- Layout ----

void Layout::Retain() const {
  if (immortal_) return;
  references_.fetch_add(1, std::memory_order_relaxed);
}

void Layout::Release() const {
  if (immortal_) return;
  // acq_rel: the thread that frees must see every other holder's use done.
  if (references_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

bool Layout::IsContiguous(int64_t count) const {
  if (size_ == 0 || count == 0) return true;
  if (runs_.size() != 1 || runs_[0].count != 1) return false;
  return count == 1 || runs_[0].length == extent();
}

std::optional<Run> Layout::RunOfItems(int64_t count) const {
  if (runs_.size() != 1 || count <= 0) return std::nullopt;
  return RunOfCopies(runs_[0], count, extent());
}

int64_t Layout::ElementsIn(int64_t packed_bytes) const {
  if (size_ == 0) return packed_bytes == 0 ? 0 : -1;
  int64_t elements = packed_bytes / size_ * basic_elements_;
  int64_t rest = packed_bytes % size_;
  // The signature run the rest ends in: the last one starting at or before.
  const auto next = std::upper_bound(signature_byte_starts_.begin(),
                                     signature_byte_starts_.end(), rest);
  const size_t index = (next - signature_byte_starts_.begin()) - 1;
  rest -= signature_byte_starts_[index];
  elements += signature_element_starts_[index];
  if (rest == 0) return elements;
  const PredefinedType& basic = *FindPredefined(signature_[index].basic);
  elements += rest / basic.size * basic.basic_elements();
  rest %= basic.size;
  if (rest == 0) return elements;
  // Inside a pair, the value member alone is one whole basic element.
  if (basic.is_pair && rest == basic.members[0].native_size) {
    return elements + 1;
  }
  return -1;
}

std::string Layout::DebugString() const {
  std::string text =
      absl::StrCat("size=", size_, " lb=", lb_, " ub=", ub_,
                   " true_lb=", true_lb_, " true_ub=", true_ub_,
                   has_explicit_bounds_ ? " (explicit)" : "", " runs=[");
  for (const Run& run : runs_) {
    absl::StrAppend(&text, "{", run.offset, ",", run.length, ",", run.count,
                    ",", run.stride, "}");
  }
  absl::StrAppend(&text, "] signature=[");
  for (const SignatureRun& entry : signature_) {
    const PredefinedType* basic = FindPredefined(entry.basic);
    absl::StrAppend(&text, " ", basic != nullptr ? basic->name : "?", "x",
                    entry.count);
  }
  absl::StrAppend(&text, " ]");
  return text;
}

void Layout::ComputeDerivedFields() {
  run_packed_starts_.clear();
  run_packed_starts_.reserve(runs_.size() + 1);
  int64_t packed = 0;
  num_blocks_ = 0;
  for (const Run& run : runs_) {
    run_packed_starts_.push_back(packed);
    packed += run.bytes();
    num_blocks_ += run.count;
  }
  run_packed_starts_.push_back(packed);
  size_ = packed;

  signature_byte_starts_.clear();
  signature_element_starts_.clear();
  int64_t bytes = 0;
  int64_t elements = 0;
  external32_size_ = 0;
  for (const SignatureRun& entry : signature_) {
    const PredefinedType& basic = *FindPredefined(entry.basic);
    signature_byte_starts_.push_back(bytes);
    signature_element_starts_.push_back(elements);
    bytes += entry.count * basic.size;
    elements += entry.count * basic.basic_elements();
    external32_size_ += entry.count * basic.external32_size;
  }
  signature_byte_starts_.push_back(bytes);
  signature_element_starts_.push_back(elements);
  basic_elements_ = elements;
  // The runs and the signature describe the same bytes.
  ABSL_ASSERT(bytes == size_);

  reduction_base_ = MPI_DATATYPE_NULL;
  reduction_base_count_ = 0;
  if (!signature_.empty()) {
    const MPI_Datatype first = signature_[0].basic;
    int64_t count = 0;
    bool single_base = true;
    for (const SignatureRun& entry : signature_) {
      single_base = single_base && entry.basic == first;
      count += entry.count;
    }
    if (single_base) {
      reduction_base_ = first;
      reduction_base_count_ = count;
    }
  }
}

// ---- Runs ----

namespace {

// Runs of several blocks spaced exactly one block apart are one block.
Run Normalized(Run run) {
  if (run.count > 1 && run.stride == run.length) {
    return Run{run.offset, run.length * run.count, 1, 0};
  }
  if (run.count == 1) run.stride = 0;
  return run;
}

}  // namespace

std::optional<Run> MergedRun(const Run& first, const Run& second) {
  if (first.count == 1 && second.count == 1 &&
      first.offset + first.length == second.offset) {
    return Run{first.offset, first.length + second.length, 1, 0};
  }
  if (first.length != second.length) return std::nullopt;
  const int64_t stride = first.count > 1    ? first.stride
                         : second.count > 1 ? second.stride
                                            : second.offset - first.offset;
  if (first.count > 1 && first.stride != stride) return std::nullopt;
  if (second.count > 1 && second.stride != stride) return std::nullopt;
  if (second.offset != first.offset + first.count * stride) {
    return std::nullopt;
  }
  return Normalized(
      Run{first.offset, first.length, first.count + second.count, stride});
}

std::optional<Run> RunOfCopies(const Run& run, int64_t copies,
                               int64_t distance) {
  if (copies == 1) return run;
  // Whether two copies continue each other decides it for any number: each
  // copy stands to the next as the first to the second.
  Run shifted = run;
  shifted.offset += distance;
  const std::optional<Run> pair = MergedRun(run, shifted);
  if (!pair.has_value()) return std::nullopt;
  if (pair->count == 1) {  // the copies abut: one block
    return Run{run.offset, run.length * copies, 1, 0};
  }
  return Normalized(
      Run{run.offset, run.length, run.count * copies, pair->stride});
}

// ---- Constructors ----

const Layout* PredefinedLayout(MPI_Datatype handle) {
  using predefined_internal::kFirstHandle;
  using predefined_internal::kHandleCount;
  // Built on first use rather than at load, so no static initialization
  // order can see the table of predefined types still empty. Never freed.
  static const std::array<const Layout*, kHandleCount>* const layouts = [] {
    auto* table = new std::array<const Layout*, kHandleCount>{};
    for (const PredefinedType* type : AllPredefined()) {
      const uintptr_t index =
          reinterpret_cast<uintptr_t>(type->handle) - kFirstHandle;
      (*table)[index] = LayoutBuilder::BuildPredefined(*type);
    }
    return table;
  }();
  const uintptr_t index = reinterpret_cast<uintptr_t>(handle) - kFirstHandle;
  if (index >= kHandleCount) return nullptr;
  return (*layouts)[index];
}

LayoutRef Predefined(MPI_Datatype handle) {
  return LayoutRef::Share(PredefinedLayout(handle));
}

LayoutRef Contiguous(int64_t count, const Layout& old) {
  LayoutBuilder builder;
  builder.AppendBlocks(old, 1, count, 0, 0);
  return builder.Finish();
}

LayoutRef Vector(int64_t count, int64_t blocklength, int64_t stride,
                 const Layout& old) {
  return Hvector(count, blocklength, stride * old.extent(), old);
}

LayoutRef Hvector(int64_t count, int64_t blocklength, int64_t stride_bytes,
                  const Layout& old) {
  LayoutBuilder builder;
  builder.AppendBlocks(old, count, blocklength, stride_bytes, 0);
  return builder.Finish();
}

LayoutRef Hindexed(std::span<const int64_t> blocklengths,
                   std::span<const int64_t> displacements_bytes,
                   const Layout& old) {
  ABSL_ASSERT(blocklengths.size() == displacements_bytes.size());
  LayoutBuilder builder;
  for (size_t i = 0; i < blocklengths.size(); ++i) {
    builder.AppendBlocks(old, 1, blocklengths[i], 0, displacements_bytes[i]);
  }
  return builder.Finish();
}

LayoutRef Indexed(std::span<const int64_t> blocklengths,
                  std::span<const int64_t> displacements, const Layout& old) {
  ABSL_ASSERT(blocklengths.size() == displacements.size());
  LayoutBuilder builder;
  for (size_t i = 0; i < blocklengths.size(); ++i) {
    builder.AppendBlocks(old, 1, blocklengths[i], 0,
                         displacements[i] * old.extent());
  }
  return builder.Finish();
}

LayoutRef HindexedBlock(int64_t blocklength,
                        std::span<const int64_t> displacements_bytes,
                        const Layout& old) {
  LayoutBuilder builder;
  for (const int64_t displacement : displacements_bytes) {
    builder.AppendBlocks(old, 1, blocklength, 0, displacement);
  }
  return builder.Finish();
}

LayoutRef IndexedBlock(int64_t blocklength,
                       std::span<const int64_t> displacements,
                       const Layout& old) {
  LayoutBuilder builder;
  for (const int64_t displacement : displacements) {
    builder.AppendBlocks(old, 1, blocklength, 0, displacement * old.extent());
  }
  return builder.Finish();
}

LayoutRef Struct(std::span<const int64_t> blocklengths,
                 std::span<const int64_t> displacements_bytes,
                 std::span<const Layout* const> olds) {
  ABSL_ASSERT(blocklengths.size() == displacements_bytes.size() &&
              blocklengths.size() == olds.size());
  LayoutBuilder builder;
  for (size_t i = 0; i < blocklengths.size(); ++i) {
    builder.AppendBlocks(*olds[i], 1, blocklengths[i], 0,
                         displacements_bytes[i]);
  }
  return builder.FinishStruct();
}

LayoutRef Resized(const Layout& old, int64_t lb, int64_t extent) {
  LayoutBuilder builder;
  builder.AppendBlocks(old, 1, 1, 0, 0);
  return builder.FinishResized(lb, extent);
}

LayoutRef RunsOnly(std::span<const Run> runs, int64_t extent) {
  return LayoutBuilder::BuildRunsOnly(runs, extent);
}

}  // namespace minimpi::datatype
