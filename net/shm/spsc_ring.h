// A single-producer/single-consumer ring of variable-length records that
// lives in memory shared between two processes (or two threads). It is the
// mailbox of net/shm: one ring per (receiver vci, sender vci) pair, the
// producer being the sender's VCI and the consumer the receiver's VCI.
//
// Layout, in the shared memory: a control block (RingControl: the tail, the
// consumer's position, on its own cache line), then `capacity` data bytes.
// The data holds records back to back, each 64-byte aligned: a CellHeader
// followed by its message bytes, the whole rounded up to 64 bytes
// (RecordBytes), so an 8-byte message behind a 16-byte protocol header takes
// one cache line with its CellHeader, and a 32 KiB ring holds 511 of them.
// A record never straddles the end of the data: one that does not fit before
// it is preceded by a wrap marker (kCellFlagWrap), a header-only record that
// says "continue at the start"; the consumer skips it, so Peek never returns
// one. Positions (bytes produced, bytes released) only grow.
//
// A published record carries its sequence number (records and markers
// published before it + 1, low 32 bits, skipping 0), written last with
// release order: the consumer polls the header where the next record will
// start, so receiving a small message moves one cache line between cores,
// not two (no shared head counter). Zeroed memory is an empty ring (every
// sequence word 0, the consumer expects 1 at offset 0), so a fresh
// ftruncate'd segment needs no initialisation, and attaching reads and
// writes nothing, so its pages stay untouched until used.
//
// Why a stale payload is never taken for a header. Records vary in length,
// so the line where the consumer looks for the next header may, on an
// earlier lap, have held the middle of a payload (or bytes a producer wrote
// past a record's length), whose bytes are arbitrary and may equal the
// sequence number the consumer expects there. The ring keeps this rule:
// every line of the free room (the bytes the consumer has released and the
// producer has not reserved since) holds 0 in its header's sequence word.
// - Zeroed memory starts so.
// - The consumer, when it releases a record (or skips a wrap marker), zeroes
//   the sequence word of every line the record spans, then release-stores
//   the tail that hands those lines back. The producer writes in them only
//   after it has acquired that tail, so its stores come later.
// - The producer, when it publishes a record shorter than what it reserved
//   since the last publication, zeroes the lines it reserved beyond the
//   record (they stay free and may hold bytes it wrote), before the
//   record's release-store.
// - Nothing else writes in the free room.
// The consumer looks for a header at E, the end of the record it last took,
// only after acquiring that record; E is free room until the producer
// publishes the record that starts there (the producer reserves from E on),
// and the consumer never looks at lines inside a record it has not taken.
// So it reads at E either 0 or the sequence of the record that starts there:
// never a stale one. (A reservation still keeps the line after it free, as
// when the producer cleared the next header there: the capacities callers
// see did not change.)
//
// Why the consumer clears, not the producer: the producer used to zero the
// next header position ahead of each record, so each small message wrote
// two lines, the second being the very line the polling consumer was
// reading; clearing on release puts that store on the consumer, which owns
// the line at that moment (8-byte message rate, interleaved medians: 5.70
// -> 6.46 million messages a second).
//
// The producer keeps its position and a cached copy of the consumer's in
// process-private memory, reading the shared tail only when the ring looks
// full. No locks, atomic read-modify-writes, allocations or system calls:
// the caller serialises each side (the VCI lock).
//
// Owned by: net/shm. Called by: ShmTransport and ring_test.
#ifndef MINIMPI_NET_SHM_SPSC_RING_H_
#define MINIMPI_NET_SHM_SPSC_RING_H_

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace minimpi::net::shm {

inline constexpr size_t kCacheLineBytes = 64;

// The producer's position is not shared: the consumer learns of a new
// record from the sequence number in the record itself, so a message costs
// the consumer one cache line (the record), not two (a head counter and the
// record). Only the consumer's position is shared, read by the producer when
// the ring looks full. The unused line keeps the tail's 128-byte pair (what
// adjacent-line prefetchers fetch) apart from the first record's line.
struct RingControl {
  alignas(kCacheLineBytes) std::byte unused[kCacheLineBytes];
  // Bytes the consumer has released (wrap markers' skipped bytes included);
  // written only by the consumer.
  alignas(kCacheLineBytes) std::atomic<uint64_t> tail;
  // Set by the producer when it found the ring full, so that a consumer
  // which then frees room tells it (a producer may sleep waiting for room,
  // and room is no message that would wake it). Beside the tail: the
  // consumer looks at it where it writes anyway.
  std::atomic<uint32_t> producer_waiting;
};
static_assert(sizeof(RingControl) == 2 * kCacheLineBytes);
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// Flags of a record. Zero is a caller's message; anything else belongs to
// the transport itself and is never handed to the caller as a kReceive.
inline constexpr uint32_t kCellFlagWriteImmediate = 1;
// A large contiguous write with immediate that the receiver performs itself
// (it reads the bytes with cross-memory attach when it consumes the record,
// like a NIC's DMA engine would, so the sender's thread is not the one
// copying); the message is a PullRequest.
inline constexpr uint32_t kCellFlagPullWrite = 2;
// The ring's own: a wrap marker, the rest of the data up to its end is
// unused and the next record starts at offset 0. Never returned by Peek;
// callers must not publish it.
inline constexpr uint32_t kCellFlagWrap = 4;

struct PullRequest {
  uint64_t source = 0;        // the sender's address
  uint64_t destination = 0;   // the receiver's address
  uint64_t length = 0;        // bytes to pull
  uint64_t write_length = 0;  // of the whole write (the sender did the rest)
  // A word in the sender's memory the receiver sets to 1 (with a
  // cross-memory write) once it has read the data: not a ring message, so
  // two ranks whose rings are full of pulls never wait on each other.
  uint64_t done_flag = 0;
};

struct CellHeader {
  // Message bytes that follow this header. It also tells the consumer where
  // the next record starts, so it must not exceed the bytes reserved.
  uint32_t length = 0;
  uint32_t flags = 0;      // kCellFlag*
  uint32_t immediate = 0;  // kCellFlagWriteImmediate: the immediate data
  // Records published before this one + 1 (low 32 bits, 0 skipped), stored
  // last with release order: the consumer's signal that the record is
  // complete. 0 means "nothing here yet" (see the file comment).
  std::atomic<uint32_t> sequence{0};
  // The message starts right after the header.
  std::byte* message() { return reinterpret_cast<std::byte*>(this + 1); }
  const std::byte* message() const {
    return reinterpret_cast<const std::byte*>(this + 1);
  }
};
static_assert(sizeof(CellHeader) == 16);

// Ring capacities (data bytes) must be a multiple of 64 (any, not only
// powers of two), at least kMinRingCapacity and at most 4 GiB (so that a
// record's length fits the header's 32 bits).
inline constexpr size_t kMinRingCapacity = 4096;
constexpr bool IsValidRingCapacity(size_t capacity) {
  return capacity % kCacheLineBytes == 0 && capacity >= kMinRingCapacity &&
         capacity <= (size_t{1} << 32);
}

// Bytes a record carrying `message_bytes` bytes occupies: header and
// message, rounded up to a cache line.
constexpr size_t RecordBytes(size_t message_bytes) {
  return (sizeof(CellHeader) + message_bytes + kCacheLineBytes - 1) /
         kCacheLineBytes * kCacheLineBytes;
}

// Bytes one ring occupies (control block + data) for `capacity` data bytes.
constexpr size_t RingBytes(size_t capacity) {
  return sizeof(RingControl) + capacity;
}

// Largest message one record may carry in a ring of `capacity` bytes: its
// record plus the line kept free after it (see the file comment) fill the
// ring. A record of any size up to this one fits once the consumer has
// drained the ring; the larger it is, the fewer fit at once.
constexpr size_t MaxRecordMessage(size_t capacity) {
  return capacity < kCacheLineBytes + sizeof(CellHeader)
             ? 0
             : capacity - kCacheLineBytes - sizeof(CellHeader);
}

// Sequence number of the record after the one numbered `sequence`: 0 is
// skipped, being what clear header positions hold.
constexpr uint32_t NextRecordSequence(uint32_t sequence) {
  return sequence == UINT32_MAX ? 1 : sequence + 1;
}

class RingTestPeer;

// The sending side of a ring. Copyable view; holds no resources.
class RingProducer {
 public:
  RingProducer() = default;
  // `ring` points at RingBytes(capacity) zeroed bytes, 64-byte aligned: a
  // fresh ring. Attaching reads nothing, so no page is touched before the
  // first message.
  RingProducer(void* ring, size_t capacity)
      : control_(static_cast<RingControl*>(ring)),
        data_(static_cast<std::byte*>(ring) + sizeof(RingControl)),
        capacity_(capacity),
        room_end_(capacity - kCacheLineBytes) {
    assert(IsValidRingCapacity(capacity));
  }

  bool attached() const { return control_ != nullptr; }

  // A header with room for `message_bytes` (<= MaxRecordMessage) bytes after
  // it, to be filled and then published; nullptr when the ring lacks room
  // now. Calling it again before Publish (with the same or another size) is
  // allowed: the last reservation is the one Publish publishes. It may
  // publish a wrap marker (even when it then returns nullptr), which the
  // consumer skips. An empty ring takes a record at once when its
  // RecordBytes is at most capacity / 2; a larger one may first need the
  // consumer to pass the marker (its next Peek).
  CellHeader* TryReserve(size_t message_bytes) {
    assert(message_bytes <= MaxRecordMessage(capacity_));
    const size_t extent = RecordBytes(message_bytes);
    if (offset_ + extent > capacity_) {
      // The record would straddle the end: skip to the start with a wrap
      // marker, which needs its own line and the first line (kept free,
      // like the line after any reservation). Publishing it now rather than
      // with the record lets a record that fits only in an empty ring (up to
      // MaxRecordMessage) be placed: the consumer then releases the skipped
      // bytes. A record larger than the ring never gets here with room (at
      // offset 0 the marker would need the whole ring and a line), so never
      // loops.
      if (!HasRoom(capacity_ - offset_)) {
        reserved_extent_ = 0;
        return nullptr;
      }
      PublishWrapMarker();
    }
    if (!HasRoom(extent)) {
      reserved_extent_ = 0;
      return nullptr;
    }
    reserved_extent_ = extent;
    written_extent_ = std::max(written_extent_, extent);
    return At(offset_);
  }

  // Publishes the record last reserved: the caller has filled its length
  // (<= the bytes reserved), flags (not kCellFlagWrap), immediate and
  // message. Aborts when the length exceeds the reservation (or nothing was
  // reserved): the consumer would look for the next header in lines the
  // producer does not own.
  void Publish() {
    CellHeader* cell = At(offset_);
    const size_t extent = RecordBytes(cell->length);
    if (extent > reserved_extent_ || cell->flags == kCellFlagWrap) {
      std::abort();
    }
    // Lines reserved since the last publication beyond this record stay
    // free: clear what may have been written there (see the file comment);
    // relaxed, as the release below orders it.
    for (size_t line = extent; line < written_extent_;
         line += kCacheLineBytes) {
      At(offset_ + line)->sequence.store(0, std::memory_order_relaxed);
    }
    reserved_extent_ = 0;
    written_extent_ = 0;
    head_ += extent;
    offset_ += extent;
    if (offset_ == capacity_) offset_ = 0;
    // Release: the record's contents (and those zeros) are visible before
    // its sequence number.
    cell->sequence.store(sequence_, std::memory_order_release);
    sequence_ = NextRecordSequence(sequence_);
  }

 private:
  friend class RingTestPeer;

  CellHeader* At(size_t offset) const {
    return reinterpret_cast<CellHeader*>(data_ + offset);
  }

  // Whether `bytes` from the head, and the line after them, are free.
  bool HasRoom(size_t bytes) {
    if (head_ + bytes <= room_end_) return true;
    // Looks full. Acquire: the consumer has finished reading the records it
    // released.
    room_end_ = control_->tail.load(std::memory_order_acquire) + capacity_ -
                kCacheLineBytes;
    if (head_ + bytes <= room_end_) return true;
    // Full: say so, then look once more. Either that look sees room the
    // consumer freed meanwhile, or the consumer, looking after freeing it,
    // sees the flag (TakeProducerWaiting).
    control_->producer_waiting.store(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    room_end_ = control_->tail.load(std::memory_order_acquire) + capacity_ -
                kCacheLineBytes;
    return head_ + bytes <= room_end_;
  }

  // Publishes a wrap marker at the head (HasRoom(capacity_ - offset_) has
  // been checked) and moves the head to the start of the data.
  void PublishWrapMarker() {
    CellHeader* marker = At(offset_);
    marker->length = 0;
    marker->flags = kCellFlagWrap;
    marker->immediate = 0;
    head_ += capacity_ - offset_;
    // The lines after the marker stay free room: clear what a reservation
    // given up for the marker may have written there (the marker's own
    // line is the marker).
    for (size_t line = kCacheLineBytes; line < written_extent_;
         line += kCacheLineBytes) {
      At(offset_ + line)->sequence.store(0, std::memory_order_relaxed);
    }
    written_extent_ = 0;
    offset_ = 0;
    marker->sequence.store(sequence_, std::memory_order_release);
    sequence_ = NextRecordSequence(sequence_);
  }

  RingControl* control_ = nullptr;
  std::byte* data_ = nullptr;
  size_t capacity_ = 0;
  uint64_t head_ = 0;           // bytes published (markers' skips included)
  size_t offset_ = 0;           // head_ % capacity_: where the next record goes
  uint64_t room_end_ = 0;       // cached tail + capacity - one line
  size_t reserved_extent_ = 0;  // of the last reservation; 0: none
  // The most bytes from the head reserved since the last publication (the
  // caller may have written all of them).
  size_t written_extent_ = 0;
  uint32_t sequence_ = 1;  // of the next record or marker
};

// The receiving side of a ring. Copyable view; holds no resources.
class RingConsumer {
 public:
  RingConsumer() = default;
  // Same memory and capacity as the producer's. Attaching reads nothing.
  RingConsumer(void* ring, size_t capacity)
      : control_(static_cast<RingControl*>(ring)),
        data_(static_cast<std::byte*>(ring) + sizeof(RingControl)),
        capacity_(capacity) {
    assert(IsValidRingCapacity(capacity));
  }

  bool attached() const { return control_ != nullptr; }

  // The oldest unreleased record (never a wrap marker), or nullptr when the
  // ring is empty. Stays valid (and is returned again) until Release.
  const CellHeader* Peek() {
    // At most twice round: a marker is never at offset 0, so never followed
    // by another.
    for (;;) {
      const CellHeader* cell = At(offset_);
      // Acquire: pairs with Publish, so the record's contents are visible
      // (and so are the lines it cleared).
      if (cell->sequence.load(std::memory_order_acquire) != sequence_) {
        return nullptr;
      }
      if (cell->flags != kCellFlagWrap) return cell;
      // A wrap marker: release its line and the unused bytes after it now,
      // as the producer may need them to place the record that follows.
      // The bytes after it are clear already (nothing was written there
      // this lap); its own line is cleared (see the file comment).
      MutableAt(offset_)->sequence.store(0, std::memory_order_relaxed);
      tail_ += capacity_ - offset_;
      offset_ = 0;
      sequence_ = NextRecordSequence(sequence_);
      control_->tail.store(tail_, std::memory_order_release);
    }
  }

  // Hands the record of the last Peek back to the producer.
  void Release() {
    const size_t extent = RecordBytes(At(offset_)->length);
    // Clear every line of the record for a later lap (see the file
    // comment); the tail's release below orders these before the producer
    // reuses the lines.
    for (size_t line = 0; line < extent; line += kCacheLineBytes) {
      MutableAt(offset_ + line)->sequence.store(0, std::memory_order_relaxed);
    }
    tail_ += extent;
    offset_ += extent;
    if (offset_ == capacity_) offset_ = 0;
    sequence_ = NextRecordSequence(sequence_);
    // Release: our reads of the record happen before the producer reuses
    // its bytes.
    control_->tail.store(tail_, std::memory_order_release);
  }

  // Bytes released so far (wrap markers' skips included).
  uint64_t released() const { return tail_; }

  // After releasing records: whether the producer found the ring full since
  // the last call (it may be waiting for the room just freed). Clears the
  // flag. One fence and one load of a line the consumer owns.
  bool TakeProducerWaiting() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (control_->producer_waiting.load(std::memory_order_relaxed) == 0) {
      return false;
    }
    control_->producer_waiting.store(0, std::memory_order_relaxed);
    return true;
  }

 private:
  friend class RingTestPeer;

  const CellHeader* At(size_t offset) const {
    return reinterpret_cast<const CellHeader*>(data_ + offset);
  }
  CellHeader* MutableAt(size_t offset) const {
    return reinterpret_cast<CellHeader*>(data_ + offset);
  }

  RingControl* control_ = nullptr;
  std::byte* data_ = nullptr;
  size_t capacity_ = 0;
  uint64_t tail_ = 0;      // bytes released (markers' skips included)
  size_t offset_ = 0;      // tail_ % capacity_: where the next record is
  uint32_t sequence_ = 1;  // of the next record or marker
};

}  // namespace minimpi::net::shm

#endif  // MINIMPI_NET_SHM_SPSC_RING_H_
