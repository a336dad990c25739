// Groups: MPI_Comm_group and every MPI_Group_* call. The set algebra lives
// in mpi/objects/group.h; these check handles and arguments and hand out handles.
// Constructors whose result is empty return MPI_GROUP_EMPTY itself (MPI-4.1
// 7.3.2 says so for incl with n = 0, and MPICH's tests expect it for every
// empty result), so freeing MPI_GROUP_EMPTY must work: it only resets the
// handle, the predefined group itself is never deleted.
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/comm_util.h"

using minimpi::Communicator;
using minimpi::Group;
using minimpi::RaiseError;
namespace group_ops = minimpi::group_ops;

namespace {

// Stores `members` as a new group in *newgroup, derived from `session`
// (that of the group it was made from, if any).
int ReturnGroup(const char* call, std::vector<int> members, MPI_Group* newgroup,
                MPI_Session session = MPI_SESSION_NULL) {
  *newgroup = minimpi::NewGroupHandle(std::move(members), session);
  if (*newgroup == MPI_GROUP_NULL) {
    return RaiseError(nullptr, call, MPI_ERR_INTERN,
                      "no room for another group handle");
  }
  return MPI_SUCCESS;
}

// The two-group operations: union, intersection, difference.
template <typename Operation>
int CombineGroups(const char* call, MPI_Group group1, MPI_Group group2,
                  MPI_Group* newgroup, Operation operation) {
  Group* a;
  Group* b;
  if (int error = minimpi::CheckGroup(call, nullptr, group1, &a)) return error;
  if (int error = minimpi::CheckGroup(call, nullptr, group2, &b)) return error;
  if (newgroup == nullptr) {
    return minimpi::NullArgument(call, nullptr, "newgroup");
  }
  *newgroup = MPI_GROUP_NULL;  // what a failed call leaves
  return ReturnGroup(call, operation(a->members(), b->members()), newgroup,
                     a->session != MPI_SESSION_NULL ? a->session : b->session);
}

// Incl/excl and their range forms: a validated selection of ranks, then
// the members kept.
int SelectFromGroup(const char* call, const Group* g,
                    const group_ops::RankSelection& selection, bool include,
                    MPI_Group* newgroup) {
  if (newgroup == nullptr) {
    return minimpi::NullArgument(call, nullptr, "newgroup");
  }
  *newgroup = MPI_GROUP_NULL;  // what a failed call leaves
  if (selection.error_class != MPI_SUCCESS) {
    return RaiseError(nullptr, call, selection.error_class, selection.problem);
  }
  return ReturnGroup(call,
                     include
                         ? group_ops::Include(g->members(), selection.ranks)
                         : group_ops::Exclude(g->members(), selection.ranks),
                     newgroup, g->session);
}

}  // namespace

extern "C" {

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_group");
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator("MPI_Comm_group", comm, &c)) {
    return error;
  }
  if (group == nullptr) {
    return minimpi::NullArgument("MPI_Comm_group", c, "group");
  }
  if (c->on_endpoints())
    return minimpi::EndpointsGroupError("MPI_Comm_group", c);
  return ReturnGroup("MPI_Comm_group", c->local_world_ranks(), group);
}

