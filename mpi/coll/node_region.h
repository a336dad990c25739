// The shared-memory region of a communicator whose ranks all live on one
// node: a few flags and data cells per rank that every member maps, so that
// small and medium collectives move data with plain loads and stores and
// synchronize on flags (no message, no request, no schedule per call).
//
// A collective call is a numbered series of steps. In a step, some ranks
// write data into cells and *post* (publish a flag value), the others wait
// for those posts and read. Every flag value is (call << 12) | step over a
// 64-bit call count, so values only grow and never wrap (a rank that posts
// nothing for a million calls, a bcast's reader, leaves no value that could
// pass for a new one), every rank can tell which call and step a flag is
// at, and a rank that runs ahead never confuses an old value with a new
// one:
//
//   ready[r]  rank r's data for (call, step) is in place; `bytes` beside it
//             says how much r has in this whole call, so readers notice
//             counts that disagree instead of reading garbage or hanging;
//   done[r]   rank r needs nothing more of (call, step): it read what it
//             reads there. At the end of a call it takes the call's last
//             value (step 0xfff), so a rank that took fewer steps than
//             another (mismatched counts) still releases everything.
//
// Cells are double-buffered by step parity. Before writing any cell in step
// k of a call, a rank waits until every rank is done with step k - 2 (with
// the whole previous call for k < 2): nobody can still be reading what it
// is about to overwrite, yet a writer may run a step ahead of its readers,
// which pipelines large messages through the cells.
//
// Small calls (at most slot_bytes per rank, one step) use slots instead: a
// ring of kSlots per rank, call c in slot c % kSlots. A slot starts with a
// 16-byte header, the call that last posted in it and its count, and the
// data follows on the same cache line: a reader of a small call polls the
// slot itself, and one line brings it the post, the count and up to 48
// bytes of data (the ready line would cost two more line transfers).
// Writing a slot in call c waits only until every rank has ended call
// c - kSlots, so a rank that waits for nobody (a bcast's root, a reduce's
// or gather's senders) runs up to kSlots calls ahead of its readers, as
// eager messages would let it; and a call that makes everyone wait
// (allreduce) never waits for a cell to empty.
//
// Waiting and waking go through a Waiter: in a library run the VCI's wait
// (polls the transport and other traffic, sleeps on the VCI's doorbell as
// the wait policy says) and the transport's wake of a peer's doorbell; in
// the unit test, threads playing ranks.
//
// Owned by: mpi/coll. Used by: node_collectives.cc, node_direct.cc (the
// algorithms), node_path.cc (making regions), node_started.cc.
#ifndef MINIMPI_MPI_COLL_NODE_REGION_H_
#define MINIMPI_MPI_COLL_NODE_REGION_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"

namespace minimpi::coll {

// How a rank waits for a flag and wakes a rank that may sleep.
class NodeWaiter {
 public:
  virtual ~NodeWaiter() = default;
  // Returns once `reached()` is true. May progress other traffic and sleep;
  // before each time it may sleep it calls `before_sleep` (which sets the
  // rank's slow flag: see NodeRegion), and looks at `reached()` after.
  virtual void Wait(absl::FunctionRef<bool()> reached,
                    absl::FunctionRef<void()> before_sleep) = 0;
  // Wakes rank `rank` of the communicator if it sleeps.
  virtual void Wake(int rank) = 0;
  // Whether a waiter may poll a flag briefly before it waits through Wait
  // (not when ranks outnumber cores: the rank it waits for may need this
  // very core).
  virtual bool PollFirst() const { return true; }
};

class NodeRegion {
 public:
  static constexpr uint32_t kStepBits = 12;
  static constexpr uint32_t kEndOfCall = (1u << kStepBits) - 1;
  // The most steps one call may take (the last value is the end of a call).
  static constexpr uint32_t kMaxSteps = kEndOfCall;
  // Small calls: slots per rank. Where ranks share a core, each wait for a
  // reader costs a turn on the core; 64 slots took an 8-byte bcast on 4
  // ranks on 2 cores from 0.41 us (16 slots) to 0.26-0.28, gather from 0.54
  // to 0.31 (256 slots gained little more). A rank's slots of 1 KiB then
  // take 68 KiB of the region, about a rank's two default cells.
  static constexpr uint32_t kSlots = 64;

  // Bytes of a region for `ranks` ranks with cells of `cell_bytes` bytes
  // and slots of `slot_bytes` (0: no small calls).
  static size_t BytesFor(int ranks, size_t cell_bytes, size_t slot_bytes);

  // A view of the region at `base` (BytesFor bytes, zero-filled by whoever
  // made it) for rank `rank`. Call Attach before any rank's first call.
  NodeRegion(void* base, int ranks, int rank, size_t cell_bytes,
             size_t slot_bytes, NodeWaiter* waiter);

  // Sets this rank's flags to "before the first call". Every rank attaches
  // before any rank starts a call (the region's maker synchronizes them).
  void Attach();

