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
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/comm_util.h"
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
};

struct Tables {
  std::vector<Member> local;   // by local rank
  std::vector<Member> remote;  // by remote rank
};

// The exchange (see the file comment). `local` is an intracommunicator over
// the local group; its rank `leader` swaps tables with rank `remote_leader`
// of `bridge` under `tag` (only the leader uses `bridge`).
Tables ExchangeAcross(Communicator& local, int leader, Communicator* bridge,
                      int remote_leader, int32_t tag, const Member& mine) {
  p2p::PointToPoint& p2p = Instance::Get().p2p();
  Tables tables;
  tables.local.resize(local.size);
  coll::AllgatherBytes(p2p, local, &mine, sizeof(Member), tables.local.data());
  std::vector<std::byte> remote;
  if (local.rank == leader) {
    remote = coll::ExchangeBytes(p2p, *bridge, remote_leader, tag,
                                 tables.local.data(),
                                 tables.local.size() * sizeof(Member));
  }
  uint64_t length = remote.size();
  coll::BcastBytes(p2p, local, &length, sizeof(length), leader);
  remote.resize(length);
  coll::BcastBytes(p2p, local, remote.data(), length, leader);
  tables.remote.resize(length / sizeof(Member));
  std::memcpy(tables.remote.data(), remote.data(), length);
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
  minimpi::Member mine = minimpi::NewMember();
  minimpi::Tables tables =
      minimpi::ExchangeAcross(*local, local_leader, peer, remote_leader,
                              minimpi::coll::GroupExchangeTag(tag), mine);
  for (const minimpi::Member& member : tables.remote) {
    if (minimpi::IndexOf(tables.local, member.world_rank) >= 0) {
      minimpi::ReleaseIds(mine);
      return RaiseError(local, kCall, MPI_ERR_COMM,
                        absl::StrFormat("world rank %d is in both groups: the "
                                        "groups of an intercommunicator must "
                                        "be disjoint",
                                        member.world_rank));
    }
  }
  *newintercomm =
      minimpi::Publish(minimpi::BuildIntercommunicator(
                           *local, tables.local, tables.remote, local->rank))
          ->handle;
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
  const int32_t tag = inter->NextCollectiveTag();
  minimpi::Tables tables =
      minimpi::ExchangeAcross(*inter->local_group, 0, inter, 0, tag, mine);
  // The group that passed high = false comes first; when both passed the
  // same, the group whose leader has the lower world rank does (both
  // groups evaluate this the same way).
  const bool local_high = tables.local[0].high != 0;
  const bool remote_high = tables.remote[0].high != 0;
  const bool local_first =
      local_high != remote_high
          ? !local_high
          : tables.local[0].world_rank < tables.remote[0].world_rank;
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
