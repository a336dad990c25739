// The datatype bindings through the C API, in one process (a singleton):
//   - MPI_Type_get_envelope/contents of every combiner, in the int and the
//     large-count forms, against the table of MPI-4.1 section 5.1.13
//     written out in this file;
//   - random nested types (typemap_reference.h) built through the C
//     constructors, decoded recursively and rebuilt from their contents to
//     an equal layout;
//   - MPI_Pack/Unpack and MPI_Pack_external/Unpack_external, with their _c
//     forms, against the reference typemaps, every byte of the buffers
//     checked, guard bytes included;
//   - the queries, names, MPI_Type_match_size, MPI_Type_get_value_index,
//     addresses, reference counts of freed types;
//   - bad input to every call under MPI_ERRORS_RETURN, with its class.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/objects/datatype.h"
#include "mpi/datatype/layout.h"
#include "mpi/datatype/predefined.h"
#include "mpi/datatype/typemap_reference.h"
#include "mpi/mpi.h"

namespace minimpi {
namespace {

using datatype::testing::Expand;
using datatype::testing::SpecPtr;
using datatype::testing::Typemap;
using datatype::testing::TypeSpec;
using Bytes = std::vector<unsigned char>;
using Kind = TypeSpec::Kind;

constexpr int64_t kGuard = 32;

class DatatypeBindingsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    MPI_Init(nullptr, nullptr);
    // Datatype calls name no communicator: their errors go to
    // MPI_COMM_WORLD's handler; packing names one.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  }
  static void TearDownTestSuite() { MPI_Finalize(); }
};

int ErrorClass(int code) {
  int error_class = -1;
  MPI_Error_class(code, &error_class);
  return error_class;
}

#define EXPECT_CLASS(call, error_class) \
  EXPECT_EQ(ErrorClass(call), error_class) << #call

const datatype::Layout& LayoutOf(MPI_Datatype handle) {
  return LookupDatatype(handle)->layout();
}

int64_t Pick(std::mt19937_64& random, int64_t low, int64_t high) {
  return std::uniform_int_distribution<int64_t>(low, high)(random);
}

bool IsDerived(MPI_Datatype handle) {
  const Datatype* type = LookupDatatype(handle);
  return type != nullptr && !type->predefined();
}

void FreeIfDerived(MPI_Datatype handle) {
  if (IsDerived(handle)) {
    ASSERT_EQ(MPI_Type_free(&handle), MPI_SUCCESS);
  }
}

template <typename T>
std::vector<T> Convert(const std::vector<int64_t>& values) {
  return std::vector<T>(values.begin(), values.end());
}

// Builds `spec` through the C constructors: the int forms, or the _c forms
// when `large`. The parts are freed once the type is built, so the type
// lives on the references its envelope holds.
MPI_Datatype Build(const TypeSpec& spec, bool large) {
  if (spec.kind == Kind::kPredefined) return spec.handle;
  std::vector<MPI_Datatype> olds;
  for (const SpecPtr& old : spec.olds) olds.push_back(Build(*old, large));
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int rc = MPI_ERR_INTERN;
  const auto bl_i = Convert<int>(spec.blocklengths);
  const auto bl_c = Convert<MPI_Count>(spec.blocklengths);
  const auto disp_i = Convert<int>(spec.displacements);
  const auto disp_a = Convert<MPI_Aint>(spec.displacements);
  const auto disp_c = Convert<MPI_Count>(spec.displacements);
  const int n = static_cast<int>(spec.displacements.size());
  switch (spec.kind) {
    case Kind::kContiguous:
      rc = large ? MPI_Type_contiguous_c(spec.count, olds[0], &type)
                 : MPI_Type_contiguous(static_cast<int>(spec.count), olds[0],
                                       &type);
      break;
    case Kind::kVector:
      rc = large
               ? MPI_Type_vector_c(spec.count, spec.blocklength, spec.stride,
                                   olds[0], &type)
               : MPI_Type_vector(static_cast<int>(spec.count),
                                 static_cast<int>(spec.blocklength),
                                 static_cast<int>(spec.stride), olds[0], &type);
      break;
    case Kind::kHvector:
      rc = large ? MPI_Type_create_hvector_c(spec.count, spec.blocklength,
                                             spec.stride, olds[0], &type)
                 : MPI_Type_create_hvector(static_cast<int>(spec.count),
                                           static_cast<int>(spec.blocklength),
                                           spec.stride, olds[0], &type);
      break;
    case Kind::kIndexed:
      rc = large ? MPI_Type_indexed_c(n, bl_c.data(), disp_c.data(), olds[0],
                                      &type)
                 : MPI_Type_indexed(n, bl_i.data(), disp_i.data(), olds[0],
                                    &type);
      break;
    case Kind::kHindexed:
      rc = large ? MPI_Type_create_hindexed_c(n, bl_c.data(), disp_c.data(),
                                              olds[0], &type)
                 : MPI_Type_create_hindexed(n, bl_i.data(), disp_a.data(),
                                            olds[0], &type);
      break;
    case Kind::kIndexedBlock:
      rc = large ? MPI_Type_create_indexed_block_c(
                       n, spec.blocklength, disp_c.data(), olds[0], &type)
                 : MPI_Type_create_indexed_block(
                       n, static_cast<int>(spec.blocklength), disp_i.data(),
                       olds[0], &type);
      break;
    case Kind::kHindexedBlock:
      rc = large ? MPI_Type_create_hindexed_block_c(
                       n, spec.blocklength, disp_c.data(), olds[0], &type)
                 : MPI_Type_create_hindexed_block(
                       n, static_cast<int>(spec.blocklength), disp_a.data(),
                       olds[0], &type);
      break;
    case Kind::kStruct:
      rc = large ? MPI_Type_create_struct_c(n, bl_c.data(), disp_c.data(),
                                            olds.data(), &type)
                 : MPI_Type_create_struct(n, bl_i.data(), disp_a.data(),
                                          olds.data(), &type);
      break;
    case Kind::kSubarray: {
      const int ndims = static_cast<int>(spec.sizes.size());
      rc = large ? MPI_Type_create_subarray_c(
                       ndims, Convert<MPI_Count>(spec.sizes).data(),
                       Convert<MPI_Count>(spec.subsizes).data(),
                       Convert<MPI_Count>(spec.starts).data(), spec.order,
                       olds[0], &type)
                 : MPI_Type_create_subarray(ndims,
                                            Convert<int>(spec.sizes).data(),
                                            Convert<int>(spec.subsizes).data(),
                                            Convert<int>(spec.starts).data(),
                                            spec.order, olds[0], &type);
      break;
    }
    case Kind::kDarray: {
      const int ndims = static_cast<int>(spec.sizes.size());
      const auto dargs = Convert<int>(spec.dargs);
      const auto psizes = Convert<int>(spec.psizes);
      rc = large ? MPI_Type_create_darray_c(
                       static_cast<int>(spec.comm_size),
                       static_cast<int>(spec.rank), ndims,
                       Convert<MPI_Count>(spec.sizes).data(),
                       spec.distribs.data(), dargs.data(), psizes.data(),
                       spec.order, olds[0], &type)
                 : MPI_Type_create_darray(
                       static_cast<int>(spec.comm_size),
                       static_cast<int>(spec.rank), ndims,
                       Convert<int>(spec.sizes).data(), spec.distribs.data(),
                       dargs.data(), psizes.data(), spec.order, olds[0], &type);
      break;
    }
    case Kind::kResized:
      rc = large
               ? MPI_Type_create_resized_c(olds[0], spec.lb, spec.extent, &type)
               : MPI_Type_create_resized(olds[0], spec.lb, spec.extent, &type);
      break;
    case Kind::kPredefined:
      break;
  }
  EXPECT_EQ(rc, MPI_SUCCESS) << spec.Describe();
  for (MPI_Datatype old : olds) FreeIfDerived(old);
  return type;
}

// Decodes `type` with MPI_Type_get_envelope_c / get_contents_c, reading the
// arrays by the standard's table (not by the library's writer), and calls
// the constructor again, recursively. Returns the rebuilt handle (the same
// predefined handle for a named type).
MPI_Datatype Rebuild(MPI_Datatype type) {
  MPI_Count ni = -1, na = -1, nc = -1, nd = -1;
  int combiner = -1;
  EXPECT_EQ(MPI_Type_get_envelope_c(type, &ni, &na, &nc, &nd, &combiner),
            MPI_SUCCESS);
  if (combiner == MPI_COMBINER_NAMED) return type;
  std::vector<int> i(ni);
  std::vector<MPI_Aint> a(na);
  std::vector<MPI_Count> c(nc);
  std::vector<MPI_Datatype> d(nd);
  EXPECT_EQ(MPI_Type_get_contents_c(type, ni, na, nc, nd, i.data(), a.data(),
                                    c.data(), d.data()),
            MPI_SUCCESS);
  std::vector<MPI_Datatype> olds;
  for (MPI_Datatype member : d) {
    olds.push_back(Rebuild(member));
    FreeIfDerived(member);  // contents handles are the program's to free
  }
  const bool large = nc > 0;
  MPI_Datatype rebuilt = MPI_DATATYPE_NULL;
  int rc = MPI_ERR_INTERN;
  switch (combiner) {
    case MPI_COMBINER_DUP:
      rc = MPI_Type_dup(olds[0], &rebuilt);
      break;
    case MPI_COMBINER_CONTIGUOUS:
      rc = large ? MPI_Type_contiguous_c(c[0], olds[0], &rebuilt)
                 : MPI_Type_contiguous(i[0], olds[0], &rebuilt);
      break;
    case MPI_COMBINER_VECTOR:
      rc = large ? MPI_Type_vector_c(c[0], c[1], c[2], olds[0], &rebuilt)
                 : MPI_Type_vector(i[0], i[1], i[2], olds[0], &rebuilt);
      break;
    case MPI_COMBINER_HVECTOR:
      rc = large
               ? MPI_Type_create_hvector_c(c[0], c[1], c[2], olds[0], &rebuilt)
               : MPI_Type_create_hvector(i[0], i[1], a[0], olds[0], &rebuilt);
      break;
    case MPI_COMBINER_INDEXED:
      rc = large ? MPI_Type_indexed_c(c[0], c.data() + 1, c.data() + 1 + c[0],
                                      olds[0], &rebuilt)
                 : MPI_Type_indexed(i[0], i.data() + 1, i.data() + 1 + i[0],
                                    olds[0], &rebuilt);
      break;
    case MPI_COMBINER_HINDEXED:
      rc = large
               ? MPI_Type_create_hindexed_c(
                     c[0], c.data() + 1, c.data() + 1 + c[0], olds[0], &rebuilt)
               : MPI_Type_create_hindexed(i[0], i.data() + 1, a.data(), olds[0],
                                          &rebuilt);
      break;
    case MPI_COMBINER_INDEXED_BLOCK:
      rc = large ? MPI_Type_create_indexed_block_c(c[0], c[1], c.data() + 2,
                                                   olds[0], &rebuilt)
                 : MPI_Type_create_indexed_block(i[0], i[1], i.data() + 2,
                                                 olds[0], &rebuilt);
      break;
    case MPI_COMBINER_HINDEXED_BLOCK:
      rc = large ? MPI_Type_create_hindexed_block_c(c[0], c[1], c.data() + 2,
                                                    olds[0], &rebuilt)
                 : MPI_Type_create_hindexed_block(i[0], i[1], a.data(), olds[0],
                                                  &rebuilt);
      break;
    case MPI_COMBINER_STRUCT:
      rc = large ? MPI_Type_create_struct_c(c[0], c.data() + 1,
                                            c.data() + 1 + c[0], olds.data(),
                                            &rebuilt)
                 : MPI_Type_create_struct(i[0], i.data() + 1, a.data(),
                                          olds.data(), &rebuilt);
      break;
    case MPI_COMBINER_SUBARRAY: {
      const int ndims = i[0];
      rc = large ? MPI_Type_create_subarray_c(ndims, c.data(), c.data() + ndims,
                                              c.data() + 2 * ndims, i[1],
                                              olds[0], &rebuilt)
                 : MPI_Type_create_subarray(
                       ndims, i.data() + 1, i.data() + 1 + ndims,
                       i.data() + 1 + 2 * ndims, i[1 + 3 * ndims], olds[0],
                       &rebuilt);
      break;
    }
    case MPI_COMBINER_DARRAY: {
      const int ndims = i[2];
      // int form: gsizes i[3..], distribs, dargs, psizes, order.
      // _c form: gsizes c[0..]; distribs from i[3], then dargs, psizes,
      // order.
      const int g = large ? 0 : ndims;
      rc = large ? MPI_Type_create_darray_c(i[0], i[1], ndims, c.data(),
                                            i.data() + 3, i.data() + 3 + ndims,
                                            i.data() + 3 + 2 * ndims,
                                            i[3 + 3 * ndims], olds[0], &rebuilt)
                 : MPI_Type_create_darray(
                       i[0], i[1], ndims, i.data() + 3, i.data() + 3 + g,
                       i.data() + 3 + g + ndims, i.data() + 3 + g + 2 * ndims,
                       i[3 + g + 3 * ndims], olds[0], &rebuilt);
      break;
    }
    case MPI_COMBINER_RESIZED:
      rc = large ? MPI_Type_create_resized_c(olds[0], c[0], c[1], &rebuilt)
                 : MPI_Type_create_resized(olds[0], a[0], a[1], &rebuilt);
      break;
    default:
      ADD_FAILURE() << "unexpected combiner " << combiner;
  }
  EXPECT_EQ(rc, MPI_SUCCESS) << "rebuilding combiner " << combiner;
  for (MPI_Datatype old : olds) FreeIfDerived(old);
  return rebuilt;
}

// The envelope counts of a type, from MPI_Type_get_envelope_c.
struct EnvelopeCounts {
  MPI_Count integers, addresses, large_counts, datatypes;
  int combiner;
  friend bool operator==(const EnvelopeCounts&,
                         const EnvelopeCounts&) = default;
};

EnvelopeCounts CountsOf(MPI_Datatype type) {
  EnvelopeCounts counts{-1, -1, -1, -1, -1};
  EXPECT_EQ(MPI_Type_get_envelope_c(type, &counts.integers, &counts.addresses,
                                    &counts.large_counts, &counts.datatypes,
                                    &counts.combiner),
            MPI_SUCCESS);
  return counts;
}

std::ostream& operator<<(std::ostream& out, const EnvelopeCounts& counts) {
  return out << "{ni " << counts.integers << ", na " << counts.addresses
             << ", nc " << counts.large_counts << ", nd " << counts.datatypes
             << ", combiner " << counts.combiner << "}";
}

// Every combiner, int form then _c form, with the counts MPI-4.1's table
// gives (count n = 3, ndims d = 2) and the contents checked value by value.
TEST_F(DatatypeBindingsTest, EnvelopeAndContentsFollowTheStandardsTable) {
  const int bl[3] = {1, 0, 2};
  const int disp[3] = {4, -2, 9};
  const MPI_Aint adisp[3] = {40, -16, 72};
  const MPI_Count cbl[3] = {1, 0, 2};
  const MPI_Count cdisp[3] = {4, -2, 9};
  const MPI_Count cadisp[3] = {40, -16, 72};
  MPI_Datatype vec;  // a derived member, to see it come back as a new handle
  ASSERT_EQ(MPI_Type_vector(2, 1, 3, MPI_INT, &vec), MPI_SUCCESS);
  const MPI_Datatype struct_types[3] = {MPI_INT, vec, MPI_DOUBLE};

  struct Case {
    const char* name;
    MPI_Datatype type;
    EnvelopeCounts expected;
    std::vector<int> integers;
    std::vector<MPI_Aint> addresses;
    std::vector<MPI_Count> large_counts;
    std::vector<MPI_Datatype> types;
  };
  std::vector<Case> cases;
  MPI_Datatype t;
  // The type comes back through `t`, read once the constructor `rc` came
  // from has run (an argument list would not order the two).
  auto add = [&](const char* name, int rc, EnvelopeCounts expected,
                 std::vector<int> integers, std::vector<MPI_Aint> addresses,
                 std::vector<MPI_Count> large_counts,
                 std::vector<MPI_Datatype> types) {
    ASSERT_EQ(rc, MPI_SUCCESS) << name;
    cases.push_back(
        {name, t, expected, integers, addresses, large_counts, types});
  };
  const int sizes[2] = {4, 5}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
  const MPI_Count csizes[2] = {4, 5}, csubsizes[2] = {2, 3},
                  cstarts[2] = {1, 2};
  const int gsizes[2] = {6, 4},
            distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  const int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {2, 2};
  const MPI_Count cgsizes[2] = {6, 4};

  add("contiguous", MPI_Type_contiguous(3, vec, &t),
      {1, 0, 0, 1, MPI_COMBINER_CONTIGUOUS}, {3}, {}, {}, {vec});
  add("contiguous_c", MPI_Type_contiguous_c(3, MPI_INT, &t),
      {0, 0, 1, 1, MPI_COMBINER_CONTIGUOUS}, {}, {}, {3}, {MPI_INT});
  add("vector", MPI_Type_vector(3, 2, -4, MPI_INT, &t),
      {3, 0, 0, 1, MPI_COMBINER_VECTOR}, {3, 2, -4}, {}, {}, {MPI_INT});
  add("vector_c", MPI_Type_vector_c(3, 2, -4, MPI_INT, &t),
      {0, 0, 3, 1, MPI_COMBINER_VECTOR}, {}, {}, {3, 2, -4}, {MPI_INT});
  add("hvector", MPI_Type_create_hvector(3, 2, -40, MPI_INT, &t),
      {2, 1, 0, 1, MPI_COMBINER_HVECTOR}, {3, 2}, {-40}, {}, {MPI_INT});
  add("hvector_c", MPI_Type_create_hvector_c(3, 2, -40, MPI_INT, &t),
      {0, 0, 3, 1, MPI_COMBINER_HVECTOR}, {}, {}, {3, 2, -40}, {MPI_INT});
  add("indexed", MPI_Type_indexed(3, bl, disp, MPI_INT, &t),
      {7, 0, 0, 1, MPI_COMBINER_INDEXED}, {3, 1, 0, 2, 4, -2, 9}, {}, {},
      {MPI_INT});
  add("indexed_c", MPI_Type_indexed_c(3, cbl, cdisp, MPI_INT, &t),
      {0, 0, 7, 1, MPI_COMBINER_INDEXED}, {}, {}, {3, 1, 0, 2, 4, -2, 9},
      {MPI_INT});
  add("hindexed", MPI_Type_create_hindexed(3, bl, adisp, MPI_INT, &t),
      {4, 3, 0, 1, MPI_COMBINER_HINDEXED}, {3, 1, 0, 2}, {40, -16, 72}, {},
      {MPI_INT});
  add("hindexed_c", MPI_Type_create_hindexed_c(3, cbl, cadisp, MPI_INT, &t),
      {0, 0, 7, 1, MPI_COMBINER_HINDEXED}, {}, {}, {3, 1, 0, 2, 40, -16, 72},
      {MPI_INT});
  add("indexed_block", MPI_Type_create_indexed_block(3, 2, disp, MPI_INT, &t),
      {5, 0, 0, 1, MPI_COMBINER_INDEXED_BLOCK}, {3, 2, 4, -2, 9}, {}, {},
      {MPI_INT});
  add("indexed_block_c",
      MPI_Type_create_indexed_block_c(3, 2, cdisp, MPI_INT, &t),
      {0, 0, 5, 1, MPI_COMBINER_INDEXED_BLOCK}, {}, {}, {3, 2, 4, -2, 9},
      {MPI_INT});
  add("hindexed_block",
      MPI_Type_create_hindexed_block(3, 2, adisp, MPI_INT, &t),
      {2, 3, 0, 1, MPI_COMBINER_HINDEXED_BLOCK}, {3, 2}, {40, -16, 72}, {},
      {MPI_INT});
  add("hindexed_block_c",
      MPI_Type_create_hindexed_block_c(3, 2, cadisp, MPI_INT, &t),
      {0, 0, 5, 1, MPI_COMBINER_HINDEXED_BLOCK}, {}, {}, {3, 2, 40, -16, 72},
      {MPI_INT});
  add("struct", MPI_Type_create_struct(3, bl, adisp, struct_types, &t),
      {4, 3, 0, 3, MPI_COMBINER_STRUCT}, {3, 1, 0, 2}, {40, -16, 72}, {},
      {MPI_INT, vec, MPI_DOUBLE});
  add("struct_c", MPI_Type_create_struct_c(3, cbl, cadisp, struct_types, &t),
      {0, 0, 7, 3, MPI_COMBINER_STRUCT}, {}, {}, {3, 1, 0, 2, 40, -16, 72},
      {MPI_INT, vec, MPI_DOUBLE});
  add("subarray",
      MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN,
                               MPI_INT, &t),
      {8, 0, 0, 1, MPI_COMBINER_SUBARRAY},
      {2, 4, 5, 2, 3, 1, 2, MPI_ORDER_FORTRAN}, {}, {}, {MPI_INT});
  add("subarray_c",
      MPI_Type_create_subarray_c(2, csizes, csubsizes, cstarts, MPI_ORDER_C,
                                 MPI_INT, &t),
      {2, 0, 6, 1, MPI_COMBINER_SUBARRAY}, {2, MPI_ORDER_C}, {},
      {4, 5, 2, 3, 1, 2}, {MPI_INT});
  add("darray",
      MPI_Type_create_darray(4, 3, 2, gsizes, distribs, dargs, psizes,
                             MPI_ORDER_C, MPI_INT, &t),
      {12, 0, 0, 1, MPI_COMBINER_DARRAY},
      {4, 3, 2, 6, 4, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC,
       MPI_DISTRIBUTE_DFLT_DARG, 2, 2, 2, MPI_ORDER_C},
      {}, {}, {MPI_INT});
  add("darray_c",
      MPI_Type_create_darray_c(4, 3, 2, cgsizes, distribs, dargs, psizes,
                               MPI_ORDER_C, MPI_INT, &t),
      {10, 0, 2, 1, MPI_COMBINER_DARRAY},
      {4, 3, 2, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC,
       MPI_DISTRIBUTE_DFLT_DARG, 2, 2, 2, MPI_ORDER_C},
      {}, {6, 4}, {MPI_INT});
  add("resized", MPI_Type_create_resized(vec, -8, 100, &t),
      {0, 2, 0, 1, MPI_COMBINER_RESIZED}, {}, {-8, 100}, {}, {vec});
  add("resized_c", MPI_Type_create_resized_c(MPI_INT, -8, 100, &t),
      {0, 0, 2, 1, MPI_COMBINER_RESIZED}, {}, {}, {-8, 100}, {MPI_INT});
  add("dup", MPI_Type_dup(MPI_DOUBLE, &t), {0, 0, 0, 1, MPI_COMBINER_DUP}, {},
      {}, {}, {MPI_DOUBLE});

  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(CountsOf(c.type), c.expected);
    // Contents into arrays one larger than needed: the extra entry stays.
    std::vector<int> integers(c.integers.size() + 1, 12345);
    std::vector<MPI_Aint> addresses(c.addresses.size() + 1, 12345);
    std::vector<MPI_Count> large_counts(c.large_counts.size() + 1, 12345);
    std::vector<MPI_Datatype> types(c.types.size() + 1, MPI_DATATYPE_NULL);
    ASSERT_EQ(MPI_Type_get_contents_c(c.type, integers.size(), addresses.size(),
                                      large_counts.size(), types.size(),
                                      integers.data(), addresses.data(),
                                      large_counts.data(), types.data()),
              MPI_SUCCESS);
    EXPECT_EQ(integers.back(), 12345);
    integers.pop_back();
    EXPECT_EQ(integers, c.integers);
    addresses.pop_back();
    EXPECT_EQ(addresses, c.addresses);
    large_counts.pop_back();
    EXPECT_EQ(large_counts, c.large_counts);
    types.pop_back();
    ASSERT_EQ(types.size(), c.types.size());
    for (size_t k = 0; k < types.size(); ++k) {
      if (IsDerived(c.types[k])) {
        // A new handle to the same object: the program frees it.
        EXPECT_NE(types[k], c.types[k]);
        EXPECT_EQ(LookupDatatype(types[k]), LookupDatatype(c.types[k]));
        EXPECT_EQ(MPI_Type_free(&types[k]), MPI_SUCCESS);
      } else {
        EXPECT_EQ(types[k], c.types[k]);  // predefined: the handle itself
      }
    }
    const bool large = c.expected.large_counts > 0;
    int ni = -1, na = -1, nd = -1, combiner = -1;
    const int rc = MPI_Type_get_envelope(c.type, &ni, &na, &nd, &combiner);
    if (large) {
      // MPI-4.1 5.1.13: the int forms cannot report large counts.
      EXPECT_CLASS(rc, MPI_ERR_TYPE);
      EXPECT_CLASS(MPI_Type_get_contents(c.type, 100, 100, 100, integers.data(),
                                         addresses.data(), types.data()),
                   MPI_ERR_TYPE);
    } else {
      ASSERT_EQ(rc, MPI_SUCCESS);
      EXPECT_EQ((EnvelopeCounts{ni, na, 0, nd, combiner}), c.expected);
      std::vector<int> int_integers(ni + 1, -7);
      std::vector<MPI_Aint> int_addresses(na + 1);
      std::vector<MPI_Datatype> int_types(nd + 1);
      ASSERT_EQ(MPI_Type_get_contents(c.type, ni, na, nd, int_integers.data(),
                                      int_addresses.data(), int_types.data()),
                MPI_SUCCESS);
      EXPECT_EQ(int_integers.back(), -7);
      int_integers.pop_back();
      EXPECT_EQ(int_integers, c.integers);
      for (int k = 0; k < nd; ++k) FreeIfDerived(int_types[k]);
      // One entry short of what the envelope needs: MPI_ERR_ARG.
      if (ni > 0) {
        EXPECT_CLASS(
            MPI_Type_get_contents(c.type, ni - 1, na, nd, int_integers.data(),
                                  int_addresses.data(), int_types.data()),
            MPI_ERR_ARG);
      }
    }
    EXPECT_EQ(MPI_Type_free(&c.type), MPI_SUCCESS);
    EXPECT_EQ(c.type, MPI_DATATYPE_NULL);
  }
  EXPECT_EQ(MPI_Type_free(&vec), MPI_SUCCESS);
}

