#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "net/shm/spsc_ring.h"

namespace minimpi::net::shm {

// Starts a fresh ring's counters elsewhere than at 1 (both sides alike), to
// reach the 32-bit sequence wrap without 4 billion records.
class RingTestPeer {
 public:
  static void SetFirstSequence(RingProducer& producer, RingConsumer& consumer,
                               uint32_t sequence) {
    producer.sequence_ = sequence;
    consumer.sequence_ = sequence;
  }
};

namespace {

// Zeroed, cache-line aligned memory for one ring.
class RingMemory {
 public:
  explicit RingMemory(size_t capacity)
      : capacity_(capacity),
        memory_(static_cast<std::byte*>(
            std::aligned_alloc(kCacheLineBytes, RingBytes(capacity)))) {
    std::memset(memory_, 0, RingBytes(capacity));
  }
  ~RingMemory() { std::free(memory_); }
  RingMemory(const RingMemory&) = delete;
  RingMemory& operator=(const RingMemory&) = delete;

  void* get() { return memory_; }
  const std::byte* data() const { return memory_ + sizeof(RingControl); }
  // Offset of `cell` in the data bytes.
  size_t OffsetOf(const CellHeader* cell) const {
    return reinterpret_cast<const std::byte*>(cell) - data();
  }
  // Whether `cell` is a whole, aligned record inside the data bytes.
  bool Contains(const CellHeader* cell) const {
    const auto* begin = reinterpret_cast<const std::byte*>(cell);
    return begin >= data() && OffsetOf(cell) % kCacheLineBytes == 0 &&
           OffsetOf(cell) + RecordBytes(cell->length) <= capacity_;
  }

