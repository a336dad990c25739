// One-sided communication (MPI RMA): windows' remote access and their
// synchronization, as one more kind of traffic on the VCIs.
//
// How each operation travels:
//   - MPI_Put and MPI_Get are RDMA writes and reads straight between the
//     origin's buffer and the target's registered window (a single copy by
//     cross-memory attach inside a node, the NIC or net/tcp's emulation
//     between nodes), cut along both sides' datatypes into gathered pieces
//     (datatype::PairSegments). The target's CPU takes no part, so they
//     progress while the target computes.
//   - Where the target's window is mapped here too (MPI_Win_allocate and
//     MPI_Win_allocate_shared place windows of one node's members in
//     shared memory), a put or get is a copy by the calling thread, done
//     when the call returns: no system call, no message. So is an
//     accumulate, under the target's atomicity lock, a lock in the shared
//     segment that the target's own progress also takes when it applies
//     accumulates from other nodes (Window::atomicity).
//   - Otherwise accumulates, MPI_Fetch_and_op and MPI_Compare_and_swap are
//     messages (protocol.h) applied by the target's progress on the
//     window's VCI, one at a time under that VCI's lock (and the atomicity
//     lock, where the window is in shared memory): atomic per element
//     against every other accumulate to the window, from any origin or
//     thread. Each piece is answered, with the old data when the call
//     wants it.
//   - An operation whose target is the calling member is done in the
//     call, on every kind of window: a copy, or an accumulate applied
//     under the VCI's lock or the window's atomicity lock
//     (OneSided::AccumulateInPlace).
//   - On a dynamic window puts and gets travel as messages too (as
//     MPI_REPLACE and MPI_NO_OP accumulates of bytes): the target checks
//     each access against the memory attached at that moment, so no
//     origin ever needs a key for memory that may since have been detached.
//   - Passive-target locks are granted by the target's progress (a lock
//     manager per window: shared holders, one exclusive holder, and a FIFO
//     of waiters); general active target's post and complete are notices.
//
// Completion: every operation counts as pending at its origin, per target,
// until its last RDMA piece completes locally (the transports report a
// write only once it is in place at the target) and its last reply has
// come. Fences, flushes, unlocks and MPI_Win_complete wait for those counts
// to reach zero; a fence then ends with a barrier in the bindings.
//
// Threads: a window's state is guarded by its VCI's lock; any thread may
// issue operations on it. No call waits while holding the lock.
//
// Owned by: mpi/rma. Made by: mpi/instance; called by the bindings.
#ifndef MINIMPI_MPI_RMA_ONE_SIDED_H_
#define MINIMPI_MPI_RMA_ONE_SIDED_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mpi/datatype/layout.h"
#include "mpi/vci/counters.h"
#include "mpi/vci/per_vci.h"
#include "mpi/vci/request.h"
#include "mpi/vci/vci_lock.h"
#include "mpi/vci/vci_set.h"
#include "net/transport.h"

