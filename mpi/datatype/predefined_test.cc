#include "mpi/datatype/predefined.h"

#include <wchar.h>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "mpi/mpi.h"

namespace minimpi::datatype {
namespace {

TEST(PredefinedTest, EveryHandleInTheRangeIsFoundByItsOwnValue) {
  const auto all = AllPredefined();
  // mpi/mpi.h names 68 distinct predefined datatypes (aliases, and the
  // optional types defined as MPI_DATATYPE_NULL, excluded).
  EXPECT_EQ(all.size(), 68u);
  std::set<std::string> names;
  for (const PredefinedType* type : all) {
    EXPECT_EQ(FindPredefined(type->handle), type) << type->name;
    EXPECT_TRUE(names.insert(type->name).second) << type->name;
    EXPECT_GT(type->size, 0) << type->name;
    EXPECT_GE(type->extent, type->size) << type->name;
    EXPECT_EQ(type->extent % type->alignment, 0) << type->name;
    EXPECT_EQ(type->basic_elements(), type->is_pair ? 2 : 1) << type->name;
    // The members' bytes add up to the size, and the external32 size is
    // the sum of the members' external sizes.
    int64_t size = 0;
    int64_t external = 0;
    for (int m = 0; m < type->member_count; ++m) {
      size +=
          int64_t{type->members[m].native_size} * type->members[m].components;
      external += int64_t{type->members[m].external32_size} *
                  type->members[m].components;
    }
    EXPECT_EQ(size, type->size) << type->name;
    EXPECT_EQ(external, type->external32_size) << type->name;
  }
}

TEST(PredefinedTest, AnythingElseIsNotPredefined) {
  EXPECT_EQ(FindPredefined(MPI_DATATYPE_NULL), nullptr);
  EXPECT_EQ(FindPredefined(nullptr), nullptr);
  EXPECT_EQ(FindPredefined(reinterpret_cast<MPI_Datatype>(0x1ff)), nullptr);
  EXPECT_EQ(FindPredefined(reinterpret_cast<MPI_Datatype>(0x300)), nullptr);
  EXPECT_EQ(FindPredefined(reinterpret_cast<MPI_Datatype>(0x204)), nullptr);
  int object = 0;  // a derived type's handle is an object's address
  EXPECT_EQ(FindPredefined(reinterpret_cast<MPI_Datatype>(&object)), nullptr);
}

TEST(PredefinedTest, NamesAreSpelledAsTheStandardSpellsThem) {
  EXPECT_STREQ(FindPredefined(MPI_INT)->name, "MPI_INT");
  EXPECT_STREQ(FindPredefined(MPI_DOUBLE_INT)->name, "MPI_DOUBLE_INT");
  EXPECT_STREQ(FindPredefined(MPI_LONG_LONG_INT)->name, "MPI_LONG_LONG");
  EXPECT_STREQ(FindPredefined(MPI_C_COMPLEX)->name, "MPI_C_FLOAT_COMPLEX");
  EXPECT_STREQ(FindPredefined(MPI_2DOUBLE_PRECISION)->name,
               "MPI_2DOUBLE_PRECISION");
}

// Sizes, extents and alignments are those of the C types.
TEST(PredefinedTest, BasicTypesMatchTheirCTypes) {
  struct Expected {
    MPI_Datatype handle;
    size_t size;
    size_t alignment;
  };
  const Expected expected[] = {
      {MPI_CHAR, sizeof(char), alignof(char)},
      {MPI_SHORT, sizeof(short), alignof(short)},
      {MPI_INT, sizeof(int), alignof(int)},
      {MPI_LONG, sizeof(long), alignof(long)},
      {MPI_LONG_LONG, sizeof(long long), alignof(long long)},
      {MPI_UNSIGNED_LONG, sizeof(unsigned long), alignof(unsigned long)},
      {MPI_FLOAT, sizeof(float), alignof(float)},
      {MPI_DOUBLE, sizeof(double), alignof(double)},
      {MPI_LONG_DOUBLE, sizeof(long double), alignof(long double)},
      {MPI_C_BOOL, sizeof(bool), alignof(bool)},
      {MPI_WCHAR, sizeof(wchar_t), alignof(wchar_t)},
      {MPI_AINT, sizeof(MPI_Aint), alignof(MPI_Aint)},
      {MPI_C_DOUBLE_COMPLEX, sizeof(std::complex<double>),
       alignof(std::complex<double>)},
      {MPI_C_LONG_DOUBLE_COMPLEX, sizeof(std::complex<long double>),
       alignof(std::complex<long double>)},
      {MPI_INTEGER16, sizeof(__int128), alignof(__int128)},
      {MPI_INTEGER, 4, 4},
      {MPI_DOUBLE_PRECISION, 8, 8},
  };
  for (const Expected& e : expected) {
    const PredefinedType& type = *FindPredefined(e.handle);
    EXPECT_EQ(type.size, static_cast<int64_t>(e.size)) << type.name;
    EXPECT_EQ(type.extent, static_cast<int64_t>(e.size)) << type.name;
    EXPECT_EQ(type.alignment, static_cast<int64_t>(e.alignment)) << type.name;
    EXPECT_FALSE(type.is_pair) << type.name;
  }
}

// A pair is the C struct {value; index;}: its size is the members', its
// extent the struct's, and the index sits where the struct puts it.
TEST(PredefinedTest, PairTypesAreTheirCStructs) {
  struct ShortInt {
    short value;
    int index;
  };
  struct LongDoubleInt {
    long double value;
    int index;
  };
  const PredefinedType& short_int = *FindPredefined(MPI_SHORT_INT);
  EXPECT_TRUE(short_int.is_pair);
  EXPECT_EQ(short_int.size, 6);
  EXPECT_EQ(short_int.extent, static_cast<int64_t>(sizeof(ShortInt)));
  EXPECT_EQ(short_int.members[0].offset, 0);
  EXPECT_EQ(short_int.members[1].offset, offsetof(ShortInt, index));
  EXPECT_EQ(short_int.members[1].native_size, 4);

  const PredefinedType& long_double_int = *FindPredefined(MPI_LONG_DOUBLE_INT);
  EXPECT_EQ(long_double_int.size, 20);
  EXPECT_EQ(long_double_int.extent,
            static_cast<int64_t>(sizeof(LongDoubleInt)));
  EXPECT_EQ(long_double_int.alignment,
            static_cast<int64_t>(alignof(LongDoubleInt)));
  EXPECT_EQ(long_double_int.members[1].offset, offsetof(LongDoubleInt, index));

  for (MPI_Datatype pair :
       {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
        MPI_LONG_DOUBLE_INT, MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER}) {
    EXPECT_TRUE(FindPredefined(pair)->is_pair) << FindPredefined(pair)->name;
  }
  EXPECT_EQ(FindPredefined(MPI_DOUBLE_INT)->extent, 16);
  EXPECT_EQ(FindPredefined(MPI_DOUBLE_INT)->size, 12);
}

// MPI-4.1 section 15.5.2, the table of external32 sizes (pairs: the sum of
// their members').
TEST(PredefinedTest, External32SizesFollowTheStandardsTable) {
  struct Expected {
    MPI_Datatype handle;
    int64_t size;
  };
  const Expected expected[] = {
      {MPI_PACKED, 1},
      {MPI_BYTE, 1},
      {MPI_CHAR, 1},
      {MPI_UNSIGNED_CHAR, 1},
      {MPI_SIGNED_CHAR, 1},
      {MPI_WCHAR, 2},
      {MPI_SHORT, 2},
      {MPI_UNSIGNED_SHORT, 2},
      {MPI_INT, 4},
      {MPI_UNSIGNED, 4},
      {MPI_LONG, 4},
      {MPI_UNSIGNED_LONG, 4},
      {MPI_LONG_LONG, 8},
      {MPI_UNSIGNED_LONG_LONG, 8},
      {MPI_FLOAT, 4},
      {MPI_DOUBLE, 8},
      {MPI_LONG_DOUBLE, 16},
      {MPI_C_BOOL, 1},
      {MPI_INT8_T, 1},
      {MPI_INT16_T, 2},
      {MPI_INT32_T, 4},
      {MPI_INT64_T, 8},
      {MPI_UINT8_T, 1},
      {MPI_UINT16_T, 2},
      {MPI_UINT32_T, 4},
      {MPI_UINT64_T, 8},
      {MPI_AINT, 8},
      {MPI_COUNT, 8},
      {MPI_OFFSET, 8},
      {MPI_C_FLOAT_COMPLEX, 2 * 4},
      {MPI_C_DOUBLE_COMPLEX, 2 * 8},
      {MPI_C_LONG_DOUBLE_COMPLEX, 2 * 16},
      {MPI_CXX_BOOL, 1},
      {MPI_CXX_FLOAT_COMPLEX, 2 * 4},
      {MPI_CXX_DOUBLE_COMPLEX, 2 * 8},
      {MPI_CXX_LONG_DOUBLE_COMPLEX, 2 * 16},
      {MPI_CHARACTER, 1},
      {MPI_LOGICAL, 4},
      {MPI_INTEGER, 4},
      {MPI_REAL, 4},
      {MPI_DOUBLE_PRECISION, 8},
      {MPI_COMPLEX, 2 * 4},
      {MPI_DOUBLE_COMPLEX, 2 * 8},
      {MPI_INTEGER1, 1},
      {MPI_INTEGER2, 2},
      {MPI_INTEGER4, 4},
      {MPI_INTEGER8, 8},
      {MPI_INTEGER16, 16},
      {MPI_LOGICAL1, 1},
      {MPI_LOGICAL2, 2},
      {MPI_LOGICAL4, 4},
      {MPI_LOGICAL8, 8},
      {MPI_LOGICAL16, 16},
      {MPI_REAL4, 4},
      {MPI_REAL8, 8},
      {MPI_REAL16, 16},
      {MPI_COMPLEX8, 2 * 4},
      {MPI_COMPLEX16, 2 * 8},
      {MPI_COMPLEX32, 2 * 16},
      {MPI_FLOAT_INT, 4 + 4},
      {MPI_DOUBLE_INT, 8 + 4},
      {MPI_LONG_INT, 4 + 4},
      {MPI_2INT, 4 + 4},
      {MPI_SHORT_INT, 2 + 4},
      {MPI_LONG_DOUBLE_INT, 16 + 4},
      {MPI_2REAL, 4 + 4},
      {MPI_2DOUBLE_PRECISION, 8 + 8},
      {MPI_2INTEGER, 4 + 4},
  };
  for (const Expected& e : expected) {
    EXPECT_EQ(FindPredefined(e.handle)->external32_size, e.size)
        << FindPredefined(e.handle)->name;
  }
}

TEST(PredefinedTest, NumberKindsDriveTheConversions) {
  EXPECT_EQ(FindPredefined(MPI_LONG)->kind(), NumberKind::kSignedInteger);
  EXPECT_EQ(FindPredefined(MPI_UNSIGNED_LONG)->kind(),
            NumberKind::kUnsignedInteger);
  EXPECT_EQ(FindPredefined(MPI_DOUBLE)->kind(), NumberKind::kIeeeFloat);
  EXPECT_EQ(FindPredefined(MPI_LONG_DOUBLE)->kind(),
            NumberKind::kX87LongDouble);
  EXPECT_EQ(FindPredefined(MPI_C_BOOL)->kind(), NumberKind::kBool);
  EXPECT_EQ(FindPredefined(MPI_LOGICAL)->kind(), NumberKind::kLogical);
  EXPECT_EQ(FindPredefined(MPI_BYTE)->kind(), NumberKind::kRawByte);
  EXPECT_EQ(FindPredefined(MPI_C_DOUBLE_COMPLEX)->members[0].components, 2);
  EXPECT_EQ(FindPredefined(MPI_LONG_INT)->members[1].kind,
            NumberKind::kSignedInteger);
}

}  // namespace
}  // namespace minimpi::datatype