 private:
  size_t capacity_;
  std::byte* memory_;
};

uint64_t SplitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// The content of message `seq`, byte `i`: depends on both, so a lost,
// repeated, reordered or torn message fails the check.
uint8_t PatternByte(uint64_t seq, size_t i) {
  uint64_t x = seq * 0x9E3779B97F4A7C15ULL + (i / 8) * 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  return static_cast<uint8_t>(x >> ((i % 8) * 8));
}

// A length from 0 to `max_message` for message `seq`: mostly small (the MPI
// case), sometimes medium, sometimes up to the largest.
size_t MessageLength(uint64_t seq, size_t max_message) {
  const uint64_t h = SplitMix(seq);
  const uint64_t pick = h % 100;
  const uint64_t r = h >> 8;
  if (pick < 70) return r % 65;
  if (pick < 95) return r % 513 < max_message ? r % 513 : max_message;
  return r % (max_message + 1);
}

// Writes message `seq` of `length` bytes into a reserved record.
void FillMessage(CellHeader* cell, uint64_t seq, size_t length) {
  std::byte* message = cell->message();
  for (size_t i = 0; i < length; ++i) {
    message[i] = static_cast<std::byte>(PatternByte(seq, i));
  }
  cell->length = static_cast<uint32_t>(length);
  cell->flags = 0;
  cell->immediate = static_cast<uint32_t>(seq);
}

bool MessageIsIntact(const CellHeader* cell, uint64_t seq, size_t length) {
  if (cell->length != length || cell->flags != 0 ||
      cell->immediate != static_cast<uint32_t>(seq)) {
    return false;
  }
  const std::byte* message = cell->message();
  for (size_t i = 0; i < length; ++i) {
    if (message[i] != static_cast<std::byte>(PatternByte(seq, i))) {
      return false;
    }
  }
  return true;
}

bool Push(RingProducer& ring, uint64_t seq, size_t length) {
  CellHeader* cell = ring.TryReserve(length);
  if (cell == nullptr) return false;
  FillMessage(cell, seq, length);
  ring.Publish();
  return true;
}

// Pops message `seq`, expecting `length` bytes; false when the ring is empty.
bool PopAndCheck(RingConsumer& ring, const RingMemory& memory, uint64_t seq,
                 size_t length) {
  const CellHeader* cell = ring.Peek();
  if (cell == nullptr) return false;
  EXPECT_TRUE(memory.Contains(cell));
  EXPECT_NE(cell->flags, kCellFlagWrap);
  EXPECT_TRUE(MessageIsIntact(cell, seq, length))
      << "message " << seq << ": length " << cell->length << ", expected "
      << length;
  ring.Release();
  return true;
}

TEST(SpscRingTest, SizesAndLimits) {
  EXPECT_EQ(RecordBytes(0), 64u);
  EXPECT_EQ(RecordBytes(24), 64u);  // 8 bytes behind a 16-byte header
  EXPECT_EQ(RecordBytes(48), 64u);
  EXPECT_EQ(RecordBytes(49), 128u);
  EXPECT_EQ(RecordBytes(16384 + 48), 16384u + 64u);
  EXPECT_EQ(RingBytes(4096), 128u + 4096u);
  EXPECT_EQ(MaxRecordMessage(4096), 4096u - 80u);
  for (size_t capacity : {4096u, 4096u + 64u, 32768u, 65536u}) {
    // The largest record and the line after it fill the ring.
    EXPECT_EQ(RecordBytes(MaxRecordMessage(capacity)) + 64, capacity);
    EXPECT_EQ(RecordBytes(MaxRecordMessage(capacity) + 1) + 64, capacity + 64);
  }
  EXPECT_TRUE(IsValidRingCapacity(4096));
  EXPECT_TRUE(IsValidRingCapacity(4096 + 64));
  EXPECT_TRUE(IsValidRingCapacity(48 * 1024));
  EXPECT_FALSE(IsValidRingCapacity(4096 - 64));
  EXPECT_FALSE(IsValidRingCapacity(4096 + 32));
  EXPECT_FALSE(IsValidRingCapacity((size_t{1} << 32) + 64));
  EXPECT_NE(kCellFlagWrap, kCellFlagWriteImmediate);
  EXPECT_NE(kCellFlagWrap, kCellFlagPullWrite);
  EXPECT_EQ(NextRecordSequence(1), 2u);
  EXPECT_EQ(NextRecordSequence(UINT32_MAX - 1), UINT32_MAX);
  EXPECT_EQ(NextRecordSequence(UINT32_MAX), 1u);  // never 0
}

TEST(SpscRingTest, ZeroedMemoryIsAnEmptyRing) {
  RingMemory memory(4096);
  RingConsumer consumer(memory.get(), 4096);
  EXPECT_EQ(consumer.Peek(), nullptr);
  RingProducer producer(memory.get(), 4096);
  ASSERT_TRUE(Push(producer, 0, 8));
  ASSERT_TRUE(PopAndCheck(consumer, memory, 0, 8));
  EXPECT_EQ(consumer.Peek(), nullptr);
}

// Attaching touches no byte of the ring (the segment's pages stay
// untouched); fresh anonymous pages (what an ftruncate'd memfd gives) are
// an empty ring.
TEST(SpscRingTest, AttachingTouchesNothing) {
  constexpr size_t kCapacity = 32768;
  const size_t bytes = RingBytes(kCapacity);
  void* ring =
      mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(ring, MAP_FAILED);
  // Any access to a PROT_NONE page would kill the test.
  RingProducer producer(ring, kCapacity);
  RingConsumer consumer(ring, kCapacity);
  EXPECT_TRUE(producer.attached());
  EXPECT_TRUE(consumer.attached());
  EXPECT_FALSE(RingProducer().attached());
  EXPECT_FALSE(RingConsumer().attached());
  ASSERT_EQ(mprotect(ring, bytes, PROT_READ | PROT_WRITE), 0);
  EXPECT_EQ(consumer.Peek(), nullptr);
  CellHeader* cell = producer.TryReserve(24);
  ASSERT_NE(cell, nullptr);
  std::memset(cell->message(), 0xAB, 24);
  cell->length = 24;
  cell->flags = 0;
  cell->immediate = 5;
  producer.Publish();
  const CellHeader* got = consumer.Peek();
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got, cell);
  EXPECT_EQ(got->length, 24u);
  EXPECT_EQ(got->immediate, 5u);
  consumer.Release();
  EXPECT_EQ(consumer.Peek(), nullptr);
  munmap(ring, bytes);
}

// Small messages take one line each: a 32 KiB ring holds 511 of them (one
// line stays free for the zeroed next header).
TEST(SpscRingTest, SmallMessagesTakeOneLineEach) {
  constexpr size_t kCapacity = 32768;
  RingMemory memory(kCapacity);
  RingProducer producer(memory.get(), kCapacity);
  RingConsumer consumer(memory.get(), kCapacity);
  uint64_t pushed = 0;
  while (true) {
    CellHeader* cell = producer.TryReserve(24);
    if (cell == nullptr) break;
    EXPECT_EQ(memory.OffsetOf(cell), pushed * 64);
    FillMessage(cell, pushed, 24);
    producer.Publish();
    ++pushed;
  }
  EXPECT_EQ(pushed, kCapacity / 64 - 1);
  for (uint64_t seq = 0; seq < pushed; ++seq) {
    ASSERT_TRUE(PopAndCheck(consumer, memory, seq, 24));
  }
  EXPECT_EQ(consumer.Peek(), nullptr);
}

// The rule that keeps stale bytes from being taken for a header (see
// spsc_ring.h): free room is clear. A small record's publication writes its
// own line only (not the line the consumer polls next), the consumer clears
// every line of what it releases, and the producer clears what it reserved
// beyond a shorter record.
TEST(SpscRingTest, FreeRoomStaysClear) {
  constexpr size_t kCapacity = 4096;
  RingMemory memory(kCapacity);
  RingProducer producer(memory.get(), kCapacity);
  RingConsumer consumer(memory.get(), kCapacity);
  auto sequence_at = [&](size_t offset) {
    return reinterpret_cast<const CellHeader*>(memory.data() + offset)
        ->sequence.load(std::memory_order_relaxed);
  };
  auto all_clear = [&](size_t from, size_t to) {
    for (size_t offset = from; offset < to; offset += kCacheLineBytes) {
      if (sequence_at(offset) != 0) return false;
    }
    return true;
  };
  // A small record: nothing written beyond its line.
  ASSERT_TRUE(Push(producer, 1, 8));
  EXPECT_NE(sequence_at(0), 0u);
  // A record of five lines whose payload looks like headers everywhere.
  CellHeader* big = producer.TryReserve(4 * 64 + 40);
  ASSERT_NE(big, nullptr);
  std::memset(big->message(), 0x02, 4 * 64 + 40);
  big->length = 4 * 64 + 40;
  big->flags = 0;
  big->immediate = 2;
  producer.Publish();
  EXPECT_EQ(sequence_at(64 + 64), 0x02020202u);  // payload, as written
  // Reserved big, filled, then published short: the rest is cleared.
  CellHeader* shrunk = producer.TryReserve(3 * 64);
  ASSERT_NE(shrunk, nullptr);
  std::memset(shrunk->message(), 0x03, 3 * 64);
  FillMessage(shrunk, 3, 8);
  producer.Publish();
  const size_t shrunk_end = 6 * 64 + 64;
  EXPECT_TRUE(all_clear(shrunk_end, shrunk_end + 3 * 64));
  // Releasing clears every line released, payload lines included.
  ASSERT_TRUE(PopAndCheck(consumer, memory, 1, 8));
  EXPECT_TRUE(all_clear(0, 64));
  const CellHeader* cell = consumer.Peek();
  ASSERT_NE(cell, nullptr);
  ASSERT_EQ(cell->length, 4u * 64 + 40);
  EXPECT_EQ(cell->immediate, 2u);
  for (size_t i = 0; i < cell->length; ++i) {
    ASSERT_EQ(cell->message()[i], std::byte{0x02}) << "byte " << i;
  }
  consumer.Release();
  EXPECT_TRUE(all_clear(64, 6 * 64));
  ASSERT_TRUE(PopAndCheck(consumer, memory, 3, 8));
  EXPECT_TRUE(all_clear(0, kCapacity));
}

TEST(SpscRingTest, FillAndDrainInOrder) {
  constexpr size_t kCapacity = 8192;
  RingMemory memory(kCapacity);
  RingProducer producer(memory.get(), kCapacity);
  RingConsumer consumer(memory.get(), kCapacity);
  const size_t max_message = MaxRecordMessage(kCapacity);
  uint64_t next_push = 0;
  uint64_t next_pop = 0;
  for (int round = 0; round < 50; ++round) {
    while (Push(producer, next_push, MessageLength(next_push, max_message))) {
      ++next_push;
    }
    if (next_push == next_pop) {
      // The empty ring refused a record that does not fit before the end:
      // it published a wrap marker, to be skipped by the consumer first.
      EXPECT_EQ(consumer.Peek(), nullptr);
      while (Push(producer, next_push, MessageLength(next_push, max_message))) {
        ++next_push;
      }
    }
    ASSERT_GT(next_push, next_pop) << "round " << round;
    while (next_pop < next_push) {
      ASSERT_TRUE(PopAndCheck(consumer, memory, next_pop,
                              MessageLength(next_pop, max_message)));
      ++next_pop;
    }
    EXPECT_EQ(consumer.Peek(), nullptr);
  }
}

// A producer that found the ring full is told so once by the consumer that
// frees room (it may sleep waiting for that room); one that never did is
// not.
TEST(SpscRingTest, ConsumerLearnsThatTheProducerWaitedForRoom) {
  constexpr size_t kCapacity = 4096;
  RingMemory memory(kCapacity);
  RingProducer producer(memory.get(), kCapacity);
  RingConsumer consumer(memory.get(), kCapacity);
  uint64_t next_push = 0;
  ASSERT_TRUE(Push(producer, next_push++, 8));
  ASSERT_TRUE(PopAndCheck(consumer, memory, 0, 8));
  EXPECT_FALSE(consumer.TakeProducerWaiting());
  while (Push(producer, next_push, 8)) ++next_push;  // until it refuses
  ASSERT_TRUE(PopAndCheck(consumer, memory, 1, 8));
  EXPECT_TRUE(consumer.TakeProducerWaiting());
  EXPECT_FALSE(consumer.TakeProducerWaiting());  // told once
  ASSERT_TRUE(Push(producer, next_push++, 8));   // the freed room
}

TEST(SpscRingTest, FullRingRefusesUntilReleased) {
  constexpr size_t kCapacity = 4096;
  const size_t max_message = MaxRecordMessage(kCapacity);
  RingMemory memory(kCapacity);
  RingProducer producer(memory.get(), kCapacity);
  RingConsumer consumer(memory.get(), kCapacity);
  // 63 one-line records: the ring is full (a reservation keeps the line
  // after it free).
  uint64_t pushed = 0;
  while (Push(producer, pushed, 40)) ++pushed;
  ASSERT_EQ(pushed, 63u);
  EXPECT_EQ(producer.TryReserve(0), nullptr);
  EXPECT_EQ(producer.TryReserve(0), nullptr);  // asking again changes nothing
  // One released line makes room for one line: the last of the data.
  ASSERT_TRUE(PopAndCheck(consumer, memory, 0, 40));
  CellHeader* cell = producer.TryReserve(48);
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(memory.OffsetOf(cell), kCapacity - 64);
  FillMessage(cell, pushed++, 48);
  producer.Publish();
  EXPECT_EQ(producer.TryReserve(0), nullptr);
  ASSERT_TRUE(PopAndCheck(consumer, memory, 1, 40));
  EXPECT_EQ(producer.TryReserve(100), nullptr);  // two lines: not yet
  ASSERT_TRUE(Push(producer, pushed++, 0));      // one line: at offset 0
  EXPECT_EQ(producer.TryReserve(0), nullptr);
  // The largest record needs an empty ring.
  for (uint64_t seq = 2; seq < 63; ++seq) {
    EXPECT_EQ(producer.TryReserve(max_message), nullptr);
    ASSERT_TRUE(PopAndCheck(consumer, memory, seq, 40));
  }
  EXPECT_EQ(producer.TryReserve(max_message), nullptr);
  ASSERT_TRUE(PopAndCheck(consumer, memory, 63, 48));
  EXPECT_EQ(producer.TryReserve(max_message), nullptr);
  ASSERT_TRUE(PopAndCheck(consumer, memory, 64, 0));
  EXPECT_EQ(consumer.Peek(), nullptr);
  // Empty, head at line 1: it ends exactly at the end of the data.
  cell = producer.TryReserve(max_message);
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(memory.OffsetOf(cell), 64u);
  FillMessage(cell, 65, max_message);
  producer.Publish();
  ASSERT_TRUE(PopAndCheck(consumer, memory, 65, max_message));
  // Empty, head at line 1 again (after a one-line record at 0): the largest
  // record does not fit before the end, so the producer publishes a wrap
  // marker, which the consumer must skip (and release) before the record
  // fits at the start.
  ASSERT_TRUE(Push(producer, 66, 0));
  ASSERT_TRUE(PopAndCheck(consumer, memory, 66, 0));
  ASSERT_TRUE(Push(producer, 67, 0));
  ASSERT_TRUE(PopAndCheck(consumer, memory, 67, 0));
  EXPECT_EQ(producer.TryReserve(max_message), nullptr);
  EXPECT_EQ(consumer.Peek(), nullptr);  // skips the marker
  cell = producer.TryReserve(max_message);
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(memory.OffsetOf(cell), 0u);
  FillMessage(cell, 68, max_message);
  producer.Publish();
  ASSERT_TRUE(PopAndCheck(consumer, memory, 68, max_message));
  EXPECT_EQ(consumer.Peek(), nullptr);
}

// From any offset, an empty ring takes a largest record, after at most one
// wrap marker the consumer skips.
TEST(SpscRingTest, LargestRecordFitsFromEveryOffset) {
  constexpr size_t kCapacity = 4096 + 3 * 64;  // not a power of two
  const size_t max_message = MaxRecordMessage(kCapacity);
  RingMemory memory(kCapacity);
  RingProducer producer(memory.get(), kCapacity);
  RingConsumer consumer(memory.get(), kCapacity);
  uint64_t seq = 0;
  for (size_t line = 0; line < 2 * kCapacity / 64; ++line) {
    CellHeader* cell = producer.TryReserve(max_message);
    if (cell == nullptr) {
      EXPECT_EQ(consumer.Peek(), nullptr);  // only a wrap marker
      cell = producer.TryReserve(max_message);
    }
    ASSERT_NE(cell, nullptr) << "line " << line;
    FillMessage(cell, seq, max_message);
    producer.Publish();
    ASSERT_TRUE(PopAndCheck(consumer, memory, seq++, max_message));
    // Move on by one line.
    ASSERT_TRUE(Push(producer, seq, 0));
    ASSERT_TRUE(PopAndCheck(consumer, memory, seq++, 0));
  }
}

TEST(SpscRingTest, PeekReturnsSameRecordUntilRelease) {
  RingMemory memory(4096);
  RingProducer producer(memory.get(), 4096);
  RingConsumer consumer(memory.get(), 4096);
  ASSERT_TRUE(Push(producer, 7, 100));
  ASSERT_TRUE(Push(producer, 8, 0));
  const CellHeader* first = consumer.Peek();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(consumer.Peek(), first);
  consumer.Release();
  const CellHeader* second = consumer.Peek();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(memory.OffsetOf(second), RecordBytes(100));
  EXPECT_EQ(second->length, 0u);
  consumer.Release();
  EXPECT_EQ(consumer.Peek(), nullptr);
}

// Reserving again (another size) before Publish is allowed; the record's
// extent follows the length published, not the largest reservation.
TEST(SpscRingTest, ReserveAgainBeforePublish) {
  constexpr size_t kCapacity = 4096;
  RingMemory memory(kCapacity);
  RingProducer producer(memory.get(), kCapacity);
  RingConsumer consumer(memory.get(), kCapacity);
  CellHeader* big = producer.TryReserve(1000);
  ASSERT_NE(big, nullptr);
  std::memset(big->message(), 0xFF, 1000);  // junk past what is published
  CellHeader* small = producer.TryReserve(10);
  ASSERT_EQ(small, big);
  FillMessage(small, 1, 10);
  producer.Publish();
  ASSERT_TRUE(Push(producer, 2, 30));
  ASSERT_TRUE(PopAndCheck(consumer, memory, 1, 10));
  const CellHeader* next = consumer.Peek();
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(memory.OffsetOf(next), 64u);
  ASSERT_TRUE(PopAndCheck(consumer, memory, 2, 30));
  EXPECT_EQ(consumer.Peek(), nullptr);

  // A reservation that wrapped (the marker is published) and is then given
  // up for a smaller one: the consumer skips the marker.
  for (;;) {
    CellHeader* cell = producer.TryReserve(0);
    ASSERT_NE(cell, nullptr);
    if (memory.OffsetOf(cell) == kCapacity - 128) break;
    FillMessage(cell, 3, 0);
    producer.Publish();
    ASSERT_TRUE(PopAndCheck(consumer, memory, 3, 0));
  }
  CellHeader* wrapped = producer.TryReserve(500);
  ASSERT_NE(wrapped, nullptr);
  EXPECT_EQ(memory.OffsetOf(wrapped), 0u);
  CellHeader* again = producer.TryReserve(20);
  ASSERT_EQ(again, wrapped);
  FillMessage(again, 4, 20);
  producer.Publish();
  ASSERT_TRUE(PopAndCheck(consumer, memory, 4, 20));
  EXPECT_EQ(consumer.Peek(), nullptr);
}

// Many laps around small rings, with random sizes from 0 bytes to the
// largest and random fill levels, keep FIFO order and every byte.
TEST(SpscRingTest, WrapsAroundWithMixedSizes) {
  for (size_t capacity : {size_t{4096}, size_t{4096 + 5 * 64}, size_t{32768}}) {
    SCOPED_TRACE(capacity);
    RingMemory memory(capacity);
    RingProducer producer(memory.get(), capacity);
    RingConsumer consumer(memory.get(), capacity);
    const size_t max_message = MaxRecordMessage(capacity);
    uint64_t next_push = 0;
    uint64_t next_pop = 0;
    uint64_t bytes_pushed = 0;
    std::vector<size_t> lengths;
    for (uint64_t step = 0; step < 20000; ++step) {
      const uint64_t h = SplitMix(step ^ capacity);
      const int pushes = h % 6;
      for (int i = 0; i < pushes; ++i) {
        // Every length from 0 to the largest comes up.
        const size_t length = (h >> 16) % 4 == 0
                                  ? SplitMix(next_push) % (max_message + 1)
                                  : MessageLength(next_push, max_message);
        if (!Push(producer, next_push, length)) break;
        bytes_pushed += length;
        lengths.push_back(length);
        ++next_push;
      }
      const int pops = (h >> 8) % 6;
      for (int i = 0; i < pops && next_pop < next_push; ++i) {
        ASSERT_TRUE(PopAndCheck(consumer, memory, next_pop, lengths[next_pop]));
        ++next_pop;
      }
      if (next_pop == next_push) ASSERT_EQ(consumer.Peek(), nullptr);
    }
    EXPECT_GT(bytes_pushed, 20 * capacity);  // many laps
  }
}

#if !defined(__SANITIZE_THREAD__)
// A length beyond the reservation would make the consumer look for the next
// header in lines the producer never reserved: Publish refuses loudly.
TEST(SpscRingDeathTest, PublishBeyondReservationAborts) {
  RingMemory memory(4096);
  RingProducer producer(memory.get(), 4096);
  CellHeader* cell = producer.TryReserve(40);
  ASSERT_NE(cell, nullptr);
  cell->length = 49;  // two lines; one was reserved
  cell->flags = 0;
  EXPECT_DEATH(producer.Publish(), "");
  cell->length = 0;
  cell->flags = kCellFlagWrap;  // the ring's own
  EXPECT_DEATH(producer.Publish(), "");
}
#endif

// A ring's layout, worked out ahead for a list of (reserved, published)
// sizes by the documented rules: records back to back, RecordBytes(length)
// apart; a wrap marker first when RecordBytes(reserved) does not fit before
// the end. It yields adversarial payloads: every line of a message (and of
// the reserved bytes after it, which the producer fills too) holds, in each
// of its 32-bit words, the sequence number the consumer will expect when it
// next looks for a header at that line's offset. Unless the ring clears a
// header position before it may be read, such a stale line is taken for a
// header.
class AdversarialPlan {
 public:
  struct Record {
    size_t reserved;    // bytes asked of TryReserve
    size_t length;      // bytes published
    uint64_t position;  // of the header, in bytes since the ring's start
    uint32_t sequence;
  };

