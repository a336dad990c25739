// A collective as a schedule: rounds of steps (send, receive, reduce, copy),
// each round starting when every step of the one before has finished. Every
// algorithm in mpi/coll builds one; a blocking collective runs it to the end
// at once, a nonblocking one returns its request and lets the progress engine
// advance it as its messages complete, so collectives and point-to-point
// requests mix freely in MPI_Waitall/MPI_Testsome.
//
// All messages travel in the communicator's collective context with a tag
// drawn from the communicator's collective sequence number, so overlapping
// nonblocking collectives on one communicator never match each other's
// messages (MPI requires every rank to start collectives in the same order).
// Each message and each receive carries the matching hint: which collective,
// the message's bytes, how many ranks.
//
// Owned by: mpi/coll. Called by: the algorithms and the bindings.
#ifndef MINIMPI_MPI_COLL_SCHEDULE_H_
#define MINIMPI_MPI_COLL_SCHEDULE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "mpi/objects/comm.h"
#include "mpi/match/match_engine.h"
#include "mpi/objects/op.h"
#include "mpi/p2p/point_to_point.h"

namespace minimpi::coll {

using CollectiveKind = match::TrafficKind::Collective;

class Schedule : public vci::Progressable {
 public:
  // `kind` names the collective for the matching hint; `message_bytes` is
  // the size of the whole call (each message's hint carries its own size).
  Schedule(Communicator& comm, CollectiveKind kind, size_t message_bytes);
  // The same with an explicit tag instead of the communicator's next
  // sequence number, for an exchange among some members only
  // (MPI_Comm_create_group): it must not advance a sequence the other
  // members never see. The caller picks a tag no sequence number can take
  // (coll::GroupExchangeTag).
  Schedule(Communicator& comm, CollectiveKind kind, size_t message_bytes,
           int32_t tag);
  ~Schedule() override;

  const Communicator& comm() const { return comm_; }
  int rank() const { return comm_.rank; }
  int size() const { return comm_.size; }

  // --- Building, before Start. Steps of one round run concurrently.
  void Send(const void* buffer, size_t bytes, int peer);
  void Receive(void* buffer, size_t bytes, int peer);
  // inout[i] = in[i] (op) inout[i] for `count` items of `type`.
  void Reduce(const void* in, void* inout, int64_t count, MPI_Datatype type,
              const Op* op);
  void Copy(const void* from, void* to, size_t bytes);
  // A whole collective as one step (e.g. an intercommunicator's collective
  // running a collective on its local group). `child` was built before
  // this schedule starts, so its tag comes from its communicator's sequence
  // in program order; it runs on this schedule's VCI.
  void Nested(std::unique_ptr<Schedule> child);
  // Steps added after this wait for every step added before.
  void EndRound();
  // Scratch memory that lives as long as the schedule.
  std::byte* Scratch(size_t bytes);
  // Work to do once every step has finished, just before the collective
  // completes (with the VCI's lock held): e.g. unpacking a staged copy of
  // a receive buffer into the program's non-contiguous datatype.
  void AtCompletion(std::function<void()> work);

  // --- Running.
  // Posts the first round; returns the request that completes at the end
  // (and owns the schedule from then on).
  vci::Request* Start(p2p::PointToPoint& p2p);
  // Start, wait, retire: a blocking collective. Returns false if a message
  // arrived truncated (mismatched counts), true otherwise.
  static bool Run(std::unique_ptr<Schedule> schedule, p2p::PointToPoint& p2p);

  // --- Running again (persistent collectives, mpi/coll/persistent.h).
  // Marks this schedule and its nested ones as kept: they survive their
  // completion, keep their work at completion, and may be rewound. Call
  // once, after building, instead of Start.
  void KeepForRestarts(p2p::PointToPoint& p2p);
  // Back to the first round, to run again for `request` (a kept schedule
  // whose last run has completed: nothing of it is in flight).
  void Rewind(vci::Request* request);

  void Advance(int vci) override;

 private:
  enum class StepKind : uint8_t { kSend, kReceive, kReduce, kCopy, kNested };
  struct Step {
    StepKind kind;
    const void* in = nullptr;  // send / reduce input / copy source
    void* out = nullptr;       // receive / reduce inout / copy target
    size_t bytes = 0;          // send, receive, copy
    int peer = 0;              // send, receive
    int64_t count = 0;         // reduce
    MPI_Datatype type = nullptr;
    const Op* op = nullptr;
    size_t child = 0;  // nested: index into children_
  };

  // Runs the local steps and posts the messages of round `round_`.
  void StartRound(p2p::PointToPoint& p2p);
  // True when every posted step of the round has finished (retiring them).
  bool RoundDone(p2p::PointToPoint& p2p);

  const Communicator& comm_;
  // What the schedule posts through: set by Start (a nested schedule's by
  // its parent's round).
  p2p::PointToPoint* p2p_ = nullptr;
  // The VCI the schedule's messages and request use: its communicator's,
  // or its parent's when nested.
  int vci_;
  const match::TrafficKind hint_;
  const int32_t tag_;
  // Inline capacities cover the schedules of small communicators, so a
  // small collective allocates nothing but the schedule itself.
  absl::InlinedVector<Step, 8> steps_;
  // steps_[round_ends_[r - 1], round_ends_[r]) is round r.
  absl::InlinedVector<size_t, 6> round_ends_;
  // Scratch: small requests come from `inline_scratch_`, the rest from the
  // heap.
  alignas(16) std::byte inline_scratch_[128];
  size_t inline_scratch_used_ = 0;
  absl::InlinedVector<std::unique_ptr<std::byte[]>, 2> scratch_;
  absl::InlinedVector<const Op*, 1> retained_ops_;  // user ops held until done
  std::vector<std::function<void()>> at_completion_;
  // Nested collectives not started yet (their requests own them after).
  std::vector<std::unique_ptr<Schedule>> children_;
  size_t round_ = 0;
  absl::InlinedVector<vci::Request*, 6> in_flight_;
  bool truncated_ = false;
  // Kept for restarts (KeepForRestarts): nested schedules stay in
  // children_ rather than going to their requests.
  bool kept_ = false;
};

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_SCHEDULE_H_
