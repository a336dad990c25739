// The integers of handle conversions: predefined handles are their own
// values, object handles round-trip through (index, generation bits), the
// two index widths keep their ranges apart from the predefined values and
// from each other's bits, and stale generations are told apart.
#include "mpi/objects/handle_conversion.h"

#include "gtest/gtest.h"

namespace minimpi::handle_conversion {
namespace {

TEST(HandleConversionTest, PredefinedValuesAreTheirOwnIntegers) {
  for (MPI_Fint value : {0, 0x101, 0x209, 0xfff}) {
    EXPECT_TRUE(IsPredefined(value));
    EXPECT_FALSE(DecodeSlot(value, kTableIndexBits).has_value());
  }
  EXPECT_FALSE(IsPredefined(0x1000));
  EXPECT_FALSE(IsPredefined(-1));
  EXPECT_FALSE(IsPredefined(kNotAHandle));
  EXPECT_FALSE(DecodeSlot(kNotAHandle, kTableIndexBits).has_value());
}

TEST(HandleConversionTest, ObjectHandlesRoundTrip) {
  for (int bits : {kTableIndexBits, kRequestIndexBits}) {
    const uint32_t largest = (uint32_t{1} << bits) - 1;
    for (uint32_t index : {0u, 1u, 1023u, 1024u, largest}) {
      for (uint32_t generation : {0u, 1u, 3u, 255u, 256u, 0xffffffu}) {
        const MPI_Fint value = EncodeSlot(index, generation, bits);
        EXPECT_GT(value, 0);
        EXPECT_FALSE(IsPredefined(value));
        const auto slot = DecodeSlot(value, bits);
        ASSERT_TRUE(slot.has_value());
        EXPECT_EQ(slot->index, index);
        EXPECT_TRUE(GenerationMatches(generation, *slot, bits));
        // The next generation of the slot (the object was freed and the
        // slot reused) does not match.
        EXPECT_FALSE(GenerationMatches(generation + 1, *slot, bits));
      }
    }
    EXPECT_EQ(EncodeSlot(largest + 1, 0, bits), kNotAHandle);
  }
}

TEST(HandleConversionTest, GenerationBitsWrapAsDocumented) {
  // A table slot keeps 8 generation bits, a request slot 2.
  const auto table =
      DecodeSlot(EncodeSlot(7, 5, kTableIndexBits), kTableIndexBits);
  ASSERT_TRUE(table.has_value());
  EXPECT_TRUE(GenerationMatches(5 + 256, *table, kTableIndexBits));
  for (uint32_t later = 6; later < 5 + 256; ++later) {
    EXPECT_FALSE(GenerationMatches(later, *table, kTableIndexBits));
  }
  const auto request =
      DecodeSlot(EncodeSlot(7, 5, kRequestIndexBits), kRequestIndexBits);
  ASSERT_TRUE(request.has_value());
  EXPECT_TRUE(GenerationMatches(5 + 4, *request, kRequestIndexBits));
  EXPECT_FALSE(GenerationMatches(6, *request, kRequestIndexBits));
}

}  // namespace
}  // namespace minimpi::handle_conversion