  AdversarialPlan(size_t capacity, uint64_t records, uint32_t first_sequence,
                  uint64_t seed)
      : capacity_(capacity), headers_(capacity / kCacheLineBytes) {
    const size_t max_message = MaxRecordMessage(capacity);
    uint64_t head = 0;
    size_t offset = 0;
    uint32_t sequence = first_sequence;
    records_.reserve(records);
    for (uint64_t r = 0; r < records; ++r) {
      const uint64_t h = SplitMix(seed + r);
      const size_t reserved = MessageLength(h, max_message);
      // Often shorter than reserved, so that junk follows the message.
      const size_t length =
          (h >> 62) == 0 ? reserved : (h >> 20) % (reserved + 1);
      if (offset + RecordBytes(reserved) > capacity) {  // a wrap marker
        headers_[offset / kCacheLineBytes].push_back({head, sequence});
        sequence = NextRecordSequence(sequence);
        head += capacity - offset;
        offset = 0;
      }
      records_.push_back({reserved, length, head, sequence});
      headers_[offset / kCacheLineBytes].push_back({head, sequence});
      sequence = NextRecordSequence(sequence);
      head += RecordBytes(length);
      offset += RecordBytes(length);
      if (offset == capacity) offset = 0;
    }
    after_last_ = sequence;
  }

