// The library's process-wide state between MPI_Init and MPI_Finalize: the
// settings, the bootstrap, the transport, the point-to-point engine, the
// predefined communicators and the table of local communicator ids.
//
// Owned by: mpi/instance. Called by: the bindings only; the layers below
// reach what it holds through what it installs (coll::CollectiveServices,
// the objects' release sinks).
#ifndef MINIMPI_MPI_INSTANCE_INSTANCE_H_
#define MINIMPI_MPI_INSTANCE_INSTANCE_H_

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "mpi/coll/services.h"
#include "mpi/objects/comm.h"
#include "mpi/objects/errhandler.h"
#include "mpi/objects/handle_table.h"
#include "mpi/p2p/point_to_point.h"
#include "mpi/part/partitioned.h"
#include "mpi/rma/one_sided.h"
#include "mpi/vci/vci_set.h"
#include "net/transport.h"
#include "runtime/bootstrap.h"
#include "runtime/settings.h"

namespace minimpi {

class Datatype;
class Op;
class Group;  // issue 8

enum class LibraryState : int { kNotInitialized, kInitialized, kFinalized };

class Instance final : public CommunicatorReleaseSink,
                       public ErrhandlerReleaseSink {
 public:
  // The runtime has users: the world model (MPI_Init .. MPI_Finalize) and
  // each live session (MPI_Session_init .. MPI_Session_finalize), started
  // and ended in any order, again and again. The first user brings the
  // runtime up (`thread_level`, an MPI_THREAD_* value, decides binding);
  // later ones find it up. Errors name what failed.
  // `started` runs once the runtime is up for its first user (what needs
  // the whole library, like choosing collective algorithms).
  static absl::Status AddUser(
      int thread_level, absl::FunctionRef<absl::Status(Instance&)> started);
  // A user ended. The last one synchronizes the job (MPI_Finalize's barrier,
  // over the hidden world, so every process must end its last user, as
  // MPICH's last finalize requires) but the runtime stays up until the
  // process exits: PMIx, the transports and the VCIs are not made to be
  // brought up twice in one process (PMIx_Init after PMIx_Finalize, shared
  // memory named by the job), so a session begun after MPI_Finalize finds
  // them ready. An exit handler tears it down when no user is left.
  // `last_ends` runs for the last user, before the state changes (the
  // barrier, which lives above this layer).
  static void RemoveUser(absl::FunctionRef<void(Instance&)> last_ends);

  // kInitialized while the runtime has a user, so calls may be made;
  // kFinalized once the last user ended (calls are then refused until the
  // next MPI_Session_init).
  static LibraryState state() { return state_.load(std::memory_order_acquire); }
  // The world model alone, which MPI_Initialized and MPI_Finalized report:
  // a session leaves it untouched.
  static LibraryState world_state() {
    return world_state_.load(std::memory_order_acquire);
  }
  static void set_world_state(LibraryState state) {
    world_state_.store(state, std::memory_order_release);
  }
  // Whether MPI_COMM_WORLD and MPI_COMM_SELF name communicators now.
  static bool world_active() {
    return world_state() == LibraryState::kInitialized;
  }
  // Valid once the runtime is up (state() != kNotInitialized).
  static Instance& Get() { return *instance_; }

  const runtime::Settings& settings() const { return settings_; }
  // MINIMPI_MATCH_STATS as the runtime's end (TearDown) sees it: MPI_Init's
  // value, or what a tool wrote through MPI_T since (the statistics'
  // counts are always kept; their times only when it was on at MPI_Init).
  bool match_stats() const {
    return match_stats_.load(std::memory_order_relaxed);
  }
  void set_match_stats(bool on) {
    match_stats_.store(on, std::memory_order_relaxed);
  }
  runtime::Bootstrap& bootstrap() { return *bootstrap_; }
  net::Transport& transport() { return *transport_; }
  vci::VciSet& vcis() { return *vcis_; }
  p2p::PointToPoint& p2p() { return *p2p_; }
  part::Partitioned& partitioned() { return *partitioned_; }
  rma::OneSided& one_sided() { return *one_sided_; }
  Communicator* world() { return world_.get(); }
  Communicator* self() { return self_.get(); }
  // A communicator over every process of the job that always exists while
  // the runtime is up, whether or not the world model is: sessions make
  // their communicators through it (MPI_Comm_create_from_group). Never
  // visible to the program; its own local id, so its traffic never meets
  // MPI_COMM_WORLD's.
  Communicator* hidden_world() { return hidden_world_.get(); }
  int world_rank() const { return world_rank_; }
  std::thread::id main_thread() const { return main_thread_; }

  // The tables that turn object handles into objects (mpi/objects/handle_table.h).
  // Predefined handles never reach them.
  HandleTable<Communicator>& communicators() { return communicators_; }
  HandleTable<Datatype>& datatypes() { return datatypes_; }
  HandleTable<Errhandler>& errhandlers() { return errhandlers_; }
  HandleTable<Op>& ops() { return ops_; }
  HandleTable<p2p::UnexpectedRecord>& messages() { return messages_; }
  // Issue 8: group handles (MPI_GROUP_EMPTY never enters the table; info
  // handles are process-wide, see mpi/objects/info.h). Groups left at MPI_Finalize
  // are deleted there.
  HandleTable<Group>& groups() { return groups_; }

  // What communicators and error handlers give back on their last release.
  void CommunicatorReleased(int32_t local_id, int endpoint_vci) override;
  void ErrhandlerReleased(MPI_Errhandler handle) override;

  // MPI_T: events about a message name the communicator whose context it
  // used; a communicator handed to the program says so here (its release
  // forgets it).
  void NameContextsForTools(const Communicator& comm);

  int32_t AllocateLocalId();
  // Ids are reused oldest first, so a message still in flight for a freed
  // communicator is unlikely to meet a new one that took its id.
  void ReleaseLocalId(int32_t id);
  // The VCI a new communicator uses, from an id every member agrees on.
  int VciFor(int32_t agreed_id) const {
    return static_cast<int>(agreed_id % vcis_->num_vcis());
  }

 private:
  Instance() = default;
  absl::Status Setup(int thread_level);
  // Ends the runtime (at process exit, when no user is left).
  static void TearDown();

  static std::atomic<LibraryState> state_;
  static std::atomic<LibraryState> world_state_;
  static Instance* instance_;
  static std::mutex users_mutex_;
  static int users_;  // guarded by users_mutex_

  runtime::Settings settings_;
  std::atomic<bool> match_stats_{false};
  std::unique_ptr<runtime::Bootstrap> bootstrap_;
  std::unique_ptr<net::Transport> transport_;
  std::unique_ptr<vci::VciSet> vcis_;
  std::unique_ptr<p2p::PointToPoint> p2p_;
  std::unique_ptr<part::Partitioned> partitioned_;
  std::unique_ptr<rma::OneSided> one_sided_;
  // What mpi/coll reaches through coll::Services(), installed while up.
  std::optional<coll::CollectiveServices> collective_services_;
  std::unique_ptr<Communicator> world_;
  std::unique_ptr<Communicator> self_;
  std::unique_ptr<Communicator> hidden_world_;
  int world_rank_ = 0;
  std::thread::id main_thread_;

  HandleTable<Communicator> communicators_{HandleKind::kCommunicator};
  HandleTable<Datatype> datatypes_{HandleKind::kDatatype};
  HandleTable<Errhandler> errhandlers_{HandleKind::kErrhandler};
  HandleTable<Op> ops_{HandleKind::kOp};
  HandleTable<p2p::UnexpectedRecord> messages_{HandleKind::kMessage};
  HandleTable<Group> groups_{HandleKind::kGroup};  // issue 8

  std::mutex ids_mutex_;
  std::deque<int32_t> free_ids_;  // guarded by ids_mutex_
  int32_t next_id_ = 0;           // guarded by ids_mutex_
};

}  // namespace minimpi

#endif  // MINIMPI_MPI_INSTANCE_INSTANCE_H_