  int rank() const { return rank_; }
  int size() const { return ranks_; }
  size_t cell_bytes() const { return cell_bytes_; }
  // Whether a call with `bytes` per rank is small (takes a slot).
  bool IsSmall(uint64_t bytes) const { return bytes <= slot_bytes_; }
  // Whether the current call is small (its one step takes a slot).
  bool small() const { return small_; }
  // What one step of the current call carries: a slot or a cell.
  size_t step_bytes() const { return small_ ? slot_bytes_ : cell_bytes_; }
  // What one step of a reduce carries through the cells: less than a cell
  // when every rank has a core of its own (the region's maker sets it, the
  // same on every rank), so that the root's combining works in its L1.
  size_t reduce_step_bytes() const {
    return small_ ? slot_bytes_ : reduce_step_bytes_;
  }
  // The same for a call that is not small (before BeginCall).
  size_t large_reduce_step_bytes() const { return reduce_step_bytes_; }
  void set_reduce_step_bytes(size_t bytes) {
    reduce_step_bytes_ = bytes < cell_bytes_ ? bytes : cell_bytes_;
  }

  // Whether posts may skip their fence (see WakeSlowRanks): only when every
  // rank of the region said CanUseAsymmetricFence. The region's maker sets
  // it, the same on every rank, before any call.
  void set_asymmetric_fence(bool on) { asymmetric_fence_ = on; }
  // Registers this process for the fence a waiter then issues before it may
  // sleep (membarrier's global expedited command, Linux 4.16 on); false
  // where the kernel or a sandbox refuses it. Once per process.
  static bool CanUseAsymmetricFence();

  // --- One call.
  // Starts the next call (every rank starts the same calls in order). A
  // small call (IsSmall) has one step; every rank of a correct program
  // agrees whether a call is small.
  void BeginCall(bool small) {
    ++call_;
    small_ = small;
  }
  // Ends the current call: this rank needs nothing more of it.
  void EndCall() { SetDone(Value(kEndOfCall)); }

  // The cell of rank `owner` used in step `step` of the current call (its
  // slot in a small call); any rank may write another rank's cell when the
  // algorithm says so (scatter).
  std::byte* Cell(int owner, uint32_t step) const;
  // The region's one shared result cell of step `step` (not in small calls).
  std::byte* ResultCell(uint32_t step) const;

  // Before writing any cell in `step`: waits until every rank is done with
  // step - 2 (or with the previous call).
  void WaitCellsFree(uint32_t step);
  // Publishes this rank's data of `step`; `call_bytes` is what this rank
  // contributes in the whole call (the same in each of its steps).
  void Post(uint32_t step, uint64_t call_bytes);
  // Post of a rank's last step in a call where it reads nothing (a bcast
  // root, a gather sender): also ends the call, behind one fence instead of
  // two. Do not call EndCall after it.
  void PostLast(uint32_t step, uint64_t call_bytes);
  // Publishes that this rank reached `step`, with no data (barrier).
  void Signal(uint32_t step);

  // --- Direct copies (large calls): a writer posts where its data lies in
  // its own address space, and readers copy it from there with one
  // cross-memory read (process_vm_readv), with no copy through a cell.
  // Calls with blocks of at least `bytes` copy directly (0: none). The
  // region's maker sets it, the same on every rank, once it has found that
  // every rank can read the others' memory (Linux's ptrace rules decide).
  void set_direct_min(uint64_t bytes) { direct_min_ = bytes; }
  bool DirectFor(uint64_t bytes) const {
    return direct_min_ != 0 && bytes >= direct_min_;
  }
  // Posts step 0 of a direct call: this rank's data lies at `data`
  // (`call_bytes` there) and, where the call publishes one, its result at
  // `result`. Every rank must have ended the previous call (the addresses
  // sit on the ready line by call parity, where a rank two calls behind
  // would read its own): WaitCellsFree(0) first.
  void PostDirect(const void* data, const void* result, uint64_t call_bytes);
  struct DirectPost {
    uint64_t bytes;
    uint64_t data;
    uint64_t result;
  };
  // Waits for `writer`'s direct post.
  DirectPost WaitPostedDirect(int writer);
  // Copies `bytes` from `address` in rank `writer`'s memory to `to`.
  // Returns false if the kernel refused.
  bool ReadDirect(int writer, uint64_t address, void* to, size_t bytes) const;
  // The same from process `pid`, resuming after partial reads.
  static bool ReadProcess(pid_t pid, uint64_t address, void* to, size_t bytes);
  // Waits for rank `writer`'s post of `step`; returns its call_bytes (which
  // stay readable until this rank ends the call).
  uint64_t WaitPosted(int writer, uint32_t step);
  // This rank is done with `step`.
  void Done(uint32_t step) { SetDone(Value(step)); }
  // Waits until rank `rank` is done with `step`.
  void WaitDone(int rank, uint32_t step);

