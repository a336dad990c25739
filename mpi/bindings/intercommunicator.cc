// Intercommunicators: MPI_Intercomm_create and MPI_Intercomm_merge, and the
// intercommunicator forms of MPI_Comm_dup, MPI_Comm_split and
// MPI_Comm_create (comm_util.h's Intercomm* functions, called by
// communicator.cc).
//
// Every construction makes the same exchange: each process of the local
// group contributes a small fixed record (its world rank, fresh local ids,
// a color and key, a group position); the local group allgathers them; the
// two groups' leaders swap their tables; each leader broadcasts the remote
// table to its group. Then both groups know both tables and build their
// halves of the new communicator by the same rule. Like intracommunicators,
// no context id is agreed: each process names its own id, and senders stamp
// the receiver's.
//
// The new intercommunicator's VCI must be the same on both sides (a message
// arrives on the VCI it was sent on), so it is derived from a value both
// groups see: the sum of the two leaders' ids.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/dynamic_util.h"
#include "mpi/coll/algorithms.h"
#include "mpi/coll/basic.h"

using minimpi::Communicator;
using minimpi::Instance;
using minimpi::RaiseError;

namespace minimpi {
namespace {

// What each process contributes to a construction.
struct Member {
  int32_t world_rank = -1;
  int32_t inter_id = -1;  // its local id for the new intercommunicator
  int32_t group_id = -1;  // its local id for the new hidden local group
  int32_t color = 0;      // split: the color (MPI_UNDEFINED: none)
  int32_t key = 0;        // split: the key; create: position in the group
  int32_t high = 0;       // merge: the `high` argument
  // Who the process is across jobs (dynamic processes: world ranks differ
  // from job to job): a hash of its job's name and its rank there. Merge
  // orders two groups that passed the same `high` by their leaders' ones,
  // which both groups see alike.
  int32_t job_rank = 0;
  uint64_t job_hash = 0;
};

// This process's job_hash and job_rank.
void SetJobIdentity(Member& member) {
  member.job_rank = Instance::Get().bootstrap().rank();
  member.job_hash = MyJobHash();
}

struct Tables {
  std::vector<Member> local;   // by local rank
  std::vector<Member> remote;  // by remote rank
};

// How the leaders swap tables where no communicator joins them (two jobs
// meeting through a port): sends ours, returns theirs.
using LeaderSwap =
    absl::FunctionRef<std::vector<std::byte>(const void* table, size_t bytes)>;

// Each member contributes its world rank in its own job's numbering, which
// is ours only when both groups are one job. So: the local table's come
// from `local` by position; a remote member of our job is its job rank; one
// of another job is the index this process reaches it by (dynamic
// processes), and when the tables span jobs, a second round through the
// leaders brings every member's address, so a process never met before (a
// rank of the parents' job outside the spawn's communicator, say) becomes
// reachable. Whether the tables span jobs both groups see alike, so both
// make the second round or neither does.
void TranslateWorldRanks(Communicator& local, int leader, Communicator* bridge,
                         int remote_leader, int32_t tag, const LeaderSwap* swap,
                         Tables& tables) {
  for (size_t r = 0; r < tables.local.size(); ++r) {
    tables.local[r].world_rank = local.world_ranks[r];
  }
  const uint64_t first_job = tables.local[0].job_hash;
  bool spans_jobs = false;
  for (const auto* table : {&tables.local, &tables.remote}) {
    for (const Member& member : *table) {
      spans_jobs |= member.job_hash != first_job;
    }
  }
  if (!spans_jobs) {
    for (Member& member : tables.remote) member.world_rank = member.job_rank;
    return;
  }
  struct Address {
    char text[48] = {};
  };
  Address mine;
  std::snprintf(mine.text, sizeof(mine.text), "%s", MyDynamicAddress().c_str());
  p2p::PointToPoint& p2p = Instance::Get().p2p();
  std::vector<Address> ours(local.size);
  coll::AllgatherBytes(p2p, local, &mine, sizeof(Address), ours.data());
  std::vector<std::byte> theirs;
  if (local.rank == leader) {
    theirs =
        bridge != nullptr
            ? coll::ExchangeBytes(p2p, *bridge, remote_leader, tag, ours.data(),
                                  ours.size() * sizeof(Address))
            : (*swap)(ours.data(), ours.size() * sizeof(Address));
  }
  uint64_t bytes = theirs.size();
  coll::BcastBytes(p2p, local, &bytes, sizeof(bytes), leader);
  theirs.resize(bytes);
  coll::BcastBytes(p2p, local, theirs.data(), bytes, leader);
  for (size_t r = 0; r < tables.remote.size(); ++r) {
    Member& member = tables.remote[r];
    std::string address;
    if ((r + 1) * sizeof(Address) <= theirs.size()) {
      const char* text =
          reinterpret_cast<const char*>(theirs.data() + r * sizeof(Address));
      address.assign(text, strnlen(text, sizeof(Address::text)));
    }
    absl::StatusOr<int> index =
        ReachProcess(member.job_hash, member.job_rank, address);
    if (!index.ok()) {
      // Nothing to agree on with a group half of which cannot reach the
      // other: the job ends, saying why.
      Instance::Get().bootstrap().Abort(
          1, absl::StrCat("minimpi: an intercommunicator spanning jobs: ",
                          index.status().message()));
    }
    member.world_rank = *index;
  }
}

// The exchange (see the file comment). `local` is an intracommunicator over
// the local group; its rank `leader` swaps tables with rank `remote_leader`
// of `bridge` under `tag` (only the leader uses `bridge`), or through `swap`
// when there is no bridge. World ranks in the tables are the ones this
// process reaches the members by (TranslateWorldRanks).
Tables ExchangeAcross(Communicator& local, int leader, Communicator* bridge,
                      int remote_leader, int32_t tag, const Member& mine,
                      const LeaderSwap* swap = nullptr) {
  p2p::PointToPoint& p2p = Instance::Get().p2p();
  Tables tables;
  tables.local.resize(local.size);
  coll::AllgatherBytes(p2p, local, &mine, sizeof(Member), tables.local.data());
  std::vector<std::byte> remote;
  if (local.rank == leader) {
    remote = bridge != nullptr
                 ? coll::ExchangeBytes(p2p, *bridge, remote_leader, tag,
                                       tables.local.data(),
                                       tables.local.size() * sizeof(Member))
                 : (*swap)(tables.local.data(),
                           tables.local.size() * sizeof(Member));
  }
  uint64_t length = remote.size();
  coll::BcastBytes(p2p, local, &length, sizeof(length), leader);
  remote.resize(length);
  coll::BcastBytes(p2p, local, remote.data(), length, leader);
  tables.remote.resize(length / sizeof(Member));
  std::memcpy(tables.remote.data(), remote.data(), length);
  TranslateWorldRanks(local, leader, bridge, remote_leader, tag, swap, tables);
  return tables;
}

// Gives `inter` (and its local group) the ids of both groups' members and
// the VCIs they imply.
void AssignIds(Communicator& inter, const std::vector<Member>& local,
               const std::vector<Member>& remote) {
  Instance& instance = Instance::Get();
  Communicator& group = *inter.local_group;
  group.remote_ids.clear();
  for (const Member& member : local)
    group.remote_ids.push_back(member.group_id);
  group.vci = instance.VciFor(local[0].group_id);
  inter.remote_ids.clear();
  for (const Member& member : remote)
    inter.remote_ids.push_back(member.inter_id);
  inter.vci = instance.VciFor(local[0].inter_id + remote[0].inter_id);
}

// Builds an intercommunicator from the two groups' members in their new
// rank orders; `me` is this process's index in `local`. The error handler
// comes from `parent`. Not yet published.
std::unique_ptr<Communicator> BuildIntercommunicator(
    const Communicator& parent, const std::vector<Member>& local,
    const std::vector<Member>& remote, int me) {
  auto group = std::make_unique<Communicator>();
  group->local_id = local[me].group_id;
  group->rank = me;
  group->size = static_cast<int>(local.size());
  for (const Member& member : local) {
    group->world_ranks.push_back(member.world_rank);
  }

  auto inter = std::make_unique<Communicator>();
  inter->inter = true;
  inter->local_id = local[me].inter_id;
  inter->rank = me;
  inter->size = static_cast<int>(local.size());
  for (const Member& member : remote) {
    inter->world_ranks.push_back(member.world_rank);
  }
  inter->local_group = group.release();
  AssignIds(*inter, local, remote);
  inter->SetErrhandler(const_cast<Communicator&>(parent).AcquireErrhandler());
  inter->set_hints(DefaultHints());
  return inter;
}

// Gives back ids allocated for a construction this process ends up
// outside of.
void ReleaseIds(const Member& mine) {
  Instance& instance = Instance::Get();
  if (mine.inter_id >= 0) instance.ReleaseLocalId(mine.inter_id);
  if (mine.group_id >= 0) instance.ReleaseLocalId(mine.group_id);
}

Member NewMember() {
  Instance& instance = Instance::Get();
  Member mine;
  mine.world_rank = instance.world_rank();
  mine.inter_id = instance.AllocateLocalId();
  mine.group_id = instance.AllocateLocalId();
  SetJobIdentity(mine);
  return mine;
}

// The members of `table` with color `color`, ordered by key, then by their
// old rank (stable sort).
std::vector<Member> Select(const std::vector<Member>& table, int color) {
  std::vector<Member> chosen;
  for (const Member& member : table) {
    if (member.color == color) chosen.push_back(member);
  }
  std::stable_sort(
      chosen.begin(), chosen.end(),
      [](const Member& a, const Member& b) { return a.key < b.key; });
  return chosen;
}

int IndexOf(const std::vector<Member>& members, int world_rank) {
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].world_rank == world_rank) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::unique_ptr<Communicator> IntercommFromBridge(
    Communicator& local, int local_leader, Communicator* bridge,
    int remote_leader, int32_t tag, int* shared_world_rank) {
  Member mine = NewMember();
  Tables tables =
      ExchangeAcross(local, local_leader, bridge, remote_leader, tag, mine);
  for (const Member& member : tables.remote) {
    if (IndexOf(tables.local, member.world_rank) >= 0) {
      ReleaseIds(mine);
      *shared_world_rank = member.world_rank;
      return nullptr;
    }
  }
  return BuildIntercommunicator(local, tables.local, tables.remote, local.rank);
}

std::unique_ptr<Communicator> IntercommThroughLeaders(
    Communicator& local, int leader, LeaderSwap swap,
    const std::vector<int>& remote_world_ranks) {
  Member mine = NewMember();
  Tables tables = ExchangeAcross(local, leader, nullptr, -1, 0, mine, &swap);
  if (tables.remote.size() != remote_world_ranks.size()) {
    ReleaseIds(mine);
    return nullptr;
  }
  for (size_t r = 0; r < tables.remote.size(); ++r) {
    tables.remote[r].world_rank = remote_world_ranks[r];
  }
  return BuildIntercommunicator(local, tables.local, tables.remote, local.rank);
}

std::unique_ptr<Communicator> IntercommDuplicate(Communicator& parent) {
  Member mine = NewMember();
  const int32_t tag = parent.NextCollectiveTag();
  Tables tables = ExchangeAcross(*parent.local_group, 0, &parent, 0, tag, mine);
  return BuildIntercommunicator(parent, tables.local, tables.remote,
                                parent.rank);
}

std::unique_ptr<Communicator> IntercommDuplicateShell(Communicator& parent) {
  // The tables as they will be, but with only this process's ids known.
  std::vector<Member> local(parent.size), remote(parent.peer_count());
  for (int rank = 0; rank < parent.size; ++rank) {
    local[rank].world_rank = parent.local_group->world_ranks[rank];
    local[rank].inter_id = local[rank].group_id = 0;
  }
  for (int rank = 0; rank < parent.peer_count(); ++rank) {
    remote[rank].world_rank = parent.world_ranks[rank];
    remote[rank].inter_id = remote[rank].group_id = 0;
  }
  local[parent.rank] = NewMember();
  return BuildIntercommunicator(parent, local, remote, parent.rank);
}

vci::Request* StartIntercommIds(Communicator& parent, Communicator* duplicate) {
  // What the exchange fills in; the completion work owns it.
  struct Exchange {
    Member mine;
    std::vector<Member> local;
    std::vector<Member> remote;
  };
  auto exchange = std::make_shared<Exchange>();
  exchange->mine.world_rank = Instance::Get().world_rank();
  exchange->mine.inter_id = duplicate->local_id;
  exchange->mine.group_id = duplicate->local_group->local_id;
  SetJobIdentity(exchange->mine);
  exchange->local.resize(parent.size);
  exchange->remote.resize(parent.peer_count());
  const size_t local_bytes = exchange->local.size() * sizeof(Member);
  const size_t remote_bytes = exchange->remote.size() * sizeof(Member);

  // ExchangeAcross as one nonblocking schedule: allgather in the local
  // group, leaders swap tables, the leader broadcasts the remote one.
  auto schedule = std::make_unique<coll::Schedule>(
      parent, coll::CollectiveKind::kCommCreate, sizeof(Member));
  coll::Arguments gather;
  gather.send_buffer = &exchange->mine;
  gather.send_count = gather.receive_count = sizeof(Member);
  gather.send_type = gather.receive_type = MPI_BYTE;
  gather.send_extent = gather.receive_extent = 1;
  gather.receive_buffer = exchange->local.data();
  schedule->Nested(
      coll::Build(coll::Collective::kAllgather, *parent.local_group, gather));
  schedule->EndRound();
  if (parent.rank == 0) {
    schedule->Send(exchange->local.data(), local_bytes, 0);
    schedule->Receive(exchange->remote.data(), remote_bytes, 0);
  }
  schedule->EndRound();
  coll::Arguments spread;
  spread.receive_buffer = exchange->remote.data();
  spread.count = static_cast<int>(remote_bytes);
  spread.type = MPI_BYTE;
  spread.extent = 1;
  spread.root = 0;
  schedule->Nested(
      coll::Build(coll::Collective::kBcast, *parent.local_group, spread));
  schedule->AtCompletion([exchange, duplicate] {
    AssignIds(*duplicate, exchange->local, exchange->remote);
    duplicate->awaiting_idup.store(false, std::memory_order_release);
  });
  return schedule.release()->Start(Instance::Get().p2p());
}

std::unique_ptr<Communicator> IntercommSplit(Communicator& parent, int color,
                                             int key) {
  Member mine = NewMember();
  mine.color = color;
  mine.key = key;
  const int32_t tag = parent.NextCollectiveTag();
  Tables tables = ExchangeAcross(*parent.local_group, 0, &parent, 0, tag, mine);
  if (color == MPI_UNDEFINED) {
    ReleaseIds(mine);
    return nullptr;
  }
  const std::vector<Member> local = Select(tables.local, color);
  const std::vector<Member> remote = Select(tables.remote, color);
  if (remote.empty()) {  // no partner group: no intercommunicator
    ReleaseIds(mine);
    return nullptr;
  }
  return BuildIntercommunicator(parent, local, remote,
                                IndexOf(local, mine.world_rank));
}

std::unique_ptr<Communicator> IntercommCreate(Communicator& parent,
                                              int position) {
  Member mine = NewMember();
  // `key` carries the position in the group; `color` 0 for members.
  mine.color = position < 0 ? MPI_UNDEFINED : 0;
  mine.key = position;
  const int32_t tag = parent.NextCollectiveTag();
  Tables tables = ExchangeAcross(*parent.local_group, 0, &parent, 0, tag, mine);
  if (position < 0) {
    ReleaseIds(mine);
    return nullptr;
  }
  const std::vector<Member> local = Select(tables.local, 0);
  const std::vector<Member> remote = Select(tables.remote, 0);
  if (remote.empty()) {
    ReleaseIds(mine);
    return nullptr;
  }
  return BuildIntercommunicator(parent, local, remote,
                                IndexOf(local, mine.world_rank));
}

}  // namespace minimpi