namespace minimpi::rma {

enum class Flavor : uint8_t { kCreate, kAllocate, kShared, kDynamic };

// What each member tells the others about its window when it is made.
struct TargetInfo {
  uint64_t base = 0;
  uint64_t size = 0;
  uint64_t remote_key = 0;
  int32_t disp_unit = 1;
  int32_t window = -1;  // its id in the member's table
};

// Applies a predefined reduction `op` (MPI_REPLACE included) to `bytes`
// bytes of packed elements of the predefined type `basic`:
// inout[i] = in[i] op inout[i]. A pair type's elements lie one per piece
// (its members are contiguous, its padding is not). False when the op does
// not apply to the type. Handed in by whoever knows the ops (mpi/instance).
using ApplyOpFunction = bool (*)(uint32_t op, uint32_t basic, const void* in,
                                 void* inout, int64_t bytes);

// Where an operation's data lives at the origin, or the result goes.
struct Buffer {
  const void* address = nullptr;
  int64_t count = 0;
  const datatype::Layout* layout = nullptr;  // never null
};

// Where it goes at the target: (count, layout) at displacement `disp`.
struct TargetSpan {
  int rank = 0;  // in the window's group
  int64_t disp = 0;
  int64_t count = 0;
  const datatype::Layout* layout = nullptr;
};

// The MPI calls that move data, as a tool counts them per window (MPI_T,
// mpi/rma/tool_variables.h); the r-forms count as their blocking forms.
enum class OperationKind : uint8_t {
  kPut,
  kGet,
  kAccumulate,
  kGetAccumulate,
  kFetchAndOp,
  kCompareAndSwap,
};
inline constexpr int kOperationKinds = 6;

class Window;
struct Operation;

class OneSided final : public vci::TrafficHandler,
                       public vci::Outbox::Sender {
 public:
  // How a target that computes without calling MPI still answers
  // accumulates and lock requests (Settings::rma_progress): a helper thread
  // that looks at the VCIs carrying windows every `progress_us`, with a
  // try-lock, while any window exists (backing off to 16x that while it
  // finds nothing to do).
  struct Options {
    bool progress_thread = true;
    int progress_us = 200;
  };
  static absl::StatusOr<std::unique_ptr<OneSided>> Create(
      vci::VciSet& vcis, ApplyOpFunction apply_op, Options options);
  ~OneSided() override;
  OneSided(const OneSided&) = delete;
  OneSided& operator=(const OneSided&) = delete;

  // A window over `length` bytes at `base` for a group whose members have
  // these world ranks and VCIs (ours is `rank`): registered with the
  // transport and given an id. The caller exchanges Describe() with every
  // member, then calls Publish with all of them, before any operation.
  absl::StatusOr<Window*> Open(void* base, uint64_t length, int disp_unit,
                               Flavor flavor, int rank,
                               std::vector<int> world_ranks,
                               std::vector<int> vcis);
  TargetInfo Describe(const Window& window) const;
  void Publish(Window& window, std::vector<TargetInfo> members);
  // Members whose window memory this process has mapped too (windows
  // allocated in shared memory, for the members of a node): by rank, the
  // address of their window here, or null, and the word in the shared
  // segment that makes accumulates to them atomic (AtomicityLock). Every
  // operation to them is done by this CPU, complete when the call returns.
  void SetDirect(Window& window, std::vector<std::byte*> direct,
                 std::vector<vci::VciLock*> atomicity);
  // After every member stopped using it (the bindings' closing barrier).
  void Close(Window* window);

  // Operations, with the window's epoch and ranges already checked. A
  // non-null `request` is completed when the operation is (MPI_Rput...).
  // Get_accumulate with MPI_NO_OP sends no origin data (origin.count 0).
  // Put and Get pick how they travel (RDMA, a copy, or on a dynamic window
  // an accumulate of bytes, as said above); the caller only checks.
  void Put(Window& window, const Buffer& origin, const TargetSpan& target,
           vci::Request* request);
  void Get(Window& window, const Buffer& result, const TargetSpan& target,
           vci::Request* request);
  void Accumulate(Window& window, const Buffer& origin, const Buffer* result,
                  const TargetSpan& target, uint32_t op, uint32_t basic,
                  vci::Request* request);
  void CompareAndSwap(Window& window, const void* origin, const void* compare,
                      void* result, int64_t element_size, uint32_t basic,
                      const TargetSpan& target);
  // Dynamic windows: memory a member exposes from now on / no longer.
  // Overlapping attaches are refused (false), as are detaches of memory
  // not attached.
  bool Attach(Window& window, void* base, uint64_t length);
  bool Detach(Window& window, const void* base);
  // Accesses the targets refused since the last call (outside their
  // attached memory), counted at the origin.
  int TakeRefusals(Window& window);

  // A request for an operation about to start (MPI_Rput...), from the
  // window's VCI.
  vci::Request* NewRequest(Window& window);

  // Waits (progressing) until no operation to `rank` (-1: to anyone) is
  // pending.
  void WaitForOperations(Window& window, int rank);
  // Passive target: waits until `rank`'s lock manager grants the lock.
  void Lock(Window& window, int rank, bool exclusive);
  // Waits for the operations to `rank`, then releases its lock.
  void Unlock(Window& window, int rank, bool exclusive);
  // General active target.
  void Post(Window& window, const std::vector<int>& origins);
  void Start(Window& window, const std::vector<int>& targets);
  void Complete(Window& window, const std::vector<int>& targets);
  // Waits for MPI_Win_complete from each origin of the last post (or,
  // with `test`, only looks once). True when all have completed.
  bool WaitPosted(Window& window, const std::vector<int>& origins, bool test);

  // vci::TrafficHandler.
  void OnMessageLocked(int vci, net::PeerVci peer, const std::byte* data,
                       size_t length) override;
  void OnLocalDoneLocked(int vci, uint64_t context) override;
  bool ProgressLocked(int vci) override;
  // vci::Outbox::Sender: a queued reply has left; its buffer is freed.
  void OnSentLocked(int vci, uint64_t word, uint32_t flags) override;

 private:
  OneSided(vci::VciSet& vcis, ApplyOpFunction apply_op, Options options);
  void ProgressLoop();
  void Transfer(Window& window, bool read, const Buffer& origin,
                const TargetSpan& target, vci::Request* request);
  // Posts what it can of `operation`'s RDMA pieces; queues it for progress
  // when the transport refuses one.
  void PostPiecesLocked(Operation& operation);
  void SendLocked(Window& window, int rank, const void* header,
                  size_t header_length, const void* payload,
                  size_t payload_length);
  void OnePieceDoneLocked(Operation& operation);
  void OnReplyLocked(Operation& operation, const struct Header& header,
                     const std::byte* data, size_t length);
  void FinishLocked(Operation& operation);
  vci::VciLock& AccumulateLock(const Window& window, int rank);
  // An accumulate applied in the call to memory of the target's this CPU
  // reaches (`memory`: where the target's window starts here): our own
  // part, or a member's mapped here.
  void AccumulateInPlace(Window& window, std::byte* memory,
                         const Buffer& origin, const Buffer* result,
                         const TargetSpan& target, uint32_t op,
                         uint32_t basic);
  void ApplyLocked(Window& window, int vci, net::PeerVci peer,
                   const struct Header& header, const std::byte* payload,
                   size_t payload_length);
  void GrantLocked(Window& window);
  template <typename Done>
  void WaitOn(Window& window, Done done);

  // Per VCI (in a vci::PerVci, every VCI's made at setup).
  struct VciState {
    // Operations whose pieces the transport refused, for progress.
    // Guarded by the VCI's lock.
    std::vector<Operation*> refused;
    // The windows on the VCI, which the helper thread looks at.
    std::atomic<int> windows{0};
  };

  vci::VciSet& vcis_;
  net::Transport& transport_;
  const ApplyOpFunction apply_op_;
  // Windows by id; a slot is set before the window's description leaves
  // and cleared after its closing barrier, so messages always find theirs.
  static constexpr int kMaxWindows = 1 << 14;
  std::unique_ptr<std::atomic<Window*>[]> windows_;
  std::mutex ids_mutex_;
  std::vector<int32_t> free_ids_;  // guarded by ids_mutex_
  int32_t next_id_ = 0;            // guarded by ids_mutex_
  vci::PerVci<VciState> vci_states_;

  // The helper thread (Options::progress_thread), started with the first
  // window; the windows on each VCI (VciState::windows) say which VCIs it
  // looks at.
  const Options options_;
  std::mutex thread_mutex_;
  std::condition_variable thread_wake_;
  int open_windows_ = 0;   // guarded by thread_mutex_
  bool stopping_ = false;  // guarded by thread_mutex_
  std::thread thread_;
};

// One member's view of a window. Everything but the constants is guarded
// by the window's VCI's lock, or atomic where waits read it.
class Window {
 public:
  int32_t id = -1;
  int vci = 0;
  int rank = 0;
  int group_size = 0;
  std::vector<int> world_ranks;  // by rank in the window's group
  std::vector<int> vcis;         // by rank
  void* base = nullptr;
  uint64_t length = 0;
  int disp_unit = 1;
  Flavor flavor = Flavor::kCreate;
  net::MemoryRegion region;
  bool registered = false;
  std::vector<TargetInfo> targets;  // by rank, after Publish
  std::vector<std::byte*> direct;  // by rank; see OneSided::SetDirect
  // By rank, or empty: the lock in the shared segment that makes
  // accumulates to that member atomic, whoever applies them (an origin on
  // the node in its call, or the member's progress for origins on other
  // nodes). A VCI lock's kind: short holds, spin then yield.
  std::vector<vci::VciLock*> atomicity;

