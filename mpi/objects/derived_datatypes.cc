#include "mpi/objects/derived_datatypes.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mpi/datatype/array_layouts.h"

namespace minimpi {
namespace {

using datatype::Layout;
using datatype::LayoutRef;
using Int128 = __int128;

// Sizes and byte offsets stay within +-2^62, so that the layout engine's
// int64 arithmetic (an offset plus a length, a difference of two bounds)
// can never overflow.
constexpr Int128 kMaxMagnitude = Int128{1} << 62;

bool TooBig(Int128 value) {
  return value > kMaxMagnitude || value < -kMaxMagnitude;
}

// Reads an envelope in the order EnvelopeWriter wrote it. Reading past the
// end of an array yields 0 and marks the reader failed, so a malformed
// envelope is refused instead of read out of bounds.
class EnvelopeReader {
 public:
  explicit EnvelopeReader(const Datatype::Envelope& envelope)
      : envelope_(envelope), large_(IsLargeCountEnvelope(envelope)) {}

  int64_t Count() {
    return large_ ? Next(envelope_.large_counts, next_large_count_)
                  : Next(envelope_.integers, next_integer_);
  }
  int64_t ByteDisplacement() {
    return large_ ? Next(envelope_.large_counts, next_large_count_)
                  : Next(envelope_.addresses, next_address_);
  }
  int Integer() {
    return static_cast<int>(Next(envelope_.integers, next_integer_));
  }
  const Datatype* Type() {
    if (next_type_ >= envelope_.types.size()) {
      ok_ = false;
      return nullptr;
    }
    return envelope_.types[next_type_++];
  }
  // `n` values of one kind; an empty vector (and a failed reader) when
  // fewer are left, so a malformed count never sizes an allocation.
  std::vector<int64_t> Counts(int64_t n) {
    if (!Reserve(large_ ? envelope_.large_counts.size() - next_large_count_
                        : envelope_.integers.size() - next_integer_,
                 n)) {
      return {};
    }
    std::vector<int64_t> values(n);
    for (int64_t& value : values) value = Count();
    return values;
  }
  std::vector<int64_t> ByteDisplacements(int64_t n) {
    if (!Reserve(large_ ? envelope_.large_counts.size() - next_large_count_
                        : envelope_.addresses.size() - next_address_,
                 n)) {
      return {};
    }
    std::vector<int64_t> values(n);
    for (int64_t& value : values) value = ByteDisplacement();
    return values;
  }
  std::vector<int> Integers(int64_t n) {
    if (!Reserve(envelope_.integers.size() - next_integer_, n)) return {};
    std::vector<int> values(n);
    for (int& value : values) value = Integer();
    return values;
  }

  // Whether every read found its value and every value was read.
  bool Complete() const {
    return ok_ && next_integer_ == envelope_.integers.size() &&
           next_address_ == envelope_.addresses.size() &&
           next_large_count_ == envelope_.large_counts.size() &&
           next_type_ == envelope_.types.size();
  }

 private:
  bool Reserve(size_t left, int64_t n) {
    if (!ok_ || n < 0 || static_cast<uint64_t>(n) > left) ok_ = false;
    return ok_;
  }

  template <typename T>
  int64_t Next(const std::vector<T>& values, size_t& next) {
    if (next >= values.size()) {
      ok_ = false;
      return 0;
    }
    return static_cast<int64_t>(values[next++]);
  }