  size_t size() const { return records_.size(); }
  const Record& operator[](size_t r) const { return records_[r]; }

  // Writes record `r`'s reserved bytes.
  void Fill(size_t r, CellHeader* cell) const {
    const Record& record = records_[r];
    ForEachByte(r, record.reserved, [&](size_t i, uint8_t value) {
      cell->message()[i] = static_cast<std::byte>(value);
    });
    cell->length = static_cast<uint32_t>(record.length);
    cell->flags = 0;
    cell->immediate = record.sequence;
  }

  // Whether `cell` is record `r`, every message byte checked.
  bool Matches(size_t r, const CellHeader* cell) const {
    const Record& record = records_[r];
    if (cell->length != record.length || cell->flags != 0 ||
        cell->immediate != record.sequence ||
        cell->sequence.load(std::memory_order_relaxed) != record.sequence) {
      return false;
    }
    bool good = true;
    ForEachByte(r, record.length, [&](size_t i, uint8_t value) {
      good = good && cell->message()[i] == static_cast<std::byte>(value);
    });
    return good;
  }

  // Offset in the data where record `r`'s header must be.
  size_t OffsetOf(size_t r) const { return records_[r].position % capacity_; }

 private:
  // The sequence number the consumer expects when it next looks for a
  // header at the line that starts at `line` (or later at the same offset).
  uint32_t Bait(uint64_t line) const {
    const auto& at_offset = headers_[(line % capacity_) / kCacheLineBytes];
    auto it = std::lower_bound(
        at_offset.begin(), at_offset.end(), line,
        [](const std::pair<uint64_t, uint32_t>& header, uint64_t position) {
          return header.first < position;
        });
    return it == at_offset.end() ? after_last_ : it->second;
  }

