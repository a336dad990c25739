// The buffered-send buffer's bookkeeping: every message takes exactly its
// size plus the overhead, data is aligned and inside the buffer, messages
// never overlap, freed space merges back (in any order) so a buffer sized
// by the standard's formula always holds its messages again, and a random
// run of allocations and frees agrees with a byte-map reference.
#include "mpi/p2p/bsend_buffer.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi::p2p {
namespace {

constexpr size_t kOverhead = BsendBuffer::kMessageOverhead;

bool Aligned(const std::byte* data) {
  return reinterpret_cast<uintptr_t>(data) % BsendBuffer::kDataAlignment == 0;
}

TEST(BsendBufferTest, HoldsExactlyWhatTheStandardFormulaPromises) {
  // Room for three messages of 100 bytes as a program computes it, at an
  // address that is not aligned.
  std::vector<std::byte> memory(3 * (100 + kOverhead) + 1);
  BsendBuffer buffer(memory.data() + 1, memory.size() - 1);
  std::byte* a = buffer.Allocate(100);
  std::byte* b = buffer.Allocate(100);
  std::byte* c = buffer.Allocate(100);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(buffer.Allocate(0), nullptr);  // even an empty message takes room
  for (std::byte* data : {a, b, c}) {
    EXPECT_TRUE(Aligned(data));
    EXPECT_GE(data, memory.data() + 1);
    EXPECT_LE(data + 100, memory.data() + memory.size());
  }
  EXPECT_EQ(buffer.used_bytes(), 3 * (100 + kOverhead));
  buffer.Free(b);
  EXPECT_EQ(buffer.Allocate(101), nullptr);  // one byte too many for the gap
  std::byte* again = buffer.Allocate(100);
  EXPECT_EQ(again, b);
  buffer.Free(a);
  buffer.Free(c);
  buffer.Free(again);
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.used_bytes(), 0u);
  // Everything merged back: one message as large as the whole buffer fits.
  EXPECT_NE(buffer.Allocate(memory.size() - 1 - kOverhead), nullptr);
}

TEST(BsendBufferTest, TooSmallOrEmptyBuffers) {
  std::vector<std::byte> memory(kOverhead - 1);
  BsendBuffer small(memory.data(), memory.size());
  EXPECT_EQ(small.Allocate(0), nullptr);
  BsendBuffer none(nullptr, 0);
  EXPECT_EQ(none.Allocate(0), nullptr);
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(small.Allocate(SIZE_MAX), nullptr);  // no overflow
}

TEST(BsendBufferTest, FreedNeighboursMergeWhateverTheOrder) {
  constexpr size_t kMessages = 6;
  constexpr size_t kBytes = 64;
  std::vector<std::byte> memory(kMessages * (kBytes + kOverhead));
  const std::vector<std::vector<int>> orders = {{0, 1, 2, 3, 4, 5},
                                                {5, 4, 3, 2, 1, 0},
                                                {1, 3, 5, 0, 2, 4},
                                                {2, 3, 1, 4, 0, 5}};
  for (const std::vector<int>& order : orders) {
    BsendBuffer buffer(memory.data(), memory.size());
    std::vector<std::byte*> data;
    for (size_t i = 0; i < kMessages; ++i) {
      data.push_back(buffer.Allocate(kBytes));
      ASSERT_NE(data.back(), nullptr);
    }
    for (int i : order) buffer.Free(data[i]);
    EXPECT_TRUE(buffer.empty());
    EXPECT_NE(buffer.Allocate(memory.size() - kOverhead), nullptr);
  }
}

// Random allocations and frees against a map of which bytes are taken:
// ranges never overlap, hold their data, and a message is refused only when
// no run of free bytes could hold it.
TEST(BsendBufferTest, RandomRunAgreesWithAByteMap) {
  constexpr size_t kSize = 64 * 1024;
  std::vector<std::byte> memory(kSize);
  BsendBuffer buffer(memory.data(), kSize);
  std::vector<int> owner(kSize, -1);  // which live message holds each byte
  struct Live {
    std::byte* data;
    size_t bytes;
  };
  std::vector<Live> live;
  std::mt19937 random(12345);
  int next_id = 0;
  size_t used = 0;
  int refused = 0;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || random() % 3 != 0) {
      const size_t bytes = random() % 3000;
      std::byte* data = buffer.Allocate(bytes);
      if (data == nullptr) {
        ++refused;
        size_t run = 0, longest = 0;
        for (size_t i = 0; i < kSize; ++i) {
          run = owner[i] < 0 ? run + 1 : 0;
          longest = std::max(longest, run);
        }
        ASSERT_LT(longest, bytes + kOverhead) << "step " << step;
        continue;
      }
      ASSERT_TRUE(Aligned(data));
      const BsendBuffer::Range range = buffer.RangeOf(data);
      ASSERT_EQ(range.length, bytes + kOverhead);
      ASSERT_LE(range.offset + range.length, kSize);
      const size_t first = static_cast<size_t>(data - memory.data());
      ASSERT_GE(first, range.offset);
      ASSERT_LE(first + bytes, range.offset + range.length);
      for (size_t i = range.offset; i < range.offset + range.length; ++i) {
        ASSERT_EQ(owner[i], -1) << "message overlaps another at byte " << i;
        owner[i] = next_id;
      }
      ++next_id;
      live.push_back({data, bytes});
      used += range.length;
    } else {
      const size_t victim = random() % live.size();
      const BsendBuffer::Range range = buffer.RangeOf(live[victim].data);
      for (size_t i = range.offset; i < range.offset + range.length; ++i) {
        owner[i] = -1;
      }
      buffer.Free(live[victim].data);
      used -= range.length;
      live[victim] = live.back();
      live.pop_back();
    }
    ASSERT_EQ(buffer.used_bytes(), used);
  }
  EXPECT_GT(refused, 0);  // the run did fill the buffer
}

}  // namespace
}  // namespace minimpi::p2p
