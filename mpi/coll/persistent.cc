#include "mpi/coll/persistent.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace minimpi::coll {

PersistentCollective::PersistentCollective(p2p::PointToPoint& p2p,
                                           Communicator& comm, Builder rebuild)
    : p2p_(p2p),
      comm_(comm),
      rebuild_(std::move(rebuild)),
      sequence_(comm.collective_sequence),
      local_sequence_(comm.local_group != nullptr
                          ? comm.local_group->collective_sequence
                          : 0) {}

int PersistentCollective::Create(p2p::PointToPoint& p2p, Communicator& comm,
                                 Builder build, bool rebuild_each_start,
                                 vci::Request** request,
                                 std::string* error_message) {
  // Constructed before building, so that it notes the sequence the first
  // schedule's tags come from.
  std::unique_ptr<PersistentCollective> persistent(new PersistentCollective(
      p2p, comm, rebuild_each_start ? build : Builder()));
  if (int error = build(&persistent->run_, error_message)) return error;
  persistent->run_->KeepForRestarts(p2p);
  *request = p2p.NewPersistentSchedule(persistent.release(), comm.vci);
  return 0;
}

vci::Request* PersistentCollective::CreateOnNode(
    p2p::PointToPoint& p2p, Communicator& comm,
    std::unique_ptr<NodeStartedCall> call) {
  std::unique_ptr<PersistentCollective> persistent(
      new PersistentCollective(p2p, comm, Builder()));
  persistent->node_ = std::move(call);
  // Room among the VCI's polled work now, so that a start allocates none.
  p2p.ReservePolled(comm.vci);
  return p2p.NewPersistentSchedule(persistent.release(), comm.vci);
}

PersistentCollective::~PersistentCollective() {
  if (node_ != nullptr) p2p_.ReleasePolled(comm_.vci);
}

void PersistentCollective::Start(vci::Request* request) {
  static_cast<PersistentCollective*>(request->schedule)->StartRun();
}

void PersistentCollective::StartRun() {
  if (node_ != nullptr) {
    node_begun_ = false;
    p2p_.RestartSchedule(request);  // begins it in Advance, under the lock
    return;
  }
  if (rebuild_) {
    // The same tags as the first schedule: build with the communicators'
    // sequences wound back to where they were then.
    const uint32_t now = comm_.collective_sequence;
    comm_.collective_sequence = sequence_;
    uint32_t local_now = 0;
    if (comm_.local_group != nullptr) {
      local_now = comm_.local_group->collective_sequence;
      comm_.local_group->collective_sequence = local_sequence_;
    }
    std::string error_message;
    run_.reset();
    if (rebuild_(&run_, &error_message) != 0) {
      // The same arguments staged when the request was made.
      std::fprintf(stderr, "minimpi: MPI_Start: persistent collective: %s\n",
                   error_message.c_str());
      std::abort();
    }
    comm_.collective_sequence = now;
    if (comm_.local_group != nullptr) {
      comm_.local_group->collective_sequence = local_now;
    }
    run_->KeepForRestarts(p2p_);
  }
  run_->Rewind(request);
  p2p_.RestartSchedule(request);
}

void PersistentCollective::Advance(int vci) {
  if (node_ != nullptr) {
    in_advance = false;
    if (!node_begun_) {
      node_begun_ = true;
      node_->Begin();
      if (!node_->Advance()) {
        p2p_.StartPollingLocked(this, vci);
        return;
      }
    } else {
      if (!node_->Advance()) return;
      p2p_.StopPollingLocked(this, vci);
    }
    if (node_->outcome() == NodeOutcome::kTruncated) {
      request->status.error = vci::Error::kTruncated;
    }
    // May delete this (a request freed while active): nothing after.
    p2p_.CompleteCollectiveLocked(request);
    return;
  }
  Schedule* run = run_.get();
  in_advance = false;
  run->in_advance = true;
  // May complete the request, and (if it was freed while active) delete
  // this: nothing is touched after.
  run->Advance(vci);
}

}  // namespace minimpi::coll