TEST_F(DatatypeBindingsTest, PredefinedTypesAreNamed) {
  for (const datatype::PredefinedType* predefined : datatype::AllPredefined()) {
    SCOPED_TRACE(predefined->name);
    EXPECT_EQ(CountsOf(predefined->handle),
              (EnvelopeCounts{0, 0, 0, 0, MPI_COMBINER_NAMED}));
    int ni = -1, na = -1, nd = -1, combiner = -1;
    EXPECT_EQ(
        MPI_Type_get_envelope(predefined->handle, &ni, &na, &nd, &combiner),
        MPI_SUCCESS);
    EXPECT_EQ(combiner, MPI_COMBINER_NAMED);
    int integers[1];
    MPI_Aint addresses[1];
    MPI_Datatype types[1];
    EXPECT_CLASS(MPI_Type_get_contents(predefined->handle, 1, 1, 1, integers,
                                       addresses, types),
                 MPI_ERR_TYPE);
    MPI_Datatype handle = predefined->handle;
    EXPECT_CLASS(MPI_Type_free(&handle), MPI_ERR_TYPE);
    EXPECT_EQ(handle, predefined->handle);
    EXPECT_EQ(MPI_Type_commit(&handle), MPI_SUCCESS);
    char name[MPI_MAX_OBJECT_NAME];
    int length = -1;
    ASSERT_EQ(MPI_Type_get_name(handle, name, &length), MPI_SUCCESS);
    const std::string expected = handle == MPI_LONG_LONG ? "MPI_LONG_LONG_INT"
                                 : handle == MPI_C_FLOAT_COMPLEX
                                     ? "MPI_C_COMPLEX"
                                     : predefined->name;
    EXPECT_EQ(std::string(name), expected);
    EXPECT_EQ(length, static_cast<int>(expected.size()));
  }
}

