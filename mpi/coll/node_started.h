// Persistent collectives on a node's shared-memory region: a started
// barrier, bcast, reduce or allreduce whose data fits a slot (see
// node_region.h) on a communicator inside one node, run through the region
// like its blocking form, in steps that never wait.
//
// MPI_Start takes the call's number and publishes this rank's part (its
// arrival, its data: the root's for a bcast), once its slot of that call
// is free, which it almost always is; every progress round of the
// communicator's VCI (MPI_Test, MPI_Wait, any other wait on that VCI) then
// looks at the others' slots, and once they are posted copies or combines
// what this rank reads, ends the call and completes the request. Nothing is
// allocated: the region, the slots and the call's shape are fixed at _init.
//
// Order with other collectives on the communicator: a started call takes
// the region's next call number when it starts, so the order of starts
// and blocking calls is the program's, the same on every rank. A blocking
// call through the region first waits until this rank's started calls
// have ended (they need nothing from it but progress), and started calls
// end in the order they started, so a rank's done flag still covers every
// call before it. Nonblocking and schedule-run persistent collectives use
// no region and interleave freely.
//
// Owned by: mpi/coll. Used by: PersistentCollective (persistent.h).
#ifndef MINIMPI_MPI_COLL_NODE_STARTED_H_
#define MINIMPI_MPI_COLL_NODE_STARTED_H_

#include <cstdint>
#include <memory>

#include "mpi/coll/algorithms.h"
#include "mpi/coll/node_collectives.h"
#include "mpi/coll/node_region.h"
#include "mpi/objects/comm.h"

namespace minimpi::coll {

class NodeStartedCall {
 public:
  // The started form of `collective` with these arguments (dense data) on
  // `comm`, or nullptr when it does not run through comm's region (then
  // every rank of a correct program gets nullptr). May make the region (a
  // collective step over comm, as a blocking call's first use does).
  static std::unique_ptr<NodeStartedCall> For(Collective collective,
                                              Communicator& comm,
                                              const Arguments& arguments);

  ~NodeStartedCall();

  // MPI_Start, under the VCI's lock: takes the call's number and posts
  // what it can. Then Advance until it returns true.
  void Begin();
  // Under the VCI's lock: looks at the others' posts, reads and combines
  // what has arrived, ends the call when this rank needs nothing more and
  // every earlier started call ended. True once it ended; outcome() then
  // says whether the counts agreed.
  bool Advance();
  NodeOutcome outcome() const { return outcome_; }

 private:
  NodeStartedCall(Collective collective, Communicator& comm, NodeRegion& region,
                  const Arguments& arguments);
  // Posts this rank's part when its slot is free; true once posted.
  bool Publish();
  // Reads what this rank reads; true once done (or counts disagree).
  bool Read();

  const Collective collective_;
  // Held (with a user operation) for as long as this call lives: the
  // program may free both, and comm's region with comm, before it frees
  // the request.
  Communicator& comm_;
  NodeRegion& region_;
  const Arguments arguments_;
  const uint64_t bytes_;  // this rank's data in the call
  uint64_t call_ = 0;
  uint64_t ordinal_ = 0;
  bool published_ = false;
  bool read_ = false;
  NodeOutcome outcome_ = NodeOutcome::kDone;
};

// Before a blocking call through comm's region: waits (progressing the
// VCI) until comm's started calls have ended.
void EndStartedCalls(Communicator& comm, NodeRegion& region);

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_NODE_STARTED_H_
