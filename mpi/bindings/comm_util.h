// Making communicators, shared by the communicator, group and topology
// bindings: building the object from the exchanged local ids, the split
// every color-based constructor uses, handing out the handle, copying
// attributes on duplication, and the info hints a communicator carries.
//
// Owned by: mpi/bindings. Called by: communicator.cc, groups.cc,
// topology.cc, attributes.cc.
#ifndef MINIMPI_MPI_BINDINGS_COMM_UTIL_H_
#define MINIMPI_MPI_BINDINGS_COMM_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/objects/group.h"
#include "mpi/objects/info.h"

namespace minimpi {

// A new communicator over `members` (ranks of `parent`, in new rank order)
// whose processes chose the local ids `ids` (same order), with the parent's
// error handler and the default hints. Not yet published.
std::unique_ptr<Communicator> BuildCommunicator(
    const Communicator& parent, int32_t my_id, const std::vector<int>& members,
    const std::vector<int32_t>& ids);

// Gives `comm` its handle; from then on the handle owns it.
Communicator* Publish(std::unique_ptr<Communicator> comm);
// Takes the handle back and drops its reference (MPI_Comm_free's last
// step, and undoing a creation that failed).
void Unpublish(Communicator* comm);

// MPI_Comm_split's exchange (collective over `parent`): the processes that
// passed `color`, ordered by key and then by parent rank; nullptr for
// MPI_UNDEFINED.
std::unique_ptr<Communicator> SplitCommunicator(Communicator& parent, int color,
                                                int key);

// MPI_Comm_dup's exchange (collective over `parent`): the same group and
// order, new ids; the topology is copied. Attributes are copied by
// CopyAttributes once the new communicator is published.
std::unique_ptr<Communicator> DuplicateCommunicator(Communicator& parent);

// The intercommunicator forms of dup, split and create
// (intercommunicator.cc): collective over both groups of `parent`; nullptr
// where the process gets MPI_COMM_NULL. `position` is this process's rank
// in the group passed to MPI_Comm_create, or -1.
std::unique_ptr<Communicator> IntercommDuplicate(Communicator& parent);
std::unique_ptr<Communicator> IntercommSplit(Communicator& parent, int color,
                                             int key);
std::unique_ptr<Communicator> IntercommCreate(Communicator& parent,
                                              int position);
// MPI_Intercomm_create's construction (collective over `local`): its rank
// `local_leader` swaps tables with rank `remote_leader` of `bridge` under
// `tag`. nullptr when a process is in both groups (*shared_world_rank then
// names one). The error handler comes from `local`. Not yet published.
std::unique_ptr<Communicator> IntercommFromBridge(
    Communicator& local, int local_leader, Communicator* bridge,
    int remote_leader, int32_t tag, int* shared_world_rank);

// Dynamic processes (dynamic_processes.cc): an intercommunicator between
// `local` (collective over it) and a group of another job whose leader
// rank `leader` reaches only through `swap` (sends our table, returns
// theirs; called at the leader alone). `remote_world_ranks` are the peer
// indices this process reaches the remote group's ranks by, in their rank
// order. nullptr when the remote group's size differs from it. The error
// handler comes from `local`. Not yet published.
std::unique_ptr<Communicator> IntercommThroughLeaders(
    Communicator& local, int leader,
    absl::FunctionRef<std::vector<std::byte>(const void* table, size_t bytes)>
        swap,
    const std::vector<int>& remote_world_ranks);

// MPI_Comm_idup of an intercommunicator, in two halves: the duplicate with
// everything but the other processes' ids (to publish at once), then the
// exchange of ids as a nonblocking collective on `parent` whose completion
// fills them in and clears `awaiting_idup`.
std::unique_ptr<Communicator> IntercommDuplicateShell(Communicator& parent);
vci::Request* StartIntercommIds(Communicator& parent, Communicator* duplicate);

// Runs the parent's attribute copy callbacks into the published `comm`. On
// a failure it deletes what was copied, unpublishes `comm`, and raises the
// callback's error on `parent` (returning the code).
int CopyAttributesOrUndo(const char* call, Communicator* parent,
                         Communicator* comm);

// Raises a failed attribute callback (`what` is "copy" or "delete") on
// `comm`, with the class of the code it returned.
int RaiseAttributeFailure(const char* call, Communicator* comm,
                          const AttributeFailure& failure, const char* what);

// The info handle a call passed: MPI_ERR_INFO unless it names an info
// object, or is MPI_INFO_NULL where `null_allowed` (then *info is nullptr).
int CheckInfo(const char* call, Communicator* comm, MPI_Info handle,
              bool null_allowed, Info** info);

// The hints a new communicator starts with: the assertions MPI-4.1 section
// 7.4.4 defines, all "false".
Communicator::Hints DefaultHints();
// `hints` updated with the assertions `info` sets ("true" or "false");
// other keys are ignored, as MPI-4.1 allows for hints an implementation
// does not act on.
Communicator::Hints ApplyHints(Communicator::Hints hints, const Info* info);

// A null output argument (newcomm, group, flag, ...): MPI_ERR_ARG.
int NullArgument(const char* call, Communicator* comm, const char* what);

// The group a handle names (MPI_GROUP_EMPTY included), or nullptr.
Group* ToGroup(MPI_Group handle);
// MPI_ERR_GROUP unless `handle` names a group.
int CheckGroup(const char* call, Communicator* comm, MPI_Group handle,
               Group** group);
// A handle for a new group with `members`, derived from `session`:
// MPI_GROUP_EMPTY when empty. MPI_GROUP_NULL if the table is full.
MPI_Group NewGroupHandle(std::vector<int> members,
                         MPI_Session session = MPI_SESSION_NULL);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_COMM_UTIL_H_
