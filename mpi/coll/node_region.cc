#include "mpi/coll/node_region.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace minimpi::coll {
namespace {

constexpr size_t kLine = 64;

size_t RoundUp(size_t bytes) { return (bytes + kLine - 1) / kLine * kLine; }

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

// Layout: the slow flags (a byte per rank, together, so a writer reads them
// in one or two lines), a ready line and a done line per rank (each its own
// cache line: a rank's writes never invalidate another's flags), the two
// result cells, two cells per rank, then the slots of each rank.
size_t NodeRegion::BytesFor(int ranks, size_t cell_bytes, size_t slot_bytes) {
  const size_t n = static_cast<size_t>(ranks);
  return RoundUp(n) + n * sizeof(ReadyLine) + n * sizeof(DoneLine) +
         2 * RoundUp(cell_bytes) + n * 2 * RoundUp(cell_bytes) +
         n * kSlots * RoundUp(sizeof(SlotHeader) + slot_bytes);
}

NodeRegion::NodeRegion(void* base, int ranks, int rank, size_t cell_bytes,
                       size_t slot_bytes, NodeWaiter* waiter)
    : ranks_(ranks),
      rank_(rank),
      cell_bytes_(RoundUp(cell_bytes)),
      slot_bytes_(slot_bytes),
      slot_stride_(RoundUp(sizeof(SlotHeader) + slot_bytes)),
      waiter_(waiter),
      reduce_step_bytes_(cell_bytes_),
      seen_done_(ranks, kEndOfCall) {
  const size_t n = static_cast<size_t>(ranks);
  auto* at = static_cast<std::byte*>(base);
  slow_ = reinterpret_cast<std::atomic<uint8_t>*>(at);
  at += RoundUp(n);
  ready_ = reinterpret_cast<ReadyLine*>(at);
  at += n * sizeof(ReadyLine);
  done_ = reinterpret_cast<DoneLine*>(at);
  at += n * sizeof(DoneLine);
  results_ = at;
  at += 2 * cell_bytes_;
  cells_ = at;
  at += n * 2 * cell_bytes_;
  slots_ = at;
}

void NodeRegion::Attach() {
  // The memory is zero-filled; call 0 is "before the first call", which
  // every rank has ended.
  new (&slow_[rank_]) std::atomic<uint8_t>(0);
  new (&ready_[rank_]) ReadyLine();
  ready_[rank_].value.store(0, std::memory_order_relaxed);
  ready_[rank_].bytes[0].store(0, std::memory_order_relaxed);
  ready_[rank_].bytes[1].store(0, std::memory_order_relaxed);
  ready_[rank_].pid.store(static_cast<int32_t>(getpid()),
                          std::memory_order_relaxed);
  new (&done_[rank_]) DoneLine();
  done_[rank_].value.store(kEndOfCall, std::memory_order_release);
}

std::byte* NodeRegion::Cell(int owner, uint32_t step) const {
  if (small_) return reinterpret_cast<std::byte*>(Slot(owner) + 1);
  return cells_ + (static_cast<size_t>(owner) * 2 + (step & 1)) * cell_bytes_;
}

std::byte* NodeRegion::ResultCell(uint32_t step) const {
  return results_ + (step & 1) * cell_bytes_;
}

namespace {

long Membarrier(int command) { return syscall(__NR_membarrier, command, 0, 0); }

}  // namespace

bool NodeRegion::CanUseAsymmetricFence() {
  static const bool registered =
      Membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
  return registered;
}

void NodeRegion::WakeSlowRanks() {
  // Orders the flag store before the slow flags' loads; the waiter orders
  // its slow flag's store before its look at our flag (Dekker's pattern):
  // either it sees the flag or we see it slow.
  //
  // With the asymmetric fence the waiter pays for both sides: after its
  // slow flag's store it makes the kernel run a full barrier on every CPU
  // that runs a registered process (membarrier), so a post whose flag
  // store still sat in a store buffer is visible before the waiter looks,
  // and a later post sees the slow flag. The post itself then needs only
  // the compiler's ordering. A post is frequent, a waiter that may sleep
  // rare (it polls first when every rank has a core): on the 2-core
  // machine the fence was a third of an 8-byte bcast or scatter on 2 ranks
  // (0.035 against 0.024 us for bcast, 0.044 against 0.030 for scatter,
  // medians of five interleaved runs; docs/benchmarks.md).
  if (asymmetric_fence_) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  for (int r = 0; r < ranks_; ++r) {
    if (r != rank_ && slow_[r].load(std::memory_order_relaxed) != 0) {
      waiter_->Wake(r);
    }
  }
}

void NodeRegion::WaitFor(absl::FunctionRef<bool()> reached) {
  // Most flags arrive within a few hundred nanoseconds on a quiet node;
  // polling that long costs less than a trip through the VCI's wait.
  if (waiter_->PollFirst()) {
    for (int i = 0; i < 64; ++i) {
      if (reached()) return;
      CpuRelax();
    }
  }
  // Marked slow (and the barrier that lets posts skip their fence) only
  // when the wait is about to sleep: a membarrier interrupts every CPU
  // running a rank, the peer this wait is waiting for included, and a
  // collective whose flag is merely late (the host's core-to-core round
  // trip swings to 900 ns) paid 2-10 us for it in every call.
  bool marked_slow = false;
  waiter_->Wait(reached, [&] {
    if (marked_slow) return;
    marked_slow = true;
    slow_[rank_].store(1, std::memory_order_seq_cst);
    if (asymmetric_fence_ && Membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0)
        [[unlikely]] {
      // Registration succeeded on every rank, so the kernel cannot refuse
      // now; if it did, posts without a fence could leave this rank asleep.
      std::fprintf(stderr, "minimpi: membarrier failed after registration\n");
      std::abort();
    }
  });
  if (marked_slow) slow_[rank_].store(0, std::memory_order_relaxed);
}

void NodeRegion::WaitCellsFree(uint32_t step) {
  // A slot was last written kSlots calls ago; a cell in the previous call or
  // two steps ago.
  if (small_ && call_ <= kSlots) return;  // slots not used yet
  const uint64_t want = small_ ? ((call_ - kSlots) << kStepBits) | kEndOfCall
                        : step < 2 ? ((call_ - 1) << kStepBits) | kEndOfCall
                                   : Value(step - 2);
  for (int r = 0; r < ranks_; ++r) {
    if (r == rank_ || Reached(seen_done_[r], want)) continue;
    std::atomic<uint64_t>& done = done_[r].value;
    uint64_t& seen = seen_done_[r];
    seen = done.load(std::memory_order_acquire);
    if (Reached(seen, want)) continue;
    WaitFor([&] {
      seen = done.load(std::memory_order_acquire);
      return Reached(seen, want);
    });
  }
}

// A small call posts in its slot, where its readers look; a larger one on
// the ready line.
void NodeRegion::Publish(uint32_t step, uint64_t call_bytes) {
  if (small_) {
    SlotHeader* slot = Slot(rank_);
    slot->bytes.store(call_bytes, std::memory_order_relaxed);
    slot->call.store(call_, std::memory_order_release);
  } else {
    ReadyLine& line = ready_[rank_];
    line.bytes[call_ & 1].store(call_bytes, std::memory_order_relaxed);
    line.value.store(Value(step), std::memory_order_release);
  }
}

void NodeRegion::Post(uint32_t step, uint64_t call_bytes) {
  Publish(step, call_bytes);
  WakeSlowRanks();
}

void NodeRegion::PostLast(uint32_t step, uint64_t call_bytes) {
  Publish(step, call_bytes);
  done_[rank_].value.store(Value(kEndOfCall), std::memory_order_release);
  WakeSlowRanks();
}

// A barrier writes no cell and waits for no cell to be free, so a reader
// may still be in the call kSlots back, reading this slot: it leaves the
// slot's count and data alone (that reader wanted a post of at least its
// own call, which this one is too).
void NodeRegion::Signal(uint32_t step) {
  if (small_) {
    Slot(rank_)->call.store(call_, std::memory_order_release);
  } else {
    ready_[rank_].value.store(Value(step), std::memory_order_release);
  }
  WakeSlowRanks();
}

uint64_t NodeRegion::WaitPosted(int writer, uint32_t step) {
  if (small_) {
    // One step: the post is the slot's.
    SlotHeader* slot = Slot(writer);
    const uint64_t want = call_;
    if (slot->call.load(std::memory_order_acquire) < want) {
      WaitFor(
          [&] { return slot->call.load(std::memory_order_acquire) >= want; });
    }
    return slot->bytes.load(std::memory_order_relaxed);
  }
  ReadyLine& line = ready_[writer];
  const uint64_t want = Value(step);
  if (!Reached(line.value.load(std::memory_order_acquire), want)) {
    WaitFor([&] {
      return Reached(line.value.load(std::memory_order_acquire), want);
    });
  }
  return line.bytes[call_ & 1].load(std::memory_order_relaxed);
}

void NodeRegion::PostDirect(const void* data, const void* result,
                            uint64_t call_bytes) {
  ReadyLine& line = ready_[rank_];
  line.data[call_ & 1].store(reinterpret_cast<uintptr_t>(data),
                             std::memory_order_relaxed);
  line.result[call_ & 1].store(reinterpret_cast<uintptr_t>(result),
                               std::memory_order_relaxed);
  line.bytes[call_ & 1].store(call_bytes, std::memory_order_relaxed);
  line.value.store(Value(0), std::memory_order_release);
  WakeSlowRanks();
}

NodeRegion::DirectPost NodeRegion::WaitPostedDirect(int writer) {
  DirectPost post;
  post.bytes = WaitPosted(writer, 0);
  const ReadyLine& line = ready_[writer];
  post.data = line.data[call_ & 1].load(std::memory_order_relaxed);
  post.result = line.result[call_ & 1].load(std::memory_order_relaxed);
  return post;
}

bool NodeRegion::ReadDirect(int writer, uint64_t address, void* to,
                            size_t bytes) const {
  return ReadProcess(ready_[writer].pid.load(std::memory_order_relaxed),
                     address, to, bytes);
}

bool NodeRegion::ReadProcess(pid_t pid, uint64_t address, void* to,
                             size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    iovec local{static_cast<std::byte*>(to) + done, bytes - done};
    iovec remote{reinterpret_cast<void*>(address + done), bytes - done};
    const ssize_t moved = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) return false;
    done += static_cast<size_t>(moved);
  }
  return true;
}