  // Origin side.
  std::unique_ptr<std::atomic<int64_t>[]> pending;  // by target rank
  std::atomic<int64_t> pending_total{0};
  std::unique_ptr<std::atomic<uint8_t>[]> granted;  // lock granted, by rank
  std::unique_ptr<std::atomic<int32_t>[]> posts_seen;      // by target
  std::unique_ptr<std::atomic<int32_t>[]> completes_seen;  // by origin

  std::atomic<int> refused{0};  // see OneSided::TakeRefusals

  // Target side: a dynamic window's attached memory, by base.
  std::vector<std::pair<uint64_t, uint64_t>> attached;
  // Target side: the lock manager.
  struct Waiter {
    int rank;
    bool exclusive;
    bool queued = false;  // not granted on arrival: another held the lock
  };
  int shared_holders = 0;
  int exclusive_holder = -1;
  std::deque<Waiter> lock_queue;

  // What a tool sees (MPI_T): the operations this member issued, by kind
  // (any thread may issue them, so an atomic add: it is no two-sided
  // small-message path); the lock requests of ours a target queued behind
  // another holder (counted under the VCI's lock when the grant comes); and
  // the time Lock waited for grants, queued or not.
  vci::SharedCounter operations[kOperationKinds];
  void CountOperation(OperationKind kind) {
    operations[static_cast<int>(kind)].Add();
  }
  vci::OwnedCounter lock_waits;
  vci::SharedCounter lock_wait_ns;
};

}  // namespace minimpi::rma

#endif  // MINIMPI_MPI_RMA_ONE_SIDED_H_
