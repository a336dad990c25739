#include "mpi/bindings/comm_util.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_format.h"
#include "mpi/coll/basic.h"

namespace minimpi {

std::unique_ptr<Communicator> BuildCommunicator(
    const Communicator& parent, int32_t my_id, const std::vector<int>& members,
    const std::vector<int32_t>& ids) {
  Instance& instance = Instance::Get();
  auto comm = std::make_unique<Communicator>();
  comm->local_id = my_id;
  comm->size = static_cast<int>(members.size());
  comm->world_ranks.reserve(members.size());
  for (int i = 0; i < comm->size; ++i) {
    comm->world_ranks.push_back(parent.world_ranks[members[i]]);
    comm->remote_ids.push_back(ids[i]);
    if (members[i] == parent.rank) comm->rank = i;
  }
  if (parent.on_endpoints()) {
    // Each rank keeps its endpoint: the same VCI as in the parent.
    comm->vci = parent.vci;
    instance.vcis().RetainEndpointVci(comm->vci);
    for (int member : members) {
      comm->remote_vcis.push_back(parent.remote_vcis[member]);
    }
  } else {
    // Every member sees the same ids, so every member picks the same VCI.
    comm->vci = instance.VciFor(ids[0]);
  }
  comm->SetErrhandler(const_cast<Communicator&>(parent).AcquireErrhandler());
  comm->set_hints(DefaultHints());
  // A communicator derived from a session's belongs to that session, and
  // its buffered sends fall back on the session's buffer too.
  comm->session_buffered_sends = parent.session_buffered_sends;
  return comm;
}

Communicator* Publish(std::unique_ptr<Communicator> comm) {
  Communicator* published = comm.release();
  published->handle = reinterpret_cast<MPI_Comm>(
      Instance::Get().communicators().Insert(published));
  Instance::Get().NameContextsForTools(*published);
  return published;
}

void Unpublish(Communicator* comm) {
  // Every copy of the handle stops working now; the communicator itself
  // lives on while collectives in flight still use it.
  Instance::Get().communicators().Remove(HandleValue(comm->handle));
  comm->Release();
}

std::unique_ptr<Communicator> SplitCommunicator(Communicator& parent, int color,
                                                int key) {
  Instance& instance = Instance::Get();
  struct Entry {
    int32_t color;
    int32_t key;
    int32_t id;
  };
  Entry mine{color, key,
             color == MPI_UNDEFINED ? -1 : instance.AllocateLocalId()};
  std::vector<Entry> all(parent.size);
  coll::AllgatherBytes(instance.p2p(), parent, &mine, sizeof(mine), all.data());
  if (color == MPI_UNDEFINED) return nullptr;
  std::vector<int> members;
  for (int i = 0; i < parent.size; ++i) {
    if (all[i].color == color) members.push_back(i);
  }
  // New ranks follow the keys; ties keep the order of the parent ranks.
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return all[a].key < all[b].key; });
  std::vector<int32_t> ids;
  for (int member : members) ids.push_back(all[member].id);
  return BuildCommunicator(parent, mine.id, members, ids);
}

std::unique_ptr<Communicator> DuplicateCommunicator(Communicator& parent) {
  Instance& instance = Instance::Get();
  int32_t my_id = instance.AllocateLocalId();
  std::vector<int32_t> ids(parent.size);
  coll::AllgatherBytes(instance.p2p(), parent, &my_id, sizeof(my_id),
                       ids.data());
  std::vector<int> members(parent.size);
  std::iota(members.begin(), members.end(), 0);
  auto comm = BuildCommunicator(parent, my_id, members, ids);
  if (parent.topology != nullptr) comm->topology = parent.topology->Clone();
  comm->set_hints(parent.hints());
  return comm;
}

int RaiseAttributeFailure(const char* call, Communicator* comm,
                          const AttributeFailure& failure, const char* what) {
  // The callback's own code goes back to the program (MPICH's userdup test
  // expects that, and it lets a program control the class and code).
  return RaiseErrorCode(
      comm, call, failure.code,
      absl::StrFormat("the attribute %s callback of keyval %d returned error "
                      "%d",
                      what, failure.keyval, failure.code));
}

int CopyAttributesOrUndo(const char* call, Communicator* parent,
                         Communicator* comm) {
  const AttributeFailure failure =
      parent->attributes.CopyTo(HandleValue(parent->handle), comm->attributes);
  if (failure.ok()) return MPI_SUCCESS;
  // What was copied goes the way it would at MPI_Comm_free; a second
  // failure there changes nothing about the one reported.
  comm->attributes.DeleteAll(HandleValue(comm->handle));
  Unpublish(comm);
  return RaiseAttributeFailure(call, parent, failure, "copy");
}

int CheckInfo(const char* call, Communicator* comm, MPI_Info handle,
              bool null_allowed, Info** info) {
  *info = nullptr;
  if (handle == MPI_INFO_NULL && null_allowed) return MPI_SUCCESS;
  *info = LookupInfo(handle);
  if (*info != nullptr) return MPI_SUCCESS;
  return RaiseError(comm, call, MPI_ERR_INFO,
                    handle == MPI_INFO_NULL
                        ? "invalid info object (MPI_INFO_NULL)"
                        : "invalid info object (freed or never created)");
}

Communicator::Hints DefaultHints() { return Communicator::DefaultHints(); }

Communicator::Hints ApplyHints(Communicator::Hints hints, const Info* info) {
  if (info == nullptr) return hints;
  // Only the assertions are recognized; the default list names them all.
  const Communicator::Hints defaults = DefaultHints();
  for (auto& [key, value] : hints) {
    const bool recognized =
        std::any_of(defaults.begin(), defaults.end(),
                    [&](const auto& entry) { return entry.first == key; });
    if (!recognized) continue;
    std::optional<std::string> given = info->Get(key);
    if (given == "true" || given == "false") value = *given;
  }
  return hints;
}

int NullArgument(const char* call, Communicator* comm, const char* what) {
  return RaiseError(comm, call, MPI_ERR_ARG,
                    absl::StrFormat("null %s pointer", what));
}

Group* ToGroup(MPI_Group handle) {
  if (handle == MPI_GROUP_EMPTY) return Group::Empty();
  return Instance::Get().groups().Lookup(HandleValue(handle));
}

int CheckGroup(const char* call, Communicator* comm, MPI_Group handle,
               Group** group) {
  *group = ToGroup(handle);
  if (*group != nullptr) return MPI_SUCCESS;
  return RaiseError(comm, call, MPI_ERR_GROUP,
                    handle == MPI_GROUP_NULL
                        ? "invalid group (MPI_GROUP_NULL)"
                        : "invalid group (freed or never created)");
}

MPI_Group NewGroupHandle(std::vector<int> members, MPI_Session session) {
  if (members.empty()) return MPI_GROUP_EMPTY;
  auto* group = new Group(std::move(members));
  group->session = session;
  const uintptr_t handle = Instance::Get().groups().Insert(group);
  if (handle == 0) {
    delete group;
    return MPI_GROUP_NULL;
  }
  return reinterpret_cast<MPI_Group>(handle);
}

}  // namespace minimpi
