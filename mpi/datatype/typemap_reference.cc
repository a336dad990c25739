#include "mpi/datatype/typemap_reference.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mpi/datatype/array_layouts.h"
#include "mpi/datatype/layout.h"
#include "mpi/datatype/predefined.h"

namespace minimpi::datatype::testing {
namespace {

using Kind = TypeSpec::Kind;

SpecPtr Make(TypeSpec spec) {
  return std::make_shared<const TypeSpec>(std::move(spec));
}

const PredefinedType& Basic(MPI_Datatype handle) {
  return *FindPredefined(handle);
}

// Where the data of one predefined item ends (a pair's padding excluded).
int64_t DataEnd(const PredefinedType& type) {
  const NumberMember& last = type.members[type.member_count - 1];
  return last.offset + int64_t{last.native_size} * last.components;
}

// Adds a copy of `old` shifted by `shift` bytes: its entries, and its
// markers unless `with_markers` is false (the array constructors and
// resized replace them).
void AppendCopy(Typemap& out, const Typemap& old, int64_t shift,
                bool with_markers = true) {
  for (const Entry& entry : old.entries) {
    out.entries.push_back({entry.displacement + shift, entry.basic});
  }
  if (!with_markers) return;
  for (int64_t mark : old.lb_marks) out.lb_marks.push_back(mark + shift);
  for (int64_t mark : old.ub_marks) out.ub_marks.push_back(mark + shift);
  for (int64_t mark : old.soft_ubs) out.soft_ubs.push_back(mark + shift);
}

int64_t Product(const std::vector<int64_t>& values) {
  int64_t product = 1;
  for (int64_t value : values) product *= value;
  return product;
}

// The dimensions in the order their index varies, fastest first.
std::vector<size_t> FastestFirst(size_t ndims, int order) {
  std::vector<size_t> dims;
  for (size_t i = 0; i < ndims; ++i) {
    dims.push_back(order == MPI_ORDER_C ? ndims - 1 - i : i);
  }
  return dims;
}

// How many elements each dimension's index step moves in a row- or
// column-major array of `sizes`.
std::vector<int64_t> ElementStrides(const std::vector<int64_t>& sizes,
                                    int order) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t d : FastestFirst(sizes.size(), order)) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  return strides;
}

Typemap ExpandSubarray(const TypeSpec& spec) {
  const Typemap old = Expand(*spec.olds[0]);
  const int64_t extent = old.extent();
  const size_t ndims = spec.sizes.size();
  const std::vector<int64_t> strides = ElementStrides(spec.sizes, spec.order);
  const std::vector<size_t> dims = FastestFirst(ndims, spec.order);
  Typemap typemap;
  // An odometer over the subarray's indices, fastest dimension first:
  // typemap order.
  std::vector<int64_t> index(ndims, 0);
  const int64_t elements = Product(spec.subsizes);
  for (int64_t n = 0; n < elements; ++n) {
    int64_t element = 0;
    for (size_t d = 0; d < ndims; ++d) {
      element += (spec.starts[d] + index[d]) * strides[d];
    }
    AppendCopy(typemap, old, element * extent, /*with_markers=*/false);
    for (size_t d : dims) {
      if (++index[d] < spec.subsizes[d]) break;
      index[d] = 0;
    }
  }
  typemap.lb_marks = {0};
  typemap.ub_marks = {Product(spec.sizes) * extent};
  return typemap;
}

// Darray by ownership: element g of dimension i belongs to the process
// whose coordinate is the owner of g's block. Owned elements come in
// increasing address order, which is the order of the standard's nested
// cyclic() types.
Typemap ExpandDarray(const TypeSpec& spec) {
  const Typemap old = Expand(*spec.olds[0]);
  const int64_t extent = old.extent();
  const size_t ndims = spec.sizes.size();
  std::vector<int64_t> coordinates(ndims);
  int64_t rest = spec.rank;
  int64_t below = spec.comm_size;
  for (size_t i = 0; i < ndims; ++i) {
    below /= spec.psizes[i];
    coordinates[i] = rest / below;
    rest %= below;
  }
  auto owner = [&](size_t i, int64_t g) -> int64_t {
    const int64_t gsize = spec.sizes[i];
    const int64_t psize = spec.psizes[i];
    const bool default_darg = spec.dargs[i] == MPI_DISTRIBUTE_DFLT_DARG;
    switch (spec.distribs[i]) {
      case MPI_DISTRIBUTE_BLOCK: {
        const int64_t darg =
            default_darg ? (gsize + psize - 1) / psize : spec.dargs[i];
        return g / darg;
      }
      case MPI_DISTRIBUTE_CYCLIC: {
        const int64_t darg = default_darg ? 1 : spec.dargs[i];
        return (g / darg) % psize;
      }
      default:
        return 0;
    }
  };
  const std::vector<int64_t> strides = ElementStrides(spec.sizes, spec.order);
  Typemap typemap;
  const int64_t elements = Product(spec.sizes);
  for (int64_t address = 0; address < elements; ++address) {
    bool mine = true;
    for (size_t i = 0; i < ndims && mine; ++i) {
      const int64_t g = address / strides[i] % spec.sizes[i];
      mine = owner(i, g) == coordinates[i];
    }
    if (mine) {
      AppendCopy(typemap, old, address * extent, /*with_markers=*/false);
    }
  }
  typemap.lb_marks = {0};
  typemap.ub_marks = {elements * extent};
  return typemap;
}