  // Calls f(i, value) for message byte i of record r, i < n: in the
  // record's own line, the record number and a pattern; beyond, the bait.
  template <typename F>
  void ForEachByte(size_t r, size_t n, F f) const {
    const uint64_t position = records_[r].position;
    uint64_t bait_line = 0;
    uint32_t bait = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t at = position + sizeof(CellHeader) + i;
      const uint64_t line = at / kCacheLineBytes * kCacheLineBytes;
      if (line == position) {
        f(i, i < 8 ? static_cast<uint8_t>(uint64_t{r} >> (8 * i))
                   : PatternByte(r, i));
        continue;
      }
      if (line != bait_line) {
        bait_line = line;
        bait = Bait(line);
      }
      f(i, static_cast<uint8_t>(bait >> (8 * (at % 4))));  // little-endian
    }
  }

  size_t capacity_;
  std::vector<Record> records_;
  // By line offset: (position, sequence) of every header (markers too)
  // placed there, in order.
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> headers_;
  uint32_t after_last_ = 0;
};

// Pushes record `r` of `plan`; false when the ring lacks room.
bool PushPlanned(RingProducer& producer, const RingMemory& memory,
                 const AdversarialPlan& plan, size_t r) {
  CellHeader* cell = producer.TryReserve(plan[r].reserved);
  if (cell == nullptr) return false;
  EXPECT_EQ(memory.OffsetOf(cell), plan.OffsetOf(r)) << "record " << r;
  plan.Fill(r, cell);
  producer.Publish();
  return true;
}

