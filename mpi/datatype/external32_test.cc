#include "mpi/datatype/external32.h"

#include <wchar.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "mpi/datatype/layout.h"
#include "mpi/datatype/predefined.h"
#include "mpi/datatype/typemap_reference.h"
#include "mpi/mpi.h"

namespace minimpi::datatype {
namespace {

using Bytes = std::vector<unsigned char>;

// The external32 bytes of `count` items of a predefined type.
template <typename T>
Bytes Packed(MPI_Datatype type, const T* values, int64_t count = 1) {
  const Layout* layout = PredefinedLayout(type);
  Bytes out(External32Size(layout, count));
  int64_t position = 0;
  EXPECT_TRUE(
      PackExternal32(values, count, layout, out.data(), out.size(), &position)
          .ok());
  EXPECT_EQ(position, static_cast<int64_t>(out.size()));
  return out;
}

template <typename T>
T Unpacked(MPI_Datatype type, const Bytes& external) {
  // Starts as a pattern, so bytes the unpack skips would show.
  alignas(T) unsigned char storage[sizeof(T)];
  std::memset(storage, 0x5a, sizeof(T));
  int64_t position = 0;
  EXPECT_TRUE(UnpackExternal32(external.data(), external.size(), &position,
                               storage, 1, PredefinedLayout(type))
                  .ok());
  EXPECT_EQ(position, static_cast<int64_t>(external.size()));
  T value;
  std::memcpy(static_cast<void*>(&value), storage, sizeof(T));
  return value;
}

TEST(External32Test, IntegersAreBigEndianAtTheStandardsSizes) {
  const int i = 0x01020304;
  EXPECT_EQ(Packed(MPI_INT, &i), (Bytes{1, 2, 3, 4}));
  const short s = -2;
  EXPECT_EQ(Packed(MPI_SHORT, &s), (Bytes{0xff, 0xfe}));
  // MPI_LONG is 4 bytes: sign-extended back, low bytes kept going out.
  const long l = -2;
  EXPECT_EQ(Packed(MPI_LONG, &l), (Bytes{0xff, 0xff, 0xff, 0xfe}));
  EXPECT_EQ(Unpacked<long>(MPI_LONG, Bytes{0xff, 0xff, 0xff, 0xfe}), -2);
  const long big = 0x100000005;
  EXPECT_EQ(Packed(MPI_LONG, &big), (Bytes{0, 0, 0, 5}));
  const unsigned long u = 0xfffffffe;
  EXPECT_EQ(Packed(MPI_UNSIGNED_LONG, &u), (Bytes{0xff, 0xff, 0xff, 0xfe}));
  EXPECT_EQ(
      Unpacked<unsigned long>(MPI_UNSIGNED_LONG, Bytes{0xff, 0xff, 0xff, 0xfe}),
      0xfffffffeul);
  const long long ll = 0x0102030405060708;
  EXPECT_EQ(Packed(MPI_LONG_LONG, &ll), (Bytes{1, 2, 3, 4, 5, 6, 7, 8}));
  const MPI_Aint a = -1;
  EXPECT_EQ(Packed(MPI_AINT, &a), Bytes(8, 0xff));
  const __int128 wide =
      (static_cast<__int128>(0x0102030405060708) << 64) | 0x090a0b0c0d0e0f10;
  EXPECT_EQ(Packed(MPI_INTEGER16, &wide),
            (Bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
  const char c[3] = {'a', 'b', 'c'};
  EXPECT_EQ(Packed(MPI_CHAR, c, 3), (Bytes{'a', 'b', 'c'}));
}

TEST(External32Test, FloatsAreBigEndianIeee) {
  const float f = -2.5f;
  EXPECT_EQ(Packed(MPI_FLOAT, &f), (Bytes{0xc0, 0x20, 0, 0}));
  const double d = 1.0;
  EXPECT_EQ(Packed(MPI_DOUBLE, &d), (Bytes{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}));
  const std::complex<double> z(1.0, -2.0);
  EXPECT_EQ(Packed(MPI_C_DOUBLE_COMPLEX, &z),
            (Bytes{0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Unpacked<std::complex<double>>(MPI_C_DOUBLE_COMPLEX,
                                           Packed(MPI_C_DOUBLE_COMPLEX, &z)),
            z);
}

// long double goes out as IEEE binary128: sign, 15-bit exponent biased by
// 16383, 112 fraction bits.
TEST(External32Test, LongDoubleIsBinary128) {
  Bytes one(16, 0);
  one[0] = 0x3f;
  one[1] = 0xff;
  const long double value = 1.0L;
  EXPECT_EQ(Packed(MPI_LONG_DOUBLE, &value), one);
  const long double minus_half = -0.5L;
  Bytes expected(16, 0);
  expected[0] = 0xbf;
  expected[1] = 0xfe;
  EXPECT_EQ(Packed(MPI_LONG_DOUBLE, &minus_half), expected);
  // 1 + 2^-63: the x87 format's last fraction bit, exact in binary128.
  const long double fine = 1.0L + 0x1p-63L;
  const Bytes packed = Packed(MPI_LONG_DOUBLE, &fine);
  EXPECT_EQ(packed[1], 0xff);
  EXPECT_EQ(packed[9], 0x02);  // fraction bit 63 (of 112) is in byte 9
  EXPECT_EQ(Unpacked<long double>(MPI_LONG_DOUBLE, packed), fine);
  // Unpacking zeroes the six padding bytes of the x87 value.
  long double back;
  std::memset(&back, 0x5a, sizeof(back));
  int64_t position = 0;
  ASSERT_TRUE(UnpackExternal32(one.data(), 16, &position, &back, 1,
                               PredefinedLayout(MPI_LONG_DOUBLE))
                  .ok());
  unsigned char bytes[16];
  std::memcpy(bytes, &back, 16);
  for (int b = 10; b < 16; ++b) EXPECT_EQ(bytes[b], 0) << b;
  EXPECT_EQ(back, 1.0L);
}

TEST(External32Test, BooleansWideCharactersAndPairs) {
  const bool t = true;
  EXPECT_EQ(Packed(MPI_C_BOOL, &t), (Bytes{1}));
  EXPECT_EQ(Unpacked<bool>(MPI_C_BOOL, Bytes{0x40}), true);
  EXPECT_EQ(Unpacked<bool>(MPI_C_BOOL, Bytes{0}), false);
  // LOGICAL: any nonzero byte is true, and true comes back as 1.
  EXPECT_EQ(Unpacked<int32_t>(MPI_LOGICAL, Bytes{0, 0, 1, 0}), 1);
  EXPECT_EQ(Unpacked<int32_t>(MPI_LOGICAL, Bytes{0, 0, 0, 0}), 0);
  const int32_t logical = 1;
  EXPECT_EQ(Packed(MPI_LOGICAL, &logical), (Bytes{0, 0, 0, 1}));
  // MPI_WCHAR is a 16-bit Unicode unit.
  const wchar_t e_acute = L'\u00e9';
  EXPECT_EQ(Packed(MPI_WCHAR, &e_acute), (Bytes{0x00, 0xe9}));
  EXPECT_EQ(Unpacked<wchar_t>(MPI_WCHAR, Bytes{0x20, 0xac}), L'\u20ac');
  // A pair's members, back to back, without the struct's padding.
  struct ShortInt {
    short value;
    int index;
  };
  const ShortInt pair = {-3, 7};
  EXPECT_EQ(Packed(MPI_SHORT_INT, &pair), (Bytes{0xff, 0xfd, 0, 0, 0, 7}));
  struct LongInt {
    long value;
    int index;
  };
  const LongInt long_pair = {-1, 2};
  EXPECT_EQ(Packed(MPI_LONG_INT, &long_pair),
            (Bytes{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2}));
}

TEST(External32Test, DerivedTypesInTypemapOrder) {
  // {int at 8, short at 0}: the int goes first.
  const std::vector<const Layout*> types = {PredefinedLayout(MPI_INT),
                                            PredefinedLayout(MPI_SHORT)};
  const LayoutRef type =
      Struct(std::vector<int64_t>{1, 1}, std::vector<int64_t>{8, 0}, types);
  EXPECT_EQ(type->external32_size(), 6);
  unsigned char memory[24] = {};  // two items of extent 12
  const short s = 0x0102;
  const int i = 0x03040506;
  std::memcpy(memory, &s, 2);
  std::memcpy(memory + 8, &i, 4);
  Bytes out(2 + 12, 0xee);
  int64_t position = 2;
  ASSERT_TRUE(
      PackExternal32(memory, 2, type.get(), out.data(), out.size(), &position)
          .ok());
  EXPECT_EQ(position, 14);
  EXPECT_EQ(out, (Bytes{0xee, 0xee, 3, 4, 5, 6, 1, 2, 0, 0, 0, 0, 0, 0}));
}

TEST(External32Test, TooLittleRoomIsAnErrorThatWritesNothing) {
  const int values[2] = {1, 2};
  Bytes out(7, 0xee);
  int64_t position = 0;
  const absl::Status status = PackExternal32(
      values, 2, PredefinedLayout(MPI_INT), out.data(), 7, &position);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(position, 0);
  EXPECT_EQ(out, Bytes(7, 0xee));
  int back[2] = {0, 0};
  position = 4;
  EXPECT_EQ(UnpackExternal32(out.data(), 7, &position, back, 1,
                             PredefinedLayout(MPI_INT))
                .code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(back[0], 0);
  position = -1;
  EXPECT_FALSE(PackExternal32(values, 1, PredefinedLayout(MPI_INT), out.data(),
                              7, &position)
                   .ok());
  // A null layout is bytes, copied as they are.
  position = 1;
  ASSERT_TRUE(PackExternal32("xyz", 3, nullptr, out.data(), 7, &position).ok());
  EXPECT_EQ(position, 4);
  EXPECT_EQ(out[1], 'x');
  EXPECT_EQ(External32Size(nullptr, 3), 3);
}

// Every predefined type round-trips a value external32 can hold.
TEST(External32Test, EveryPredefinedTypeRoundTrips) {
  std::mt19937_64 random(7);
  for (const PredefinedType* type : AllPredefined()) {
    SCOPED_TRACE(type->name);
    std::vector<unsigned char> value(type->extent);
    for (unsigned char& byte : value) byte = random() & 0xff;
    for (int m = 0; m < type->member_count; ++m) {
      const NumberMember& member = type->members[m];
      for (int c = 0; c < member.components; ++c) {
        unsigned char* number =
            value.data() + member.offset + c * member.native_size;
        switch (member.kind) {
          case NumberKind::kBool:
          case NumberKind::kLogical:
            std::memset(number, 0, member.native_size);
            number[0] = random() & 1;
            break;
          case NumberKind::kX87LongDouble: {
            const long double x = static_cast<long double>(random()) / 3;
            std::memset(number, 0, member.native_size);
            std::memcpy(number, &x, 10);
            break;
          }
          default:
            if (member.external32_size < member.native_size) {
              // Only what fits: sign-extend the kept bytes.
              const bool negative =
                  member.kind == NumberKind::kSignedInteger &&
                  (number[member.external32_size - 1] & 0x80) != 0;
              std::memset(number + member.external32_size, negative ? 0xff : 0,
                          member.native_size - member.external32_size);
            }
            break;
        }
      }
    }
    const Layout* layout = PredefinedLayout(type->handle);
    Bytes external(type->external32_size);
    int64_t position = 0;
    ASSERT_TRUE(PackExternal32(value.data(), 1, layout, external.data(),
                               external.size(), &position)
                    .ok());
    std::vector<unsigned char> back(type->extent, 0x5a);
    position = 0;
    ASSERT_TRUE(UnpackExternal32(external.data(), external.size(), &position,
                                 back.data(), 1, layout)
                    .ok());
    // The data bytes come back; a pair's padding is not touched.
    for (int64_t b = 0; b < type->extent; ++b) {
      bool data = false;
      for (int m = 0; m < type->member_count; ++m) {
        const NumberMember& member = type->members[m];
        data = data || (b >= member.offset &&
                        b < member.offset + member.native_size *
                                                int64_t{member.components});
      }
      EXPECT_EQ(back[b], data ? value[b] : 0x5a) << b;
    }
  }
}

// Random derived types: the engine's external32 matches the reference's
// number-by-number conversion, and unpacking restores the data.
TEST(External32Test, RandomTypesMatchTheReference) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 random(seed);
    const testing::SpecPtr spec = testing::RandomSpec(random, 3);
    const testing::Typemap typemap = testing::Expand(*spec);
    const int64_t count = seed % 4;
    const std::vector<int64_t> offsets =
        testing::PackedByteOffsets(typemap, count);
    if (offsets.size() > 8192) continue;
    SCOPED_TRACE(absl::StrCat("seed ", seed, ": ", spec->Describe()));
    const LayoutRef layout = testing::BuildLayout(*spec);

    int64_t low = 0;
    int64_t high = 0;
    if (!offsets.empty()) {
      low = *std::min_element(offsets.begin(), offsets.end());
      high = *std::max_element(offsets.begin(), offsets.end()) + 1;
    }
    if (high - low > (1 << 20)) continue;
    std::vector<unsigned char> memory(high - low + 32);
    for (unsigned char& byte : memory) byte = random() & 0xff;
    unsigned char* base = memory.data() + 16 - low;

    Bytes external(External32Size(layout.get(), count) + 3, 0xee);
    int64_t position = 3;
    ASSERT_TRUE(PackExternal32(base, count, layout.get(), external.data(),
                               external.size(), &position)
                    .ok());
    ASSERT_EQ(position, static_cast<int64_t>(external.size()));
    const Bytes expected = testing::ReferenceExternal32(typemap, count, base);
    ASSERT_EQ(Bytes(external.begin() + 3, external.end()), expected);

    // Unpack into a copy with other bytes: the typemap's bytes come back,
    // except the x87 values (canonicalized, padding zeroed); the rest of
    // the buffer is untouched.
    std::vector<unsigned char> back(memory.size());
    for (unsigned char& byte : back) byte = random() & 0xff;
    const std::vector<unsigned char> before = back;
    unsigned char* back_base = back.data() + 16 - low;
    position = 3;
    ASSERT_TRUE(UnpackExternal32(external.data(), external.size(), &position,
                                 back_base, count, layout.get())
                    .ok());
    std::set<int64_t> data(offsets.begin(), offsets.end());
    std::set<int64_t> x87;
    const int64_t extent = typemap.extent();
    for (int64_t item = 0; item < count; ++item) {
      for (const testing::Entry& entry : typemap.entries) {
        const PredefinedType& basic = *FindPredefined(entry.basic);
        if (basic.members[0].kind != NumberKind::kX87LongDouble) continue;
        for (int c = 0; c < basic.members[0].components; ++c) {
          for (int64_t b = 0; b < 16; ++b) {
            x87.insert(item * extent + entry.displacement + c * 16 + b);
          }
        }
      }
    }
    for (int64_t at = low; at < high; ++at) {
      if (x87.count(at)) continue;
      ASSERT_EQ(back_base[at],
                data.count(at) ? base[at] : before[at - low + 16])
          << at;
    }
    // Packing what came back gives the same external32 bytes, unless
    // entries overlap (then later ones overwrote parts of earlier ones).
    if (data.size() != offsets.size()) continue;
    Bytes again(external.size() - 3);
    position = 0;
    ASSERT_TRUE(PackExternal32(back_base, count, layout.get(), again.data(),
                               again.size(), &position)
                    .ok());
    ASSERT_EQ(again, expected);
  }
}

}  // namespace
}  // namespace minimpi::datatype