  const Datatype::Envelope& envelope_;
  const bool large_;
  bool ok_ = true;
  size_t next_integer_ = 0;
  size_t next_address_ = 0;
  size_t next_large_count_ = 0;
  size_t next_type_ = 0;
};

// What a constructor's blocks add to the new type, summed before the type
// is built so that types the layout engine cannot hold are refused rather
// than overflowing its arithmetic or exhausting memory. The run estimate
// follows LayoutBuilder::AppendBlocks: copies of a one-run type that
// continue each other stay one run, anything else may take a run per
// block or per copy.
class TypeLimits {
 public:
  // `count` blocks of `blocklength` copies of `old`, block i at byte
  // displacement + i * stride.
  void AddBlocks(const Layout& old, int64_t count, int64_t blocklength,
                 Int128 stride, Int128 displacement) {
    if (count <= 0 || blocklength <= 0) return;
    if (TooBig(displacement) || (count > 1 && TooBig(stride))) {
      out_of_range_ = true;
      return;
    }
    const Int128 block_span = (Int128{blocklength} - 1) * old.extent();
    const Int128 blocks_span = (Int128{count} - 1) * stride;
    if (TooBig(block_span) || TooBig(blocks_span)) {
      out_of_range_ = true;
      return;
    }
    const Int128 lowest = displacement + std::min<Int128>(0, block_span) +
                          std::min<Int128>(0, blocks_span) +
                          std::min(old.lb(), old.true_lb());
    const Int128 highest = displacement + std::max<Int128>(0, block_span) +
                           std::max<Int128>(0, blocks_span) +
                           std::max(old.ub(), old.true_ub());
    const Int128 copies = Int128{count} * blocklength;
    if (TooBig(lowest) || TooBig(highest) ||
        (old.size() > 0 && copies > kMaxMagnitude)) {
      out_of_range_ = true;
      return;
    }
    bytes_ += copies * old.size();
    if (TooBig(bytes_)) {
      out_of_range_ = true;
      return;
    }
    const std::span<const datatype::Run> runs = old.runs();
    if (runs.size() == 1) {
      const std::optional<datatype::Run> block =
          datatype::RunOfCopies(runs[0], blocklength, old.extent());
      if (!block.has_value()) {
        runs_ += copies;
      } else if (!datatype::RunOfCopies(*block, count,
                                        static_cast<int64_t>(stride))
                      .has_value()) {
        runs_ += count;
      } else {
        runs_ += 1;
      }
    } else {
      runs_ += copies * static_cast<int64_t>(runs.size());
    }
    const size_t signature_entries = old.signature().size();
    signature_entries_ +=
        signature_entries <= 1 ? 1 : copies * signature_entries;
  }

  // An array type (subarray, darray): `fastest_blocks` blocks of `old` in
  // the dimension that varies fastest, `fastest_elements` elements in it,
  // `other_elements` elements in all the others together.
  void AddArray(const Layout& old, Int128 fastest_blocks,
                Int128 fastest_elements, Int128 other_elements) {
    const size_t runs = old.runs().size();
    if (runs == 1) {
      runs_ += fastest_blocks * other_elements;
    } else {
      runs_ += fastest_elements * other_elements * static_cast<int64_t>(runs);
    }
    const size_t signature_entries = old.signature().size();
    if (signature_entries > 1) {
      signature_entries_ += fastest_elements * other_elements *
                            static_cast<int64_t>(signature_entries);
    }
  }

  absl::Status status() const {
    if (out_of_range_) {
      return absl::OutOfRangeError(
          "the new type would reach beyond 2^62 bytes (size, extent or "
          "displacements too large)");
    }
    if (runs_ > kMaxLayoutRuns || signature_entries_ > kMaxLayoutRuns) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the new type is too irregular: it would flatten into more than ",
          kMaxLayoutRuns, " blocks"));
    }
    return absl::OkStatus();
  }

 private:
  Int128 bytes_ = 0;
  Int128 runs_ = 0;
  Int128 signature_entries_ = 0;
  bool out_of_range_ = false;
};

absl::Status Truncated() {
  return absl::InvalidArgumentError(
      "the constructor's arguments are incomplete");
}

absl::Status NegativeCount(const char* what, int64_t value) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " is ", value, ", negative"));
}

// The run estimate of a subarray or darray whose dimensions, fastest first,
// select `elements[i]` elements in `blocks[i]` blocks.
void AddArrayLimits(TypeLimits& limits, const Layout& old,
                    std::span<const Int128> elements,
                    std::span<const Int128> blocks) {
  Int128 others = 1;
  for (size_t i = 1; i < elements.size(); ++i) {
    others = std::min(others * elements[i], kMaxMagnitude);
  }
  limits.AddArray(old, blocks[0], elements[0], others);
}

// The dimensions in the order their elements vary, fastest first.
std::vector<size_t> FastestFirst(size_t ndims, int order) {
  std::vector<size_t> dims(ndims);
  for (size_t i = 0; i < ndims; ++i) {
    dims[i] = order == MPI_ORDER_FORTRAN ? i : ndims - 1 - i;
  }
  return dims;
}

absl::StatusOr<LayoutRef> BuildSubarray(EnvelopeReader& reader) {
  const int ndims = reader.Integer();
  if (ndims < 1) return absl::InvalidArgumentError("ndims is not positive");
  std::vector<int64_t> sizes = reader.Counts(ndims);
  std::vector<int64_t> subsizes = reader.Counts(ndims);
  std::vector<int64_t> starts = reader.Counts(ndims);
  const int order = reader.Integer();
  const Datatype* old = reader.Type();
  if (!reader.Complete()) return Truncated();
  // The engine checks the arguments; the estimate only needs them sane.
  std::vector<Int128> elements;
  for (const size_t i : FastestFirst(ndims, order)) {
    elements.push_back(std::max<int64_t>(0, subsizes[i]));
  }
  const Int128 one_block[] = {1};
  TypeLimits limits;
  AddArrayLimits(limits, old->layout(), elements, one_block);
  if (absl::Status status = limits.status(); !status.ok()) return status;
  return datatype::Subarray(sizes, subsizes, starts, order, old->layout());
}

