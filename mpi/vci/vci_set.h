// The virtual communication interfaces (VCIs) every kind of traffic rides
// on: their locks, which of them endpoints own, the progress loop, how a
// blocked thread waits, and the dispatch of each transport completion to
// the kind of traffic it belongs to.
//
// Threads: a VCI's lock (its own cache line) guards everything that names
// the VCI: the transport calls, the allocation of its requests, its outbox,
// and each kind of traffic's state for it (point-to-point's matching
// engine, partitioned communication's deferred writes). Different VCIs never
// share a lock, so threads driving different communicators never contend. A
// thread waiting for something progresses its VCI with a try-lock and backs off
// when another thread already holds it (that thread is making the progress both
// need); every few rounds it also progresses the other VCIs, because MPI's
// progress rule says a posted operation must complete even if nobody waits
// on it.
//
// VCIs 0 .. num_vcis() - 1 carry the process's communicators; the rest are
// endpoints' (mpi/ep), each owned by one endpoint rank and made when the
// endpoint is. A wait on an endpoint's VCI progresses that VCI only (the
// endpoints proposal allows exactly this; Settings::endpoint_progress can
// widen it), so endpoint threads never touch each other's locks.
//
// Kinds of traffic: point-to-point (mpi/p2p) and partitioned communication
// (mpi/part) each register a TrafficHandler, naming the message types they
// own (the first byte of every message is its type), whether they receive
// writes with immediate, and the tag their local completions carry. Adding
// a kind of traffic (one-sided next) means registering one more handler;
// no other kind changes.
//
// Owned by: mpi/vci. Made by: mpi/instance before the kinds of traffic,
// which register with it; used by them, mpi/ep and the bindings' waits.
#ifndef MINIMPI_MPI_VCI_VCI_SET_H_
#define MINIMPI_MPI_VCI_VCI_SET_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mpi/vci/counters.h"
#include "mpi/vci/outbox.h"
#include "mpi/vci/request.h"
#include "mpi/vci/vci_lock.h"
#include "mpi/vci/wait_policy.h"
#include "net/transport.h"
#include "runtime/settings.h"

namespace minimpi::vci {

// Who owns a piece of traffic. The value is also the tag in the low bits of
// the context of a local completion (kLocalDone): contexts are addresses of
// objects aligned to at least 8 bytes, so point-to-point's untagged
// request pointers are its own and the others set a tag.
enum class Traffic : uint8_t {
  kPointToPoint = 0,
  kPartitioned = 1,
  kOneSided = 2,  // reserved for one-sided communication
};
inline constexpr int kMaxTraffic = 8;
inline constexpr uint64_t kTrafficTagMask = kMaxTraffic - 1;

inline uint64_t TagContext(Traffic traffic, const void* object) {
  return reinterpret_cast<uint64_t>(object) | static_cast<uint64_t>(traffic);
}
inline void* UntagContext(uint64_t context) {
  return reinterpret_cast<void*>(context & ~kTrafficTagMask);
}

// One VCI: its lock, on a cache line of its own; the pool its requests of
// every kind come from (allocated under the lock); and its outbox, the
// messages of every kind the transport refused for now, sent again in
// order by its progress. The state each kind of traffic keeps for it lives
// with that kind, indexed by the VCI's number: its VciState, in a PerVci
// (per_vci.h).
//
// The pool and the outbox are objects of their own, away from the lock:
// held inline beside it, they made the 8-byte ping-pong 12% slower on the
// 2-core machine with the very same instructions per message (measured;
// docs/benchmarks.md, "The house").
//
// Its counters for a tool (MPI_T; what leaves is counted by the outbox):
// messages received by link, under the lock; sleeps, wake-ups and time
// asleep by the waiters, who sleep without the lock, several at once.
struct VciCounters {
  LinkCounters messages_received;
  SharedCounter sleeps;
  // Sleeps that ended before their time limit: rung, or cut into slices
  // by the transport (net/routed_transport.h's mixed sleeps).
  SharedCounter wakeups;
  SharedCounter asleep_ns;
};
struct alignas(64) Vci {
  VciLock mutex;
  const std::unique_ptr<RequestPool> requests = std::make_unique<RequestPool>();
  const std::unique_ptr<Outbox> outbox = std::make_unique<Outbox>();
  const std::unique_ptr<VciCounters> counters = std::make_unique<VciCounters>();
};

// One kind of traffic. Every call but AttachVci holds `vci`'s lock and may
// post on that VCI.
class TrafficHandler {
 public:
  virtual ~TrafficHandler() = default;
  // `vci` came into use: every shared VCI when the handler registers, an
  // endpoint's when an endpoint first acquires it, before any thread can
  // reach it. `state` lives as long as the VciSet. No lock is held. A kind
  // whose VciState needs the VCI makes it here (PerVci::Make): a new VCI is
  // published only afterwards (one made before the kind registers is used
  // by no traffic before), so whoever reaches it sees that state whole.
  virtual absl::Status AttachVci(int /*vci*/, Vci& /*state*/) {
    return absl::OkStatus();
  }
  // A message whose type (its first byte) the handler registered.
  virtual void OnMessageLocked(int vci, net::PeerVci peer,
                               const std::byte* data, size_t length) = 0;
  // A write with immediate data landed here (for the handler registered
  // to receive them).
  virtual void OnWriteImmediateLocked(int /*vci*/, net::PeerVci /*peer*/,
                                      uint32_t /*immediate*/,
                                      size_t /*length*/) {}
  // Something the handler posted with a context tagged with its Traffic
  // finished locally.
  virtual void OnLocalDoneLocked(int vci, uint64_t context) = 0;
  // Work only progress does (posting again what the transport refused,
  // deferred writes). True when it did any.
  virtual bool ProgressLocked(int /*vci*/) { return false; }
  // False while `vci` has work that may fall due any moment and only
  // progress does (a deferred write whose window may close): its waiters
  // then keep polling rather than sleep.
  virtual bool MaySleepLocked(int /*vci*/) { return true; }
};

class VciSet final : public net::CompletionHandler {
 public:
  // `wait_policy`: how blocked calls wait (WaitPolicy::Choose).
  static absl::StatusOr<std::unique_ptr<VciSet>> Create(
      net::Transport* transport, const runtime::Settings& settings,
      const WaitPolicy& wait_policy);
  ~VciSet() override;

