#include "mpi/datatype/predefined.h"

#include <wchar.h>

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace minimpi::datatype {
namespace {

using predefined_internal::kFirstHandle;
using predefined_internal::kHandleCount;

// The sizes a number has in external32: MPI-4.1 section 15.5.2, table
// "external32 sizes of predefined datatypes". Most equal the C size here;
// these are the ones that differ on x86-64 Linux or that are worth naming.
constexpr int kExternalLong = 4;         // MPI_LONG, MPI_UNSIGNED_LONG
constexpr int kExternalWchar = 2;        // MPI_WCHAR (a 16-bit Unicode unit)
constexpr int kExternalLongDouble = 16;  // IEEE binary128

template <typename T>
constexpr NumberMember Number(NumberKind kind,
                              int external32_size = sizeof(T)) {
  return NumberMember{0, static_cast<int32_t>(sizeof(T)), external32_size, 1,
                      kind};
}

template <typename T>
constexpr NumberMember ComplexNumber(NumberKind kind,
                                     int external32_size = sizeof(T)) {
  return NumberMember{0, static_cast<int32_t>(sizeof(T)), external32_size, 2,
                      kind};
}

// A type whose item is one C object of type T (a complex number counts as
// one object of two components).
template <typename T>
PredefinedType Single(const char* name, NumberMember member) {
  PredefinedType type;
  type.name = name;
  type.size = sizeof(T);
  type.extent = sizeof(T);
  type.alignment = alignof(T);
  type.external32_size = int64_t{member.external32_size} * member.components;
  type.is_pair = false;
  type.member_count = 1;
  type.members[0] = member;
  return type;
}

// A value-index pair: the C struct {Value value; Index index;}. Its data
// are the two members; the padding after them is part of the extent only.
template <typename Value, typename Index>
PredefinedType Pair(const char* name, NumberMember value, NumberMember index) {
  struct ValueIndex {
    Value value;
    Index index;
  };
  value.offset = offsetof(ValueIndex, value);
  index.offset = offsetof(ValueIndex, index);
  PredefinedType type;
  type.name = name;
  type.size = sizeof(Value) + sizeof(Index);
  type.extent = sizeof(ValueIndex);
  type.alignment = alignof(ValueIndex);
  type.external32_size = value.external32_size + index.external32_size;
  type.is_pair = true;
  type.member_count = 2;
  type.members = {value, index};
  return type;
}

struct Table {
  std::array<PredefinedType, kHandleCount> entries{};
  void Add(MPI_Datatype handle, PredefinedType type) {
    type.handle = handle;
    entries[reinterpret_cast<uintptr_t>(handle) - kFirstHandle] = type;
  }
};

Table BuildTable() {
  using K = NumberKind;
  constexpr K kRaw = K::kRawByte;
  constexpr K kSigned = K::kSignedInteger;
  constexpr K kUnsigned = K::kUnsignedInteger;
  constexpr K kFloat = K::kIeeeFloat;
  constexpr K kLongDouble = K::kX87LongDouble;
  using LongDouble = long double;
  using FloatComplex = std::complex<float>;
  using DoubleComplex = std::complex<double>;
  using LongDoubleComplex = std::complex<long double>;

  Table t;
  t.Add(MPI_AINT, Single<MPI_Aint>("MPI_AINT", Number<MPI_Aint>(kSigned, 8)));
  t.Add(MPI_COUNT,
        Single<MPI_Count>("MPI_COUNT", Number<MPI_Count>(kSigned, 8)));
  t.Add(MPI_OFFSET,
        Single<MPI_Offset>("MPI_OFFSET", Number<MPI_Offset>(kSigned, 8)));
  t.Add(MPI_PACKED, Single<char>("MPI_PACKED", Number<char>(kRaw)));
  t.Add(MPI_SHORT, Single<short>("MPI_SHORT", Number<short>(kSigned)));
  t.Add(MPI_INT, Single<int>("MPI_INT", Number<int>(kSigned)));
  t.Add(MPI_LONG,
        Single<long>("MPI_LONG", Number<long>(kSigned, kExternalLong)));
  t.Add(MPI_LONG_LONG,
        Single<long long>("MPI_LONG_LONG", Number<long long>(kSigned)));
  t.Add(MPI_UNSIGNED_SHORT,
        Single<unsigned short>("MPI_UNSIGNED_SHORT",
                               Number<unsigned short>(kUnsigned)));
  t.Add(MPI_UNSIGNED,
        Single<unsigned>("MPI_UNSIGNED", Number<unsigned>(kUnsigned)));
  t.Add(MPI_UNSIGNED_LONG,
        Single<unsigned long>("MPI_UNSIGNED_LONG",
                              Number<unsigned long>(kUnsigned, kExternalLong)));
  t.Add(MPI_UNSIGNED_LONG_LONG,
        Single<unsigned long long>("MPI_UNSIGNED_LONG_LONG",
                                   Number<unsigned long long>(kUnsigned)));
  t.Add(MPI_FLOAT, Single<float>("MPI_FLOAT", Number<float>(kFloat)));
  t.Add(MPI_C_FLOAT_COMPLEX,
        Single<FloatComplex>("MPI_C_FLOAT_COMPLEX",
                             ComplexNumber<float>(kFloat)));
  t.Add(MPI_CXX_FLOAT_COMPLEX,
        Single<FloatComplex>("MPI_CXX_FLOAT_COMPLEX",
                             ComplexNumber<float>(kFloat)));
  t.Add(MPI_DOUBLE, Single<double>("MPI_DOUBLE", Number<double>(kFloat)));
  t.Add(MPI_C_DOUBLE_COMPLEX,
        Single<DoubleComplex>("MPI_C_DOUBLE_COMPLEX",
                              ComplexNumber<double>(kFloat)));
  t.Add(MPI_CXX_DOUBLE_COMPLEX,
        Single<DoubleComplex>("MPI_CXX_DOUBLE_COMPLEX",
                              ComplexNumber<double>(kFloat)));
  t.Add(MPI_INTEGER, Single<int32_t>("MPI_INTEGER", Number<int32_t>(kSigned)));
  t.Add(MPI_LOGICAL,
        Single<int32_t>("MPI_LOGICAL", Number<int32_t>(K::kLogical)));
  t.Add(MPI_REAL, Single<float>("MPI_REAL", Number<float>(kFloat)));
  t.Add(MPI_COMPLEX,
        Single<FloatComplex>("MPI_COMPLEX", ComplexNumber<float>(kFloat)));
  t.Add(MPI_DOUBLE_PRECISION,
        Single<double>("MPI_DOUBLE_PRECISION", Number<double>(kFloat)));
  t.Add(MPI_DOUBLE_COMPLEX,
        Single<DoubleComplex>("MPI_DOUBLE_COMPLEX",
                              ComplexNumber<double>(kFloat)));
  t.Add(
      MPI_LONG_DOUBLE,
      Single<LongDouble>("MPI_LONG_DOUBLE",
                         Number<LongDouble>(kLongDouble, kExternalLongDouble)));
  t.Add(MPI_C_LONG_DOUBLE_COMPLEX,
        Single<LongDoubleComplex>(
            "MPI_C_LONG_DOUBLE_COMPLEX",
            ComplexNumber<LongDouble>(kLongDouble, kExternalLongDouble)));
  t.Add(MPI_CXX_LONG_DOUBLE_COMPLEX,
        Single<LongDoubleComplex>(
            "MPI_CXX_LONG_DOUBLE_COMPLEX",
            ComplexNumber<LongDouble>(kLongDouble, kExternalLongDouble)));

  t.Add(MPI_FLOAT_INT, Pair<float, int>("MPI_FLOAT_INT", Number<float>(kFloat),
                                        Number<int>(kSigned)));
  t.Add(MPI_DOUBLE_INT,
        Pair<double, int>("MPI_DOUBLE_INT", Number<double>(kFloat),
                          Number<int>(kSigned)));
  t.Add(MPI_LONG_INT,
        Pair<long, int>("MPI_LONG_INT", Number<long>(kSigned, kExternalLong),
                        Number<int>(kSigned)));
  t.Add(MPI_2INT,
        Pair<int, int>("MPI_2INT", Number<int>(kSigned), Number<int>(kSigned)));
  t.Add(MPI_SHORT_INT, Pair<short, int>("MPI_SHORT_INT", Number<short>(kSigned),
                                        Number<int>(kSigned)));
  t.Add(MPI_LONG_DOUBLE_INT,
        Pair<LongDouble, int>(
            "MPI_LONG_DOUBLE_INT",
            Number<LongDouble>(kLongDouble, kExternalLongDouble),
            Number<int>(kSigned)));
  t.Add(MPI_2REAL, Pair<float, float>("MPI_2REAL", Number<float>(kFloat),
                                      Number<float>(kFloat)));
  t.Add(MPI_2DOUBLE_PRECISION,
        Pair<double, double>("MPI_2DOUBLE_PRECISION", Number<double>(kFloat),
                             Number<double>(kFloat)));
  t.Add(MPI_2INTEGER,
        Pair<int32_t, int32_t>("MPI_2INTEGER", Number<int32_t>(kSigned),
                               Number<int32_t>(kSigned)));

  t.Add(MPI_C_BOOL, Single<bool>("MPI_C_BOOL", Number<bool>(K::kBool)));
  t.Add(MPI_CXX_BOOL, Single<bool>("MPI_CXX_BOOL", Number<bool>(K::kBool)));
  t.Add(MPI_WCHAR, Single<wchar_t>("MPI_WCHAR",
                                   Number<wchar_t>(kUnsigned, kExternalWchar)));
  t.Add(MPI_INT8_T, Single<int8_t>("MPI_INT8_T", Number<int8_t>(kSigned)));
  t.Add(MPI_UINT8_T,
        Single<uint8_t>("MPI_UINT8_T", Number<uint8_t>(kUnsigned)));
  t.Add(MPI_CHAR, Single<char>("MPI_CHAR", Number<char>(kRaw)));
  t.Add(MPI_SIGNED_CHAR,
        Single<signed char>("MPI_SIGNED_CHAR", Number<signed char>(kSigned)));
  t.Add(MPI_UNSIGNED_CHAR,
        Single<unsigned char>("MPI_UNSIGNED_CHAR",
                              Number<unsigned char>(kUnsigned)));
  t.Add(MPI_BYTE,
        Single<unsigned char>("MPI_BYTE", Number<unsigned char>(kRaw)));
  t.Add(MPI_INT16_T, Single<int16_t>("MPI_INT16_T", Number<int16_t>(kSigned)));
  t.Add(MPI_UINT16_T,
        Single<uint16_t>("MPI_UINT16_T", Number<uint16_t>(kUnsigned)));
  t.Add(MPI_INT32_T, Single<int32_t>("MPI_INT32_T", Number<int32_t>(kSigned)));
  t.Add(MPI_UINT32_T,
        Single<uint32_t>("MPI_UINT32_T", Number<uint32_t>(kUnsigned)));
  t.Add(MPI_INT64_T, Single<int64_t>("MPI_INT64_T", Number<int64_t>(kSigned)));
  t.Add(MPI_UINT64_T,
        Single<uint64_t>("MPI_UINT64_T", Number<uint64_t>(kUnsigned)));

  // Fortran types by size, as C programs see them.
  t.Add(MPI_INTEGER1, Single<int8_t>("MPI_INTEGER1", Number<int8_t>(kSigned)));
  t.Add(MPI_CHARACTER, Single<char>("MPI_CHARACTER", Number<char>(kRaw)));
  // LOGICAL*n: n bytes, zero false and anything else true, as MPI_LOGICAL.
  t.Add(MPI_LOGICAL1,
        Single<int8_t>("MPI_LOGICAL1", Number<int8_t>(K::kLogical)));
  t.Add(MPI_LOGICAL2,
        Single<int16_t>("MPI_LOGICAL2", Number<int16_t>(K::kLogical)));
  t.Add(MPI_LOGICAL4,
        Single<int32_t>("MPI_LOGICAL4", Number<int32_t>(K::kLogical)));
  t.Add(MPI_LOGICAL8,
        Single<int64_t>("MPI_LOGICAL8", Number<int64_t>(K::kLogical)));
  t.Add(MPI_LOGICAL16,
        Single<__int128>("MPI_LOGICAL16", Number<__int128>(K::kLogical)));
  t.Add(MPI_INTEGER2,
        Single<int16_t>("MPI_INTEGER2", Number<int16_t>(kSigned)));
  t.Add(MPI_INTEGER4,
        Single<int32_t>("MPI_INTEGER4", Number<int32_t>(kSigned)));
  t.Add(MPI_REAL4, Single<float>("MPI_REAL4", Number<float>(kFloat)));
  t.Add(MPI_INTEGER8,
        Single<int64_t>("MPI_INTEGER8", Number<int64_t>(kSigned)));
  t.Add(MPI_REAL8, Single<double>("MPI_REAL8", Number<double>(kFloat)));
  t.Add(MPI_COMPLEX8,
        Single<FloatComplex>("MPI_COMPLEX8", ComplexNumber<float>(kFloat)));
  t.Add(MPI_INTEGER16,
        Single<__int128>("MPI_INTEGER16", Number<__int128>(kSigned)));
  // REAL*16 is the x87 long double here, as in mpi/datatype.cc.
  t.Add(MPI_REAL16, Single<LongDouble>(
                        "MPI_REAL16",
                        Number<LongDouble>(kLongDouble, kExternalLongDouble)));
  t.Add(MPI_COMPLEX16,
        Single<DoubleComplex>("MPI_COMPLEX16", ComplexNumber<double>(kFloat)));
  t.Add(MPI_COMPLEX32,
        Single<LongDoubleComplex>(
            "MPI_COMPLEX32",
            ComplexNumber<LongDouble>(kLongDouble, kExternalLongDouble)));
  return t;
}

}  // namespace

namespace predefined_internal {
const std::array<PredefinedType, kHandleCount> kTable = BuildTable().entries;
}  // namespace predefined_internal

std::vector<const PredefinedType*> AllPredefined() {
  std::vector<const PredefinedType*> all;
  for (const PredefinedType& type : predefined_internal::kTable) {
    if (type.name != nullptr) all.push_back(&type);
  }
  return all;
}

}  // namespace minimpi::datatype