std::string Join(const std::vector<int64_t>& values) {
  return absl::StrCat("{", absl::StrJoin(values, ","), "}");
}

}  // namespace

std::string TypeSpec::Describe() const {
  auto old = [&](size_t i = 0) { return olds[i]->Describe(); };
  switch (kind) {
    case Kind::kPredefined:
      return Basic(handle).name;
    case Kind::kContiguous:
      return absl::StrCat("Contiguous(", count, ", ", old(), ")");
    case Kind::kVector:
      return absl::StrCat("Vector(", count, ", ", blocklength, ", ", stride,
                          ", ", old(), ")");
    case Kind::kHvector:
      return absl::StrCat("Hvector(", count, ", ", blocklength, ", ", stride,
                          ", ", old(), ")");
    case Kind::kIndexed:
      return absl::StrCat("Indexed(", Join(blocklengths), ", ",
                          Join(displacements), ", ", old(), ")");
    case Kind::kHindexed:
      return absl::StrCat("Hindexed(", Join(blocklengths), ", ",
                          Join(displacements), ", ", old(), ")");
    case Kind::kIndexedBlock:
      return absl::StrCat("IndexedBlock(", blocklength, ", ",
                          Join(displacements), ", ", old(), ")");
    case Kind::kHindexedBlock:
      return absl::StrCat("HindexedBlock(", blocklength, ", ",
                          Join(displacements), ", ", old(), ")");
    case Kind::kStruct: {
      std::vector<std::string> types;
      for (size_t i = 0; i < olds.size(); ++i) types.push_back(old(i));
      return absl::StrCat("Struct(", Join(blocklengths), ", ",
                          Join(displacements), ", {",
                          absl::StrJoin(types, ", "), "})");
    }
    case Kind::kSubarray:
      return absl::StrCat(
          "Subarray(", Join(sizes), ", ", Join(subsizes), ", ", Join(starts),
          ", ", order == MPI_ORDER_C ? "C" : "Fortran", ", ", old(), ")");
    case Kind::kDarray: {
      std::vector<int64_t> distributions(distribs.begin(), distribs.end());
      return absl::StrCat(
          "Darray(", comm_size, ", ", rank, ", ", Join(sizes), ", ",
          Join(distributions), ", ", Join(dargs), ", ", Join(psizes), ", ",
          order == MPI_ORDER_C ? "C" : "Fortran", ", ", old(), ")");
    }
    case Kind::kResized:
      return absl::StrCat("Resized(", old(), ", ", lb, ", ", extent, ")");
  }
  return "?";
}

SpecPtr PredefinedSpec(MPI_Datatype handle) {
  TypeSpec spec;
  spec.kind = Kind::kPredefined;
  spec.handle = handle;
  return Make(std::move(spec));
}

SpecPtr ContiguousSpec(int64_t count, SpecPtr old) {
  TypeSpec spec;
  spec.kind = Kind::kContiguous;
  spec.count = count;
  spec.olds = {std::move(old)};
  return Make(std::move(spec));
}

SpecPtr VectorSpec(int64_t count, int64_t blocklength, int64_t stride,
                   SpecPtr old) {
  TypeSpec spec;
  spec.kind = Kind::kVector;
  spec.count = count;
  spec.blocklength = blocklength;
  spec.stride = stride;
  spec.olds = {std::move(old)};
  return Make(std::move(spec));
}

