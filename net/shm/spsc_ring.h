// A single-producer/single-consumer ring of fixed-size cells that lives in
// memory shared between two processes (or two threads). It is the mailbox of
// net/shm: one ring per (receiver, vci, sender), the producer being the
// sender's VCI and the consumer the receiver's VCI.
//
// Layout, in the shared memory: a control block with the tail counter
// (messages released, written only by the consumer) on its own cache line;
// then `cells` cells of CellStride() bytes, each a CellHeader followed by the
// message bytes. A published cell carries its sequence number (position + 1),
// written last: the consumer polls the next cell itself, so receiving a
// small message moves one cache line between cores, not two. Counters only
// grow; a cell is reused once the consumer has released it. Zeroed memory is
// an empty ring, so a fresh ftruncate'd segment needs no initialisation (and
// its pages stay untouched until used).
//
// The producer keeps its position and a cached copy of the consumer's in
// process-private memory, reading the shared tail only when the ring looks
// full. No locks, allocations or system
// calls: the caller serialises each side (the VCI lock).
//
// Owned by: net/shm. Called by: ShmTransport and ring_test.
#ifndef MINIMPI_NET_SHM_SPSC_RING_H_
#define MINIMPI_NET_SHM_SPSC_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace minimpi::net::shm {

inline constexpr size_t kCacheLineBytes = 64;

// The producer's position is not shared: the consumer learns of a new
// message from the sequence number in the cell itself, so a message costs the
// consumer one cache line (the cell), not two (a head counter and the cell).
// Only the consumer's position is shared, read by the producer when the ring
// looks full.
struct RingControl {
  alignas(kCacheLineBytes) std::atomic<uint64_t> head;  // unused; layout
  alignas(kCacheLineBytes) std::atomic<uint64_t> tail;  // consumer writes
};
static_assert(sizeof(RingControl) == 2 * kCacheLineBytes);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// Flags of a cell. Zero is a caller's message; anything else belongs to the
// transport itself and is never handed to the caller as a kReceive.
inline constexpr uint32_t kCellFlagWriteImmediate = 1;
// A large contiguous write with immediate that the receiver performs itself
// (it reads the bytes with cross-memory attach when it consumes the cell,
// like a NIC's DMA engine would, so the sender's thread is not the one
// copying); the message is a PullRequest.
inline constexpr uint32_t kCellFlagPullWrite = 2;

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
  uint32_t length = 0;     // message bytes that follow this header
  uint32_t flags = 0;      // kCellFlag*
  uint32_t immediate = 0;  // kCellFlagWriteImmediate: the immediate data
  // Position + 1 (low 32 bits) of the message the cell holds, stored last
  // with release order: the consumer's signal that the cell is complete.
  // Zero-filled cells hold 0, which no position maps to on the first lap.
  std::atomic<uint32_t> sequence{0};
  // The message starts right after the header.
  std::byte* message() { return reinterpret_cast<std::byte*>(this + 1); }
  const std::byte* message() const {
    return reinterpret_cast<const std::byte*>(this + 1);
  }
};
static_assert(sizeof(CellHeader) == 16);

// Bytes from one cell to the next for messages of up to `max_message` bytes.
constexpr size_t CellStride(size_t max_message) {
  return (sizeof(CellHeader) + max_message + kCacheLineBytes - 1) /
         kCacheLineBytes * kCacheLineBytes;
}

// Bytes one ring occupies: control block and cells.
constexpr size_t RingBytes(uint32_t cells, size_t max_message) {
  return sizeof(RingControl) + size_t{cells} * CellStride(max_message);
}

// The sending side of a ring. Copyable view; holds no resources.
class RingProducer {
 public:
  RingProducer() = default;
  // `ring` points at RingBytes(cells, max_message) zeroed bytes, 64-byte
  // aligned: a fresh ring. Attaching reads nothing, so no page is touched
  // before the first message.
  RingProducer(void* ring, uint32_t cells, size_t max_message)
      : control_(static_cast<RingControl*>(ring)),
        cells_(static_cast<std::byte*>(ring) + sizeof(RingControl)),
        stride_(CellStride(max_message)),
        num_cells_(cells) {}

  bool attached() const { return control_ != nullptr; }

  // The next free cell, to be filled and then published; nullptr when the
  // ring is full. Calling it again before Publish returns the same cell.
  CellHeader* TryReserve() {
    if (head_ - cached_tail_ == num_cells_) {
      // Acquire: the consumer has finished reading the cells it released.
      cached_tail_ = control_->tail.load(std::memory_order_acquire);
      if (head_ - cached_tail_ == num_cells_) return nullptr;
    }
    return reinterpret_cast<CellHeader*>(cells_ + next_index_ * stride_);
  }

  // Makes the reserved cell visible to the consumer.
  void Publish() {
    auto* cell = reinterpret_cast<CellHeader*>(cells_ + next_index_ * stride_);
    ++head_;
    next_index_ = (next_index_ + 1 == num_cells_) ? 0 : next_index_ + 1;
    // Release: the cell's contents are visible before its sequence number.
    cell->sequence.store(static_cast<uint32_t>(head_),
                         std::memory_order_release);
  }

 private:
  RingControl* control_ = nullptr;
  std::byte* cells_ = nullptr;
  size_t stride_ = 0;
  uint32_t num_cells_ = 0;
  uint64_t head_ = 0;
  uint64_t cached_tail_ = 0;
  uint32_t next_index_ = 0;
};

// The receiving side of a ring. Copyable view; holds no resources.
class RingConsumer {
 public:
  RingConsumer() = default;
  RingConsumer(void* ring, uint32_t cells, size_t max_message)
      : control_(static_cast<RingControl*>(ring)),
        cells_(static_cast<std::byte*>(ring) + sizeof(RingControl)),
        stride_(CellStride(max_message)),
        num_cells_(cells) {}

  bool attached() const { return control_ != nullptr; }

  // The oldest unreleased message, or nullptr when the ring is empty. Stays
  // valid (and is returned again) until Release.
  const CellHeader* Peek() {
    const auto* cell =
        reinterpret_cast<const CellHeader*>(cells_ + next_index_ * stride_);
    // Acquire: pairs with Publish, so the cell's contents are visible.
    if (cell->sequence.load(std::memory_order_acquire) !=
        static_cast<uint32_t>(tail_ + 1)) {
      return nullptr;
    }
    return cell;
  }

  // Hands the cell of the last Peek back to the producer.
  void Release() {
    ++tail_;
    next_index_ = (next_index_ + 1 == num_cells_) ? 0 : next_index_ + 1;
    // Release: our reads of the cell happen before the producer reuses it.
    control_->tail.store(tail_, std::memory_order_release);
  }

 private:
  RingControl* control_ = nullptr;
  std::byte* cells_ = nullptr;
  size_t stride_ = 0;
  uint32_t num_cells_ = 0;
  uint64_t tail_ = 0;
  uint32_t next_index_ = 0;
};

}  // namespace minimpi::net::shm

#endif  // MINIMPI_NET_SHM_SPSC_RING_H_
