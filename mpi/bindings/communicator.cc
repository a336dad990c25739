// Communicator management: rank, size, dup, split, free, compare, barrier.
#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/coll/basic.h"

using minimpi::Communicator;
using minimpi::Instance;
using minimpi::RaiseError;

namespace {

// A new communicator over `members` (ranks of `parent`, in new rank order),
// whose processes chose the local ids `ids` (same order).
Communicator* NewCommunicator(const Communicator& parent, int32_t my_id,
                              const std::vector<int>& members,
                              const std::vector<int32_t>& ids) {
  Instance& instance = Instance::Get();
  auto comm = std::make_unique<Communicator>();
  comm->local_id = my_id;
  comm->size = static_cast<int>(members.size());
  for (int i = 0; i < comm->size; ++i) {
    comm->world_ranks.push_back(parent.world_ranks[members[i]]);
    comm->remote_ids.push_back(ids[i]);
    if (members[i] == parent.rank) comm->rank = i;
  }
  // Every member sees the same ids, so every member picks the same VCI.
  comm->vci = instance.VciFor(ids[0]);
  comm->SetErrhandler(const_cast<Communicator&>(parent).AcquireErrhandler());
  Communicator* created = comm.release();
  created->handle =
      reinterpret_cast<MPI_Comm>(instance.communicators().Insert(created));
  return created;
}

}  // namespace

extern "C" {

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_rank");
  Communicator* c;
  if (int error = minimpi::CheckCommunicator("MPI_Comm_rank", comm, &c)) {
    return error;
  }
  *rank = c->rank;
  return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int* size) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_size");
  Communicator* c;
  if (int error = minimpi::CheckCommunicator("MPI_Comm_size", comm, &c)) {
    return error;
  }
  *size = c->size;
  return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_dup");
  Communicator* parent;
  if (int error = minimpi::CheckCommunicator("MPI_Comm_dup", comm, &parent)) {
    return error;
  }
  Instance& instance = Instance::Get();
  int32_t my_id = instance.AllocateLocalId();
  std::vector<int32_t> ids(parent->size);
  minimpi::coll::AllgatherBytes(instance.p2p(), *parent, &my_id, sizeof(my_id),
                                ids.data());
  std::vector<int> members(parent->size);
  for (int i = 0; i < parent->size; ++i) members[i] = i;
  *newcomm = minimpi::ToHandle(NewCommunicator(*parent, my_id, members, ids));
  return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_split");
  Communicator* parent;
  if (int error = minimpi::CheckCommunicator("MPI_Comm_split", comm, &parent)) {
    return error;
  }
  if (color < 0 && color != MPI_UNDEFINED) {
    return RaiseError(parent, "MPI_Comm_split", MPI_ERR_ARG,
                      absl::StrFormat("invalid color %d (must be >= 0 or "
                                      "MPI_UNDEFINED)",
                                      color));
  }
  Instance& instance = Instance::Get();
  struct Entry {
    int32_t color;
    int32_t key;
    int32_t id;
  };
  Entry mine{color, key,
             color == MPI_UNDEFINED ? -1 : instance.AllocateLocalId()};
  std::vector<Entry> all(parent->size);
  minimpi::coll::AllgatherBytes(instance.p2p(), *parent, &mine, sizeof(mine),
                                all.data());
  if (color == MPI_UNDEFINED) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  std::vector<int> members;
  for (int i = 0; i < parent->size; ++i) {
    if (all[i].color == color) members.push_back(i);
  }
  // New ranks follow the keys; ties keep the order of the parent ranks.
  std::stable_sort(members.begin(), members.end(),
                   [&](int a, int b) { return all[a].key < all[b].key; });
  std::vector<int32_t> ids;
  for (int member : members) ids.push_back(all[member].id);
  *newcomm = minimpi::ToHandle(NewCommunicator(*parent, mine.id, members, ids));
  return MPI_SUCCESS;
}

int PMPI_Comm_free(MPI_Comm* comm) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_free");
  Communicator* c;
  if (comm == nullptr) {
    return RaiseError(nullptr, "MPI_Comm_free", MPI_ERR_ARG,
                      "null communicator pointer");
  }
  if (int error = minimpi::CheckCommunicator("MPI_Comm_free", *comm, &c)) {
    return error;
  }
  if (c->predefined) {
    return RaiseError(c, "MPI_Comm_free", MPI_ERR_COMM,
                      "cannot free a predefined communicator");
  }
  // Every copy of the handle stops working now; the communicator itself
  // lives on while collectives in flight still use it.
  Instance::Get().communicators().Remove(minimpi::HandleValue(*comm));
  c->Release();
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_compare");
  Communicator* a;
  Communicator* b;
  if (int error = minimpi::CheckCommunicator("MPI_Comm_compare", comm1, &a)) {
    return error;
  }
  if (int error = minimpi::CheckCommunicator("MPI_Comm_compare", comm2, &b)) {
    return error;
  }
  if (a == b) {
    *result = MPI_IDENT;
  } else if (a->world_ranks == b->world_ranks) {
    *result = MPI_CONGRUENT;
  } else {
    std::vector<int> sorted_a = a->world_ranks;
    std::vector<int> sorted_b = b->world_ranks;
    std::sort(sorted_a.begin(), sorted_a.end());
    std::sort(sorted_b.begin(), sorted_b.end());
    *result = sorted_a == sorted_b ? MPI_SIMILAR : MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Comm_rank)
MINIMPI_EXPORT(Comm_size)
MINIMPI_EXPORT(Comm_dup)
MINIMPI_EXPORT(Comm_split)
MINIMPI_EXPORT(Comm_free)
MINIMPI_EXPORT(Comm_compare)