SpecPtr HvectorSpec(int64_t count, int64_t blocklength, int64_t stride,
                    SpecPtr old) {
  TypeSpec spec;
  spec.kind = Kind::kHvector;
  spec.count = count;
  spec.blocklength = blocklength;
  spec.stride = stride;
  spec.olds = {std::move(old)};
  return Make(std::move(spec));
}

SpecPtr IndexedSpec(std::vector<int64_t> blocklengths,
                    std::vector<int64_t> displacements, SpecPtr old) {
  TypeSpec spec;
  spec.kind = Kind::kIndexed;
  spec.blocklengths = std::move(blocklengths);
  spec.displacements = std::move(displacements);
  spec.olds = {std::move(old)};
  return Make(std::move(spec));
}

SpecPtr HindexedSpec(std::vector<int64_t> blocklengths,
                     std::vector<int64_t> displacements, SpecPtr old) {
  TypeSpec spec;
  spec.kind = Kind::kHindexed;
  spec.blocklengths = std::move(blocklengths);
  spec.displacements = std::move(displacements);
  spec.olds = {std::move(old)};
  return Make(std::move(spec));
}

SpecPtr IndexedBlockSpec(int64_t blocklength,
                         std::vector<int64_t> displacements, SpecPtr old) {
  TypeSpec spec;
  spec.kind = Kind::kIndexedBlock;
  spec.blocklength = blocklength;
  spec.displacements = std::move(displacements);
  spec.olds = {std::move(old)};
  return Make(std::move(spec));
}

SpecPtr HindexedBlockSpec(int64_t blocklength,
                          std::vector<int64_t> displacements, SpecPtr old) {
  TypeSpec spec;
  spec.kind = Kind::kHindexedBlock;
  spec.blocklength = blocklength;
  spec.displacements = std::move(displacements);
  spec.olds = {std::move(old)};
  return Make(std::move(spec));
}

SpecPtr StructSpec(std::vector<int64_t> blocklengths,
                   std::vector<int64_t> displacements,
                   std::vector<SpecPtr> olds) {
  TypeSpec spec;
  spec.kind = Kind::kStruct;
  spec.blocklengths = std::move(blocklengths);
  spec.displacements = std::move(displacements);
  spec.olds = std::move(olds);
  return Make(std::move(spec));
}

SpecPtr SubarraySpec(std::vector<int64_t> sizes, std::vector<int64_t> subsizes,
                     std::vector<int64_t> starts, int order, SpecPtr old) {
  TypeSpec spec;
  spec.kind = Kind::kSubarray;
  spec.sizes = std::move(sizes);
  spec.subsizes = std::move(subsizes);
  spec.starts = std::move(starts);
  spec.order = order;
  spec.olds = {std::move(old)};
  return Make(std::move(spec));
}

SpecPtr DarraySpec(int64_t comm_size, int64_t rank, std::vector<int64_t> gsizes,
                   std::vector<int> distribs, std::vector<int64_t> dargs,
                   std::vector<int64_t> psizes, int order, SpecPtr old) {
  TypeSpec spec;
  spec.kind = Kind::kDarray;
  spec.comm_size = comm_size;
  spec.rank = rank;
  spec.sizes = std::move(gsizes);
  spec.distribs = std::move(distribs);
  spec.dargs = std::move(dargs);
  spec.psizes = std::move(psizes);
  spec.order = order;
  spec.olds = {std::move(old)};
  return Make(std::move(spec));
}

SpecPtr ResizedSpec(SpecPtr old, int64_t lb, int64_t extent) {
  TypeSpec spec;
  spec.kind = Kind::kResized;
  spec.lb = lb;
  spec.extent = extent;
  spec.olds = {std::move(old)};
  return Make(std::move(spec));
}

