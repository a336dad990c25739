#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "net/shm/spsc_ring.h"

namespace minimpi::net::shm {
namespace {

// Zeroed, cache-line aligned memory for one ring.
class RingMemory {
 public:
  RingMemory(uint32_t cells, size_t max_message)
      : bytes_(RingBytes(cells, max_message)),
        memory_(static_cast<std::byte*>(
            std::aligned_alloc(kCacheLineBytes, RoundUp(bytes_)))) {
    std::memset(memory_, 0, bytes_);
  }
  ~RingMemory() { std::free(memory_); }
  void* get() { return memory_; }

 private:
  static size_t RoundUp(size_t n) {
    return (n + kCacheLineBytes - 1) / kCacheLineBytes * kCacheLineBytes;
  }
  size_t bytes_;
  std::byte* memory_;
};

bool Push(RingProducer& ring, uint32_t value) {
  CellHeader* cell = ring.TryReserve();
  if (cell == nullptr) return false;
  std::memcpy(cell->message(), &value, sizeof(value));
  cell->length = sizeof(value);
  cell->flags = 0;
  ring.Publish();
  return true;
}

bool Pop(RingConsumer& ring, uint32_t& value) {
  const CellHeader* cell = ring.Peek();
  if (cell == nullptr) return false;
  EXPECT_EQ(cell->length, sizeof(value));
  std::memcpy(&value, cell->message(), sizeof(value));
  ring.Release();
  return true;
}

TEST(SpscRingTest, CellStrideIsCacheLineMultiple) {
  EXPECT_EQ(CellStride(0), 64u);
  EXPECT_EQ(CellStride(48), 64u);
  EXPECT_EQ(CellStride(49), 128u);
  EXPECT_EQ(CellStride(64 + 16384), 16384u + 128u);
  EXPECT_EQ(RingBytes(4, 48), 128u + 4 * 64u);
}

TEST(SpscRingTest, EmptyRingHasNothing) {
  RingMemory memory(4, 64);
  RingConsumer consumer(memory.get(), 4, 64);
  EXPECT_EQ(consumer.Peek(), nullptr);
}

TEST(SpscRingTest, FullRingRefusesUntilReleased) {
  constexpr uint32_t kCells = 5;
  RingMemory memory(kCells, 64);
  RingProducer producer(memory.get(), kCells, 64);
  RingConsumer consumer(memory.get(), kCells, 64);
  for (uint32_t i = 0; i < kCells; ++i) ASSERT_TRUE(Push(producer, i));
  EXPECT_EQ(producer.TryReserve(), nullptr);
  EXPECT_FALSE(Push(producer, 99));
  uint32_t value = 0;
  ASSERT_TRUE(Pop(consumer, value));
  EXPECT_EQ(value, 0u);
  ASSERT_TRUE(Push(producer, kCells));  // the freed cell is reusable
  EXPECT_FALSE(Push(producer, 99));
  for (uint32_t i = 1; i <= kCells; ++i) {
    ASSERT_TRUE(Pop(consumer, value));
    EXPECT_EQ(value, i);
  }
  EXPECT_FALSE(Pop(consumer, value));
}

TEST(SpscRingTest, PeekReturnsSameCellUntilRelease) {
  RingMemory memory(3, 64);
  RingProducer producer(memory.get(), 3, 64);
  RingConsumer consumer(memory.get(), 3, 64);
  ASSERT_TRUE(Push(producer, 7));
  const CellHeader* first = consumer.Peek();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(consumer.Peek(), first);
  consumer.Release();
  EXPECT_EQ(consumer.Peek(), nullptr);
}

// Many laps around a small ring, with varying fill levels, keep FIFO order.
TEST(SpscRingTest, WrapsAroundInOrder) {
  constexpr uint32_t kCells = 3;
  RingMemory memory(kCells, 64);
  RingProducer producer(memory.get(), kCells, 64);
  RingConsumer consumer(memory.get(), kCells, 64);
  uint32_t next_push = 0;
  uint32_t next_pop = 0;
  for (int step = 0; step < 10000; ++step) {
    const int pushes = step % (kCells + 1);
    for (int i = 0; i < pushes; ++i) {
      if (Push(producer, next_push)) ++next_push;
    }
    const int pops = (step * 7) % (kCells + 1);
    uint32_t value = 0;
    for (int i = 0; i < pops && Pop(consumer, value); ++i) {
      ASSERT_EQ(value, next_pop);
      ++next_pop;
    }
    ASSERT_LE(next_push - next_pop, kCells);
  }
  EXPECT_GT(next_pop, 10000u);
}

// The content of message `seq`, byte `i`: depends on both, so a lost,
// repeated, reordered or torn message fails the check.
uint8_t PatternByte(uint64_t seq, size_t i) {
  uint64_t x = seq * 0x9E3779B97F4A7C15ULL + (i / 8) * 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  return static_cast<uint8_t>(x >> ((i % 8) * 8));
}

size_t MessageLength(uint64_t seq, size_t max_message) {
  // Mostly small, sometimes full-size, always at least the sequence number.
  const uint64_t h = seq * 0x2545F4914F6CDD1DULL;
  const size_t length = (h >> 60) == 0 ? max_message : (h >> 40) % 200;
  return length < 8 ? 8 : length;
}

// Producer and consumer threads push millions of messages through a small
// ring; the consumer checks every byte. Runs under ThreadSanitizer in CI.
TEST(SpscRingTest, TwoThreadStressChecksEveryByte) {
  constexpr uint32_t kCells = 8;
  constexpr size_t kMaxMessage = 1024;
#if defined(__SANITIZE_THREAD__)
  constexpr uint64_t kMessages = 300000;
#else
  constexpr uint64_t kMessages = 3000000;
#endif
  RingMemory memory(kCells, kMaxMessage);
  RingProducer producer(memory.get(), kCells, kMaxMessage);
  RingConsumer consumer(memory.get(), kCells, kMaxMessage);

  std::thread producer_thread([&] {
    for (uint64_t seq = 0; seq < kMessages; ++seq) {
      CellHeader* cell;
      while ((cell = producer.TryReserve()) == nullptr)
        std::this_thread::yield();
      const size_t length = MessageLength(seq, kMaxMessage);
      std::byte* message = cell->message();
      std::memcpy(message, &seq, sizeof(seq));
      for (size_t i = sizeof(seq); i < length; ++i) {
        message[i] = static_cast<std::byte>(PatternByte(seq, i));
      }
      cell->length = static_cast<uint32_t>(length);
      cell->flags = 0;
      producer.Publish();
    }
  });

  uint64_t bad_messages = 0;
  for (uint64_t seq = 0; seq < kMessages; ++seq) {
    const CellHeader* cell;
    while ((cell = consumer.Peek()) == nullptr) std::this_thread::yield();
    const size_t length = MessageLength(seq, kMaxMessage);
    bool good = cell->length == length;
    uint64_t got_seq = 0;
    std::memcpy(&got_seq, cell->message(), sizeof(got_seq));
    good = good && got_seq == seq;
    const std::byte* message = cell->message();
    for (size_t i = sizeof(seq); good && i < length; ++i) {
      good = message[i] == static_cast<std::byte>(PatternByte(seq, i));
    }
    if (!good && ++bad_messages <= 5) {
      ADD_FAILURE() << "message " << seq << " is wrong (length " << cell->length
                    << ", sequence " << got_seq << ")";
    }
    consumer.Release();
  }
  producer_thread.join();
  EXPECT_EQ(bad_messages, 0u);
  EXPECT_EQ(consumer.Peek(), nullptr);
}

}  // namespace
}  // namespace minimpi::net::shm
