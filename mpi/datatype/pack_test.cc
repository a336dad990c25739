// Hand-written cases of packing, unpacking, typed copies and segment walks;
// differential_test.cc compares the same functions against the reference
// typemaps on random types.
#include "mpi/datatype/pack.h"

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/datatype/layout.h"
#include "mpi/mpi.h"

namespace minimpi::datatype {
namespace {

using Bytes = std::vector<unsigned char>;

const Layout& Int() { return *PredefinedLayout(MPI_INT); }

// Bytes 0, 1, 2, ... so every byte says where it came from.
Bytes Counting(size_t n, unsigned char first = 0) {
  Bytes bytes(n);
  std::iota(bytes.begin(), bytes.end(), first);
  return bytes;
}

// A vector of 4 ints with a stride of 3 ints, one item: the packed stream is
// the bytes at [0,4), [12,16), [24,28), [36,40).
TEST(PackTest, VectorAtEveryOffsetAndLength) {
  const LayoutRef vector = Vector(4, 1, 3, Int());
  const Bytes memory = Counting(48);
  Bytes expected;
  for (int block = 0; block < 4; ++block) {
    for (int b = 0; b < 4; ++b) expected.push_back(memory[block * 12 + b]);
  }
  for (int64_t offset = 0; offset <= 16; ++offset) {
    for (int64_t length = 0; length <= 16 - offset + 2; ++length) {
      Bytes packed(length + 1, 0xee);
      const int64_t moved =
          Pack(memory.data(), 1, vector.get(), offset, packed.data(), length);
      const int64_t want = std::min<int64_t>(length, 16 - offset);
      ASSERT_EQ(moved, want) << offset << " " << length;
      for (int64_t i = 0; i < want; ++i) {
        ASSERT_EQ(packed[i], expected[offset + i]) << offset << " " << i;
      }
      ASSERT_EQ(packed[want], 0xee);  // nothing written past the end

      // Unpacking the same piece writes exactly those bytes.
      Bytes target(48, 0xaa);
      const int64_t unpacked = Unpack(expected.data() + offset, length,
                                      target.data(), 1, vector.get(), offset);
      ASSERT_EQ(unpacked, want);
      for (int64_t byte = 0; byte < 48; ++byte) {
        const int64_t block = byte / 12;
        const int64_t position = block * 4 + byte % 12;  // in the stream
        const bool written =
            byte % 12 < 4 && position >= offset && position < offset + want;
        ASSERT_EQ(target[byte], written ? memory[byte] : 0xaa)
            << offset << " " << length << " " << byte;
      }
    }
  }
}

TEST(PackTest, ManyItemsContinueTheRun) {
  // Two items of a resized vector continue each other: one run of 8.
  const LayoutRef vector = Resized(*Vector(4, 1, 2, Int()), 0, 32);
  const Bytes memory = Counting(64);
  Bytes packed(32);
  ASSERT_EQ(Pack(memory.data(), 2, vector.get(), 0, packed.data(), 32), 32);
  for (int block = 0; block < 8; ++block) {
    for (int b = 0; b < 4; ++b) {
      EXPECT_EQ(packed[block * 4 + b], memory[block * 8 + b]);
    }
  }
}

TEST(PackTest, NullLayoutIsBytes) {
  const Bytes memory = Counting(10);
  Bytes packed(4);
  EXPECT_EQ(Pack(memory.data(), 10, nullptr, 3, packed.data(), 4), 4);
  EXPECT_EQ(packed, (Bytes{3, 4, 5, 6}));
  Bytes target(10, 0);
  EXPECT_EQ(Unpack(packed.data(), 4, target.data(), 10, nullptr, 8), 2);
  EXPECT_EQ(target, (Bytes{0, 0, 0, 0, 0, 0, 0, 0, 3, 4}));
  EXPECT_EQ(PackedSize(10, nullptr), 10);
  EXPECT_EQ(Pack(memory.data(), 10, nullptr, 10, packed.data(), 4), 0);
  EXPECT_EQ(Pack(memory.data(), 10, nullptr, 11, packed.data(), 4), 0);
}

// Block lengths the copy loop specializes (1..128 and around), with the
// overlapping two-piece copies in between.
TEST(PackTest, EveryShortBlockLength) {
  for (int64_t length = 1; length <= 140; ++length) {
    const LayoutRef blocks =
        Vector(5, length, length + 3, *PredefinedLayout(MPI_BYTE));
    const Bytes memory = Counting(5 * (length + 3), 7);
    Bytes packed(5 * length + 1, 0xee);
    ASSERT_EQ(
        Pack(memory.data(), 1, blocks.get(), 0, packed.data(), 5 * length),
        5 * length);
    Bytes target(memory.size(), 0xaa);
    ASSERT_EQ(
        Unpack(packed.data(), 5 * length, target.data(), 1, blocks.get(), 0),
        5 * length);
    for (int64_t block = 0; block < 5; ++block) {
      for (int64_t b = 0; b < length + 3; ++b) {
        const int64_t at = block * (length + 3) + b;
        if (b < length) {
          ASSERT_EQ(packed[block * length + b], memory[at]) << length;
          ASSERT_EQ(target[at], memory[at]) << length;
        } else {
          ASSERT_EQ(target[at], 0xaa) << length;
        }
      }
    }
    ASSERT_EQ(packed[5 * length], 0xee);
  }
}

// With MPI_BOTTOM the displacements are absolute addresses.
TEST(PackTest, AbsoluteAddressesFromBottom) {
  int first = 0x11223344;
  int second = 0x55667788;
  const std::vector<int64_t> addresses = {
      static_cast<int64_t>(reinterpret_cast<intptr_t>(&second)),
      static_cast<int64_t>(reinterpret_cast<intptr_t>(&first))};
  const LayoutRef type = Hindexed(std::vector<int64_t>{1, 1}, addresses, Int());
  int packed[2];
  ASSERT_EQ(Pack(MPI_BOTTOM, 1, type.get(), 0, packed, 8), 8);
  EXPECT_EQ(packed[0], second);
  EXPECT_EQ(packed[1], first);
  const int fresh[2] = {1, 2};
  ASSERT_EQ(Unpack(fresh, 8, MPI_BOTTOM, 1, type.get(), 0), 8);
  EXPECT_EQ(second, 1);
  EXPECT_EQ(first, 2);
}

TEST(PackTest, TypedCopyBetweenLayoutsOfOneSignature) {
  // A column of a 4x3 int matrix into a contiguous array and back.
  const LayoutRef column = Vector(4, 1, 3, Int());
  std::vector<int> matrix(12);
  std::iota(matrix.begin(), matrix.end(), 100);
  std::vector<int> values(4, 0);
  EXPECT_EQ(TypedCopy(matrix.data() + 1, 1, column.get(), values.data(), 4,
                      &Int(), 16),
            16);
  EXPECT_EQ(values, (std::vector<int>{101, 104, 107, 110}));
  std::vector<int> target(12, -1);
  EXPECT_EQ(TypedCopy(values.data(), 4, &Int(), target.data() + 2, 1,
                      column.get(), 16),
            16);
  EXPECT_EQ(target, (std::vector<int>{-1, -1, 101, -1, -1, 104, -1, -1, 107, -1,
                                      -1, 110}));

  // Two non-contiguous layouts: a column into a row-major block of a
  // 2-wide matrix, with a byte limit that stops inside an item.
  const LayoutRef pairs = Vector(2, 1, 2, Int());  // ints 0 and 2
  std::vector<int> other(8, -1);
  EXPECT_EQ(TypedCopy(matrix.data(), 1, column.get(), other.data(), 2,
                      Resized(*pairs, 0, 16).get(), 14),
            14);
  // Items of the resized pair are 16 bytes apart: ints 0, 2, then 4 and 6.
  std::vector<int> expected = {100, -1, 103, -1, 106, -1, -1, -1};
  std::memcpy(&expected[6], &matrix[9], 2);  // the first 2 bytes of 109
  EXPECT_EQ(std::memcmp(other.data(), expected.data(), 32), 0);
  EXPECT_EQ(TypedCopy(matrix.data(), 1, column.get(), other.data(), 0,
                      pairs.get(), 16),
            0);
}

TEST(PackTest, SegmentCursorWalksBlocksInBatches) {
  std::vector<int> memory(16);
  const LayoutRef vector = Vector(4, 1, 2, Int());
  SegmentCursor cursor(memory.data(), 1, vector.get());
  EXPECT_EQ(cursor.total_bytes(), 16);
  Segment segments[3];
  ASSERT_EQ(cursor.Fill(segments, 3, 100), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(segments[i].address, &memory[2 * i]);
    EXPECT_EQ(segments[i].length, 4);
  }
  EXPECT_EQ(cursor.position(), 12);
  // A byte budget cuts a block; the next batch resumes inside it.
  ASSERT_EQ(cursor.Fill(segments, 3, 1), 1);
  EXPECT_EQ(segments[0].address, &memory[6]);
  EXPECT_EQ(segments[0].length, 1);
  ASSERT_EQ(cursor.Fill(segments, 3, 100), 1);
  EXPECT_EQ(segments[0].address, reinterpret_cast<char*>(&memory[6]) + 1);
  EXPECT_EQ(segments[0].length, 3);
  EXPECT_TRUE(cursor.done());
  EXPECT_EQ(cursor.Fill(segments, 3, 100), 0);

  cursor.Seek(5);
  ASSERT_EQ(cursor.Fill(segments, 1, 100), 1);
  EXPECT_EQ(segments[0].address, reinterpret_cast<char*>(&memory[2]) + 1);
  EXPECT_EQ(segments[0].length, 3);
}

TEST(PackTest, SegmentCursorCoalescesAdjacentBlocks) {
  // {int at 0, int at 8}, extent 12: item blocks [0,4) [8,12) [12,16)
  // [20,24) ...; the blocks meeting at item boundaries are one segment.
  const LayoutRef pair = Resized(
      *Hindexed(std::vector<int64_t>{1, 1}, std::vector<int64_t>{0, 8}, Int()),
      0, 12);
  char memory[36];
  SegmentCursor cursor(memory, 3, pair.get());
  Segment segments[8];
  ASSERT_EQ(cursor.Fill(segments, 8, 100), 4);
  EXPECT_EQ(segments[0].address, memory + 0);
  EXPECT_EQ(segments[0].length, 4);
  EXPECT_EQ(segments[1].address, memory + 8);
  EXPECT_EQ(segments[1].length, 8);
  EXPECT_EQ(segments[2].address, memory + 20);
  EXPECT_EQ(segments[2].length, 8);
  EXPECT_EQ(segments[3].address, memory + 32);
  EXPECT_EQ(segments[3].length, 4);
}

// Pairing a contiguous local buffer with a remote vector: each batch has
// equal byte totals and at most the allowed entries per side, and copying
// batch after batch moves the whole message.
TEST(PackTest, PairSegmentsBuildsEqualBatches) {
  const LayoutRef remote_type = Vector(10, 3, 5, *PredefinedLayout(MPI_BYTE));
  const Bytes remote_memory = Counting(50);
  Bytes local(30, 0);
  SegmentCursor local_cursor(local.data(), 30, nullptr);
  SegmentCursor remote_cursor(remote_memory.data(), 1, remote_type.get());
  Segment local_segments[4];
  Segment remote_segments[4];
  int batches = 0;
  while (!local_cursor.done()) {
    const SegmentPairing pairing = PairSegments(
        local_cursor, remote_cursor, local_segments, remote_segments, 4, 1000);
    ASSERT_GT(pairing.bytes, 0);
    ASSERT_LE(pairing.remote_segments, 4);
    ASSERT_LE(pairing.local_segments, 4);
    int64_t local_bytes = 0;
    int64_t remote_bytes = 0;
    for (int i = 0; i < pairing.local_segments; ++i) {
      local_bytes += local_segments[i].length;
    }
    for (int i = 0; i < pairing.remote_segments; ++i) {
      remote_bytes += remote_segments[i].length;
    }
    ASSERT_EQ(local_bytes, pairing.bytes);
    ASSERT_EQ(remote_bytes, pairing.bytes);
    ASSERT_EQ(local_cursor.position(), remote_cursor.position());
    // The remote side limits: 4 blocks of 3 bytes per batch.
    EXPECT_EQ(pairing.remote_segments, std::min(4, 10 - 4 * batches));
    // process_vm_readv: remote into local, in order.
    char* into = static_cast<char*>(local_segments[0].address);
    for (int i = 0; i < pairing.remote_segments; ++i) {
      std::memcpy(into, remote_segments[i].address, remote_segments[i].length);
      into += remote_segments[i].length;
    }
    ++batches;
  }
  EXPECT_EQ(batches, 3);
  EXPECT_TRUE(remote_cursor.done());
  for (int block = 0; block < 10; ++block) {
    for (int b = 0; b < 3; ++b) {
      EXPECT_EQ(local[block * 3 + b], remote_memory[block * 5 + b]);
    }
  }
  // Done cursors pair nothing.
  EXPECT_EQ(PairSegments(local_cursor, remote_cursor, local_segments,
                         remote_segments, 4, 1000)
                .bytes,
            0);
}

}  // namespace
}  // namespace minimpi::datatype