  struct Registration {
    Traffic traffic = Traffic::kPointToPoint;
    TrafficHandler* handler = nullptr;
    std::initializer_list<uint8_t> message_types;
    bool receives_writes_with_immediate = false;
    // False: the handler's ProgressLocked and MaySleepLocked run only while
    // it has users (AddUser / RemoveUser), so polls skip an idle kind.
    bool always_progress = true;
  };
  // Before any traffic flows. Attaches every VCI made so far.
  absl::Status Register(const Registration& registration);
  // Before the handler is destroyed; no traffic of its kind may follow.
  void Unregister(Traffic traffic);
  void AddUser(Traffic traffic) {
    users_[Index(traffic)].fetch_add(1, std::memory_order_relaxed);
  }
  void RemoveUser(Traffic traffic) {
    users_[Index(traffic)].fetch_sub(1, std::memory_order_relaxed);
  }

  // The VCIs communicators use (Settings::num_vcis); endpoints' VCIs come
  // after them, up to capacity().
  int num_vcis() const { return num_shared_; }
  int capacity() const { return capacity_; }
  bool IsEndpointVci(int vci) const { return vci >= num_shared_; }
  // Highest VCI made so far + 1.
  int in_use() const { return in_use_.load(std::memory_order_acquire); }
  // Whether `vci` exists (an untrusted index from a handle may name any).
  // Any thread, lock-free.
  bool Exists(uint32_t vci) const {
    return vci < static_cast<uint32_t>(capacity_) &&
           vcis_[vci].load(std::memory_order_acquire) != nullptr;
  }
  // The lock of a VCI that exists.
  VciLock& mutex(int vci) const { return At(vci).mutex; }
  // Its request pool (Allocate under the lock; Lookup and Release from any
  // thread).
  RequestPool& requests(int vci) const { return *At(vci).requests; }
  // Its outbox (under the lock).
  Outbox& outbox(int vci) const { return *At(vci).outbox; }
  // Its counters (any thread).
  const VciCounters& counters(int vci) const { return *At(vci).counters; }
  // Asks the transport once which link reaches each of the job's
  // `world_size` ranks, so the outboxes count messages by link without
  // asking per message. Before any traffic.
  void FillLinks(int world_size) { links_.Fill(*transport_, world_size); }

  // A VCI of its own for a new endpoint, holding one reference, or -1 when
  // all Settings::endpoint_vcis are taken. Any thread.
  int AcquireEndpointVci();
  // Every communicator derived from an endpoint (a dup, a split) shares its
  // VCI and holds a reference; the last release gives the VCI back for
  // another endpoint (a VCI is reused, never destroyed, before teardown, so
  // requests still completing on it are safe).
  void RetainEndpointVci(int vci);
  void ReleaseEndpointVci(int vci);

  // One round of progress on one VCI / every VCI in use (try-locks; never
  // blocks). True when anything happened.
  bool TryProgress(int vci);
  bool ProgressAll();
  // What a wait on `vci` progresses besides `vci` itself, now and then:
  // every VCI for a communicator's VCI; nothing for an endpoint's (unless
  // Settings::endpoint_progress is "process").
  bool ProgressBeyond(int vci);
  // One round with `vci`'s lock held: the transport's completions, the
  // outbox's waiting messages, then each kind of traffic's deferred work.
  bool PollLocked(int vci);
  // One round of progress for a test (MPI_Test and its kin) on `vci`: that
  // VCI, then, unless done() is true by then, what a wait on it progresses
  // besides (ProgressBeyond); every VCI when vci < 0.
  void TestRound(int vci, absl::FunctionRef<bool()> done);
  // Progresses until done() is true; `vci` is progressed first (or every
  // VCI when vci < 0), and the others as ProgressBeyond says.
  // `before_sleep` runs before each time the wait may sleep (a caller whose
  // wakers must first learn that it may sleep says so there).
  template <typename Done>
  void WaitUntil(
      int vci, Done done, absl::FunctionRef<void()> before_sleep = [] {});
  // Wakes this process's threads sleeping in a wait on `vci` (after a
  // change they must see that no message announces: work handed to
  // whoever progresses the VCI, a request completed by another thread).
  // The change must be ordered before by a lock release or a sequentially
  // consistent operation. One load when nobody sleeps.
  void WakeSleepers(int vci) { transport_->RingDoorbell(vci); }