absl::StatusOr<LayoutRef> BuildDarray(EnvelopeReader& reader) {
  const int size = reader.Integer();
  const int rank = reader.Integer();
  const int ndims = reader.Integer();
  if (ndims < 1) return absl::InvalidArgumentError("ndims is not positive");
  std::vector<int64_t> gsizes = reader.Counts(ndims);
  std::vector<int> distribs = reader.Integers(ndims);
  std::vector<int> int_dargs = reader.Integers(ndims);
  std::vector<int> int_psizes = reader.Integers(ndims);
  const int order = reader.Integer();
  const Datatype* old = reader.Type();
  if (!reader.Complete()) return Truncated();
  const std::vector<int64_t> dargs(int_dargs.begin(), int_dargs.end());
  const std::vector<int64_t> psizes(int_psizes.begin(), int_psizes.end());
  // Upper bounds of what this process owns per dimension: whole blocks,
  // dealt round robin (the engine checks the arguments themselves).
  std::vector<Int128> elements;
  std::vector<Int128> blocks;
  for (const size_t i : FastestFirst(ndims, order)) {
    const Int128 gsize = std::max<int64_t>(1, gsizes[i]);
    const Int128 psize = std::max<int64_t>(1, psizes[i]);
    Int128 darg = dargs[i] > 0 ? dargs[i] : (gsize + psize - 1) / psize;
    if (distribs[i] == MPI_DISTRIBUTE_CYCLIC &&
        dargs[i] == MPI_DISTRIBUTE_DFLT_DARG) {
      darg = 1;
    }
    darg = std::min(darg, gsize);
    const Int128 local_blocks = ((gsize + darg - 1) / darg + psize - 1) / psize;
    elements.push_back(std::min(gsize, local_blocks * darg));
    blocks.push_back(local_blocks);
  }
  TypeLimits limits;
  AddArrayLimits(limits, old->layout(), elements, blocks);
  if (absl::Status status = limits.status(); !status.ok()) return status;
  return datatype::Darray(size, rank, gsizes, distribs, dargs, psizes, order,
                          old->layout());
}

}  // namespace

EnvelopeWriter::EnvelopeWriter(int combiner, bool large_count_form)
    : large_count_form_(large_count_form) {
  envelope_.combiner = combiner;
}

void EnvelopeWriter::Count(int64_t value) {
  if (large_count_form_) {
    envelope_.large_counts.push_back(value);
  } else {
    envelope_.integers.push_back(static_cast<int>(value));
  }
}

void EnvelopeWriter::ByteDisplacement(int64_t value) {
  if (large_count_form_) {
    envelope_.large_counts.push_back(value);
  } else {
    envelope_.addresses.push_back(static_cast<MPI_Aint>(value));
  }
}

void EnvelopeWriter::Integer(int value) { envelope_.integers.push_back(value); }

void EnvelopeWriter::Type(const Datatype* type) {
  envelope_.types.push_back(type);
}

