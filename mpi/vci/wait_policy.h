// How a thread waits for a request: how long it polls, whether it then
// yields the core or sleeps until a peer rings its doorbell, and the small
// state machine that applies that to each idle round of a wait.
//
// Why this exists: a rank that never stops polling looks to the kernel's
// scheduler like any other CPU hog. Beside other work it gets a fair share
// of a core whether or not it has anything to do, and while its peer is
// descheduled it burns that share for nothing. sched_yield is no cure: on
// the EEVDF scheduler (Linux 6.6 on) a yield moves the task's deadline a
// whole slice back, so with a competitor on the core the yielder gives away
// milliseconds, and since it stays runnable it still counts as load. A
// sleeping waiter is off the run queue; when its peer's message rings the
// doorbell the wakeup puts it back with the lag it saved, ahead of the
// tasks that kept running. So a waiter spins only as long as spinning can
// pay (the message is likely to come soon, and the core is ours), then
// sleeps; and it stops spinning at once when it sees it was descheduled in
// the middle of a spin (the core is contended, so the peer may be too).
// Whether spinning "can pay" is decided at run time, wait by wait: a thread
// whose core nobody else wanted lately (the kernel counts the times it took
// the core away) keeps polling up to quiet_spin_ns, since there a sleep
// saves nothing and its wakeup costs; one that was preempted lately spins
// only spin_ns. So a quiet machine waits like a spinning library and a
// busy one like a sleeping one, without a setting.
//
// Owned by: mpi/vci. Chosen by: mpi/instance at MPI_Init (WaitPolicy::Choose),
// applied by VciSet's waits; printed by minimpi_info.
#ifndef MINIMPI_MPI_VCI_WAIT_POLICY_H_
#define MINIMPI_MPI_VCI_WAIT_POLICY_H_

#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "runtime/settings.h"

namespace minimpi::vci {

struct WaitPolicy {
  // What a waiter does once its spin is over.
  enum class Then {
    kSpin,   // nothing: it polls until the request completes
    kYield,  // sched_yield between polls
    kSleep,  // sleep on the VCI's doorbell until a peer rings it
  };
  Then then = Then::kSleep;
  // How long a waiter polls before it yields or sleeps.
  int64_t spin_ns = 100'000;
  // How long it keeps polling past spin_ns while its core looks quiet (no
  // other task wanted it lately): on a quiet machine a sleep gains nothing
  // and its wakeup costs microseconds (tens, where an idle vCPU halts).
  int64_t quiet_spin_ns = 10'000'000;
  // kSleep: how long it then yields between polls before it sleeps (a
  // yield hands the core straight to a rank that shares it, cheaper than
  // a sleep and a wakeup while ranks outnumber cores).
  int64_t yield_ns = 0;
  // Leave the spin early when a gap between two looks at the clock shows
  // the thread was descheduled (the core has other work).
  bool leave_spin_when_preempted = true;
  // The longest one sleep lasts before the waiter looks again by itself
  // (a safety net: every event that ends a wait rings the doorbell).
  int64_t sleep_max_ns = 1'000'000;
  // Move off a core shared with an awake rank of the node (Settings::
  // wait_move).
  bool move_off_shared_core = true;
  // A poll for one partition (MPI_Parrived) that found nothing yields the
  // core. Programs call it in a loop; where ranks and threads outnumber
  // cores that loop otherwise keeps the ranks it waits for off their cores
  // (Dslash's partitioned mode at 4 ranks on 2 cores: 1.5x master, 1.1x
  // with the yield). Not under the spin policy, which asked for polling.
  // VciSet::IdleAfterFruitlessPoll yields, and naps in a long loop on one
  // partition.
  bool yield_in_polls = false;
  // How the choice was made, in words (minimpi_info, README).
  std::string reason;

  // Settings::wait_policy and wait_spin_us applied to this node: `cores`
  // this process may run on (1 when bound), `local_ranks` on the node (1
  // when bound), `threads_per_rank`
  // (OMP_NUM_THREADS when set, else 1), and whether the transport has
  // doorbells (without them a waiter yields instead of sleeping).
  // `own_core`: the rank is bound to a core no other rank of the job
  // uses, so whoever else wants it is not a peer.
  static WaitPolicy Choose(const runtime::Settings& settings, int cores,
                           int local_ranks, int threads_per_rank,
                           bool has_doorbell, bool own_core = false);
  // "sleep after 100 us of polling (2 ranks x 1 thread on 2 cores)".
  std::string Describe() const;
};

// Threads per rank an OpenMP program will run, from OMP_NUM_THREADS (its
// first level); 1 when unset or unreadable.
int ThreadsPerRankFromEnvironment();

// The idle rounds of one wait. The caller polls; after each round that
// found nothing it asks Idle what to do next. Looks at the clock once every
// kRoundsPerLook rounds, so an idle round stays a few loads.
class IdleRounds {
 public:
  enum class Action { kPoll, kPause, kYield, kSleep };
  static constexpr int kRoundsPerLook = 16;
  // A gap this long between two looks means the thread was not running.
  static constexpr int64_t kPreemptedGapNs = 200'000;

