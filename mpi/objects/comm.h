// Communicators. A communicator knows its group (world rank of each member)
// and, for each member, that process's *local id* for this communicator.
// Matching contexts derive from local ids (2*id for point-to-point, 2*id+1
// for collectives), and a sender stamps the receiver's id on every message.
// Local ids are allocated by each process alone, so creating a communicator
// needs no agreement on a common context id: one allgather of the new ids,
// which Comm_split needs anyway for colors and keys. This stays correct when
// threads create communicators on different parents at the same time.
//
// Owned by: mpi/. Called by: the bindings and mpi/coll.
#ifndef MINIMPI_MPI_OBJECTS_COMM_H_
#define MINIMPI_MPI_OBJECTS_COMM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "mpi/objects/attributes.h"
#include "mpi/objects/errhandler.h"
#include "mpi/mpi.h"
#include "mpi/topo/topology.h"
#include "mpi/vci/counters.h"

namespace minimpi {

namespace p2p {
class BufferedSends;  // mpi/p2p/buffered_sends.h
}  // namespace p2p

// Takes back what a communicator held once its last reference is gone: its
// local id, and an endpoint's reference to its VCI (endpoint_vci < 0: not
// on endpoints). mpi/instance implements it and installs itself for as long
// as the library is initialized (Communicator::SetReleaseSink), so
// communicators need nothing from the layers that assemble them.
class CommunicatorReleaseSink {
 public:
  virtual void CommunicatorReleased(int32_t local_id, int endpoint_vci) = 0;

 protected:
  ~CommunicatorReleaseSink() = default;
};

// What mpi/coll keeps for a communicator between collective calls (the
// node's shared-memory region, mpi/coll/node_collectives.h). Only the
// thread running the communicator's collectives touches it; it goes with
// the communicator.
class CollectiveState {
 public:
  virtual ~CollectiveState() = default;
};

class Communicator {
 public:
  Communicator();
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // Communicators are reference counted: the handle holds one reference and
  // every collective in flight holds another, because MPI_Comm_free lets
  // pending operations finish. The last release gives the local id back.
  // Predefined communicators ignore both calls (the instance owns them).
  void Retain();
  void Release();
  // Where released communicators give back what they held; nullptr (before
  // MPI_Init, from MPI_Finalize on): nowhere, the library is gone.
  static void SetReleaseSink(CommunicatorReleaseSink* sink) {
    release_sink_.store(sink, std::memory_order_release);
  }

  // The error handler in force, with a reference the caller must release.
  Errhandler* AcquireErrhandler();
  // Replaces the error handler; takes over the caller's reference to it.
  void SetErrhandler(Errhandler* handler);

  int32_t local_id = 0;
  int rank = 0;
  int size = 0;
  std::vector<int> world_ranks;     // by communicator rank
  std::vector<int32_t> remote_ids;  // by communicator rank
  // The VCI this process uses for the communicator. A communicator's ranks
  // all use the same VCI index, except on an endpoints communicator (and
  // those derived from one), where each rank is an endpoint with a VCI of
  // its own: then `remote_vcis` holds each rank's, and `vci` is ours.
  int vci = 0;
  std::vector<int> remote_vcis;  // by communicator rank; empty: all use vci
  bool on_endpoints() const { return !remote_vcis.empty(); }
  int remote_vci(int peer) const {
    return remote_vcis.empty() ? vci : remote_vcis[peer];
  }
  bool predefined = false;  // MPI_COMM_WORLD / MPI_COMM_SELF
  // The handle that names this communicator (a predefined constant, or what
  // the handle table issued).
  MPI_Comm handle = MPI_COMM_NULL;
  // Whether a program chose this communicator's handler (MPI_COMM_SELF's
  // then receives errors tied to no communicator; see RaiseError).
  std::atomic<bool> errhandler_set_by_user{false};
  // Counts the collectives started on this communicator. Every member starts
  // them in the same order (MPI requires it), so the count names one
  // collective consistently everywhere and becomes its messages' tag. Only
  // the thread running a collective on this communicator touches it (two
  // collectives on one communicator at once from two threads is erroneous).
  uint32_t collective_sequence = 0;

  // Made by the first blocking collective that asks for it; nullptr before.
  std::unique_ptr<CollectiveState> collective_state;

