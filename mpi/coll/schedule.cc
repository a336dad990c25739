#include "mpi/coll/schedule.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace minimpi::coll {

Schedule::Schedule(Communicator& comm, CollectiveKind kind,
                   size_t message_bytes)
    : comm_(comm),
      vci_(comm.vci),
      hint_{kind,
            static_cast<uint32_t>(std::min<size_t>(
                message_bytes, std::numeric_limits<uint32_t>::max())),
            static_cast<uint32_t>(comm.size)},
      tag_(comm.NextCollectiveTag()) {
  // A nonblocking collective may outlive the user's MPI_Comm_free.
  comm.Retain();
}

Schedule::Schedule(Communicator& comm, CollectiveKind kind,
                   size_t message_bytes, int32_t tag)
    : comm_(comm),
      vci_(comm.vci),
      hint_{kind,
            static_cast<uint32_t>(std::min<size_t>(
                message_bytes, std::numeric_limits<uint32_t>::max())),
            static_cast<uint32_t>(comm.size)},
      tag_(tag) {
  comm.Retain();
}

// Small enough for the allocator's per-thread cache (1 KiB in glibc), which
// keeps a small collective's one allocation cheap.
static_assert(sizeof(Schedule) <= 1024);

Schedule::~Schedule() {
  for (const Op* op : retained_ops_) op->Release();
  const_cast<Communicator&>(comm_).Release();
}

void Schedule::Send(const void* buffer, size_t bytes, int peer) {
  Step step{StepKind::kSend};
  step.in = buffer;
  step.bytes = bytes;
  step.peer = peer;
  steps_.push_back(step);
}

void Schedule::Receive(void* buffer, size_t bytes, int peer) {
  Step step{StepKind::kReceive};
  step.out = buffer;
  step.bytes = bytes;
  step.peer = peer;
  steps_.push_back(step);
}

void Schedule::Reduce(const void* in, void* inout, int64_t count,
                      MPI_Datatype type, const Op* op) {
  Step step{StepKind::kReduce};
  step.in = in;
  step.out = inout;
  step.count = count;
  step.type = type;
  step.op = op;
  steps_.push_back(step);
  // The program may free a user operation while this schedule still runs.
  if (!op->predefined() && std::find(retained_ops_.begin(), retained_ops_.end(),
                                     op) == retained_ops_.end()) {
    op->Retain();
    retained_ops_.push_back(op);
  }
}

void Schedule::Copy(const void* from, void* to, size_t bytes) {
  Step step{StepKind::kCopy};
  step.in = from;
  step.out = to;
  step.bytes = bytes;
  steps_.push_back(step);
}

void Schedule::Nested(std::unique_ptr<Schedule> child) {
  Step step{StepKind::kNested};
  step.child = children_.size();
  child->vci_ = vci_;
  child->EndRound();  // what Start does for a schedule started on its own
  children_.push_back(std::move(child));
  steps_.push_back(step);
}

void Schedule::AtCompletion(std::function<void()> work) {
  at_completion_.push_back(std::move(work));
}

void Schedule::EndRound() {
  const size_t previous_end = round_ends_.empty() ? 0 : round_ends_.back();
  if (steps_.size() > previous_end) round_ends_.push_back(steps_.size());
}

std::byte* Schedule::Scratch(size_t bytes) {
  // 16-byte granules keep every scratch area aligned for any datatype.
  const size_t rounded = (bytes + 15) & ~size_t{15};
  if (inline_scratch_used_ + rounded <= sizeof(inline_scratch_)) {
    std::byte* area = inline_scratch_ + inline_scratch_used_;
    inline_scratch_used_ += rounded;
    return area;
  }
  scratch_.push_back(std::make_unique<std::byte[]>(std::max<size_t>(bytes, 1)));
  return scratch_.back().get();
}

vci::Request* Schedule::Start(p2p::PointToPoint& p2p) {
  p2p_ = &p2p;
  EndRound();
  return p2p.StartCollective(this, vci_);
}

bool Schedule::Run(std::unique_ptr<Schedule> schedule, p2p::PointToPoint& p2p) {
  // From Start on, the request owns the schedule and deletes it at Retire.
  vci::Request* request = schedule.release()->Start(p2p);
  p2p.Wait(request);
  const bool intact = request->status.error == vci::Error::kNone;
  p2p.Retire(request);
  return intact;
}