// Single thread, random interleaving, several laps of baits.
void RunAdversarialPlan(size_t capacity, uint64_t records,
                        uint32_t first_sequence) {
  RingMemory memory(capacity);
  RingProducer producer(memory.get(), capacity);
  RingConsumer consumer(memory.get(), capacity);
  RingTestPeer::SetFirstSequence(producer, consumer, first_sequence);
  const AdversarialPlan plan(capacity, records, first_sequence, capacity);
  size_t next_push = 0;
  size_t next_pop = 0;
  for (uint64_t step = 0; next_pop < plan.size(); ++step) {
    const uint64_t h = SplitMix(~step);
    for (int i = h % 5; i > 0 && next_push < plan.size(); --i) {
      if (!PushPlanned(producer, memory, plan, next_push)) break;
      ++next_push;
    }
    for (int i = (h >> 8) % 5; i > 0; --i) {
      const CellHeader* cell = consumer.Peek();
      if (next_pop == next_push) {
        // Empty: every header position it may look at holds bait.
        ASSERT_EQ(cell, nullptr)
            << "a stale line taken for record " << next_pop;
        break;
      }
      ASSERT_NE(cell, nullptr);
      ASSERT_EQ(memory.OffsetOf(cell), plan.OffsetOf(next_pop));
      ASSERT_TRUE(plan.Matches(next_pop, cell)) << "record " << next_pop;
      consumer.Release();
      ++next_pop;
    }
  }
  EXPECT_EQ(consumer.Peek(), nullptr);
}