int PMPI_Group_size(MPI_Group group, int* size) {
  MINIMPI_REQUIRE_INIT("MPI_Group_size");
  Group* g;
  if (int error = minimpi::CheckGroup("MPI_Group_size", nullptr, group, &g)) {
    return error;
  }
  if (size == nullptr) {
    return minimpi::NullArgument("MPI_Group_size", nullptr, "size");
  }
  *size = g->size();
  return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group group, int* rank) {
  MINIMPI_REQUIRE_INIT("MPI_Group_rank");
  Group* g;
  if (int error = minimpi::CheckGroup("MPI_Group_rank", nullptr, group, &g)) {
    return error;
  }
  if (rank == nullptr) {
    return minimpi::NullArgument("MPI_Group_rank", nullptr, "rank");
  }
  *rank = g->RankOf(minimpi::Instance::Get().world_rank());
  return MPI_SUCCESS;
}

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                               MPI_Group group2, int ranks2[]) {
  MINIMPI_REQUIRE_INIT("MPI_Group_translate_ranks");
  constexpr const char* kCall = "MPI_Group_translate_ranks";
  Group* a;
  Group* b;
  if (int error = minimpi::CheckGroup(kCall, nullptr, group1, &a)) return error;
  if (int error = minimpi::CheckGroup(kCall, nullptr, group2, &b)) return error;
  if (n < 0) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG,
                      absl::StrFormat("invalid number of ranks %d", n));
  }
  if (n > 0 && (ranks1 == nullptr || ranks2 == nullptr)) {
    return minimpi::NullArgument(kCall, nullptr, "ranks array");
  }
  int bad_index = -1;
  if (!group_ops::TranslateRanks(a->members(), n, ranks1, b->members(), ranks2,
                                 &bad_index)) {
    return RaiseError(nullptr, kCall, MPI_ERR_RANK,
                      absl::StrFormat("invalid rank %d at index %d (group "
                                      "size %d)",
                                      ranks1[bad_index], bad_index, a->size()));
  }
  return MPI_SUCCESS;
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  MINIMPI_REQUIRE_INIT("MPI_Group_compare");
  Group* a;
  Group* b;
  if (int error =
          minimpi::CheckGroup("MPI_Group_compare", nullptr, group1, &a)) {
    return error;
  }
  if (int error =
          minimpi::CheckGroup("MPI_Group_compare", nullptr, group2, &b)) {
    return error;
  }
  if (result == nullptr) {
    return minimpi::NullArgument("MPI_Group_compare", nullptr, "result");
  }
  *result = group_ops::Compare(a->members(), b->members());
  return MPI_SUCCESS;
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  MINIMPI_REQUIRE_INIT("MPI_Group_union");
  return CombineGroups("MPI_Group_union", group1, group2, newgroup,
                       group_ops::Union);
}

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2,
                            MPI_Group* newgroup) {
  MINIMPI_REQUIRE_INIT("MPI_Group_intersection");
  return CombineGroups("MPI_Group_intersection", group1, group2, newgroup,
                       group_ops::Intersection);
}

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2,
                          MPI_Group* newgroup) {
  MINIMPI_REQUIRE_INIT("MPI_Group_difference");
  return CombineGroups("MPI_Group_difference", group1, group2, newgroup,
                       group_ops::Difference);
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[],
                    MPI_Group* newgroup) {
  MINIMPI_REQUIRE_INIT("MPI_Group_incl");
  Group* g;
  if (int error = minimpi::CheckGroup("MPI_Group_incl", nullptr, group, &g)) {
    return error;
  }
  return SelectFromGroup("MPI_Group_incl", g,
                         group_ops::SelectRanks(g->size(), n, ranks),
                         /*include=*/true, newgroup);
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[],
                    MPI_Group* newgroup) {
  MINIMPI_REQUIRE_INIT("MPI_Group_excl");
  Group* g;
  if (int error = minimpi::CheckGroup("MPI_Group_excl", nullptr, group, &g)) {
    return error;
  }
  return SelectFromGroup("MPI_Group_excl", g,
                         group_ops::SelectRanks(g->size(), n, ranks),
                         /*include=*/false, newgroup);
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
                          MPI_Group* newgroup) {
  MINIMPI_REQUIRE_INIT("MPI_Group_range_incl");
  Group* g;
  if (int error =
          minimpi::CheckGroup("MPI_Group_range_incl", nullptr, group, &g)) {
    return error;
  }
  return SelectFromGroup("MPI_Group_range_incl", g,
                         group_ops::SelectRanges(g->size(), n, ranges),
                         /*include=*/true, newgroup);
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
                          MPI_Group* newgroup) {
  MINIMPI_REQUIRE_INIT("MPI_Group_range_excl");
  Group* g;
  if (int error =
          minimpi::CheckGroup("MPI_Group_range_excl", nullptr, group, &g)) {
    return error;
  }
  return SelectFromGroup("MPI_Group_range_excl", g,
                         group_ops::SelectRanges(g->size(), n, ranges),
                         /*include=*/false, newgroup);
}

int PMPI_Group_free(MPI_Group* group) {
  MINIMPI_REQUIRE_INIT("MPI_Group_free");
  if (group == nullptr) {
    return minimpi::NullArgument("MPI_Group_free", nullptr, "group");
  }
  Group* g;
  if (int error = minimpi::CheckGroup("MPI_Group_free", nullptr, *group, &g)) {
    return error;
  }
  if (*group != MPI_GROUP_EMPTY) {
    delete minimpi::Instance::Get().groups().Remove(
        minimpi::HandleValue(*group));
  }
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Comm_group)
MINIMPI_EXPORT(Group_size)
MINIMPI_EXPORT(Group_rank)
MINIMPI_EXPORT(Group_translate_ranks)
MINIMPI_EXPORT(Group_compare)
MINIMPI_EXPORT(Group_union)
MINIMPI_EXPORT(Group_intersection)
MINIMPI_EXPORT(Group_difference)
MINIMPI_EXPORT(Group_incl)
MINIMPI_EXPORT(Group_excl)
MINIMPI_EXPORT(Group_range_incl)
MINIMPI_EXPORT(Group_range_excl)
MINIMPI_EXPORT(Group_free)
