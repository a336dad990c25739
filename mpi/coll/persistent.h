// Persistent collectives (MPI_Bcast_init and kin, MPI-4.1 section 6.13): a
// collective built once at initialization and run at every MPI_Start.
//
// The schedule is built at _init, with its tag drawn then from the
// communicator's collective sequence: every rank initializes its
// persistent collectives in the same order (MPI requires it), so the tag
// names one persistent collective everywhere, whatever other collectives
// run between its starts. Successive starts reuse the tag; messages between
// two ranks arrive in order, so a quick rank's next run never overtakes its
// previous one at a slower peer.
//
// Each start rewinds that schedule and runs it again: no allocation, no
// algorithm choice. Only data whose datatype is not dense, which the
// schedule would carry as a packed copy made when it was built, forces a
// fresh schedule at each start (built with the tags of the first, so
// matching stays the same); those starts allocate as a nonblocking call
// does.
//
// The request (kind kCollective, persistent) owns this object as its
// schedule: Retire leaves it for the next start, MPI_Request_free deletes
// it (at completion, if the request is active).
//
// Owned by: mpi/coll. Called by: the collective bindings (_init forms) and
// MPI_Start.
#ifndef MINIMPI_MPI_COLL_PERSISTENT_H_
#define MINIMPI_MPI_COLL_PERSISTENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "mpi/coll/node_started.h"
#include "mpi/coll/schedule.h"
#include "mpi/objects/comm.h"
#include "mpi/p2p/point_to_point.h"
#include "mpi/vci/request.h"

namespace minimpi::coll {

class PersistentCollective final : public vci::Progressable {
 public:
  // Builds one run's schedule; returns an MPI error class (MPI_SUCCESS, or
  // why the arguments cannot be staged, with *error_message saying why).
  using Builder = std::function<int(std::unique_ptr<Schedule>* schedule,
                                    std::string* error_message)>;

  // Builds the schedule now and returns the inactive persistent request
  // owning it in *request. `rebuild_each_start`: the schedule carries
  // copies of the program's data made while building, so each start
  // builds afresh (with `build`, kept until the request is freed).
  static int Create(p2p::PointToPoint& p2p, Communicator& comm, Builder build,
                    bool rebuild_each_start, vci::Request** request,
                    std::string* error_message);

  // The same for a call that runs through the node's shared-memory region
  // at each start (node_started.h) instead of a schedule.
  static vci::Request* CreateOnNode(p2p::PointToPoint& p2p, Communicator& comm,
                                    std::unique_ptr<NodeStartedCall> call);
  ~PersistentCollective() override;

  // Whether `request` is a persistent collective's.
  static bool Is(const vci::Request* request) {
    return request->kind == vci::RequestKind::kCollective &&
           request->persistent;
  }
  // MPI_Start of an inactive persistent collective.
  static void Start(vci::Request* request);

  // Runs the first round of the schedule (the engine advances the schedule
  // itself from then on: its steps name it as their parent). A call on the
  // node's region: begins it at a start, and advances it at every progress
  // round of the VCI until it ends.
  void Advance(int vci) override;

 private:
  PersistentCollective(p2p::PointToPoint& p2p, Communicator& comm,
                       Builder rebuild);
  void StartRun();

  p2p::PointToPoint& p2p_;
  Communicator& comm_;
  // The current run's schedule.
  std::unique_ptr<Schedule> run_;
  // Empty unless each start builds afresh.
  Builder rebuild_;
  // Set (and run_ empty) for a call through the node's region.
  std::unique_ptr<NodeStartedCall> node_;
  bool node_begun_ = false;  // under the VCI's lock
  // The collective sequences of the communicator (and of an
  // intercommunicator's local group) when the first schedule was built:
  // a rebuilt schedule takes its tags from there again.
  uint32_t sequence_ = 0;
  uint32_t local_sequence_ = 0;
};

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_PERSISTENT_H_