absl::StatusOr<LayoutRef> BuildLayout(const Datatype::Envelope& envelope) {
  EnvelopeReader reader(envelope);
  TypeLimits limits;
  switch (envelope.combiner) {
    case MPI_COMBINER_DUP: {
      const Datatype* old = reader.Type();
      if (!reader.Complete()) return Truncated();
      return LayoutRef::Share(&old->layout());
    }
    case MPI_COMBINER_CONTIGUOUS: {
      const int64_t count = reader.Count();
      const Datatype* old = reader.Type();
      if (!reader.Complete()) return Truncated();
      if (count < 0) return NegativeCount("count", count);
      limits.AddBlocks(old->layout(), 1, count, 0, 0);
      if (absl::Status status = limits.status(); !status.ok()) return status;
      return datatype::Contiguous(count, old->layout());
    }
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      const bool in_bytes = envelope.combiner == MPI_COMBINER_HVECTOR;
      const int64_t count = reader.Count();
      const int64_t blocklength = reader.Count();
      const int64_t stride =
          in_bytes ? reader.ByteDisplacement() : reader.Count();
      const Datatype* old = reader.Type();
      if (!reader.Complete()) return Truncated();
      if (count < 0) return NegativeCount("count", count);
      if (blocklength < 0) return NegativeCount("blocklength", blocklength);
      const Layout& layout = old->layout();
      const Int128 stride_bytes =
          in_bytes ? Int128{stride} : Int128{stride} * layout.extent();
      limits.AddBlocks(layout, count, blocklength, stride_bytes, 0);
      if (absl::Status status = limits.status(); !status.ok()) return status;
      return datatype::Hvector(count, blocklength,
                               static_cast<int64_t>(stride_bytes), layout);
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      const bool in_bytes = envelope.combiner == MPI_COMBINER_HINDEXED;
      const int64_t count = reader.Count();
      if (count < 0) return NegativeCount("count", count);
      const std::vector<int64_t> blocklengths = reader.Counts(count);
      const std::vector<int64_t> displacements =
          in_bytes ? reader.ByteDisplacements(count) : reader.Counts(count);
      const Datatype* old = reader.Type();
      if (!reader.Complete()) return Truncated();
      const Layout& layout = old->layout();
      std::vector<int64_t> byte_displacements(count);
      for (int64_t i = 0; i < count; ++i) {
        if (blocklengths[i] < 0) {
          return NegativeCount("a blocklength", blocklengths[i]);
        }
        const Int128 bytes = in_bytes
                                 ? Int128{displacements[i]}
                                 : Int128{displacements[i]} * layout.extent();
        limits.AddBlocks(layout, 1, blocklengths[i], 0, bytes);
        if (!TooBig(bytes)) byte_displacements[i] = static_cast<int64_t>(bytes);
      }
      if (absl::Status status = limits.status(); !status.ok()) return status;
      return datatype::Hindexed(blocklengths, byte_displacements, layout);
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
      const bool in_bytes = envelope.combiner == MPI_COMBINER_HINDEXED_BLOCK;
      const int64_t count = reader.Count();
      const int64_t blocklength = reader.Count();
      if (count < 0) return NegativeCount("count", count);
      const std::vector<int64_t> displacements =
          in_bytes ? reader.ByteDisplacements(count) : reader.Counts(count);
      const Datatype* old = reader.Type();
      if (!reader.Complete()) return Truncated();
      if (blocklength < 0) return NegativeCount("blocklength", blocklength);
      const Layout& layout = old->layout();
      std::vector<int64_t> byte_displacements(count);
      for (int64_t i = 0; i < count; ++i) {
        const Int128 bytes = in_bytes
                                 ? Int128{displacements[i]}
                                 : Int128{displacements[i]} * layout.extent();
        limits.AddBlocks(layout, 1, blocklength, 0, bytes);
        if (!TooBig(bytes)) byte_displacements[i] = static_cast<int64_t>(bytes);
      }
      if (absl::Status status = limits.status(); !status.ok()) return status;
      return datatype::HindexedBlock(blocklength, byte_displacements, layout);
    }
    case MPI_COMBINER_STRUCT: {
      const int64_t count = reader.Count();
      if (count < 0) return NegativeCount("count", count);
      const std::vector<int64_t> blocklengths = reader.Counts(count);
      const std::vector<int64_t> displacements =
          reader.ByteDisplacements(count);
      if (static_cast<uint64_t>(count) > envelope.types.size()) {
        return Truncated();
      }
      std::vector<const Layout*> olds;
      for (int64_t i = 0; i < count; ++i)
        olds.push_back(&reader.Type()->layout());
      if (!reader.Complete()) return Truncated();
      for (int64_t i = 0; i < count; ++i) {
        if (blocklengths[i] < 0) {
          return NegativeCount("a blocklength", blocklengths[i]);
        }
        limits.AddBlocks(*olds[i], 1, blocklengths[i], 0, displacements[i]);
      }
      if (absl::Status status = limits.status(); !status.ok()) return status;
      return datatype::Struct(blocklengths, displacements, olds);
    }
    case MPI_COMBINER_SUBARRAY:
      return BuildSubarray(reader);
    case MPI_COMBINER_DARRAY:
      return BuildDarray(reader);
    case MPI_COMBINER_RESIZED: {
      const int64_t lb = reader.ByteDisplacement();
      const int64_t extent = reader.ByteDisplacement();
      const Datatype* old = reader.Type();
      if (!reader.Complete()) return Truncated();
      const Layout& layout = old->layout();
      if (TooBig(lb) || TooBig(extent) || TooBig(Int128{lb} + extent)) {
        return absl::OutOfRangeError("lb and extent reach beyond 2^62 bytes");
      }
      return datatype::Resized(layout, lb, extent);
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("no derived type has combiner ", envelope.combiner));
  }
}

absl::StatusOr<Datatype*> BuildDerivedDatatype(Datatype::Envelope envelope) {
  absl::StatusOr<LayoutRef> layout = BuildLayout(envelope);
  if (!layout.ok()) return layout.status();
  const bool committed =
      envelope.combiner == MPI_COMBINER_DUP && envelope.types[0]->committed();
  Datatype* type =
      Datatype::NewDerived(*std::move(layout), std::move(envelope));
  if (committed) type->Commit();
  return type;
}

}  // namespace minimpi