LayoutRef BuildLayout(const TypeSpec& spec) {
  if (spec.kind == Kind::kPredefined) return Predefined(spec.handle);
  if (spec.kind == Kind::kStruct) {
    std::vector<LayoutRef> olds;
    std::vector<const Layout*> pointers;
    for (const SpecPtr& old : spec.olds) {
      olds.push_back(BuildLayout(*old));
      pointers.push_back(olds.back().get());
    }
    return Struct(spec.blocklengths, spec.displacements, pointers);
  }
  const LayoutRef old = BuildLayout(*spec.olds[0]);
  switch (spec.kind) {
    case Kind::kContiguous:
      return Contiguous(spec.count, *old);
    case Kind::kVector:
      return Vector(spec.count, spec.blocklength, spec.stride, *old);
    case Kind::kHvector:
      return Hvector(spec.count, spec.blocklength, spec.stride, *old);
    case Kind::kIndexed:
      return Indexed(spec.blocklengths, spec.displacements, *old);
    case Kind::kHindexed:
      return Hindexed(spec.blocklengths, spec.displacements, *old);
    case Kind::kIndexedBlock:
      return IndexedBlock(spec.blocklength, spec.displacements, *old);
    case Kind::kHindexedBlock:
      return HindexedBlock(spec.blocklength, spec.displacements, *old);
    case Kind::kSubarray:
      return *Subarray(spec.sizes, spec.subsizes, spec.starts, spec.order,
                       *old);
    case Kind::kDarray:
      return *Darray(spec.comm_size, spec.rank, spec.sizes, spec.distribs,
                     spec.dargs, spec.psizes, spec.order, *old);
    case Kind::kResized:
      return Resized(*old, spec.lb, spec.extent);
    default:
      return LayoutRef();
  }
}

Typemap Expand(const TypeSpec& spec) {
  Typemap typemap;
  switch (spec.kind) {
    case Kind::kPredefined:
      typemap.entries = {{0, spec.handle}};
      typemap.soft_ubs = {Basic(spec.handle).extent};
      return typemap;
    case Kind::kSubarray:
      return ExpandSubarray(spec);
    case Kind::kDarray:
      return ExpandDarray(spec);
    case Kind::kStruct: {
      for (size_t i = 0; i < spec.olds.size(); ++i) {
        const Typemap old = Expand(*spec.olds[i]);
        for (int64_t k = 0; k < spec.blocklengths[i]; ++k) {
          AppendCopy(typemap, old, spec.displacements[i] + k * old.extent());
        }
      }
      if (typemap.lb_marks.empty() && typemap.ub_marks.empty() &&
          !typemap.entries.empty()) {
        int64_t alignment = 1;
        for (const Entry& entry : typemap.entries) {
          alignment = std::max(alignment, Basic(entry.basic).alignment);
        }
        const int64_t extent = typemap.extent();
        const int64_t padding = (alignment - extent % alignment) % alignment;
        typemap.soft_ubs.push_back(typemap.ub() + padding);
      }
      return typemap;
    }
    default:
      break;
  }
  const Typemap old = Expand(*spec.olds[0]);
  const int64_t extent = old.extent();
  switch (spec.kind) {
    case Kind::kContiguous:
      for (int64_t k = 0; k < spec.count; ++k) {
        AppendCopy(typemap, old, k * extent);
      }
      break;
    case Kind::kVector:
    case Kind::kHvector: {
      const int64_t stride =
          spec.kind == Kind::kVector ? spec.stride * extent : spec.stride;
      for (int64_t i = 0; i < spec.count; ++i) {
        for (int64_t k = 0; k < spec.blocklength; ++k) {
          AppendCopy(typemap, old, i * stride + k * extent);
        }
      }
      break;
    }
    case Kind::kIndexed:
    case Kind::kHindexed:
      for (size_t i = 0; i < spec.blocklengths.size(); ++i) {
        const int64_t displacement = spec.kind == Kind::kIndexed
                                         ? spec.displacements[i] * extent
                                         : spec.displacements[i];
        for (int64_t k = 0; k < spec.blocklengths[i]; ++k) {
          AppendCopy(typemap, old, displacement + k * extent);
        }
      }
      break;
    case Kind::kIndexedBlock:
    case Kind::kHindexedBlock:
      for (int64_t displacement : spec.displacements) {
        if (spec.kind == Kind::kIndexedBlock) displacement *= extent;
        for (int64_t k = 0; k < spec.blocklength; ++k) {
          AppendCopy(typemap, old, displacement + k * extent);
        }
      }
      break;
    case Kind::kResized:
      typemap.entries = old.entries;
      typemap.lb_marks = {spec.lb};
      typemap.ub_marks = {spec.lb + spec.extent};
      break;
    default:
      break;
  }
  return typemap;
}

int64_t Typemap::lb() const {
  if (!lb_marks.empty()) {
    return *std::min_element(lb_marks.begin(), lb_marks.end());
  }
  return entries.empty() ? 0 : true_lb();
}

int64_t Typemap::ub() const {
  if (!ub_marks.empty()) {
    return *std::max_element(ub_marks.begin(), ub_marks.end());
  }
  if (entries.empty()) return 0;
  int64_t ub = true_ub();
  for (int64_t mark : soft_ubs) ub = std::max(ub, mark);
  return ub;
}

