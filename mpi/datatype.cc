#include "mpi/datatype.h"

#include <complex.h>
#include <wchar.h>

#include <array>
#include <complex>
#include <cstdint>

namespace minimpi {
namespace {

using datatype_internal::kFirstHandle;
using datatype_internal::kHandleCount;

template <typename T>
constexpr Datatype Basic(const char* name) {
  return Datatype{name, static_cast<int>(sizeof(T)),
                  static_cast<MPI_Aint>(sizeof(T)), 1, 0};
}

template <typename Value, typename Index>
constexpr Datatype Pair(const char* name) {
  struct Layout {
    Value value;
    Index index;
  };
  return Datatype{name, static_cast<int>(sizeof(Value) + sizeof(Index)),
                  static_cast<MPI_Aint>(sizeof(Layout)), 2,
                  static_cast<int>(sizeof(Value))};
}

struct Table {
  std::array<Datatype, kHandleCount> entries{};
  void Add(MPI_Datatype handle, Datatype type) {
    entries[reinterpret_cast<uintptr_t>(handle) - kFirstHandle] = type;
  }
};

Table BuildTable() {
  Table t;
  t.Add(MPI_AINT, Basic<MPI_Aint>("MPI_AINT"));
  t.Add(MPI_COUNT, Basic<MPI_Count>("MPI_COUNT"));
  t.Add(MPI_OFFSET, Basic<MPI_Offset>("MPI_OFFSET"));
  t.Add(MPI_PACKED, Basic<char>("MPI_PACKED"));
  t.Add(MPI_SHORT, Basic<short>("MPI_SHORT"));
  t.Add(MPI_INT, Basic<int>("MPI_INT"));
  t.Add(MPI_LONG, Basic<long>("MPI_LONG"));
  t.Add(MPI_LONG_LONG, Basic<long long>("MPI_LONG_LONG"));
  t.Add(MPI_UNSIGNED_SHORT, Basic<unsigned short>("MPI_UNSIGNED_SHORT"));
  t.Add(MPI_UNSIGNED, Basic<unsigned>("MPI_UNSIGNED"));
  t.Add(MPI_UNSIGNED_LONG, Basic<unsigned long>("MPI_UNSIGNED_LONG"));
  t.Add(MPI_UNSIGNED_LONG_LONG,
        Basic<unsigned long long>("MPI_UNSIGNED_LONG_LONG"));
  t.Add(MPI_FLOAT, Basic<float>("MPI_FLOAT"));
  t.Add(MPI_C_FLOAT_COMPLEX, Basic<std::complex<float>>("MPI_C_FLOAT_COMPLEX"));
  t.Add(MPI_CXX_FLOAT_COMPLEX,
        Basic<std::complex<float>>("MPI_CXX_FLOAT_COMPLEX"));
  t.Add(MPI_DOUBLE, Basic<double>("MPI_DOUBLE"));
  t.Add(MPI_C_DOUBLE_COMPLEX,
        Basic<std::complex<double>>("MPI_C_DOUBLE_COMPLEX"));
  t.Add(MPI_CXX_DOUBLE_COMPLEX,
        Basic<std::complex<double>>("MPI_CXX_DOUBLE_COMPLEX"));
  t.Add(MPI_INTEGER, Basic<int32_t>("MPI_INTEGER"));
  t.Add(MPI_LOGICAL, Basic<int32_t>("MPI_LOGICAL"));
  t.Add(MPI_REAL, Basic<float>("MPI_REAL"));
  t.Add(MPI_COMPLEX, Basic<std::complex<float>>("MPI_COMPLEX"));
  t.Add(MPI_DOUBLE_PRECISION, Basic<double>("MPI_DOUBLE_PRECISION"));
  t.Add(MPI_DOUBLE_COMPLEX, Basic<std::complex<double>>("MPI_DOUBLE_COMPLEX"));
  t.Add(MPI_LONG_DOUBLE, Basic<long double>("MPI_LONG_DOUBLE"));
  t.Add(MPI_C_LONG_DOUBLE_COMPLEX,
        Basic<std::complex<long double>>("MPI_C_LONG_DOUBLE_COMPLEX"));
  t.Add(MPI_CXX_LONG_DOUBLE_COMPLEX,
        Basic<std::complex<long double>>("MPI_CXX_LONG_DOUBLE_COMPLEX"));
  t.Add(MPI_FLOAT_INT, Pair<float, int>("MPI_FLOAT_INT"));
  t.Add(MPI_DOUBLE_INT, Pair<double, int>("MPI_DOUBLE_INT"));
  t.Add(MPI_LONG_INT, Pair<long, int>("MPI_LONG_INT"));
  t.Add(MPI_2INT, Pair<int, int>("MPI_2INT"));
  t.Add(MPI_SHORT_INT, Pair<short, int>("MPI_SHORT_INT"));
  t.Add(MPI_LONG_DOUBLE_INT, Pair<long double, int>("MPI_LONG_DOUBLE_INT"));
  t.Add(MPI_2REAL, Pair<float, float>("MPI_2REAL"));
  t.Add(MPI_2DOUBLE_PRECISION, Pair<double, double>("MPI_2DOUBLE_PRECISION"));
  t.Add(MPI_2INTEGER, Pair<int32_t, int32_t>("MPI_2INTEGER"));
  t.Add(MPI_C_BOOL, Basic<bool>("MPI_C_BOOL"));
  t.Add(MPI_CXX_BOOL, Basic<bool>("MPI_CXX_BOOL"));
  t.Add(MPI_WCHAR, Basic<wchar_t>("MPI_WCHAR"));
  t.Add(MPI_INT8_T, Basic<int8_t>("MPI_INT8_T"));
  t.Add(MPI_UINT8_T, Basic<uint8_t>("MPI_UINT8_T"));
  t.Add(MPI_CHAR, Basic<char>("MPI_CHAR"));
  t.Add(MPI_SIGNED_CHAR, Basic<signed char>("MPI_SIGNED_CHAR"));
  t.Add(MPI_UNSIGNED_CHAR, Basic<unsigned char>("MPI_UNSIGNED_CHAR"));
  t.Add(MPI_BYTE, Basic<unsigned char>("MPI_BYTE"));
  t.Add(MPI_INT16_T, Basic<int16_t>("MPI_INT16_T"));
  t.Add(MPI_UINT16_T, Basic<uint16_t>("MPI_UINT16_T"));
  t.Add(MPI_INT32_T, Basic<int32_t>("MPI_INT32_T"));
  t.Add(MPI_UINT32_T, Basic<uint32_t>("MPI_UINT32_T"));
  t.Add(MPI_INT64_T, Basic<int64_t>("MPI_INT64_T"));
  t.Add(MPI_UINT64_T, Basic<uint64_t>("MPI_UINT64_T"));
  t.Add(MPI_INTEGER1, Basic<int8_t>("MPI_INTEGER1"));
  t.Add(MPI_CHARACTER, Basic<char>("MPI_CHARACTER"));
  t.Add(MPI_INTEGER2, Basic<int16_t>("MPI_INTEGER2"));
  t.Add(MPI_INTEGER4, Basic<int32_t>("MPI_INTEGER4"));
  t.Add(MPI_REAL4, Basic<float>("MPI_REAL4"));
  t.Add(MPI_INTEGER8, Basic<int64_t>("MPI_INTEGER8"));
  t.Add(MPI_REAL8, Basic<double>("MPI_REAL8"));
  t.Add(MPI_COMPLEX8, Basic<std::complex<float>>("MPI_COMPLEX8"));
  t.Add(MPI_INTEGER16, Basic<__int128>("MPI_INTEGER16"));
  t.Add(MPI_REAL16, Basic<long double>("MPI_REAL16"));
  t.Add(MPI_COMPLEX16, Basic<std::complex<double>>("MPI_COMPLEX16"));
  t.Add(MPI_COMPLEX32, Basic<std::complex<long double>>("MPI_COMPLEX32"));
  return t;
}

}  // namespace

namespace datatype_internal {
// Filled when the library loads: nothing can look a type up before MPI_Init.
const std::array<Datatype, kHandleCount> kPredefined = BuildTable().entries;
}  // namespace datatype_internal

}  // namespace minimpi