  net::Transport& transport() { return *transport_; }
  // How blocked calls wait (chosen at MPI_Init).
  const WaitPolicy& wait_policy() const { return wait_policy_; }
  // For a poll of `vci` for `what` (in its `round`) that found nothing and
  // that the program most likely repeats at once (MPI_Parrived in a loop):
  // polls on, yields, or naps on the VCI's doorbell (unless `done` already
  // holds; until the doorbell rings, at most PollStreak::kNapNs), as PollStreak
  // says, so that a loop that waits costs its peers' cores what a blocked
  // wait costs them.
  void IdleAfterFruitlessPoll(int vci, const void* what, uint64_t round,
                              absl::FunctionRef<bool()> done);

  // net::CompletionHandler: hands a completion to its kind of traffic.
  // Called by the transport's Poll with the VCI's lock held.
  void OnCompletion(int vci, const net::Completion& completion) override;

 private:
  VciSet(net::Transport* transport, const runtime::Settings& settings,
         const WaitPolicy& wait_policy);
  static int Index(Traffic traffic) { return static_cast<int>(traffic); }
  Vci& At(int vci) const { return *vcis_[vci].load(std::memory_order_acquire); }
  // Makes `vci` and attaches it to every handler.
  absl::Status MakeVci(int vci);
  // Whether the registered kind `index` takes its turns now.
  bool HandlerActive(int index) const {
    return always_progress_[index] ||
           users_[index].load(std::memory_order_relaxed) != 0;
  }
  // One idle round of a wait on `vci` (< 0: on every VCI), as the wait
  // policy says: poll on, pause, yield, or sleep. True when it slept, so
  // the next round looks at every VCI the doorbell stands for.
  bool IdleStep(IdleRounds& idle, int vci, absl::FunctionRef<bool()> done,
                absl::FunctionRef<void()> before_sleep);
  // Arms `vci`'s doorbell, looks once more at everything that rings it,
  // and sleeps unless that look found work or `done` is true. True when it
  // slept, at most `max_sleep_ns` (< 0: the policy's sleep_max_ns; never
  // longer than that).
  bool SleepUntilRung(int vci, absl::FunctionRef<bool()> done,
                      absl::FunctionRef<void()> before_sleep,
                      int64_t max_sleep_ns = -1);

  net::Transport* const transport_;
  const WaitPolicy wait_policy_;
  const bool has_doorbell_;
  const bool endpoints_progress_process_;  // Settings::endpoint_progress
  const int num_shared_;
  const int capacity_;
  // capacity_ entries: the shared VCIs from the start, endpoints' as they
  // are first needed. Never freed before the destructor, so lock-free
  // readers may keep the pointer.
  std::unique_ptr<std::atomic<Vci*>[]> vcis_;
  std::atomic<int> in_use_{0};
  std::mutex endpoint_vcis_mutex_;
  std::vector<int> free_endpoint_vcis_;  // guarded by endpoint_vcis_mutex_
  std::unique_ptr<std::atomic<int>[]> endpoint_references_;  // by VCI

  // Registered kinds of traffic, by Traffic; written before traffic flows.
  std::array<TrafficHandler*, kMaxTraffic> handlers_{};
  std::array<bool, kMaxTraffic> always_progress_{};
  std::array<std::atomic<int>, kMaxTraffic> users_{};
  // The registered kinds' indices, in Traffic order: what a poll visits
  // (two today, not all kMaxTraffic slots).
  std::array<int, kMaxTraffic> registered_{};
  int num_registered_ = 0;
  // The handler of each message type (a message's first byte).
  std::array<TrafficHandler*, 256> by_message_type_{};
  TrafficHandler* writes_with_immediate_ = nullptr;
  // Every VCI's outbox looks links up here (FillLinks).
  LinkTable links_;
};

template <typename Done>
void VciSet::WaitUntil(int vci, Done done,
                       absl::FunctionRef<void()> before_sleep) {
  IdleRounds idle(wait_policy_);
  bool woke = false;
  for (unsigned round = 1; !done(); ++round) {
    bool progressed;
    if (vci < 0) {
      progressed = ProgressAll();
    } else if (round % 16 != 0 && !woke) {
      progressed = TryProgress(vci);
    } else {
      // Now and then, and after every sleep (the doorbell stands for all
      // the shared VCIs), the other VCIs too.
      progressed = TryProgress(vci) | ProgressBeyond(vci);
    }
    if (progressed) {
      idle.Progressed();
      woke = false;
    } else {
      woke = IdleStep(idle, vci, done, before_sleep);
    }
  }
}

}  // namespace minimpi::vci

#endif  // MINIMPI_MPI_VCI_VCI_SET_H_