int64_t Typemap::true_lb() const {
  if (entries.empty()) return 0;
  int64_t lb = entries[0].displacement;
  for (const Entry& entry : entries) lb = std::min(lb, entry.displacement);
  return lb;
}

int64_t Typemap::true_ub() const {
  if (entries.empty()) return 0;
  int64_t ub = entries[0].displacement + DataEnd(Basic(entries[0].basic));
  for (const Entry& entry : entries) {
    ub = std::max(ub, entry.displacement + DataEnd(Basic(entry.basic)));
  }
  return ub;
}

int64_t Typemap::size() const {
  int64_t size = 0;
  for (const Entry& entry : entries) size += Basic(entry.basic).size;
  return size;
}

int64_t Typemap::basic_elements() const {
  int64_t elements = 0;
  for (const Entry& entry : entries) {
    elements += Basic(entry.basic).is_pair ? 2 : 1;
  }
  return elements;
}

int64_t Typemap::external32_size() const {
  int64_t size = 0;
  for (const Entry& entry : entries) {
    const PredefinedType& basic = Basic(entry.basic);
    for (int m = 0; m < basic.member_count; ++m) {
      size += int64_t{basic.members[m].external32_size} *
              basic.members[m].components;
    }
  }
  return size;
}

std::vector<int64_t> PackedByteOffsets(const Typemap& typemap, int64_t count) {
  std::vector<int64_t> offsets;
  const int64_t extent = typemap.extent();
  for (int64_t item = 0; item < count; ++item) {
    for (const Entry& entry : typemap.entries) {
      const PredefinedType& basic = Basic(entry.basic);
      for (int m = 0; m < basic.member_count; ++m) {
        const NumberMember& member = basic.members[m];
        const int64_t bytes = int64_t{member.native_size} * member.components;
        for (int64_t b = 0; b < bytes; ++b) {
          offsets.push_back(item * extent + entry.displacement + member.offset +
                            b);
        }
      }
    }
  }
  return offsets;
}

std::vector<int64_t> ElementSizes(const Typemap& typemap, int64_t count) {
  std::vector<int64_t> sizes;
  for (int64_t item = 0; item < count; ++item) {
    for (const Entry& entry : typemap.entries) {
      const PredefinedType& basic = Basic(entry.basic);
      if (basic.is_pair) {
        sizes.push_back(basic.members[0].native_size);
        sizes.push_back(basic.members[1].native_size);
      } else {
        sizes.push_back(basic.size);
      }
    }
  }
  return sizes;
}

std::vector<unsigned char> ReferenceExternal32(const Typemap& typemap,
                                               int64_t count,
                                               const unsigned char* buffer) {
  using Wide = unsigned __int128;
  std::vector<unsigned char> out;
  // Writes the low `bytes` bytes of `value`, most significant first.
  auto put = [&](Wide value, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) {
      out.push_back(static_cast<unsigned char>(value >> (8 * i)));
    }
  };
  const int64_t extent = typemap.extent();
  for (int64_t item = 0; item < count; ++item) {
    for (const Entry& entry : typemap.entries) {
      const PredefinedType& basic = Basic(entry.basic);
      for (int m = 0; m < basic.member_count; ++m) {
        const NumberMember& member = basic.members[m];
        for (int c = 0; c < member.components; ++c) {
          const unsigned char* native = buffer + item * extent +
                                        entry.displacement + member.offset +
                                        c * member.native_size;
          // The number's bits, read as a little-endian integer.
          Wide bits = 0;
          for (int b = member.native_size - 1; b >= 0; --b) {
            bits = bits << 8 | native[b];
          }
          switch (member.kind) {
            case NumberKind::kBool:
              put(bits != 0 ? 1 : 0, 1);
              break;
            case NumberKind::kX87LongDouble: {
              long double value;
              std::memcpy(&value, native, sizeof(value));
              const __float128 wide = value;
              Wide wide_bits;
              std::memcpy(&wide_bits, &wide, sizeof(wide_bits));
              put(wide_bits, 16);
              break;
            }
            default:  // integers, floats, raw bytes: the low-order bytes
              put(bits, member.external32_size);
              break;
          }
        }
      }
    }
  }
  return out;
}