// Random nested types built through the C API, int and _c forms mixed,
// decoded and rebuilt: the layout survives the round trip, and equals the
// engine's layout for the same calls.
TEST_F(DatatypeBindingsTest, DecodedTypesRebuildToEqualLayouts) {
  std::mt19937_64 random(20251122);
  for (int trial = 0; trial < 400; ++trial) {
    const SpecPtr spec = datatype::testing::RandomSpec(random, 4);
    SCOPED_TRACE(spec->Describe());
    const bool large = Pick(random, 0, 1) == 1;
    MPI_Datatype type = Build(*spec, large);
    ASSERT_NE(type, MPI_DATATYPE_NULL);
    const datatype::LayoutRef reference = datatype::testing::BuildLayout(*spec);
    EXPECT_EQ(LayoutOf(type).DebugString(), reference->DebugString());
    MPI_Datatype rebuilt = Rebuild(type);
    EXPECT_EQ(LayoutOf(rebuilt).DebugString(), reference->DebugString());
    if (IsDerived(type)) {
      EXPECT_EQ(CountsOf(rebuilt), CountsOf(type));
    }
    FreeIfDerived(rebuilt);
    FreeIfDerived(type);
  }
}

// Memory for `count` items of a typemap: every byte it touches plus guard
// bytes on both sides, filled with random bytes.
class Buffer {
 public:
  Buffer(const std::vector<int64_t>& offsets, std::mt19937_64& random) {
    int64_t low = 0, high = 0;
    if (!offsets.empty()) {
      low = *std::min_element(offsets.begin(), offsets.end());
      high = *std::max_element(offsets.begin(), offsets.end()) + 1;
    }
    origin_ = kGuard - std::min<int64_t>(low, 0);
    bytes_.resize(origin_ + std::max<int64_t>(high, 0) + kGuard);
    for (unsigned char& byte : bytes_) byte = random() & 0xff;
  }
  unsigned char* pointer() { return bytes_.data() + origin_; }
  unsigned char& at(int64_t offset) { return bytes_[origin_ + offset]; }
  Bytes& bytes() { return bytes_; }

