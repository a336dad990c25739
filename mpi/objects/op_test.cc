// Reduction operations against a reference written the plain way in this
// file: every predefined operation on every predefined datatype, whether
// the standard allows the pair (Supports) and, where it does, the result of
// Apply element by element on random data. Then user operations, applied in
// the documented order, and the error classes of the C bindings.
#include "mpi/objects/op.h"

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/objects/datatype.h"
#include "mpi/mpi.h"

namespace minimpi {
namespace {

// The datatype groups of the standard's table "Predefined reduction
// operations", kept apart from mpi/objects/op.cc's on purpose, plus the character
// types that MPICH and Open MPI both treat as small integers.
enum class Group {
  kCInteger,
  kCharacter,
  kFortranInteger,
  kFloatingPoint,
  kLogical,
  kComplex,
  kByte,
  kMultiLanguage,
  kPair,
  kNone,  // no reduction but MPI_REPLACE / MPI_NO_OP applies
};

struct PredefinedOpCase {
  MPI_Op handle;
  const char* name;
};

const PredefinedOpCase kPredefinedOps[] = {
    {MPI_SUM, "MPI_SUM"},         {MPI_PROD, "MPI_PROD"},
    {MPI_MAX, "MPI_MAX"},         {MPI_MIN, "MPI_MIN"},
    {MPI_LAND, "MPI_LAND"},       {MPI_LOR, "MPI_LOR"},
    {MPI_LXOR, "MPI_LXOR"},       {MPI_BAND, "MPI_BAND"},
    {MPI_BOR, "MPI_BOR"},         {MPI_BXOR, "MPI_BXOR"},
    {MPI_MINLOC, "MPI_MINLOC"},   {MPI_MAXLOC, "MPI_MAXLOC"},
    {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"},
};

// The standard's table, widened where both MPICH and Open MPI accept more:
// integer operations on the character types, logical operations on the
// Fortran integers and MPI_AINT/MPI_OFFSET/MPI_COUNT.
bool StandardAllows(MPI_Op op, Group group) {
  using G = Group;
  auto in = [group](std::initializer_list<Group> groups) {
    return std::find(groups.begin(), groups.end(), group) != groups.end();
  };
  if (op == MPI_SUM || op == MPI_PROD) {
    return in({G::kCInteger, G::kCharacter, G::kFortranInteger,
               G::kFloatingPoint, G::kComplex, G::kMultiLanguage});
  }
  if (op == MPI_MAX || op == MPI_MIN) {
    return in({G::kCInteger, G::kCharacter, G::kFortranInteger,
               G::kFloatingPoint, G::kMultiLanguage});
  }
  if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) {
    return in({G::kCInteger, G::kCharacter, G::kLogical, G::kFortranInteger,
               G::kMultiLanguage});
  }
  if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) {
    return in({G::kCInteger, G::kCharacter, G::kFortranInteger, G::kByte,
               G::kMultiLanguage});
  }
  if (op == MPI_MINLOC || op == MPI_MAXLOC) return group == G::kPair;
  return op == MPI_REPLACE || op == MPI_NO_OP;  // any predefined type
}

template <typename Value, typename Index>
struct Pair {
  Value value;
  Index index;
};

template <typename T>
constexpr bool kIsInteger =
    std::is_integral_v<T> || std::is_same_v<T, __int128>;
template <typename T>
constexpr bool kIsComplex = false;
template <typename T>
constexpr bool kIsComplex<std::complex<T>> = true;
template <typename T>
constexpr bool kIsPair = false;
template <typename V, typename I>
constexpr bool kIsPair<Pair<V, I>> = true;

// The reference: one element, one branch per operation.
template <typename T>
T Reference(MPI_Op op, T in, T inout) {
  if (op == MPI_REPLACE) return in;
  if (op == MPI_NO_OP) return inout;
  if constexpr (kIsPair<T>) {
    const bool minimum = op == MPI_MINLOC;
    if (in.value == inout.value) {
      return {in.value, std::min(in.index, inout.index)};
    }
    const bool in_wins =
        minimum ? in.value < inout.value : in.value > inout.value;
    return in_wins ? in : inout;
  } else if constexpr (kIsComplex<T>) {
    using Wide = std::complex<long double>;
    const Wide a(in.real(), in.imag()), b(inout.real(), inout.imag());
    const Wide result = op == MPI_SUM ? a + b : a * b;
    return T(result.real(), result.imag());
  } else if constexpr (std::is_floating_point_v<T>) {
    const long double a = in, b = inout;
    if (op == MPI_SUM) return static_cast<T>(a + b);
    if (op == MPI_PROD) return static_cast<T>(a * b);
    if (op == MPI_MAX) return static_cast<T>(std::max(a, b));
    return static_cast<T>(std::min(a, b));  // MPI_MIN
  } else {
    // Integers wrap around modulo 2^bits, whatever their width.
    using Wide = unsigned __int128;
    const Wide a = static_cast<Wide>(in), b = static_cast<Wide>(inout);
    if (op == MPI_SUM) return static_cast<T>(a + b);
    if (op == MPI_PROD) return static_cast<T>(a * b);
    if (op == MPI_MAX) return in < inout ? inout : in;
    if (op == MPI_MIN) return inout < in ? inout : in;
    const bool p = in != 0, q = inout != 0;
    if (op == MPI_LAND) return static_cast<T>(p && q ? 1 : 0);
    if (op == MPI_LOR) return static_cast<T>(p || q ? 1 : 0);
    if (op == MPI_LXOR) return static_cast<T>(p != q ? 1 : 0);
    if (op == MPI_BAND) return static_cast<T>(in & inout);
    if (op == MPI_BOR) return static_cast<T>(in | inout);
    return static_cast<T>(in ^ inout);  // MPI_BXOR
  }
}

template <typename T>
bool Same(const T& a, const T& b) {
  if constexpr (kIsPair<T>) {
    return a.value == b.value && a.index == b.index;
  } else {
    return a == b;
  }
}

// Random items: negatives, zeros, ties and, for integers, full-width bit
// patterns that overflow. Floating values are multiples of 1/4 in
// [-64, 64], so sums and products are exact in every precision and the
// reference may compute in long double.
class RandomItems {
 public:
  explicit RandomItems(uint32_t seed) : engine_(seed) {}