TEST(SpscRingTest, StalePayloadIsNeverTakenForAHeader) {
  // The simplest case: junk past a record's length, at the very next
  // header position, holding the next sequence number.
  {
    RingMemory memory(4096);
    RingProducer producer(memory.get(), 4096);
    RingConsumer consumer(memory.get(), 4096);
    CellHeader* cell = producer.TryReserve(MaxRecordMessage(4096));
    ASSERT_NE(cell, nullptr);
    for (size_t i = 0; i + 4 <= MaxRecordMessage(4096); i += 4) {
      const uint32_t next_sequence = 2;
      std::memcpy(cell->message() + i, &next_sequence, 4);
    }
    cell->length = 0;
    cell->flags = 0;
    producer.Publish();
    ASSERT_NE(consumer.Peek(), nullptr);
    consumer.Release();
    EXPECT_EQ(consumer.Peek(), nullptr);
  }
  RunAdversarialPlan(4096, 20000, 1);
  RunAdversarialPlan(4096 + 7 * 64, 20000, 1);
  RunAdversarialPlan(32768, 20000, 1);
}

// Sequence numbers wrap at 32 bits and skip 0 (what cleared header
// positions hold); the baits follow them across the wrap.
TEST(SpscRingTest, SequenceNumbersWrapPastZero) {
  RunAdversarialPlan(4096, 5000, UINT32_MAX - 2000);
  RunAdversarialPlan(4096, 200, UINT32_MAX);
}