  // --- Started calls (persistent collectives, small calls only). Their
  // steps never wait: the caller holds the call's number and checks the
  // flags again later, so a started call may still be in progress when the
  // program starts the next one. Started calls end in the order they
  // started, and every started call has ended before a blocking call
  // begins (the caller drains them first), so a rank's done value still
  // means "every call up to here ended". All of these run under the lock
  // of the communicator's VCI, except StartedPending.
  //
  // Numbers the next call a started one (a small call: it takes a slot)
  // and returns its number and its place among started calls.
  uint64_t BeginStartedCall(uint64_t* ordinal) {
    *ordinal = started_begun_++;
    return ++call_;
  }
  // Whether the started call `ordinal` is the oldest that has not ended
  // (only it may end).
  bool OldestStarted(uint64_t ordinal) const {
    return ordinal == EndedStarted().load(std::memory_order_relaxed);
  }
  // Ends the oldest started call, `call`.
  void EndStartedCall(uint64_t call) {
    SetDone((call << kStepBits) | kEndOfCall);
    EndedStarted().store(EndedStarted().load(std::memory_order_relaxed) + 1,
                         std::memory_order_release);
  }
  // Whether started calls have not ended (by the thread that starts them).
  bool StartedPending() const {
    return started_begun_ != EndedStarted().load(std::memory_order_acquire);
  }
  // Whether this rank may write its slot of `call`: every rank, this one
  // included, ended the call kSlots before.
  bool SlotFree(uint64_t call);
  // The data of rank `owner`'s slot in `call`.
  std::byte* SlotData(int owner, uint64_t call) const {
    return reinterpret_cast<std::byte*>(SlotOf(owner, call) + 1);
  }
  // Posts this rank's slot of `call` (its data, `call_bytes` of it, is in
  // place), or with no data (a barrier: the count and data stay as they
  // were for a reader still in the call kSlots back), and wakes sleepers.
  void PostSlot(uint64_t call, uint64_t call_bytes);
  void SignalSlot(uint64_t call);
  // Whether `writer` posted its slot of `call`; then *call_bytes is its
  // count (a barrier's reader passes nullptr).
  bool SlotPosted(int writer, uint64_t call, uint64_t* call_bytes) const;

 private:
  // `bytes` by call parity: a writer may post in the next call (a barrier
  // waits for no cell) while a slow reader still looks at this call's
  // count, but never two calls ahead (finishing the next call needs every
  // rank to have ended this one).
  struct alignas(64) ReadyLine {
    std::atomic<uint64_t> value;
    std::atomic<int32_t> pid;  // the rank's process, for direct copies
    std::atomic<uint64_t> bytes[2];
    // Of a direct post, by call parity.
    std::atomic<uint64_t> data[2];
    std::atomic<uint64_t> result[2];
  };
  struct alignas(64) DoneLine {
    std::atomic<uint64_t> value;
  };
  // Heads each slot: the small call that last posted in it (a 64-bit call
  // count: a slot may sit unused for any number of calls) and its count.
  // Data follows at 16 bytes, aligned for any C type.
  struct SlotHeader {
    std::atomic<uint64_t> call;
    std::atomic<uint64_t> bytes;
  };
  SlotHeader* SlotOf(int owner, uint64_t call) const {
    return reinterpret_cast<SlotHeader*>(
        slots_ +
        (static_cast<size_t>(owner) * kSlots + call % kSlots) * slot_stride_);
  }
  SlotHeader* Slot(int owner) const { return SlotOf(owner, call_); }

  static bool Reached(uint64_t have, uint64_t want) { return have >= want; }
  uint64_t Value(uint32_t step) const { return (call_ << kStepBits) | step; }
  void SetDone(uint64_t value);
  // The stores of a post, without the wake-up.
  void Publish(uint32_t step, uint64_t call_bytes);
  // After a flag changed: wakes the ranks that may sleep.
  void WakeSlowRanks();
  // Waits for `reached`, first briefly polling, then through the waiter,
  // which marks this rank slow (so that posts wake it) only when it may
  // sleep.
  void WaitFor(absl::FunctionRef<bool()> reached);

  std::atomic<uint8_t>* slow_;  // by rank: 1 while it may sleep
  ReadyLine* ready_;
  DoneLine* done_;
  std::byte* results_;  // 2 cells
  std::byte* cells_;    // 2 cells per rank
  std::byte* slots_;    // kSlots slots per rank
  const int ranks_;
  const int rank_;
  const size_t cell_bytes_;
  const size_t slot_bytes_;
  const size_t slot_stride_;
  NodeWaiter* const waiter_;
  uint64_t call_ = 0;
  bool small_ = false;
  uint64_t direct_min_ = 0;
  bool asymmetric_fence_ = false;
  size_t reduce_step_bytes_;  // the cell, unless set
  // The done values this rank last saw, by rank: done only grows, so a
  // value seen once answers WaitCellsFree for later calls too, without
  // touching the line the other rank writes (in a run of small calls a
  // writer reads each reader's line about once per kSlots calls).
  std::vector<uint64_t> seen_done_;
  // Started calls so far, and those ended (see BeginStartedCall).
  // (Plain, read through atomic_ref: the region stays movable.)
  uint64_t started_begun_ = 0;
  alignas(8) uint64_t started_ended_ = 0;
  std::atomic_ref<uint64_t> EndedStarted() const {
    return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(started_ended_));
  }
};

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_NODE_REGION_H_
