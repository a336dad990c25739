// MPI_Comm_create_from_group and MPI_Intercomm_create_from_groups
// (MPI-4.1 11.4): the constructors that need no parent communicator, which
// a session (or the world model) uses to make its first communicators.
//
// Communicators from groups are made over the instance's hidden world, a
// communicator of every process that exists whether or not MPI_Init was
// called, by the exchange MPI_Comm_create_group uses: the group's members
// allgather their fresh local ids among themselves, under a tag derived
// from the string tag. So the new communicator is like any other (same
// VCIs, matching, collectives). Two creations whose string tags hash to the
// same 31-bit value, running at once over overlapping groups, could take
// each other's messages; every record carries a 64-bit digest of the tag
// and of the group, so that case (and a group or tag that differs between
// members) is reported as an error rather than building a wrong
// communicator.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/buffered_send.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/errhandler_util.h"
#include "mpi/bindings/session_util.h"
#include "mpi/coll/algorithms.h"
#include "mpi/coll/basic.h"
#include "mpi/objects/group.h"
#include "mpi/objects/info.h"
#include "mpi/objects/session.h"

using minimpi::Communicator;
using minimpi::Group;
using minimpi::Instance;

namespace minimpi {
namespace {

// FNV-1a: the same value in every process (absl::Hash is seeded per
// process), so members agree on a string tag's message tag.
uint64_t StableHash(absl::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

int32_t ExchangeTagFor(absl::string_view purpose, absl::string_view tag) {
  const uint64_t hash = StableHash(absl::StrCat(purpose, ":", tag));
  return coll::GroupExchangeTag(
      static_cast<int>(hash % (uint64_t{MINIMPI_TAG_UB} + 1)));
}

// What MPI_Comm_create_from_group's and
// MPI_Intercomm_create_from_groups's arguments have in common, checked, and
// where their errors go: the errhandler argument, the handler the new
// communicator will have (MPI_ERRHANDLER_NULL: the default
// MPI_ERRORS_ARE_FATAL).
struct FromGroupArguments {
  Errhandler* handler = nullptr;  // a reference of our own
  const Info* info = nullptr;
  ~FromGroupArguments() {
    if (handler != nullptr) handler->Release();
  }
  int Raise(const char* call, int error_class, const std::string& problem) {
    if (handler == nullptr) {
      return RaiseUnattached(call, error_class, problem);
    }
    // A communicator's handler, and no communicator exists yet: a user
    // function is given MPI_COMM_NULL.
    return RaiseOnHandler(handler, reinterpret_cast<MPI_Session>(MPI_COMM_NULL),
                          call, error_class, problem);
  }
};

// A new communicator made from `group` belongs to the group's session: it
// uses that session's buffer for buffered sends (MPI_Session_attach_buffer).
void JoinSession(const Group& group, Communicator& comm) {
  if (group.session != MPI_SESSION_NULL &&
      Sessions().Lookup(HandleValue(group.session)) != nullptr) {
    comm.session_buffered_sends = SessionBufferedSends(group.session);
  }
}

int CheckFromGroupArguments(const char* call, const char* stringtag,
                            MPI_Info info, MPI_Errhandler errhandler,
                            const void* output, FromGroupArguments* arguments) {
  if (errhandler != MPI_ERRHANDLER_NULL) {
    Errhandler* handler = FindErrhandler(errhandler);
    if (handler == nullptr) {
      return RaiseUnattached(call, MPI_ERR_ARG,
                             "invalid error handler (freed or never created)");
    }
    handler->Retain();
    arguments->handler = handler;
  } else {
    arguments->handler = Errhandler::Fatal();
  }
  if (stringtag == nullptr) {
    return arguments->Raise(call, MPI_ERR_ARG, "null stringtag");
  }
  if (std::strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN) {
    return arguments->Raise(
        call, MPI_ERR_ARG,
        absl::StrFormat("stringtag is %d characters long (at most %d)",
                        std::strlen(stringtag), MPI_MAX_STRINGTAG_LEN - 1));
  }
  if (info != MPI_INFO_NULL) {
    arguments->info = LookupInfo(info);
    if (arguments->info == nullptr) {
      return arguments->Raise(call, MPI_ERR_INFO,
                              "invalid info object (freed or never created)");
    }
  }
  if (output == nullptr) {
    return arguments->Raise(call, MPI_ERR_ARG, "null output argument");
  }
  return MPI_SUCCESS;
}

// A group argument that must name a group this process belongs to.
int CheckMemberGroup(const char* call, FromGroupArguments& arguments,
                     const char* what, MPI_Group handle, Group** group,
                     int* my_index) {
  *group = ToGroup(handle);
  if (*group == nullptr) {
    return arguments.Raise(
        call, MPI_ERR_GROUP,
        absl::StrFormat("invalid %s%s", what,
                        handle == MPI_GROUP_NULL ? " (MPI_GROUP_NULL)" : ""));
  }
  *my_index = (*group)->RankOf(Instance::Get().world_rank());
  if (*my_index == MPI_UNDEFINED) {
    return arguments.Raise(
        call, MPI_ERR_GROUP,
        absl::StrFormat("this process (world rank %d) is not in %s",
                        Instance::Get().world_rank(), what));
  }
  return MPI_SUCCESS;
}

// The exchange behind MPI_Comm_create_from_group (collective over `group`,
// whose member this process is at `my_index`): nullptr, with `problem`
// said, when a member passed another group or tag.
std::unique_ptr<Communicator> CommunicatorFromGroup(const Group& group,
                                                    int my_index,
                                                    absl::string_view purpose,
                                                    absl::string_view tag,
                                                    std::string* problem) {
  Instance& instance = Instance::Get();
  Communicator& hidden_world = *instance.hidden_world();
  struct Record {
    int32_t id;
    int32_t unused;
    uint64_t tag_digest;
    uint64_t group_digest;
  };
  const Record mine{instance.AllocateLocalId(), 0,
                    StableHash(absl::StrCat(purpose, ":", tag)),
                    group_ops::Fingerprint(group.members())};
  std::vector<Record> all(group.size());
  // Group members are world ranks, which are the hidden world's ranks.
  coll::AllgatherBytesAmong(instance.p2p(), hidden_world, group.members(),
                            my_index, ExchangeTagFor(purpose, tag), &mine,
                            sizeof(mine), all.data());
  std::vector<int32_t> ids;
  for (int i = 0; i < group.size(); ++i) {
    if (all[i].tag_digest != mine.tag_digest ||
        all[i].group_digest != mine.group_digest) {
      instance.ReleaseLocalId(mine.id);
      *problem = absl::StrFormat(
          "world rank %d passed a different %s (or a string tag whose hash "
          "matches this one was used at the same time)",
          group.members()[i],
          all[i].group_digest != mine.group_digest ? "group" : "string tag");
      return nullptr;
    }
    ids.push_back(all[i].id);
  }
  return BuildCommunicator(hidden_world, mine.id, group.members(), ids);
}

}  // namespace
}  // namespace minimpi

extern "C" {

int PMPI_Comm_create_from_group(MPI_Group group, const char* stringtag,
                                MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm* newcomm) {
  constexpr const char* kCall = "MPI_Comm_create_from_group";
  MINIMPI_REQUIRE_INIT(kCall);
  minimpi::FromGroupArguments arguments;
  if (int error = minimpi::CheckFromGroupArguments(
          kCall, stringtag, info, errhandler, newcomm, &arguments)) {
    return error;
  }
  *newcomm = MPI_COMM_NULL;
  if (group == MPI_GROUP_EMPTY) return MPI_SUCCESS;  // nobody to make it for
  Group* members;
  int my_index;
  if (int error = minimpi::CheckMemberGroup(kCall, arguments, "group", group,
                                            &members, &my_index)) {
    return error;
  }
  std::string problem;
  std::unique_ptr<Communicator> comm = minimpi::CommunicatorFromGroup(
      *members, my_index, "comm", stringtag, &problem);
  if (comm == nullptr) return arguments.Raise(kCall, MPI_ERR_ARG, problem);
  arguments.handler->Retain();  // the communicator's reference
  comm->SetErrhandler(arguments.handler);
  comm->set_hints(minimpi::ApplyHints(minimpi::DefaultHints(), arguments.info));
  minimpi::JoinSession(*members, *comm);
  *newcomm = minimpi::Publish(std::move(comm))->handle;
  return MPI_SUCCESS;
}

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char* stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler,
                                      MPI_Comm* newintercomm) {
  constexpr const char* kCall = "MPI_Intercomm_create_from_groups";
  MINIMPI_REQUIRE_INIT(kCall);
  minimpi::FromGroupArguments arguments;
  if (int error = minimpi::CheckFromGroupArguments(
          kCall, stringtag, info, errhandler, newintercomm, &arguments)) {
    return error;
  }
  *newintercomm = MPI_COMM_NULL;
  Group* local_members;
  int my_index;
  if (int error =
          minimpi::CheckMemberGroup(kCall, arguments, "local_group",
                                    local_group, &local_members, &my_index)) {
    return error;
  }
  Group* remote_members = minimpi::ToGroup(remote_group);
  if (remote_members == nullptr || remote_group == MPI_GROUP_EMPTY) {
    return arguments.Raise(kCall, MPI_ERR_GROUP,
                           "invalid remote_group (null or empty)");
  }
  if (local_leader < 0 || local_leader >= local_members->size()) {
    return arguments.Raise(
        kCall, MPI_ERR_RANK,
        absl::StrFormat("invalid local_leader %d (local_group size %d)",
                        local_leader, local_members->size()));
  }
  if (remote_leader < 0 || remote_leader >= remote_members->size()) {
    return arguments.Raise(
        kCall, MPI_ERR_RANK,
        absl::StrFormat("invalid remote_leader %d (remote_group size %d)",
                        remote_leader, remote_members->size()));
  }
  // The local group first gets a communicator of its own (the same string
  // tag serves both groups: they are disjoint, so their exchanges never
  // meet); its leader then swaps tables with the remote leader over the
  // hidden world, whose ranks are world ranks.
  std::string problem;
  std::unique_ptr<Communicator> local = minimpi::CommunicatorFromGroup(
      *local_members, my_index, "intercomm-local", stringtag, &problem);
  if (local == nullptr) return arguments.Raise(kCall, MPI_ERR_ARG, problem);
  int shared_world_rank = -1;
  std::unique_ptr<Communicator> inter = minimpi::IntercommFromBridge(
      *local, local_leader, Instance::Get().hidden_world(),
      remote_members->members()[remote_leader],
      minimpi::ExchangeTagFor("intercomm-bridge", stringtag),
      &shared_world_rank);
  local.release()->Release();  // gives its local id back
  if (inter == nullptr) {
    return arguments.Raise(
        kCall, MPI_ERR_GROUP,
        absl::StrFormat("world rank %d is in both groups: the groups of an "
                        "intercommunicator must be disjoint",
                        shared_world_rank));
  }
  arguments.handler->Retain();  // the communicator's reference
  inter->SetErrhandler(arguments.handler);
  inter->set_hints(
      minimpi::ApplyHints(minimpi::DefaultHints(), arguments.info));
  minimpi::JoinSession(*local_members, *inter);
  *newintercomm = minimpi::Publish(std::move(inter))->handle;
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Comm_create_from_group)
MINIMPI_EXPORT(Intercomm_create_from_groups)