SpecPtr RandomSpec(std::mt19937_64& random, int depth) {
  auto pick = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  static const MPI_Datatype kBases[] = {
      MPI_CHAR,
      MPI_SHORT,
      MPI_INT,
      MPI_DOUBLE,
      MPI_LONG_DOUBLE,
      MPI_SHORT_INT,
      MPI_DOUBLE_INT,
      MPI_2INT,
      MPI_LONG_DOUBLE_INT,
      MPI_C_DOUBLE_COMPLEX,
      MPI_BYTE,
      MPI_FLOAT_INT,
  };
  if (depth == 0 || pick(0, 4) == 0) {
    return PredefinedSpec(kBases[pick(0, std::size(kBases) - 1)]);
  }
  // Counts and blocklengths: zero now and then, to test empty parts,
  // but not so often that most types come out empty.
  auto count = [&](int64_t most) {
    return pick(0, 9) == 0 ? 0 : pick(1, most);
  };
  auto old = [&] { return RandomSpec(random, depth - 1); };
  auto numbers = [&](int64_t n, int64_t low, int64_t high) {
    std::vector<int64_t> values;
    for (int64_t i = 0; i < n; ++i) values.push_back(pick(low, high));
    return values;
  };
  auto counts = [&](int64_t n, int64_t most) {
    std::vector<int64_t> values;
    for (int64_t i = 0; i < n; ++i) values.push_back(count(most));
    return values;
  };
  switch (pick(0, 11)) {
    case 0:
      return ContiguousSpec(count(3), old());
    case 1:
      return VectorSpec(count(3), count(3), pick(-3, 4), old());
    case 2:
      return HvectorSpec(count(3), count(3), pick(-24, 40), old());
    case 3: {
      const int64_t n = count(3);
      return IndexedSpec(counts(n, 3), numbers(n, -4, 6), old());
    }
    case 4: {
      const int64_t n = count(3);
      return HindexedSpec(counts(n, 3), numbers(n, -40, 60), old());
    }
    case 5:
      return IndexedBlockSpec(count(3), numbers(count(3), -4, 6), old());
    case 6:
      return HindexedBlockSpec(count(3), numbers(count(3), -40, 60), old());
    case 7: {
      const int64_t n = count(3);
      std::vector<SpecPtr> olds;
      for (int64_t i = 0; i < n; ++i) olds.push_back(old());
      return StructSpec(counts(n, 2), numbers(n, -40, 60), std::move(olds));
    }
    case 8: {
      const int64_t ndims = pick(1, 3);
      std::vector<int64_t> sizes, subsizes, starts;
      for (int64_t d = 0; d < ndims; ++d) {
        sizes.push_back(pick(1, 4));
        subsizes.push_back(pick(0, 9) == 0 ? 0 : pick(1, sizes.back()));
        starts.push_back(pick(0, sizes.back() - subsizes.back()));
      }
      return SubarraySpec(sizes, subsizes, starts,
                          pick(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, old());
    }
    case 9: {
      const int64_t ndims = pick(1, 2);
      std::vector<int64_t> gsizes, dargs, psizes;
      std::vector<int> distribs;
      int64_t comm_size = 1;
      for (int64_t d = 0; d < ndims; ++d) {
        gsizes.push_back(pick(1, 6));
        const int distrib = static_cast<int>(pick(0, 2));
        psizes.push_back(distrib == 0 ? 1 : pick(1, 3));
        comm_size *= psizes.back();
        const int64_t gsize = gsizes.back();
        const int64_t psize = psizes.back();
        const bool default_darg = pick(0, 2) == 0;
        if (distrib == 0) {
          distribs.push_back(MPI_DISTRIBUTE_NONE);
          dargs.push_back(MPI_DISTRIBUTE_DFLT_DARG);
        } else if (distrib == 1) {
          distribs.push_back(MPI_DISTRIBUTE_BLOCK);
          const int64_t least = (gsize + psize - 1) / psize;
          dargs.push_back(default_darg ? int64_t{MPI_DISTRIBUTE_DFLT_DARG}
                                       : pick(least, least + 2));
        } else {
          distribs.push_back(MPI_DISTRIBUTE_CYCLIC);
          dargs.push_back(default_darg ? int64_t{MPI_DISTRIBUTE_DFLT_DARG}
                                       : pick(1, 4));
        }
      }
      return DarraySpec(comm_size, pick(0, comm_size - 1), gsizes, distribs,
                        dargs, psizes,
                        pick(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, old());
    }
    default:
      return ResizedSpec(old(), pick(-20, 20), pick(-16, 48));
  }
}

}  // namespace minimpi::datatype::testing