void NodeRegion::WaitDone(int rank, uint32_t step) {
  std::atomic<uint64_t>& done = done_[rank].value;
  const uint64_t want = Value(step);
  if (Reached(done.load(std::memory_order_acquire), want)) return;
  WaitFor([&] { return Reached(done.load(std::memory_order_acquire), want); });
}

bool NodeRegion::SlotFree(uint64_t call) {
  if (call <= kSlots) return true;  // slots not used yet
  const uint64_t want = ((call - kSlots) << kStepBits) | kEndOfCall;
  for (int r = 0; r < ranks_; ++r) {
    // Through the values seen before, as WaitCellsFree: a root running
    // ahead reads a reader's line about once per kSlots calls.
    if (Reached(seen_done_[r], want)) continue;
    seen_done_[r] = done_[r].value.load(std::memory_order_acquire);
    if (!Reached(seen_done_[r], want)) return false;
  }
  return true;
}

void NodeRegion::PostSlot(uint64_t call, uint64_t call_bytes) {
  SlotHeader* slot = SlotOf(rank_, call);
  slot->bytes.store(call_bytes, std::memory_order_relaxed);
  slot->call.store(call, std::memory_order_release);
  WakeSlowRanks();
}

void NodeRegion::SignalSlot(uint64_t call) {
  SlotOf(rank_, call)->call.store(call, std::memory_order_release);
  WakeSlowRanks();
}

bool NodeRegion::SlotPosted(int writer, uint64_t call,
                            uint64_t* call_bytes) const {
  const SlotHeader* slot = SlotOf(writer, call);
  if (slot->call.load(std::memory_order_acquire) < call) return false;
  if (call_bytes != nullptr) {
    *call_bytes = slot->bytes.load(std::memory_order_relaxed);
  }
  return true;
}

void NodeRegion::SetDone(uint64_t value) {
  done_[rank_].value.store(value, std::memory_order_release);
  WakeSlowRanks();
}

}  // namespace minimpi::coll