 private:
  Bytes bytes_;
  int64_t origin_ = 0;
};

// A random type small enough for byte-by-byte references.
SpecPtr SmallRandomSpec(std::mt19937_64& random) {
  while (true) {
    SpecPtr spec = datatype::testing::RandomSpec(random, 3);
    const Typemap typemap = Expand(*spec);
    const std::vector<int64_t> offsets =
        datatype::testing::PackedByteOffsets(typemap, 3);
    if (offsets.size() > 4096) continue;
    if (!offsets.empty()) {
      const auto [low, high] =
          std::minmax_element(offsets.begin(), offsets.end());
      if (*high - *low > (1 << 16)) continue;
    }
    return spec;
  }
}

TEST_F(DatatypeBindingsTest, PackAndUnpackMatchTheReference) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 300; ++trial) {
    const SpecPtr spec = SmallRandomSpec(random);
    SCOPED_TRACE(spec->Describe());
    MPI_Datatype type = Build(*spec, Pick(random, 0, 1) == 1);
    ASSERT_EQ(MPI_Type_commit(&type), MPI_SUCCESS);
    const int count = static_cast<int>(Pick(random, 0, 3));
    const Typemap typemap = Expand(*spec);
    const std::vector<int64_t> offsets =
        datatype::testing::PackedByteOffsets(typemap, count);
    const int packed = static_cast<int>(offsets.size());
    Buffer source(offsets, random);

    int size = -1;
    ASSERT_EQ(MPI_Pack_size(count, type, MPI_COMM_WORLD, &size), MPI_SUCCESS);
    EXPECT_EQ(size, packed);  // exact: the packed form has no header

    // Pack after a prefix already in the buffer; the rest stays untouched.
    const int prefix = static_cast<int>(Pick(random, 0, 9));
    const int outsize = prefix + packed + static_cast<int>(Pick(random, 0, 5));
    Bytes out(outsize + kGuard, 0xa5);
    int position = prefix;
    ASSERT_EQ(MPI_Pack(source.pointer(), count, type, out.data(), outsize,
                       &position, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(position, prefix + packed);
    Bytes expected(outsize + kGuard, 0xa5);
    for (int p = 0; p < packed; ++p) {
      expected[prefix + p] = source.at(offsets[p]);
    }
    EXPECT_EQ(out, expected);

    // One byte short: MPI_ERR_TRUNCATE, nothing written, position kept.
    if (packed > 0) {
      Bytes small(prefix + packed - 1, 0x5a);
      position = prefix;
      EXPECT_CLASS(MPI_Pack(source.pointer(), count, type, small.data(),
                            prefix + packed - 1, &position, MPI_COMM_WORLD),
                   MPI_ERR_TRUNCATE);
      EXPECT_EQ(position, prefix);
      EXPECT_EQ(small, Bytes(prefix + packed - 1, 0x5a));
    }

    // Unpack into fresh memory: only the typemap's bytes change, each to
    // the last value packed for it (typemaps may overlap).
    Buffer target(offsets, random);
    Bytes target_expected = target.bytes();
    {
      Buffer shadow = target;
      for (int p = 0; p < packed; ++p) {
        shadow.at(offsets[p]) = out[prefix + p];
      }
      target_expected = shadow.bytes();
    }
    position = prefix;
    ASSERT_EQ(MPI_Unpack(out.data(), outsize, &position, target.pointer(),
                         count, type, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(position, prefix + packed);
    EXPECT_EQ(target.bytes(), target_expected);
    if (packed > 0) {
      position = prefix;
      Buffer untouched = target;
      EXPECT_CLASS(MPI_Unpack(out.data(), prefix + packed - 1, &position,
                              untouched.pointer(), count, type, MPI_COMM_WORLD),
                   MPI_ERR_TRUNCATE);
      EXPECT_EQ(untouched.bytes(), target.bytes());
    }

    // The _c forms move the same bytes.
    Bytes out_c(outsize + kGuard, 0xa5);
    MPI_Count position_c = prefix;
    ASSERT_EQ(MPI_Pack_c(source.pointer(), count, type, out_c.data(), outsize,
                         &position_c, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(out_c, expected);
    MPI_Count size_c = -1;
    ASSERT_EQ(MPI_Pack_size_c(count, type, MPI_COMM_WORLD, &size_c),
              MPI_SUCCESS);
    EXPECT_EQ(size_c, packed);
    Buffer target_c = target;
    position_c = prefix;
    ASSERT_EQ(MPI_Unpack_c(out_c.data(), outsize, &position_c,
                           target_c.pointer(), count, type, MPI_COMM_WORLD),
              MPI_SUCCESS);
    EXPECT_EQ(position_c, prefix + packed);
    EXPECT_EQ(target_c.bytes(), target_expected);
    FreeIfDerived(type);
  }
}

// Valid numbers at every entry of the typemap (booleans 0 or 1, x87 long
// doubles normal), so that external32 round trips are exact.
void FillValidNumbers(const Typemap& typemap, int64_t count, Buffer& buffer,
                      std::mt19937_64& random) {
  const int64_t extent = typemap.extent();
  for (int64_t item = 0; item < count; ++item) {
    for (const datatype::testing::Entry& entry : typemap.entries) {
      const datatype::PredefinedType& basic =
          *datatype::FindPredefined(entry.basic);
      for (int m = 0; m < basic.member_count; ++m) {
        const datatype::NumberMember& member = basic.members[m];
        for (int k = 0; k < member.components; ++k) {
          unsigned char* at =
              &buffer.at(item * extent + entry.displacement + member.offset +
                         k * member.native_size);
          if (member.kind == datatype::NumberKind::kBool ||
              member.kind == datatype::NumberKind::kLogical) {
            std::memset(at, 0, member.native_size);
            at[0] = random() & 1;
          } else if (member.kind == datatype::NumberKind::kX87LongDouble) {
            const long double value =
                static_cast<long double>(static_cast<int64_t>(random())) / 7.0L;
            std::memset(at, 0, member.native_size);
            std::memcpy(at, &value, 10);
          } else {
            for (int b = 0; b < member.native_size; ++b) at[b] = random();
          }
        }
      }
    }
  }
}

TEST_F(DatatypeBindingsTest, External32MatchesTheReference) {
  std::mt19937_64 random(32);
  for (int trial = 0; trial < 300; ++trial) {
    const SpecPtr spec = SmallRandomSpec(random);
    SCOPED_TRACE(spec->Describe());
    MPI_Datatype type = Build(*spec, Pick(random, 0, 1) == 1);
    ASSERT_EQ(MPI_Type_commit(&type), MPI_SUCCESS);
    const int count = static_cast<int>(Pick(random, 0, 3));
    const Typemap typemap = Expand(*spec);
    const std::vector<int64_t> offsets =
        datatype::testing::PackedByteOffsets(typemap, count);
    Buffer source(offsets, random);
    const bool overlaps = [&] {
      std::vector<int64_t> sorted = offsets;
      std::sort(sorted.begin(), sorted.end());
      return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
    }();
    if (!overlaps) FillValidNumbers(typemap, count, source, random);

    const Bytes reference = datatype::testing::ReferenceExternal32(
        typemap, count, source.pointer());
    MPI_Aint size = -1;
    ASSERT_EQ(MPI_Pack_external_size("external32", count, type, &size),
              MPI_SUCCESS);
    EXPECT_EQ(size, static_cast<MPI_Aint>(reference.size()));
    EXPECT_EQ(size, typemap.external32_size() * count);

    const MPI_Aint prefix = Pick(random, 0, 5);
    Bytes out(prefix + reference.size() + kGuard, 0xc3);
    MPI_Aint position = prefix;
    ASSERT_EQ(
        MPI_Pack_external("external32", source.pointer(), count, type,
                          out.data(), prefix + reference.size(), &position),
        MPI_SUCCESS);
    EXPECT_EQ(position, prefix + static_cast<MPI_Aint>(reference.size()));
    Bytes expected(out.size(), 0xc3);
    std::copy(reference.begin(), reference.end(), expected.begin() + prefix);
    EXPECT_EQ(out, expected);

    MPI_Count position_c = prefix;
    Bytes out_c(out.size(), 0xc3);
    ASSERT_EQ(MPI_Pack_external_c("external32", source.pointer(), count, type,
                                  out_c.data(), prefix + reference.size(),
                                  &position_c),
              MPI_SUCCESS);
    EXPECT_EQ(out_c, expected);

    if (!reference.empty()) {
      position = prefix;
      EXPECT_CLASS(MPI_Pack_external("external32", source.pointer(), count,
                                     type, out.data(),
                                     prefix + reference.size() - 1, &position),
                   MPI_ERR_TRUNCATE);
      EXPECT_EQ(position, prefix);
    }

    // Back from external32: the same numbers, the other bytes untouched.
    if (!overlaps) {
      Buffer target(offsets, random);
      Bytes target_expected = target.bytes();
      {
        Buffer shadow = target;
        for (size_t p = 0; p < offsets.size(); ++p) {
          shadow.at(offsets[p]) = source.at(offsets[p]);
        }
        target_expected = shadow.bytes();
      }
      position = prefix;
      ASSERT_EQ(MPI_Unpack_external("external32", out.data(),
                                    prefix + reference.size(), &position,
                                    target.pointer(), count, type),
                MPI_SUCCESS);
      EXPECT_EQ(position, prefix + static_cast<MPI_Aint>(reference.size()));
      // Padding inside an x87 long double (bytes 10..15) is not data.
      EXPECT_EQ(target.bytes(), target_expected);
      Buffer target_c(offsets, random);
      target_c.bytes() = target_expected;
      position_c = prefix;
      ASSERT_EQ(MPI_Unpack_external_c("external32", out.data(),
                                      prefix + reference.size(), &position_c,
                                      target_c.pointer(), count, type),
                MPI_SUCCESS);
      EXPECT_EQ(target_c.bytes(), target_expected);
    }
    FreeIfDerived(type);
  }
}

TEST_F(DatatypeBindingsTest, QueriesReportTheLayout) {
  MPI_Datatype type;
  // A struct with padding, resized to a smaller extent and a negative lb.
  const int bl[2] = {1, 2};
  const MPI_Aint disp[2] = {0, 8};
  const MPI_Datatype types[2] = {MPI_CHAR, MPI_DOUBLE};
  MPI_Datatype padded;
  ASSERT_EQ(MPI_Type_create_struct(2, bl, disp, types, &padded), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_create_resized(padded, -4, 12, &type), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_free(&padded), MPI_SUCCESS);
  int size = -1;
  MPI_Count size_c = -1, size_x = -1;
  EXPECT_EQ(MPI_Type_size(type, &size), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_size_c(type, &size_c), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_size_x(type, &size_x), MPI_SUCCESS);
  EXPECT_EQ(size, 17);
  EXPECT_EQ(size_c, 17);
  EXPECT_EQ(size_x, 17);
  MPI_Aint lb = 0, extent = 0;
  MPI_Count lb_c = 0, extent_c = 0;
  EXPECT_EQ(MPI_Type_get_extent(type, &lb, &extent), MPI_SUCCESS);
  EXPECT_EQ(lb, -4);
  EXPECT_EQ(extent, 12);
  EXPECT_EQ(MPI_Type_get_extent_x(type, &lb_c, &extent_c), MPI_SUCCESS);
  EXPECT_EQ(lb_c, -4);
  EXPECT_EQ(extent_c, 12);
  EXPECT_EQ(MPI_Type_get_extent_c(type, &lb_c, &extent_c), MPI_SUCCESS);
  EXPECT_EQ(extent_c, 12);
  EXPECT_EQ(MPI_Type_get_true_extent(type, &lb, &extent), MPI_SUCCESS);
  EXPECT_EQ(lb, 0);
  EXPECT_EQ(extent, 24);
  EXPECT_EQ(MPI_Type_get_true_extent_x(type, &lb_c, &extent_c), MPI_SUCCESS);
  EXPECT_EQ(extent_c, 24);
  EXPECT_EQ(MPI_Type_get_true_extent_c(type, &lb_c, &extent_c), MPI_SUCCESS);
  EXPECT_EQ(lb_c, 0);
  EXPECT_EQ(extent_c, 24);
  EXPECT_EQ(MPI_Type_free(&type), MPI_SUCCESS);

  // Sizes beyond an int: MPI_UNDEFINED in the int forms only.
  MPI_Datatype huge;
  ASSERT_EQ(MPI_Type_contiguous_c(int64_t{3} << 30, MPI_DOUBLE, &huge),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_size(huge, &size), MPI_SUCCESS);
  EXPECT_EQ(size, MPI_UNDEFINED);
  EXPECT_EQ(MPI_Type_size_c(huge, &size_c), MPI_SUCCESS);
  EXPECT_EQ(size_c, int64_t{3} << 33);
  ASSERT_EQ(MPI_Type_commit(&huge), MPI_SUCCESS);
  EXPECT_EQ(MPI_Pack_size(1, huge, MPI_COMM_WORLD, &size), MPI_SUCCESS);
  EXPECT_EQ(size, MPI_UNDEFINED);
  EXPECT_EQ(MPI_Pack_size_c(1, huge, MPI_COMM_WORLD, &size_c), MPI_SUCCESS);
  EXPECT_EQ(size_c, int64_t{3} << 33);
  EXPECT_EQ(MPI_Type_free(&huge), MPI_SUCCESS);
}

// Counts in a status, from messages this process sends itself.
TEST_F(DatatypeBindingsTest, CountsAndElementsOfPartialData) {
  // {double, int} pairs resized to 16 bytes: 12 bytes and 3 elements each.
  MPI_Datatype pair;
  const int bl[2] = {1, 1};
  const MPI_Aint disp[2] = {0, 8};
  const MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
  ASSERT_EQ(MPI_Type_create_struct(2, bl, disp, types, &pair), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&pair), MPI_SUCCESS);
  unsigned char bytes[64] = {};
  unsigned char sink[128];
  struct Case {
    int bytes;
    int count;     // MPI_Get_count
    int elements;  // MPI_Get_elements
  };
  const Case cases[] = {
      {0, 0, 0},
      {24, 2, 4},
      {12, 1, 2},
      {8, MPI_UNDEFINED, 1},              // the double of a pair
      {20, MPI_UNDEFINED, 3},             // a pair and a double
      {4, MPI_UNDEFINED, MPI_UNDEFINED},  // half a double
      {14, MPI_UNDEFINED, MPI_UNDEFINED},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.bytes);
    MPI_Request request;
    ASSERT_EQ(
        MPI_Isend(bytes, c.bytes, MPI_BYTE, 0, 5, MPI_COMM_SELF, &request),
        MPI_SUCCESS);
    MPI_Status status;
    ASSERT_EQ(
        MPI_Recv(sink, sizeof sink, MPI_BYTE, 0, 5, MPI_COMM_SELF, &status),
        MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    int count = -1, elements = -1;
    MPI_Count count_c = -1, elements_c = -1, elements_x = -1;
    EXPECT_EQ(MPI_Get_count(&status, pair, &count), MPI_SUCCESS);
    EXPECT_EQ(MPI_Get_count_c(&status, pair, &count_c), MPI_SUCCESS);
    EXPECT_EQ(MPI_Get_elements(&status, pair, &elements), MPI_SUCCESS);
    EXPECT_EQ(MPI_Get_elements_c(&status, pair, &elements_c), MPI_SUCCESS);
    EXPECT_EQ(MPI_Get_elements_x(&status, pair, &elements_x), MPI_SUCCESS);
    EXPECT_EQ(count, c.count);
    EXPECT_EQ(count_c, c.count);
    EXPECT_EQ(elements, c.elements);
    EXPECT_EQ(elements_c, c.elements);
    EXPECT_EQ(elements_x, c.elements);
  }
  EXPECT_EQ(MPI_Type_free(&pair), MPI_SUCCESS);
}

TEST_F(DatatypeBindingsTest, FreedTypesLiveOnThroughTypesBuiltFromThem) {
  MPI_Datatype contiguous, vector;
  ASSERT_EQ(MPI_Type_contiguous(3, MPI_SHORT, &contiguous), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_vector(2, 1, 4, contiguous, &vector), MPI_SUCCESS);
  MPI_Datatype freed = contiguous;
  ASSERT_EQ(MPI_Type_free(&contiguous), MPI_SUCCESS);
  EXPECT_EQ(contiguous, MPI_DATATYPE_NULL);
  // The freed handle no longer names anything...
  int size = 0;
  EXPECT_CLASS(MPI_Type_size(freed, &size), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_free(&freed), MPI_ERR_TYPE);
  // ...but the object lives on in the vector's envelope.
  int integers[3];
  MPI_Aint addresses[1];
  MPI_Datatype types[1];
  ASSERT_EQ(MPI_Type_get_contents(vector, 3, 0, 1, integers, addresses, types),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_size(types[0], &size), MPI_SUCCESS);
  EXPECT_EQ(size, 6);
  // Freeing the vector first leaves the contents handle valid.
  ASSERT_EQ(MPI_Type_free(&vector), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_size(types[0], &size), MPI_SUCCESS);
  EXPECT_EQ(size, 6);
  ASSERT_EQ(MPI_Type_free(&types[0]), MPI_SUCCESS);
}

TEST_F(DatatypeBindingsTest, DupKeepsTheCommittedStateAndTheLayout) {
  MPI_Datatype vector, committed_dup, dup;
  ASSERT_EQ(MPI_Type_vector(2, 2, 3, MPI_INT, &vector), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_dup(vector, &dup), MPI_SUCCESS);
  int buffer[8] = {};
  char out[64];
  int position = 0;
  // Neither is committed yet: packing needs a committed type.
  EXPECT_CLASS(
      MPI_Pack(buffer, 1, dup, out, sizeof out, &position, MPI_COMM_WORLD),
      MPI_ERR_TYPE);
  ASSERT_EQ(MPI_Type_commit(&vector), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&vector), MPI_SUCCESS);  // harmless twice
  ASSERT_EQ(MPI_Type_dup(vector, &committed_dup), MPI_SUCCESS);
  EXPECT_EQ(MPI_Pack(buffer, 1, committed_dup, out, sizeof out, &position,
                     MPI_COMM_WORLD),
            MPI_SUCCESS);
  EXPECT_EQ(LayoutOf(committed_dup).DebugString(),
            LayoutOf(vector).DebugString());
  for (MPI_Datatype* t : {&vector, &dup, &committed_dup}) {
    EXPECT_EQ(MPI_Type_free(t), MPI_SUCCESS);
  }
}

TEST_F(DatatypeBindingsTest, NamesMatchSizeValueIndexAndAddresses) {
  MPI_Datatype type;
  ASSERT_EQ(MPI_Type_contiguous(2, MPI_INT, &type), MPI_SUCCESS);
  char name[MPI_MAX_OBJECT_NAME];
  int length = -1;
  ASSERT_EQ(MPI_Type_get_name(type, name, &length), MPI_SUCCESS);
  EXPECT_EQ(length, 0);  // a derived type starts with the empty name
  EXPECT_STREQ(name, "");
  ASSERT_EQ(MPI_Type_set_name(type, "pair of ints"), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_get_name(type, name, &length), MPI_SUCCESS);
  EXPECT_STREQ(name, "pair of ints");
  EXPECT_EQ(length, 12);
  const std::string long_name(300, 'x');
  ASSERT_EQ(MPI_Type_set_name(type, long_name.c_str()), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_get_name(type, name, &length), MPI_SUCCESS);
  EXPECT_EQ(length, MPI_MAX_OBJECT_NAME - 1);
  EXPECT_EQ(std::string(name), long_name.substr(0, MPI_MAX_OBJECT_NAME - 1));
  EXPECT_EQ(MPI_Type_free(&type), MPI_SUCCESS);

  struct Match {
    int typeclass, size;
    MPI_Datatype expected;
  };
  const Match matches[] = {
      {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},
      {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},
      {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
      {MPI_TYPECLASS_REAL, 4, MPI_REAL4},
      {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
      {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
      {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16},
  };
  for (const Match& match : matches) {
    MPI_Datatype found = MPI_DATATYPE_NULL;
    EXPECT_EQ(MPI_Type_match_size(match.typeclass, match.size, &found),
              MPI_SUCCESS);
    EXPECT_EQ(found, match.expected);
  }
  MPI_Datatype found;
  EXPECT_CLASS(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &found), MPI_ERR_ARG);
  // 190 names no type class (191 is the ABI's MPIX_TYPECLASS_LOGICAL).
  EXPECT_CLASS(MPI_Type_match_size(190, 4, &found), MPI_ERR_ARG);
  MPI_Datatype logical = MPI_DATATYPE_NULL;
  EXPECT_EQ(MPI_Type_match_size(MPIX_TYPECLASS_LOGICAL, 4, &logical),
            MPI_SUCCESS);
  EXPECT_EQ(logical, MPI_LOGICAL4);
  EXPECT_CLASS(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, nullptr),
               MPI_ERR_ARG);

  MPI_Datatype pair = MPI_INT;
  EXPECT_EQ(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pair), MPI_SUCCESS);
  EXPECT_EQ(pair, MPI_DOUBLE_INT);
  EXPECT_EQ(MPI_Type_get_value_index(MPI_INTEGER, MPI_INTEGER, &pair),
            MPI_SUCCESS);
  EXPECT_EQ(pair, MPI_2INTEGER);
  EXPECT_EQ(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &pair), MPI_SUCCESS);
  EXPECT_EQ(pair, MPI_DATATYPE_NULL);
  EXPECT_CLASS(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &pair),
               MPI_ERR_TYPE);

  int array[4];
  MPI_Aint first = 0, third = 0;
  EXPECT_EQ(MPI_Get_address(&array[0], &first), MPI_SUCCESS);
  EXPECT_EQ(MPI_Get_address(&array[2], &third), MPI_SUCCESS);
  EXPECT_EQ(first, reinterpret_cast<MPI_Aint>(&array[0]));
  EXPECT_EQ(MPI_Aint_diff(third, first),
            2 * static_cast<MPI_Aint>(sizeof(int)));
  EXPECT_EQ(MPI_Aint_add(first, 2 * sizeof(int)), third);
  EXPECT_CLASS(MPI_Get_address(&array[0], nullptr), MPI_ERR_ARG);
}

// MPI_BOTTOM with absolute addresses in a struct: pack reads them.
TEST_F(DatatypeBindingsTest, AbsoluteAddressesFromMpiBottom) {
  int a = 0x01020304;
  double b = 2.5;
  short c[2] = {7, -7};
  MPI_Aint addresses[3];
  MPI_Get_address(&a, &addresses[0]);
  MPI_Get_address(&b, &addresses[1]);
  MPI_Get_address(c, &addresses[2]);
  const int bl[3] = {1, 1, 2};
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
  MPI_Datatype absolute;
  ASSERT_EQ(MPI_Type_create_struct(3, bl, addresses, types, &absolute),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&absolute), MPI_SUCCESS);
  unsigned char out[16];
  int position = 0;
  ASSERT_EQ(MPI_Pack(MPI_BOTTOM, 1, absolute, out, sizeof out, &position,
                     MPI_COMM_WORLD),
            MPI_SUCCESS);
  ASSERT_EQ(position, 16);
  EXPECT_EQ(std::memcmp(out, &a, 4), 0);
  EXPECT_EQ(std::memcmp(out + 4, &b, 8), 0);
  EXPECT_EQ(std::memcmp(out + 12, c, 4), 0);
  a = b = c[0] = c[1] = 0;
  position = 0;
  ASSERT_EQ(MPI_Unpack(out, sizeof out, &position, MPI_BOTTOM, 1, absolute,
                       MPI_COMM_WORLD),
            MPI_SUCCESS);
  EXPECT_EQ(a, 0x01020304);
  EXPECT_EQ(b, 2.5);
  EXPECT_EQ(c[1], -7);
  EXPECT_EQ(MPI_Type_free(&absolute), MPI_SUCCESS);
}