  // What a tool sees of this communicator's collectives (MPI_T; mpi/coll/
  // tool_variables.h), by collective kind (coll::Collective): the calls
  // that chose an algorithm, those that ran on the node path, and the last
  // algorithm chosen (coll's enumeration of algorithm names; 0: none yet).
  // Written by the thread running the communicator's collectives, read by
  // any.
  struct CollectiveCounts {
    static constexpr int kKinds = 16;
    vci::OwnedCounter calls[kKinds];
    vci::OwnedCounter node_path_calls[kKinds];
    std::atomic<int> last_algorithm[kKinds];  // zero (C++20)
  };
  CollectiveCounts collective_counts;

  int32_t NextCollectiveTag() {
    return static_cast<int32_t>(collective_sequence++ & 0x3fffffffu);
  }

  // --- Intercommunicators (MPI_Intercomm_create). On an intercommunicator
  // `rank` and `size` describe the local group, while `world_ranks` and
  // `remote_ids` describe the REMOTE group: point-to-point ranks on an
  // intercommunicator name remote processes, so a send addresses them
  // exactly as on an intracommunicator, and a receiver matches the rank the
  // sender has in its own (local) group. `local_group` is a hidden
  // intracommunicator over the local group, with ids and contexts of its
  // own, that constructors and collectives on the intercommunicator use for
  // their local half; one reference is owned here.
  bool inter = false;
  Communicator* local_group = nullptr;
  // How many ranks a point-to-point call may name: the communicator's size,
  // or the remote group's on an intercommunicator.
  int peer_count() const { return static_cast<int>(world_ranks.size()); }
  // The world ranks of the local group (the group MPI_Comm_group returns).
  const std::vector<int>& local_world_ranks() const {
    return inter ? local_group->world_ranks : world_ranks;
  }

  // --- Issue 8: what a communicator carries besides its group.
  // Its process topology (MPI_Cart_create, ...), nullptr for none. Set
  // before the handle is handed out and never changed, so read unlocked.
  // MPI_Comm_dup copies it; split and create do not.
  std::unique_ptr<topo::Topology> topology;
  // Cached attributes (MPI_Comm_set_attr).
  AttributeStore attributes{&ProcessKeyvals()};
  // Set while MPI_Comm_idup is still filling this communicator in: using it
  // then is erroneous, and the bindings say so instead of reading half-made
  // state.
  std::atomic<bool> awaiting_idup{false};

  // MPI-4.1's MPI_Comm_attach_buffer: this communicator's own buffered
  // sends, made by the first attach (mpi/bindings/buffered_send.cc) and
  // kept while the communicator lives; null until then. A buffered send
  // uses it while a buffer is attached, else the session's or the
  // process's. The pointer is published after the owner is set.
  std::atomic<p2p::BufferedSends*> buffered_sends{nullptr};
  std::shared_ptr<p2p::BufferedSends> buffered_sends_owner;
  // The buffered sends of the session this communicator was made from
  // (MPI_Session_attach_buffer; minimpi::SessionBufferedSends in
  // mpi/bindings/buffered_send.h), shared by the communicators derived from
  // it; null in the world model.
  std::shared_ptr<p2p::BufferedSends> session_buffered_sends;

  // MPI_Comm_set_name / get_name (empty for a new communicator).
  std::string name() const;
  void set_name(std::string name);
  // The info hints in force, as (key, value) pairs (MPI_Comm_get_info).
  using Hints = std::vector<std::pair<std::string, std::string>>;
  // What every communicator starts with: the assertions of MPI-4.1 7.4.4,
  // all "false".
  static Hints DefaultHints();
  Hints hints() const;
  void set_hints(Hints hints);

  int32_t point_to_point_context() const { return 2 * local_id; }
  int32_t collective_context() const { return 2 * local_id + 1; }
  int32_t remote_point_to_point_context(int peer) const {
    return 2 * remote_ids[peer];
  }
  int32_t remote_collective_context(int peer) const {
    return 2 * remote_ids[peer] + 1;
  }

 private:
  static std::atomic<CommunicatorReleaseSink*> release_sink_;
  std::atomic<int> references_{1};
  std::mutex errhandler_mutex_;
  Errhandler* errhandler_ = Errhandler::Fatal();  // guarded by the mutex
  mutable std::mutex description_mutex_;
  std::string name_;              // guarded by description_mutex_
  Hints hints_ = DefaultHints();  // guarded by description_mutex_
};

}  // namespace minimpi

#endif  // MINIMPI_MPI_OBJECTS_COMM_H_