  template <typename T>
  T Next() {
    if constexpr (kIsPair<T>) {
      // Few distinct values, so MINLOC/MAXLOC see many ties.
      using Value = decltype(T::value);
      using Index = decltype(T::index);
      return {static_cast<Value>(Uniform(-3, 3)),
              static_cast<Index>(Uniform(0, 20))};
    } else if constexpr (kIsComplex<T>) {
      using Part = typename T::value_type;
      return T(Next<Part>(), Next<Part>());
    } else if constexpr (std::is_floating_point_v<T>) {
      if (Uniform(0, 7) == 0) return T(0);
      return static_cast<T>(Uniform(-256, 256)) / T(4);
    } else if constexpr (std::is_same_v<T, bool>) {
      return Uniform(0, 1) == 1;
    } else {
      switch (Uniform(0, 3)) {
        case 0:
          return T(0);
        case 1: {
          // Full width: the bits of two 64-bit draws, truncated.
          using Wide = unsigned __int128;
          const Wide bits = (static_cast<Wide>(engine_()) << 64) | engine_();
          return static_cast<T>(bits);
        }
        default:
          return static_cast<T>(std::is_signed_v<T> ||
                                        std::is_same_v<T, __int128>
                                    ? Uniform(-100, 100)
                                    : Uniform(0, 100));
      }
    }
  }

 private:
  int64_t Uniform(int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(engine_);
  }