void Schedule::KeepForRestarts(p2p::PointToPoint& p2p) {
  kept_ = true;
  p2p_ = &p2p;
  EndRound();
  for (std::unique_ptr<Schedule>& child : children_)
    child->KeepForRestarts(p2p);
}

void Schedule::Rewind(vci::Request* request) {
  round_ = 0;
  truncated_ = false;
  queued_for_advance = false;
  in_advance = false;
  this->request = request;
  // Nested schedules get their requests when their step starts.
  for (std::unique_ptr<Schedule>& child : children_) child->Rewind(nullptr);
}

void Schedule::StartRound(p2p::PointToPoint& p2p) {
  const size_t begin = round_ == 0 ? 0 : round_ends_[round_ - 1];
  const size_t end = round_ends_[round_];
  for (size_t i = begin; i < end; ++i) {
    const Step& step = steps_[i];
    switch (step.kind) {
      case StepKind::kSend: {
        vci::SendArguments send;
        send.buffer = step.in;
        send.bytes = step.bytes;
        send.destination_world_rank = comm_.world_ranks[step.peer];
        // The peer runs this schedule on the same VCI index as we do (a
        // nested one runs on its parent's), except on endpoints, where each
        // rank has its own.
        send.destination_vci =
            comm_.on_endpoints() ? comm_.remote_vci(step.peer) : vci_;
        send.remote_context = comm_.remote_collective_context(step.peer);
        send.source_rank = comm_.rank;
        send.tag = tag_;
        send.vci = vci_;
        send.kind = {hint_.collective, static_cast<uint32_t>(step.bytes),
                     hint_.comm_size};
        in_flight_.push_back(p2p.IsendLocked(send, this));
        break;
      }
      case StepKind::kReceive: {
        vci::ReceiveArguments receive;
        receive.buffer = step.out;
        receive.capacity = step.bytes;
        receive.context = comm_.collective_context();
        receive.source = step.peer;
        receive.tag = tag_;
        receive.vci = vci_;
        // The same hint the message itself carries: this message's size.
        receive.kind = {hint_.collective, static_cast<uint32_t>(step.bytes),
                        hint_.comm_size};
        in_flight_.push_back(p2p.IrecvLocked(receive, this));
        break;
      }
      case StepKind::kReduce:
        step.op->Apply(step.in, step.out, step.count, step.type);
        break;
      case StepKind::kCopy:
        if (step.bytes > 0 && step.in != step.out) {
          std::memmove(step.out, step.in, step.bytes);
        }
        break;
      case StepKind::kNested:
        children_[step.child]->p2p_ = &p2p;
        // A kept schedule keeps its children for the next run; otherwise
        // the child's request owns it from here on.
        in_flight_.push_back(
            p2p.StartNestedLocked(kept_ ? children_[step.child].get()
                                        : children_[step.child].release(),
                                  vci_, this));
        break;
    }
  }
}

bool Schedule::RoundDone(p2p::PointToPoint& p2p) {
  for (vci::Request* request : in_flight_) {
    if (!p2p::PointToPoint::IsComplete(request)) return false;
  }
  for (vci::Request* request : in_flight_) {
    if (request->status.error != vci::Error::kNone) truncated_ = true;
    // A kept nested schedule is ours, not its request's.
    if (kept_ && request->kind == vci::RequestKind::kCollective) {
      request->schedule = nullptr;
    }
    p2p.Retire(request);
  }
  in_flight_.clear();
  return true;
}

void Schedule::Advance(int /*vci*/) {
  p2p::PointToPoint& p2p = *p2p_;
  // Rounds whose steps finish at once (local steps, eager sends) run back to
  // back here; the loop stops at the first round still waiting on messages.
  while (RoundDone(p2p)) {
    if (round_ == round_ends_.size()) {
      for (std::function<void()>& work : at_completion_) work();
      if (!kept_) at_completion_.clear();
      if (truncated_) request->status.error = vci::Error::kTruncated;
      in_advance = false;
      p2p.CompleteCollectiveLocked(request);  // may delete `this` (waiter)
      return;
    }
    StartRound(p2p);
    ++round_;
  }
  in_advance = false;
}

}  // namespace minimpi::coll