// A producer and a consumer thread run adversarial records through a small
// ring: with real concurrency, the consumer polls a header position while
// the producer writes the record before it, baits included.
TEST(SpscRingTest, TwoThreadAdversarialPayloads) {
  constexpr size_t kCapacity = 4096 + 3 * 64;
#if defined(__SANITIZE_THREAD__)
  constexpr uint64_t kRecords = 100000;
#else
  constexpr uint64_t kRecords = 500000;
#endif
  const AdversarialPlan plan(kCapacity, kRecords, 1, 12345);
  RingMemory memory(kCapacity);
  RingProducer producer(memory.get(), kCapacity);
  RingConsumer consumer(memory.get(), kCapacity);
  std::thread producer_thread([&] {
    for (size_t r = 0; r < plan.size(); ++r) {
      CellHeader* cell;
      while ((cell = producer.TryReserve(plan[r].reserved)) == nullptr) {
        std::this_thread::yield();
      }
      plan.Fill(r, cell);
      producer.Publish();
    }
  });
  uint64_t bad_records = 0;
  for (size_t r = 0; r < plan.size(); ++r) {
    const CellHeader* cell;
    while ((cell = consumer.Peek()) == nullptr) std::this_thread::yield();
    if ((memory.OffsetOf(cell) != plan.OffsetOf(r) || !plan.Matches(r, cell)) &&
        ++bad_records <= 5) {
      ADD_FAILURE() << "record " << r << " is wrong (offset "
                    << memory.OffsetOf(cell) << ", expected "
                    << plan.OffsetOf(r) << ", length " << cell->length << ")";
    }
    consumer.Release();
  }
  producer_thread.join();
  EXPECT_EQ(bad_records, 0u);
  EXPECT_EQ(consumer.Peek(), nullptr);
}

// Producer and consumer threads push many records of random sizes (0 bytes
// to the largest) through a small ring; the consumer checks the order and
// every byte. Runs under ThreadSanitizer in CI.
TEST(SpscRingTest, TwoThreadStressChecksEveryByte) {
  constexpr size_t kCapacity = 8192;
  const size_t max_message = MaxRecordMessage(kCapacity);
#if defined(__SANITIZE_THREAD__)
  constexpr uint64_t kMessages = 300000;
#else
  constexpr uint64_t kMessages = 3000000;
#endif
  RingMemory memory(kCapacity);
  RingProducer producer(memory.get(), kCapacity);
  RingConsumer consumer(memory.get(), kCapacity);

  std::thread producer_thread([&] {
    for (uint64_t seq = 0; seq < kMessages; ++seq) {
      const size_t length = MessageLength(seq, max_message);
      CellHeader* cell;
      while ((cell = producer.TryReserve(length)) == nullptr) {
        std::this_thread::yield();
      }
      FillMessage(cell, seq, length);
      producer.Publish();
    }
  });

  uint64_t bad_messages = 0;
  for (uint64_t seq = 0; seq < kMessages; ++seq) {
    const CellHeader* cell;
    while ((cell = consumer.Peek()) == nullptr) std::this_thread::yield();
    const size_t length = MessageLength(seq, max_message);
    if ((!memory.Contains(cell) || !MessageIsIntact(cell, seq, length)) &&
        ++bad_messages <= 5) {
      ADD_FAILURE() << "message " << seq << " is wrong (length " << cell->length
                    << ", expected " << length << ", immediate "
                    << cell->immediate << ")";
    }
    consumer.Release();
  }
  producer_thread.join();
  EXPECT_EQ(bad_messages, 0u);
  EXPECT_EQ(consumer.Peek(), nullptr);
}

}  // namespace
}  // namespace minimpi::net::shm