extern "C" {

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader,
                          MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm* newintercomm) {
  constexpr const char* kCall = "MPI_Intercomm_create";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* local;
  if (int error = minimpi::CheckCommunicator(kCall, local_comm, &local)) {
    return error;
  }
  if (local->inter) {
    return RaiseError(local, kCall, MPI_ERR_COMM,
                      "local_comm must be an intracommunicator");
  }
  if (local->on_endpoints()) {
    return RaiseError(local, kCall, MPI_ERR_COMM,
                      "intercommunicators of endpoints communicators are "
                      "not supported");
  }
  if (newintercomm == nullptr) {
    return minimpi::NullArgument(kCall, local, "newintercomm");
  }
  *newintercomm = MPI_COMM_NULL;
  if (local_leader < 0 || local_leader >= local->size) {
    return RaiseError(local, kCall, MPI_ERR_RANK,
                      absl::StrFormat("invalid local_leader %d (local_comm "
                                      "size %d)",
                                      local_leader, local->size));
  }
  if (!minimpi::ValidTag(tag)) {
    return RaiseError(
        local, kCall, MPI_ERR_TAG,
        absl::StrFormat("invalid tag %d (must be 0..%d)", tag, MINIMPI_TAG_UB));
  }
  // peer_comm and remote_leader matter at the local leader only.
  Communicator* peer = nullptr;
  if (local->rank == local_leader) {
    if (int error = minimpi::CheckCommunicator(kCall, peer_comm, &peer)) {
      return error;
    }
    if (remote_leader < 0 || remote_leader >= peer->peer_count()) {
      return RaiseError(peer, kCall, MPI_ERR_RANK,
                        absl::StrFormat("invalid remote_leader %d (peer_comm "
                                        "size %d)",
                                        remote_leader, peer->peer_count()));
    }
    if (peer->world_ranks[remote_leader] == Instance::Get().world_rank()) {
      return RaiseError(peer, kCall, MPI_ERR_RANK,
                        "the remote leader is the local leader itself: the "
                        "two groups must be disjoint");
    }
  }
  int shared_world_rank = -1;
  std::unique_ptr<Communicator> inter = minimpi::IntercommFromBridge(
      *local, local_leader, peer, remote_leader,
      minimpi::coll::GroupExchangeTag(tag), &shared_world_rank);
  if (inter == nullptr) {
    return RaiseError(local, kCall, MPI_ERR_COMM,
                      absl::StrFormat("world rank %d is in both groups: the "
                                      "groups of an intercommunicator must "
                                      "be disjoint",
                                      shared_world_rank));
  }
  *newintercomm = minimpi::Publish(std::move(inter))->handle;
  return MPI_SUCCESS;
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  constexpr const char* kCall = "MPI_Intercomm_merge";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* inter;
  if (int error = minimpi::CheckCommunicator(kCall, intercomm, &inter)) {
    return error;
  }
  if (!inter->inter) {
    return RaiseError(inter, kCall, MPI_ERR_COMM, "not an intercommunicator");
  }
  if (newintracomm == nullptr) {
    return minimpi::NullArgument(kCall, inter, "newintracomm");
  }
  Instance& instance = Instance::Get();
  minimpi::Member mine;
  mine.world_rank = instance.world_rank();
  mine.inter_id = instance.AllocateLocalId();
  mine.high = high ? 1 : 0;
  minimpi::SetJobIdentity(mine);
  const int32_t tag = inter->NextCollectiveTag();
  minimpi::Tables tables =
      minimpi::ExchangeAcross(*inter->local_group, 0, inter, 0, tag, mine);
  // The group that passed high = false comes first; when both passed the
  // same, the group whose leader has the lower world rank does (both
  // groups evaluate this the same way).
  const bool local_high = tables.local[0].high != 0;
  const bool remote_high = tables.remote[0].high != 0;
  const minimpi::Member& local_leader = tables.local[0];
  const minimpi::Member& remote_leader = tables.remote[0];
  const bool local_first =
      local_high != remote_high
          ? !local_high
          : std::pair(local_leader.job_hash, local_leader.job_rank) <
                std::pair(remote_leader.job_hash, remote_leader.job_rank);
  const std::vector<minimpi::Member>& first =
      local_first ? tables.local : tables.remote;
  const std::vector<minimpi::Member>& second =
      local_first ? tables.remote : tables.local;
  auto merged = std::make_unique<Communicator>();
  merged->local_id = mine.inter_id;
  for (const auto* half : {&first, &second}) {
    for (const minimpi::Member& member : *half) {
      if (member.world_rank == mine.world_rank) {
        merged->rank = static_cast<int>(merged->world_ranks.size());
      }
      merged->world_ranks.push_back(member.world_rank);
      merged->remote_ids.push_back(member.inter_id);
    }
  }
  merged->size = static_cast<int>(merged->world_ranks.size());
  merged->vci = instance.VciFor(merged->remote_ids[0]);
  merged->SetErrhandler(inter->AcquireErrhandler());
  merged->set_hints(minimpi::DefaultHints());
  *newintracomm = minimpi::Publish(std::move(merged))->handle;
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Intercomm_create)
MINIMPI_EXPORT(Intercomm_merge)