// A handle that was never issued, of the datatype kind or of another kind.
MPI_Datatype Garbage() {
  return reinterpret_cast<MPI_Datatype>(uintptr_t{0x0300123400000777});
}

TEST_F(DatatypeBindingsTest, BadInputToConstructors) {
  MPI_Datatype t;
  MPI_Datatype freed;
  ASSERT_EQ(MPI_Type_contiguous(1, MPI_INT, &freed), MPI_SUCCESS);
  MPI_Datatype stale = freed;
  ASSERT_EQ(MPI_Type_free(&freed), MPI_SUCCESS);
  const int ints[2] = {1, 1}, negative[2] = {1, -1};
  const MPI_Aint aints[2] = {0, 8};
  const MPI_Count cints[2] = {1, 1}, cnegative[2] = {1, -1};
  const MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  const MPI_Datatype bad_types[2] = {MPI_INT, MPI_DATATYPE_NULL};

  for (MPI_Datatype old : {MPI_DATATYPE_NULL, stale, Garbage(),
                           reinterpret_cast<MPI_Datatype>(MPI_COMM_WORLD)}) {
    EXPECT_CLASS(MPI_Type_contiguous(1, old, &t), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Type_vector(1, 1, 1, old, &t), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Type_create_resized(old, 0, 4, &t), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Type_dup(old, &t), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Type_indexed(2, ints, ints, old, &t), MPI_ERR_TYPE);
  }
  EXPECT_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_contiguous_c(-1, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_contiguous(1, MPI_INT, nullptr), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_vector(-1, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_vector(1, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_vector_c(-5, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_create_hvector(-1, 1, 8, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_create_hvector_c(1, -1, 8, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_indexed(-1, ints, ints, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_indexed(2, nullptr, ints, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_indexed(2, ints, nullptr, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_indexed(2, negative, ints, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_indexed_c(2, cnegative, cints, MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_hindexed(2, ints, nullptr, MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_hindexed_c(-1, cints, cints, MPI_INT, &t),
               MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_create_indexed_block(2, -1, ints, MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_indexed_block_c(2, 1, nullptr, MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_hindexed_block(-2, 1, aints, MPI_INT, &t),
               MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_create_hindexed_block_c(2, -1, cints, MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_struct(2, ints, aints, bad_types, &t),
               MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_create_struct(2, ints, aints, nullptr, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_struct(-1, ints, aints, types, &t),
               MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_create_struct(2, negative, aints, types, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_struct_c(2, cints, cints, types, nullptr),
               MPI_ERR_ARG);
  // Count 0 with null arrays is a valid empty type.
  ASSERT_EQ(MPI_Type_create_struct(0, nullptr, nullptr, nullptr, &t),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_free(&t), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_indexed(0, nullptr, nullptr, MPI_INT, &t), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_free(&t), MPI_SUCCESS);

  const int sizes[2] = {4, 4}, subsizes[2] = {2, 2}, starts[2] = {1, 1};
  const int zero_size[2] = {0, 4}, too_big[2] = {5, 2}, past[2] = {3, 0};
  EXPECT_CLASS(MPI_Type_create_subarray(0, sizes, subsizes, starts, MPI_ORDER_C,
                                        MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_subarray(2, zero_size, subsizes, starts,
                                        MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_subarray(2, sizes, too_big, starts, MPI_ORDER_C,
                                        MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_subarray(2, sizes, subsizes, past, MPI_ORDER_C,
                                        MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(
      MPI_Type_create_subarray(2, sizes, subsizes, starts, 7, MPI_INT, &t),
      MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_subarray(2, nullptr, subsizes, starts,
                                        MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG);
  const MPI_Count csizes[1] = {4}, csub[1] = {5}, cstart[1] = {0};
  EXPECT_CLASS(MPI_Type_create_subarray_c(1, csizes, csub, cstart, MPI_ORDER_C,
                                          MPI_INT, &t),
               MPI_ERR_ARG);

  const int gsizes[2] = {8, 8};
  const int block[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
  const int bad_distrib[2] = {MPI_DISTRIBUTE_BLOCK, 99};
  const int none[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK};
  const int dflt[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
  const int small_darg[2] = {1, MPI_DISTRIBUTE_DFLT_DARG};
  const int grid[2] = {2, 2};
  EXPECT_CLASS(MPI_Type_create_darray(0, 0, 2, gsizes, block, dflt, grid,
                                      MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_darray(4, 4, 2, gsizes, block, dflt, grid,
                                      MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_darray(4, 0, 2, gsizes, bad_distrib, dflt, grid,
                                      MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_darray(6, 0, 2, gsizes, block, dflt, grid,
                                      MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG);  // the grid holds 4 processes, not 6
  EXPECT_CLASS(MPI_Type_create_darray(4, 0, 2, gsizes, none, dflt, grid,
                                      MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG);  // MPI_DISTRIBUTE_NONE over 2 processes
  EXPECT_CLASS(MPI_Type_create_darray(4, 0, 2, gsizes, block, small_darg, grid,
                                      MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG);  // blocks of 1 cannot cover 8 over 2
  EXPECT_CLASS(MPI_Type_create_darray(4, 0, 2, gsizes, block, dflt, grid, 3,
                                      MPI_INT, &t),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_create_darray(4, 0, 2, gsizes, block, nullptr, grid,
                                      MPI_ORDER_C, MPI_INT, &t),
               MPI_ERR_ARG);

  // Types too large for 64-bit byte offsets, or too irregular to flatten.
  EXPECT_CLASS(MPI_Type_contiguous_c(int64_t{1} << 61, MPI_DOUBLE, &t),
               MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Type_vector_c(2, 1, int64_t{1} << 62, MPI_INT, &t),
               MPI_ERR_COUNT);
  MPI_Datatype holey;
  const MPI_Aint holes[2] = {0, 8};
  const MPI_Datatype holey_types[2] = {MPI_INT, MPI_SHORT};
  ASSERT_EQ(MPI_Type_create_struct(2, ints, holes, holey_types, &holey),
            MPI_SUCCESS);
  EXPECT_CLASS(MPI_Type_contiguous_c(int64_t{1} << 30, holey, &t),
               MPI_ERR_OTHER);
  EXPECT_EQ(MPI_Type_free(&holey), MPI_SUCCESS);
}

TEST_F(DatatypeBindingsTest, BadInputToTheOtherCalls) {
  MPI_Datatype uncommitted;
  ASSERT_EQ(MPI_Type_contiguous(2, MPI_INT, &uncommitted), MPI_SUCCESS);
  MPI_Datatype stale;
  ASSERT_EQ(MPI_Type_contiguous(2, MPI_INT, &stale), MPI_SUCCESS);
  MPI_Datatype copy = stale;
  ASSERT_EQ(MPI_Type_free(&copy), MPI_SUCCESS);

  // Commit and free.
  EXPECT_CLASS(MPI_Type_commit(nullptr), MPI_ERR_ARG);
  MPI_Datatype handle = MPI_DATATYPE_NULL;
  EXPECT_CLASS(MPI_Type_commit(&handle), MPI_ERR_TYPE);
  handle = stale;
  EXPECT_CLASS(MPI_Type_commit(&handle), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_free(&handle), MPI_ERR_TYPE);  // a double free
  handle = Garbage();
  EXPECT_CLASS(MPI_Type_free(&handle), MPI_ERR_TYPE);
  handle = MPI_DATATYPE_NULL;
  EXPECT_CLASS(MPI_Type_free(&handle), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_free(nullptr), MPI_ERR_ARG);
  handle = MPI_FLOAT_INT;
  EXPECT_CLASS(MPI_Type_free(&handle), MPI_ERR_TYPE);

  // Decoding.
  int ni, na, nd, combiner;
  MPI_Count cni, cna, cnd;
  EXPECT_CLASS(MPI_Type_get_envelope(stale, &ni, &na, &nd, &combiner),
               MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_get_envelope(uncommitted, nullptr, &na, &nd, &combiner),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_get_envelope_c(uncommitted, &cni, &cna, nullptr, &cnd,
                                       &combiner),
               MPI_ERR_ARG);
  int integers[4];
  MPI_Aint addresses[4];
  MPI_Count counts[4];
  MPI_Datatype types[4];
  EXPECT_CLASS(
      MPI_Type_get_contents(uncommitted, 0, 0, 1, integers, addresses, types),
      MPI_ERR_ARG);  // needs 1 integer
  EXPECT_CLASS(
      MPI_Type_get_contents(uncommitted, 1, 0, 0, integers, addresses, types),
      MPI_ERR_ARG);  // needs 1 datatype
  EXPECT_CLASS(
      MPI_Type_get_contents(uncommitted, 1, 0, 1, nullptr, addresses, types),
      MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_get_contents_c(Garbage(), 1, 0, 0, 1, integers,
                                       addresses, counts, types),
               MPI_ERR_TYPE);

  // Queries.
  int size;
  MPI_Count count_c;
  MPI_Aint lb, extent;
  EXPECT_CLASS(MPI_Type_size(MPI_DATATYPE_NULL, &size), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_size(MPI_INT, nullptr), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_size_c(stale, &count_c), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_size_x(MPI_INT, nullptr), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_get_extent(stale, &lb, &extent), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_get_extent(MPI_INT, &lb, nullptr), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_get_true_extent(Garbage(), &lb, &extent), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_get_true_extent_x(MPI_INT, nullptr, &count_c),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_get_true_extent_c(MPI_INT, &count_c, nullptr),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_get_extent_c(MPI_DATATYPE_NULL, &count_c, &count_c),
               MPI_ERR_TYPE);
  MPI_Status status{};
  EXPECT_CLASS(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &size), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Get_count(&status, stale, &size), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Get_elements(&status, MPI_DATATYPE_NULL, &size),
               MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Get_elements_x(&status, MPI_INT, nullptr), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Get_count_c(MPI_STATUS_IGNORE, MPI_INT, &count_c),
               MPI_ERR_ARG);
  char name[MPI_MAX_OBJECT_NAME];
  EXPECT_CLASS(MPI_Type_get_name(stale, name, &size), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_get_name(MPI_INT, nullptr, &size), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_get_name(MPI_INT, name, nullptr), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Type_set_name(MPI_DATATYPE_NULL, "x"), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Type_set_name(MPI_INT, nullptr), MPI_ERR_ARG);

  // Packing.
  int data[4] = {};
  char out[64];
  int position = 0;
  EXPECT_CLASS(MPI_Pack(data, 1, MPI_INT, out, 64, &position, MPI_COMM_NULL),
               MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Pack(data, -1, MPI_INT, out, 64, &position, MPI_COMM_WORLD),
               MPI_ERR_COUNT);
  EXPECT_CLASS(
      MPI_Pack(data, 1, uncommitted, out, 64, &position, MPI_COMM_WORLD),
      MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Pack(data, 1, stale, out, 64, &position, MPI_COMM_WORLD),
               MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Pack(data, 1, MPI_INT, out, 64, nullptr, MPI_COMM_WORLD),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Pack(data, 1, MPI_INT, out, -1, &position, MPI_COMM_WORLD),
               MPI_ERR_ARG);
  position = -3;
  EXPECT_CLASS(MPI_Pack(data, 1, MPI_INT, out, 64, &position, MPI_COMM_WORLD),
               MPI_ERR_ARG);
  position = 62;
  EXPECT_CLASS(MPI_Pack(data, 1, MPI_INT, out, 64, &position, MPI_COMM_WORLD),
               MPI_ERR_TRUNCATE);
  EXPECT_EQ(position, 62);
  position = 0;
  EXPECT_CLASS(
      MPI_Pack(nullptr, 1, MPI_INT, out, 64, &position, MPI_COMM_WORLD),
      MPI_ERR_BUFFER);
  EXPECT_CLASS(MPI_Unpack(out, 3, &position, data, 1, MPI_INT, MPI_COMM_WORLD),
               MPI_ERR_TRUNCATE);
  EXPECT_CLASS(
      MPI_Unpack(out, 64, &position, data, 1, uncommitted, MPI_COMM_WORLD),
      MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Unpack(out, -1, &position, data, 1, MPI_INT, MPI_COMM_WORLD),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Unpack(out, 64, &position, data, 1, MPI_INT, MPI_COMM_NULL),
               MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &size),
               MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Pack_size(1, stale, MPI_COMM_WORLD, &size), MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Pack_size(1, MPI_INT, MPI_COMM_NULL, &size), MPI_ERR_COMM);
  EXPECT_CLASS(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, nullptr), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Pack_size_c(-1, MPI_INT, MPI_COMM_WORLD, &count_c),
               MPI_ERR_COUNT);
  MPI_Aint external_position = 0, external_size = 0;
  EXPECT_CLASS(MPI_Pack_external("native", data, 1, MPI_INT, out, 64,
                                 &external_position),
               MPI_ERR_ARG);
  EXPECT_CLASS(
      MPI_Pack_external(nullptr, data, 1, MPI_INT, out, 64, &external_position),
      MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Pack_external("external32", data, 1, uncommitted, out, 64,
                                 &external_position),
               MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Pack_external("external32", data, 2, MPI_INT, out, 7,
                                 &external_position),
               MPI_ERR_TRUNCATE);
  EXPECT_CLASS(MPI_Unpack_external("external32", out, 3, &external_position,
                                   data, 1, MPI_INT),
               MPI_ERR_TRUNCATE);
  EXPECT_CLASS(MPI_Unpack_external("external64", out, 64, &external_position,
                                   data, 1, MPI_INT),
               MPI_ERR_ARG);
  EXPECT_CLASS(
      MPI_Unpack_external("external32", out, 64, nullptr, data, 1, MPI_INT),
      MPI_ERR_ARG);
  EXPECT_CLASS(
      MPI_Pack_external_size("external32", -1, MPI_INT, &external_size),
      MPI_ERR_COUNT);
  EXPECT_CLASS(MPI_Pack_external_size("internal", 1, MPI_INT, &external_size),
               MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Pack_external_size("external32", 1, stale, &external_size),
               MPI_ERR_TYPE);
  MPI_Count external_size_c = 0;
  EXPECT_EQ(
      MPI_Pack_external_size_c("external32", 3, MPI_LONG, &external_size_c),
      MPI_SUCCESS);
  EXPECT_EQ(external_size_c, 12);  // MPI_LONG is 4 bytes in external32

  // Communication with uncommitted, freed or garbage types.
  MPI_Request request;
  EXPECT_CLASS(MPI_Isend(data, 1, uncommitted, 0, 0, MPI_COMM_SELF, &request),
               MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Isend(data, 1, stale, 0, 0, MPI_COMM_SELF, &request),
               MPI_ERR_TYPE);
  EXPECT_CLASS(MPI_Irecv(data, 1, Garbage(), 0, 0, MPI_COMM_SELF, &request),
               MPI_ERR_TYPE);
  EXPECT_EQ(MPI_Type_free(&uncommitted), MPI_SUCCESS);
}

}  // namespace
}  // namespace minimpi