  explicit IdleRounds(const WaitPolicy& policy) : policy_(policy) {}

  // The last round found work: spin again from the start.
  void Progressed() {
    rounds_ = 0;
    phase_ = Phase::kSpin;
    skip_spin_ = false;
    quiet_ = Quiet::kUnknown;
  }
  // Whether the next idle round is the first of a spin (when a caller may
  // decide the spin is not worth it).
  bool AtSpinStart() const { return rounds_ == 0 && phase_ == Phase::kSpin; }
  // This time, go straight to what follows the spin.
  void SkipSpin() { skip_spin_ = true; }
  // The last round found nothing; `now` reads a monotonic clock (ns).
  // `core_is_quiet` says whether another task wanted this thread's core
  // lately; asked at most once a wait, when the spin of spin_ns is over.
  Action Idle(absl::FunctionRef<int64_t()> now,
              absl::FunctionRef<bool()> core_is_quiet);
  // As above, on a core that never looks quiet.
  Action Idle(absl::FunctionRef<int64_t()> now) {
    return Idle(now, [] { return false; });
  }

 private:
  enum class Phase { kSpin, kYieldBeforeSleep, kAfterSpin };
  // Leaves the spin for what follows it.
  Action EndSpin(absl::FunctionRef<int64_t()> now);
  // Whether a spin that lasted `spun_ns` goes on (asks `core_is_quiet` once).
  bool KeepSpinning(int64_t spun_ns, absl::FunctionRef<bool()> core_is_quiet);
  // What every round after the spin (and any yield before a sleep) does.
  Action AfterSpin() const {
    return policy_.then == WaitPolicy::Then::kYield ? Action::kYield
                                                    : Action::kSleep;
  }
  const WaitPolicy& policy_;
  Phase phase_ = Phase::kSpin;
  int64_t yield_started_ns_ = 0;
  bool skip_spin_ = false;
  enum class Quiet { kUnknown, kYes, kNo };
  Quiet quiet_ = Quiet::kUnknown;  // this wait's one look at the core
  int rounds_ = 0;
  int64_t spin_started_ns_ = 0;
  int64_t last_look_ns_ = 0;
};

// What a thread that polls in a loop (MPI_Parrived) does after a poll that
// found nothing. Polls for the same thing of the same round less than
// kGapNs apart (time given away here not counted) are a streak: the
// program is waiting for it. A streak of kBeforeNapNs is a wait in all but
// name: where ranks and threads outnumber the cores, or the thread's core
// was wanted lately by another task (which the counts cannot show: nodes
// simulated on one machine, other jobs), it naps on the doorbell; before
// that it yields. A loop still waiting for two or more things never naps
// (it wants each as soon as it is there) and yields only where ranks and
// threads outnumber the cores. Naps only under the sleep policy (auto,
// sleep), yields only under yield, nothing under spin. One per thread.
class PollStreak {
 public:
  enum class Action { kPoll, kYield, kNap };
  static constexpr int64_t kGapNs = 20'000;
  static constexpr int64_t kBeforeNapNs = 100'000;
  // The longest nap: an arrival rings the doorbell and ends it sooner.
  static constexpr int64_t kNapNs = 100'000;
  // A look at the core costs a system call: the second poll of a streak
  // looks, then every kPollsPerLook-th.
  static constexpr unsigned kPollsPerLook = 64;

  // `now_ns` reads a monotonic clock; `core_is_quiet` says whether another
  // task wanted this thread's core lately.
  Action AfterFruitlessPoll(const WaitPolicy& policy, const void* what,
                            uint64_t round, int64_t now_ns,
                            absl::FunctionRef<bool()> core_is_quiet);
  // The caller is back from what the action said, at `now_ns`: the time
  // given away continues the streak (a yield to a task that wanted the
  // core can last longer than the gap).
  void Resumed(int64_t now_ns) { last_ns_ = now_ns; }

 private:
  const void* what_ = nullptr;
  uint64_t round_ = 0;
  int64_t start_ns_ = 0;
  int64_t last_ns_ = 0;
  unsigned polls_ = 0;
  bool core_wanted_ = false;
};

}  // namespace minimpi::vci

#endif  // MINIMPI_MPI_VCI_WAIT_POLICY_H_
