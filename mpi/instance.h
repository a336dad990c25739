// The library's process-wide state between MPI_Init and MPI_Finalize: the
// settings, the bootstrap, the transport, the point-to-point engine, the
// predefined communicators and the table of local communicator ids.
//
// Owned by: mpi/. Called by: the bindings.
#ifndef MINIMPI_MPI_INSTANCE_H_
#define MINIMPI_MPI_INSTANCE_H_

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "mpi/comm.h"
#include "mpi/errhandler.h"
#include "mpi/handle_table.h"
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
  // Creates the instance (MPI_Init_thread at `thread_level`, an
  // MPI_THREAD_* value). Errors name what failed.
  static absl::Status Initialize(int thread_level);
  // Tears it down (MPI_Finalize).
  static void Finalize();

  static LibraryState state() { return state_.load(std::memory_order_acquire); }
  // Valid while state() == kInitialized.
  static Instance& Get() { return *instance_; }

  const runtime::Settings& settings() const { return settings_; }
  runtime::Bootstrap& bootstrap() { return *bootstrap_; }
  net::Transport& transport() { return *transport_; }
  vci::VciSet& vcis() { return *vcis_; }
  p2p::PointToPoint& p2p() { return *p2p_; }
  part::Partitioned& partitioned() { return *partitioned_; }
  rma::OneSided& one_sided() { return *one_sided_; }
  Communicator* world() { return world_.get(); }
  Communicator* self() { return self_.get(); }
  int world_rank() const { return world_rank_; }
  std::thread::id main_thread() const { return main_thread_; }

  // The tables that turn object handles into objects (mpi/handle_table.h).
  // Predefined handles never reach them.
  HandleTable<Communicator>& communicators() { return communicators_; }
  HandleTable<Datatype>& datatypes() { return datatypes_; }
  HandleTable<Errhandler>& errhandlers() { return errhandlers_; }
  HandleTable<Op>& ops() { return ops_; }
  HandleTable<p2p::UnexpectedRecord>& messages() { return messages_; }
  // Issue 8: group handles (MPI_GROUP_EMPTY never enters the table; info
  // handles are process-wide, see mpi/info.h). Groups left at MPI_Finalize
  // are deleted there.
  HandleTable<Group>& groups() { return groups_; }

  // What communicators and error handlers give back on their last release.
  void CommunicatorReleased(int32_t local_id, int endpoint_vci) override;
  void ErrhandlerReleased(MPI_Errhandler handle) override;

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

  static std::atomic<LibraryState> state_;
  static Instance* instance_;

  runtime::Settings settings_;
  std::unique_ptr<runtime::Bootstrap> bootstrap_;
  std::unique_ptr<net::Transport> transport_;
  std::unique_ptr<vci::VciSet> vcis_;
  std::unique_ptr<p2p::PointToPoint> p2p_;
  std::unique_ptr<part::Partitioned> partitioned_;
  std::unique_ptr<rma::OneSided> one_sided_;
  std::unique_ptr<Communicator> world_;
  std::unique_ptr<Communicator> self_;
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

#endif  // MINIMPI_MPI_INSTANCE_H_