  std::mt19937_64 engine_;
};

struct TypeCase {
  const char* name;
  MPI_Datatype handle;
  Group group;
  void (*check_every_op)(const TypeCase& type);
  size_t item_size;  // sizeof the C++ type the test uses for one item
};

// gtest names a failing case by this instead of a byte dump.
void PrintTo(const TypeCase& type, std::ostream* os) { *os << type.name; }

// Every predefined operation on `type`, whose items are C++ values of T.
template <typename T>
void CheckEveryOp(const TypeCase& type) {
  RandomItems random(reinterpret_cast<uintptr_t>(type.handle));
  for (const PredefinedOpCase& op_case : kPredefinedOps) {
    SCOPED_TRACE(std::string(op_case.name) + " on " + type.name);
    const Op* op = LookupOp(op_case.handle);
    ASSERT_NE(op, nullptr);
    const bool allowed = StandardAllows(op_case.handle, type.group);
    EXPECT_EQ(op->Supports(type.handle), allowed);
    if (!allowed) continue;
    // 0, 1, odd, and more than any vector width (with a remainder).
    for (int count : {0, 1, 7, 1001}) {
      // Arrays, not std::vector: std::vector<bool> packs bits.
      auto in = std::make_unique<T[]>(count);
      auto inout = std::make_unique<T[]>(count);
      auto expected = std::make_unique<T[]>(count);
      auto in_before = std::make_unique<T[]>(count);
      for (int i = 0; i < count; ++i) {
        in[i] = random.Next<T>();
        // Every third item equal to its partner: ties for MAX, MINLOC...
        inout[i] = i % 3 == 0 ? in[i] : random.Next<T>();
        if constexpr (kIsPair<T>) {
          if (i % 3 == 0) inout[i].index = random.Next<T>().index;
        }
        expected[i] = Reference(op_case.handle, in[i], inout[i]);
      }
      std::copy(in.get(), in.get() + count, in_before.get());
      op->Apply(in.get(), inout.get(), count, type.handle);
      for (int i = 0; i < count; ++i) {
        ASSERT_TRUE(Same(inout[i], expected[i]))
            << "item " << i << " of " << count;
        ASSERT_TRUE(Same(in[i], in_before[i])) << "in changed at " << i;
      }
    }
  }
}

template <typename T>
TypeCase Case(const char* name, MPI_Datatype handle, Group group) {
  return {name, handle, group, &CheckEveryOp<T>, sizeof(T)};
}

std::vector<TypeCase> AllTypes() {
  using G = Group;
  using LongDouble = long double;
  return {
      Case<short>("MPI_SHORT", MPI_SHORT, G::kCInteger),
      Case<int>("MPI_INT", MPI_INT, G::kCInteger),
      Case<long>("MPI_LONG", MPI_LONG, G::kCInteger),
      // typebind: the handle MPI_LONG_LONG shares answers MPI_Type_get_name
      // with the standard's first name for it, as MPICH's does.
      Case<long long>("MPI_LONG_LONG_INT", MPI_LONG_LONG, G::kCInteger),
      Case<unsigned short>("MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT,
                           G::kCInteger),
      Case<unsigned>("MPI_UNSIGNED", MPI_UNSIGNED, G::kCInteger),
      Case<unsigned long>("MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, G::kCInteger),
      Case<unsigned long long>("MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG,
                               G::kCInteger),
      Case<signed char>("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, G::kCInteger),
      Case<unsigned char>("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, G::kCInteger),
      Case<int8_t>("MPI_INT8_T", MPI_INT8_T, G::kCInteger),
      Case<uint8_t>("MPI_UINT8_T", MPI_UINT8_T, G::kCInteger),
      Case<int16_t>("MPI_INT16_T", MPI_INT16_T, G::kCInteger),
      Case<uint16_t>("MPI_UINT16_T", MPI_UINT16_T, G::kCInteger),
      Case<int32_t>("MPI_INT32_T", MPI_INT32_T, G::kCInteger),
      Case<uint32_t>("MPI_UINT32_T", MPI_UINT32_T, G::kCInteger),
      Case<int64_t>("MPI_INT64_T", MPI_INT64_T, G::kCInteger),
      Case<uint64_t>("MPI_UINT64_T", MPI_UINT64_T, G::kCInteger),
      Case<int32_t>("MPI_INTEGER", MPI_INTEGER, G::kFortranInteger),
      Case<int8_t>("MPI_INTEGER1", MPI_INTEGER1, G::kFortranInteger),
      Case<int16_t>("MPI_INTEGER2", MPI_INTEGER2, G::kFortranInteger),
      Case<int32_t>("MPI_INTEGER4", MPI_INTEGER4, G::kFortranInteger),
      Case<int64_t>("MPI_INTEGER8", MPI_INTEGER8, G::kFortranInteger),
      Case<__int128>("MPI_INTEGER16", MPI_INTEGER16, G::kFortranInteger),
      Case<float>("MPI_FLOAT", MPI_FLOAT, G::kFloatingPoint),
      Case<double>("MPI_DOUBLE", MPI_DOUBLE, G::kFloatingPoint),
      Case<LongDouble>("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, G::kFloatingPoint),
      Case<float>("MPI_REAL", MPI_REAL, G::kFloatingPoint),
      Case<double>("MPI_DOUBLE_PRECISION", MPI_DOUBLE_PRECISION,
                   G::kFloatingPoint),
      Case<float>("MPI_REAL4", MPI_REAL4, G::kFloatingPoint),
      Case<double>("MPI_REAL8", MPI_REAL8, G::kFloatingPoint),
      Case<LongDouble>("MPI_REAL16", MPI_REAL16, G::kFloatingPoint),
      Case<int32_t>("MPI_LOGICAL", MPI_LOGICAL, G::kLogical),
      Case<int8_t>("MPI_LOGICAL1", MPI_LOGICAL1, G::kLogical),
      Case<int16_t>("MPI_LOGICAL2", MPI_LOGICAL2, G::kLogical),
      Case<int32_t>("MPI_LOGICAL4", MPI_LOGICAL4, G::kLogical),
      Case<int64_t>("MPI_LOGICAL8", MPI_LOGICAL8, G::kLogical),
      Case<__int128>("MPI_LOGICAL16", MPI_LOGICAL16, G::kLogical),
      Case<bool>("MPI_C_BOOL", MPI_C_BOOL, G::kLogical),
      Case<bool>("MPI_CXX_BOOL", MPI_CXX_BOOL, G::kLogical),
      // typebind: likewise MPI_C_COMPLEX for MPI_C_FLOAT_COMPLEX.
      Case<std::complex<float>>("MPI_C_COMPLEX", MPI_C_FLOAT_COMPLEX,
                                G::kComplex),
      Case<std::complex<float>>("MPI_CXX_FLOAT_COMPLEX", MPI_CXX_FLOAT_COMPLEX,
                                G::kComplex),
      Case<std::complex<double>>("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX,
                                 G::kComplex),
      Case<std::complex<double>>("MPI_CXX_DOUBLE_COMPLEX",
                                 MPI_CXX_DOUBLE_COMPLEX, G::kComplex),
      Case<std::complex<LongDouble>>("MPI_C_LONG_DOUBLE_COMPLEX",
                                     MPI_C_LONG_DOUBLE_COMPLEX, G::kComplex),
      Case<std::complex<LongDouble>>("MPI_CXX_LONG_DOUBLE_COMPLEX",
                                     MPI_CXX_LONG_DOUBLE_COMPLEX, G::kComplex),
      Case<std::complex<float>>("MPI_COMPLEX", MPI_COMPLEX, G::kComplex),
      Case<std::complex<double>>("MPI_DOUBLE_COMPLEX", MPI_DOUBLE_COMPLEX,
                                 G::kComplex),
      Case<std::complex<float>>("MPI_COMPLEX8", MPI_COMPLEX8, G::kComplex),
      Case<std::complex<double>>("MPI_COMPLEX16", MPI_COMPLEX16, G::kComplex),
      Case<std::complex<LongDouble>>("MPI_COMPLEX32", MPI_COMPLEX32,
                                     G::kComplex),
      Case<unsigned char>("MPI_BYTE", MPI_BYTE, G::kByte),
      Case<MPI_Aint>("MPI_AINT", MPI_AINT, G::kMultiLanguage),
      Case<MPI_Offset>("MPI_OFFSET", MPI_OFFSET, G::kMultiLanguage),
      Case<MPI_Count>("MPI_COUNT", MPI_COUNT, G::kMultiLanguage),
      Case<Pair<float, int>>("MPI_FLOAT_INT", MPI_FLOAT_INT, G::kPair),
      Case<Pair<double, int>>("MPI_DOUBLE_INT", MPI_DOUBLE_INT, G::kPair),
      Case<Pair<long, int>>("MPI_LONG_INT", MPI_LONG_INT, G::kPair),
      Case<Pair<int, int>>("MPI_2INT", MPI_2INT, G::kPair),
      Case<Pair<short, int>>("MPI_SHORT_INT", MPI_SHORT_INT, G::kPair),
      Case<Pair<LongDouble, int>>("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT,
                                  G::kPair),
      Case<Pair<float, float>>("MPI_2REAL", MPI_2REAL, G::kPair),
      Case<Pair<double, double>>("MPI_2DOUBLE_PRECISION", MPI_2DOUBLE_PRECISION,
                                 G::kPair),
      Case<Pair<int32_t, int32_t>>("MPI_2INTEGER", MPI_2INTEGER, G::kPair),
      Case<char>("MPI_CHAR", MPI_CHAR, G::kCharacter),
      Case<wchar_t>("MPI_WCHAR", MPI_WCHAR, G::kNone),
      Case<char>("MPI_PACKED", MPI_PACKED, G::kNone),
      Case<char>("MPI_CHARACTER", MPI_CHARACTER, G::kCharacter),
  };
}

class EveryPredefinedOpTest : public ::testing::TestWithParam<TypeCase> {};

TEST_P(EveryPredefinedOpTest, MatchesTheReference) {
  const TypeCase& type = GetParam();
  const Datatype* datatype = LookupDatatype(type.handle);
  ASSERT_NE(datatype, nullptr) << type.name;
  EXPECT_EQ(datatype->name(), type.name);
  // The test's C++ type lays items out as the datatype says (pair padding).
  EXPECT_EQ(static_cast<size_t>(datatype->extent()), type.item_size);
  type.check_every_op(type);
}

INSTANTIATE_TEST_SUITE_P(AllPredefinedTypes, EveryPredefinedOpTest,
                         ::testing::ValuesIn(AllTypes()),
                         [](const ::testing::TestParamInfo<TypeCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(OpTest, EveryPredefinedDatatypeIsCovered) {
  const std::vector<TypeCase> types = AllTypes();
  for (uintptr_t value = 0; value < 0x1000; ++value) {
    const auto handle = reinterpret_cast<MPI_Datatype>(value);
    const Datatype* datatype = LookupDatatype(handle);
    if (datatype == nullptr) continue;
    const bool covered =
        std::any_of(types.begin(), types.end(),
                    [handle](const TypeCase& t) { return t.handle == handle; });
    EXPECT_TRUE(covered) << datatype->name() << " has no case in this test";
  }
}

TEST(OpTest, SupportsSpotChecks) {
  EXPECT_FALSE(LookupOp(MPI_LAND)->Supports(MPI_DOUBLE));
  EXPECT_FALSE(LookupOp(MPI_BAND)->Supports(MPI_FLOAT));
  EXPECT_FALSE(LookupOp(MPI_MINLOC)->Supports(MPI_INT));
  EXPECT_FALSE(LookupOp(MPI_SUM)->Supports(MPI_DOUBLE_INT));
  EXPECT_TRUE(LookupOp(MPI_MIN)->Supports(MPI_CHAR));
  EXPECT_FALSE(LookupOp(MPI_SUM)->Supports(MPI_WCHAR));
  EXPECT_FALSE(LookupOp(MPI_MAX)->Supports(MPI_C_DOUBLE_COMPLEX));
  EXPECT_TRUE(LookupOp(MPI_LAND)->Supports(MPI_INTEGER));
  EXPECT_FALSE(LookupOp(MPI_LAND)->Supports(MPI_REAL));
  EXPECT_TRUE(LookupOp(MPI_SUM)->Supports(MPI_C_DOUBLE_COMPLEX));
  EXPECT_TRUE(LookupOp(MPI_LXOR)->Supports(MPI_C_BOOL));
  EXPECT_TRUE(LookupOp(MPI_BXOR)->Supports(MPI_BYTE));
  EXPECT_TRUE(LookupOp(MPI_MAXLOC)->Supports(MPI_2DOUBLE_PRECISION));
  // No operation is defined on a handle that names no datatype.
  for (const PredefinedOpCase& op_case : kPredefinedOps) {
    const Op* op = LookupOp(op_case.handle);
    EXPECT_FALSE(op->Supports(MPI_DATATYPE_NULL)) << op_case.name;
    EXPECT_FALSE(op->Supports(reinterpret_cast<MPI_Datatype>(0x2ff)));
    EXPECT_FALSE(op->Supports(reinterpret_cast<MPI_Datatype>(0x5)));
  }
}

// The kernels run blocks through pointers declared not to alias; one buffer
// passed as both operands must take the item-by-item path and still give
// x op x for every item (block and remainder).
TEST(OpTest, OneBufferAsBothOperands) {
  constexpr int kCount = 1001;
  std::vector<double> doubles(kCount);
  std::vector<int> ints(kCount);
  for (int i = 0; i < kCount; ++i) {
    doubles[i] = 0.5 * i - 7;
    ints[i] = (i * 7919) % 1000 - 500;
  }
  const std::vector<double> doubles_before = doubles;
  const std::vector<int> ints_before = ints;
  LookupOp(MPI_SUM)->Apply(doubles.data(), doubles.data(), kCount, MPI_DOUBLE);
  LookupOp(MPI_MAX)->Apply(ints.data(), ints.data(), kCount, MPI_INT);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(doubles[i], 2 * doubles_before[i]) << "item " << i;
    ASSERT_EQ(ints[i], ints_before[i]) << "item " << i;
  }
}

TEST(OpTest, LookupNamesThePredefinedOps) {
  for (const PredefinedOpCase& op_case : kPredefinedOps) {
    const Op* op = LookupOp(op_case.handle);
    ASSERT_NE(op, nullptr) << op_case.name;
    EXPECT_STREQ(op->name(), op_case.name);
    EXPECT_TRUE(op->predefined());
    const bool order_free =
        op_case.handle != MPI_REPLACE && op_case.handle != MPI_NO_OP;
    EXPECT_EQ(op->commutative(), order_free) << op_case.name;
  }
  EXPECT_EQ(LookupOp(MPI_OP_NULL), nullptr);
  for (uintptr_t garbage : {0x0, 0x7, 0x25, 0x3f, 0x40, 0x500, 0xfff}) {
    EXPECT_EQ(LookupOp(reinterpret_cast<MPI_Op>(garbage)), nullptr) << garbage;
  }
}

TEST(OpTest, MinLocAndMaxLocBreakTiesByTheSmallerIndex) {
  struct DoubleInt {
    double value;
    int index;
  };
  const DoubleInt in[] = {{2.0, 5}, {2.0, 1}, {1.0, 9}, {3.0, 9}};
  DoubleInt minimum[] = {{2.0, 3}, {2.0, 3}, {4.0, 0}, {-1.0, 0}};
  DoubleInt maximum[] = {{2.0, 3}, {2.0, 3}, {4.0, 0}, {-1.0, 0}};
  LookupOp(MPI_MINLOC)->Apply(in, minimum, 4, MPI_DOUBLE_INT);
  LookupOp(MPI_MAXLOC)->Apply(in, maximum, 4, MPI_DOUBLE_INT);
  const int min_index[] = {3, 1, 9, 0}, max_index[] = {3, 1, 0, 9};
  const double min_value[] = {2.0, 2.0, 1.0, -1.0};
  const double max_value[] = {2.0, 2.0, 4.0, 3.0};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(minimum[i].value, min_value[i]) << i;
    EXPECT_EQ(minimum[i].index, min_index[i]) << i;
    EXPECT_EQ(maximum[i].value, max_value[i]) << i;
    EXPECT_EQ(maximum[i].index, max_index[i]) << i;
  }
}

// A non-commutative user operation: each group of four ints is a 2x2
// matrix (row major) and inout = in x inout. It also records what MPI
// passed it.
int matrix_calls = 0;
MPI_Datatype matrix_type_seen = MPI_DATATYPE_NULL;

void MatrixProduct(void* invec, void* inoutvec, int* len,
                   MPI_Datatype* datatype) {
  ++matrix_calls;
  matrix_type_seen = *datatype;
  const int* a = static_cast<const int*>(invec);
  int* b = static_cast<int*>(inoutvec);
  for (int m = 0; m + 4 <= *len; m += 4, a += 4, b += 4) {
    const int product[4] = {
        a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    std::copy(product, product + 4, b);
  }
}

TEST(OpTest, UserOpAppliesInTimesInout) {
  Op* op = NewUserOp(&MatrixProduct, /*commutative=*/false);
  ASSERT_NE(op, nullptr);
  EXPECT_FALSE(op->commutative());
  EXPECT_FALSE(op->predefined());
  EXPECT_TRUE(op->Supports(MPI_INT));
  EXPECT_TRUE(op->Supports(MPI_DOUBLE_INT));  // user ops take any type

  // A = [[1 2] [3 4]], B = [[0 1] [1 0]]: A x B swaps A's columns, while
  // B x A would swap its rows.
  const int a[8] = {1, 2, 3, 4, 1, 2, 3, 4};
  int b[8] = {0, 1, 1, 0, 1, 0, 0, 1};  // B, then the identity
  matrix_calls = 0;
  op->Apply(a, b, 8, MPI_INT);
  EXPECT_EQ(matrix_calls, 1);
  EXPECT_EQ(matrix_type_seen, MPI_INT);
  const int expected[8] = {2, 1, 4, 3, 1, 2, 3, 4};
  EXPECT_TRUE(std::equal(b, b + 8, expected));
  op->Release();

  Op* commutative = NewUserOp(&MatrixProduct, /*commutative=*/true);
  EXPECT_TRUE(commutative->commutative());
  commutative->Release();
}

// The C bindings need MPI_Init (a singleton: no launcher).
class ReductionBindingsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    MPI_Init(nullptr, nullptr);
    // The calls name no communicator: errors go to MPI_COMM_SELF's handler.
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  }
  static void TearDownTestSuite() { MPI_Finalize(); }
};

TEST_F(ReductionBindingsTest, ReduceLocalComputes) {
  const int in[3] = {1, -5, 7};
  int inout[3] = {10, 20, -30};
  ASSERT_EQ(MPI_Reduce_local(in, inout, 3, MPI_INT, MPI_SUM), MPI_SUCCESS);
  EXPECT_EQ(inout[0], 11);
  EXPECT_EQ(inout[1], 15);
  EXPECT_EQ(inout[2], -23);
  ASSERT_EQ(MPI_Reduce_local(in, inout, 3, MPI_INT, MPI_MAX), MPI_SUCCESS);
  EXPECT_EQ(inout[2], 7);
  // Count 0 needs no buffers.
  EXPECT_EQ(MPI_Reduce_local(nullptr, nullptr, 0, MPI_INT, MPI_SUM),
            MPI_SUCCESS);
}

TEST_F(ReductionBindingsTest, UserOpThroughTheBindings) {
  MPI_Op op = MPI_OP_NULL;
  ASSERT_EQ(MPI_Op_create(&MatrixProduct, /*commute=*/0, &op), MPI_SUCCESS);
  int commute = -1;
  ASSERT_EQ(MPI_Op_commutative(op, &commute), MPI_SUCCESS);
  EXPECT_EQ(commute, 0);
  const int a[4] = {1, 2, 3, 4};
  int b[4] = {0, 1, 1, 0};
  ASSERT_EQ(MPI_Reduce_local(a, b, 4, MPI_INT, op), MPI_SUCCESS);
  const int a_times_b[4] = {2, 1, 4, 3};
  EXPECT_TRUE(std::equal(b, b + 4, a_times_b));
  ASSERT_EQ(MPI_Op_free(&op), MPI_SUCCESS);
  EXPECT_EQ(op, MPI_OP_NULL);

  ASSERT_EQ(MPI_Op_commutative(MPI_SUM, &commute), MPI_SUCCESS);
  EXPECT_EQ(commute, 1);
}

// Each call an MPI_Op_create function gets: where its vectors start and how
// many items it is handed. It reads no item, so the buffers need not be as
// big as the count says.
struct RecordedCall {
  uintptr_t in;
  uintptr_t inout;
  int length;
};
std::vector<RecordedCall> recorded_calls;
void RecordCall(void* in, void* inout, int* length, MPI_Datatype*) {
  recorded_calls.push_back({reinterpret_cast<uintptr_t>(in),
                            reinterpret_cast<uintptr_t>(inout), *length});
}

// An int length cannot say more than INT_MAX items: a count past it reaches
// the function in pieces, each starting a whole number of extents further
// on (a predefined type and a derived one whose extent is not its size).
// Before, the count was cast to int and the function got a negative length.
TEST_F(ReductionBindingsTest, IntFunctionGetsLargeCountsInPieces) {
  MPI_Op op = MPI_OP_NULL;
  ASSERT_EQ(MPI_Op_create(RecordCall, 1, &op), MPI_SUCCESS);
  MPI_Datatype spaced = MPI_DATATYPE_NULL;
  ASSERT_EQ(MPI_Type_create_resized(MPI_INT, 0, 16, &spaced), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&spaced), MPI_SUCCESS);
  const int64_t int_max = std::numeric_limits<int>::max();
  const MPI_Count count = 2 * int_max + 5;
  int in[4] = {0}, inout[4] = {0};
  const uintptr_t in_at = reinterpret_cast<uintptr_t>(in);
  const uintptr_t inout_at = reinterpret_cast<uintptr_t>(inout);
  for (auto [type, extent] :
       {std::pair{MPI_INT, int64_t{4}}, std::pair{spaced, int64_t{16}}}) {
    recorded_calls.clear();
    ASSERT_EQ(MPI_Reduce_local_c(in, inout, count, type, op), MPI_SUCCESS);
    ASSERT_EQ(recorded_calls.size(), 3u);
    const int64_t starts[3] = {0, int_max, 2 * int_max};
    const int lengths[3] = {INT_MAX, INT_MAX, 5};
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(recorded_calls[i].length, lengths[i]) << i;
      EXPECT_EQ(recorded_calls[i].in, in_at + starts[i] * extent) << i;
      EXPECT_EQ(recorded_calls[i].inout, inout_at + starts[i] * extent) << i;
    }
  }
  // A count that fits is one call, as before.
  recorded_calls.clear();
  ASSERT_EQ(MPI_Reduce_local_c(in, inout, 4, MPI_INT, op), MPI_SUCCESS);
  ASSERT_EQ(recorded_calls.size(), 1u);
  EXPECT_EQ(recorded_calls[0].length, 4);
  MPI_Type_free(&spaced);
  MPI_Op_free(&op);
}

// The class of an error code (codes also name the message).
int ClassOf(int code) {
  int error_class = -1;
  MPI_Error_class(code, &error_class);
  return error_class;
}

TEST_F(ReductionBindingsTest, ErrorClasses) {
  const double in[2] = {1, 2};
  double inout[2] = {3, 4};
  EXPECT_EQ(ClassOf(MPI_Reduce_local(in, inout, 2, MPI_DOUBLE, MPI_OP_NULL)),
            MPI_ERR_OP);
  EXPECT_EQ(ClassOf(MPI_Reduce_local(in, inout, 2, MPI_DOUBLE,
                                     reinterpret_cast<MPI_Op>(0x25))),
            MPI_ERR_OP);
  EXPECT_EQ(ClassOf(MPI_Reduce_local(in, inout, 2, MPI_DOUBLE, MPI_LAND)),
            MPI_ERR_OP);
  EXPECT_EQ(ClassOf(MPI_Reduce_local(in, inout, 2, MPI_DOUBLE, MPI_REPLACE)),
            MPI_ERR_OP);
  EXPECT_EQ(ClassOf(MPI_Reduce_local(in, inout, 2, MPI_DOUBLE, MPI_NO_OP)),
            MPI_ERR_OP);
  EXPECT_EQ(ClassOf(MPI_Reduce_local(in, inout, -1, MPI_DOUBLE, MPI_SUM)),
            MPI_ERR_COUNT);
  EXPECT_EQ(ClassOf(MPI_Reduce_local(nullptr, inout, 2, MPI_DOUBLE, MPI_SUM)),
            MPI_ERR_BUFFER);
  EXPECT_EQ(ClassOf(MPI_Reduce_local(in, nullptr, 2, MPI_DOUBLE, MPI_SUM)),
            MPI_ERR_BUFFER);
  EXPECT_EQ(
      ClassOf(MPI_Reduce_local(MPI_IN_PLACE, inout, 2, MPI_DOUBLE, MPI_SUM)),
      MPI_ERR_BUFFER);
  EXPECT_EQ(ClassOf(MPI_Reduce_local(in, MPI_IN_PLACE, 2, MPI_DOUBLE, MPI_SUM)),
            MPI_ERR_BUFFER);
  EXPECT_EQ(ClassOf(MPI_Reduce_local(in, inout, 2, MPI_DATATYPE_NULL, MPI_SUM)),
            MPI_ERR_TYPE);
  // Nothing was applied by the failing calls.
  EXPECT_EQ(inout[0], 3);
  EXPECT_EQ(inout[1], 4);

  MPI_Op op = MPI_OP_NULL;
  EXPECT_EQ(ClassOf(MPI_Op_create(nullptr, 1, &op)), MPI_ERR_ARG);
  MPI_Op predefined = MPI_SUM;
  EXPECT_EQ(ClassOf(MPI_Op_free(&predefined)), MPI_ERR_OP);
  EXPECT_EQ(predefined, MPI_SUM);
  MPI_Op null_op = MPI_OP_NULL;
  EXPECT_EQ(ClassOf(MPI_Op_free(&null_op)), MPI_ERR_OP);
  int commute = 0;
  EXPECT_EQ(ClassOf(MPI_Op_commutative(MPI_OP_NULL, &commute)), MPI_ERR_OP);
}

// Under the default handler the one line names the call and both the
// operation and the datatype.
TEST_F(ReductionBindingsTest, FatalMessageNamesOpAndType) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const double in[1] = {1};
  double inout[1] = {2};
  EXPECT_EXIT(
      {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        MPI_Reduce_local(in, inout, 1, MPI_DOUBLE, MPI_LAND);
      },
      ::testing::ExitedWithCode(MPI_ERR_OP),
      "MPI_Reduce_local\\(rank 0\\): MPI_LAND is not defined for MPI_DOUBLE");
}

}  // namespace
}  // namespace minimpi
