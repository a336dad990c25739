// What a program asks of a communicator: rank, size, compare, names, info
// hints, and the intercommunicator inquiries (MPI-4.1 sections 7.4 and
// 7.6). Communicators are made and freed in communicator.cc.
#include <memory>
#include <vector>

#include "mpi/bindings/comm_util.h"

using minimpi::Communicator;
using minimpi::Info;
using minimpi::RaiseError;

extern "C" {

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_rank");
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator("MPI_Comm_rank", comm, &c)) {
    return error;
  }
  if (rank == nullptr) return minimpi::NullArgument("MPI_Comm_rank", c, "rank");
  *rank = c->rank;
  return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int* size) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_size");
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator("MPI_Comm_size", comm, &c)) {
    return error;
  }
  if (size == nullptr) return minimpi::NullArgument("MPI_Comm_size", c, "size");
  *size = c->size;
  return MPI_SUCCESS;
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_compare");
  Communicator* a;
  Communicator* b;
  if (int error =
          minimpi::CheckLocalCommunicator("MPI_Comm_compare", comm1, &a)) {
    return error;
  }
  if (int error =
          minimpi::CheckLocalCommunicator("MPI_Comm_compare", comm2, &b)) {
    return error;
  }
  if (result == nullptr) {
    return minimpi::NullArgument("MPI_Comm_compare", a, "result");
  }
  if (a == b) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  if (a->inter != b->inter) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  // An intercommunicator compares both its groups (MPI-4.1 7.4.1).
  const auto compare = [](const std::vector<int>& x,
                          const std::vector<int>& y) {
    return minimpi::group_ops::Compare(x, y);
  };
  if (a->on_endpoints() || b->on_endpoints()) {
    // A rank of an endpoints communicator is a (process, VCI) pair, not a
    // process: ranks match when both match.
    const bool same =
        a->world_ranks == b->world_ranks && a->remote_vcis == b->remote_vcis;
    *result = same ? MPI_CONGRUENT : MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  const int local = compare(a->local_world_ranks(), b->local_world_ranks());
  const int remote =
      a->inter ? compare(a->world_ranks, b->world_ranks) : MPI_IDENT;
  if (local == MPI_IDENT && remote == MPI_IDENT) {
    *result = MPI_CONGRUENT;
  } else if (local != MPI_UNEQUAL && remote != MPI_UNEQUAL) {
    *result = MPI_SIMILAR;
  } else {
    *result = MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_set_name");
  Communicator* c;
  if (int error =
          minimpi::CheckLocalCommunicator("MPI_Comm_set_name", comm, &c)) {
    return error;
  }
  if (comm_name == nullptr) {
    return minimpi::NullArgument("MPI_Comm_set_name", c, "comm_name");
  }
  // Longer names are truncated (MPI-4.1 7.8): C has room for
  // MPI_MAX_OBJECT_NAME - 1 characters and the terminator.
  std::string name(comm_name);
  if (name.size() > MPI_MAX_OBJECT_NAME - 1)
    name.resize(MPI_MAX_OBJECT_NAME - 1);
  c->set_name(std::move(name));
  return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_get_name");
  Communicator* c;
  if (int error =
          minimpi::CheckLocalCommunicator("MPI_Comm_get_name", comm, &c)) {
    return error;
  }
  if (comm_name == nullptr) {
    return minimpi::NullArgument("MPI_Comm_get_name", c, "comm_name");
  }
  if (resultlen == nullptr) {
    return minimpi::NullArgument("MPI_Comm_get_name", c, "resultlen");
  }
  const std::string name = c->name();
  std::copy(name.begin(), name.end(), comm_name);
  comm_name[name.size()] = '\0';
  *resultlen = static_cast<int>(name.size());
  return MPI_SUCCESS;
}

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_test_inter");
  Communicator* c;
  if (int error =
          minimpi::CheckLocalCommunicator("MPI_Comm_test_inter", comm, &c)) {
    return error;
  }
  if (flag == nullptr) {
    return minimpi::NullArgument("MPI_Comm_test_inter", c, "flag");
  }
  *flag = c->inter ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_remote_size");
  Communicator* c;
  if (int error =
          minimpi::CheckLocalCommunicator("MPI_Comm_remote_size", comm, &c)) {
    return error;
  }
  if (!c->inter) {
    return RaiseError(c, "MPI_Comm_remote_size", MPI_ERR_COMM,
                      "not an intercommunicator");
  }
  if (size == nullptr) {
    return minimpi::NullArgument("MPI_Comm_remote_size", c, "size");
  }
  *size = c->peer_count();
  return MPI_SUCCESS;
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_remote_group");
  Communicator* c;
  if (int error =
          minimpi::CheckLocalCommunicator("MPI_Comm_remote_group", comm, &c)) {
    return error;
  }
  if (!c->inter) {
    return RaiseError(c, "MPI_Comm_remote_group", MPI_ERR_COMM,
                      "not an intercommunicator");
  }
  if (group == nullptr) {
    return minimpi::NullArgument("MPI_Comm_remote_group", c, "group");
  }
  *group = minimpi::NewGroupHandle(c->world_ranks);
  return MPI_SUCCESS;
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_set_info");
  Communicator* c;
  if (int error =
          minimpi::CheckLocalCommunicator("MPI_Comm_set_info", comm, &c)) {
    return error;
  }
  Info* hints;
  if (int error =
          minimpi::CheckInfo("MPI_Comm_set_info", c, info, true, &hints)) {
    return error;
  }
  c->set_hints(minimpi::ApplyHints(c->hints(), hints));
  return MPI_SUCCESS;
}

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_get_info");
  Communicator* c;
  if (int error =
          minimpi::CheckLocalCommunicator("MPI_Comm_get_info", comm, &c)) {
    return error;
  }
  if (info_used == nullptr) {
    return minimpi::NullArgument("MPI_Comm_get_info", c, "info_used");
  }
  // Every hint in force, defaults included (MPI-4.1 7.4.4).
  *info_used = minimpi::NewInfoHandle(std::make_unique<Info>(c->hints()));
  if (*info_used == MPI_INFO_NULL) {
    return RaiseError(c, "MPI_Comm_get_info", MPI_ERR_NO_MEM,
                      "no room for another info object");
  }
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Comm_rank)
MINIMPI_EXPORT(Comm_size)
MINIMPI_EXPORT(Comm_compare)
MINIMPI_EXPORT(Comm_set_name)
MINIMPI_EXPORT(Comm_get_name)
MINIMPI_EXPORT(Comm_test_inter)
MINIMPI_EXPORT(Comm_remote_size)
MINIMPI_EXPORT(Comm_remote_group)
MINIMPI_EXPORT(Comm_set_info)
MINIMPI_EXPORT(Comm_get_info)
