// The node path's place in a library run: which calls take it, the region
// each communicator makes on first use on each node it spans, and how its
// ranks wait for each other (through their VCI, so a rank waiting in a
// collective still progresses its other traffic and sleeps as the wait
// policy says, woken by the transport's doorbell).
//
// A communicator inside one node runs the collectives of node_collectives.h
// on its region. One that spans nodes, when a program forces "shm" (the
// automatic choice keeps it on point-to-point, measured faster; see
// RunOnNode), runs barrier, bcast and allreduce node-aware: inside each node
// through that node's region, between nodes point-to-point among one leader
// per node (the node's lowest rank):
//
//   barrier    node gather (of nothing) to the leader, a barrier among the
//              leaders, node bcast (of nothing) from the leader;
//   bcast      node bcast on the root's node, from the root's leader to the
//              other leaders, node bcast from the leader on the others;
//   allreduce  node reduce to the leader, the leaders' partial results to
//              the first leader, which folds them in node order and sends
//              the result back, node bcast from the leader. Rank order holds
//              when each node's ranks are consecutive (the leaders' order is
//              then the ranks'); otherwise a non-commutative operation takes
//              point-to-point.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "mpi/coll/basic.h"
#include "mpi/coll/families.h"
#include "mpi/coll/node_collectives.h"
#include "mpi/coll/node_started.h"
#include "mpi/coll/schedule.h"
#include "mpi/coll/services.h"
#include "mpi/coll/tool_variables.h"

namespace minimpi::coll {
namespace {

constexpr size_t kCollectives = static_cast<size_t>(Collective::kExscan) + 1;
constexpr int kSizeClasses = 65;  // bit widths 0..64 of a byte count

bool HasNodeAlgorithm(Collective collective) {
  switch (collective) {
    case Collective::kBarrier:
    case Collective::kBcast:
    case Collective::kReduce:
    case Collective::kAllreduce:
    case Collective::kGather:
    case Collective::kScatter:
    case Collective::kAllgather:
    case Collective::kAlltoall:
      return true;
    default:
      return false;
  }
}

// The waits of a library run: the VCI's (progress, then sleep on the
// doorbell as the wait policy says); a post wakes a sleeping peer through
// the transport's doorbell.
class VciWaiter final : public NodeWaiter {
 public:
  // `members`: the communicator rank of each of the region's ranks.
  VciWaiter(const Communicator& comm, const std::vector<int>& members)
      : comm_(comm),
        members_(members),
        poll_first_(Services().vcis.wait_policy().spin_ns > 0) {}
  bool PollFirst() const override { return poll_first_; }
  void Wait(absl::FunctionRef<bool()> reached,
            absl::FunctionRef<void()> before_sleep) override {
    Services().vcis.WaitUntil(comm_.vci, reached, before_sleep);
  }
  void Wake(int rank) override {
    const int peer = members_[rank];
    Services().transport.WakePeer(
        {comm_.world_ranks[peer], comm_.remote_vci(peer)});
  }

 private:
  const Communicator& comm_;
  const std::vector<int>& members_;
  const bool poll_first_;
};

// Where a communicator's ranks live, node by node (nodes ordered by their
// lowest rank, which leads them).
struct NodeLayout {
  std::vector<int> members;   // comm ranks on this node, ascending
  int my_index = 0;           // this rank's place in `members`
  std::vector<int> leaders;   // each node's lowest comm rank, ascending
  int my_node = 0;            // this node's place in `leaders`
  std::vector<int> node_of;   // by comm rank: its node's place in `leaders`
  std::vector<int> index_of;  // by comm rank: its place on its node
  // Every node's ranks are consecutive: node order is rank order.
  bool consecutive = true;

  bool spans_nodes() const { return leaders.size() > 1; }
  bool leader() const { return my_index == 0; }
};

NodeLayout LayoutOf(const Communicator& comm) {
  runtime::Bootstrap& bootstrap = Services().bootstrap;
  NodeLayout layout;
  std::vector<int> node_ids;  // bootstrap node of each leader
  layout.node_of.resize(comm.size);
  layout.index_of.resize(comm.size);
  std::vector<int> count;
  for (int r = 0; r < comm.size; ++r) {
    const int node = bootstrap.node_of(comm.world_ranks[r]);
    size_t i = 0;
    while (i < node_ids.size() && node_ids[i] != node) ++i;
    if (i == node_ids.size()) {
      node_ids.push_back(node);
      layout.leaders.push_back(r);
      count.push_back(0);
    } else if (layout.node_of[r - 1] != static_cast<int>(i)) {
      layout.consecutive = false;
    }
    layout.node_of[r] = static_cast<int>(i);
    layout.index_of[r] = count[i]++;
  }
  layout.my_node = layout.node_of[comm.rank];
  layout.my_index = layout.index_of[comm.rank];
  for (int r = 0; r < comm.size; ++r) {
    if (layout.node_of[r] == layout.my_node) layout.members.push_back(r);
  }
  return layout;
}

class NodeState final : public CollectiveState {
 public:
  NodeState(const Communicator& comm, NodeLayout layout)
      : layout_(std::move(layout)), waiter_(comm, layout_.members) {
    for (auto& by_size : choice_) by_size.fill(-1);
  }
  ~NodeState() override {
    if (mapping_ != nullptr) munmap(mapping_, bytes_);
  }

  // Maps the region, or leaves it unavailable (every rank agrees which).
  void Make(Communicator& comm, size_t cell_bytes, size_t slot_bytes,
            size_t direct_min);

  NodeRegion* region() { return region_ ? &*region_ : nullptr; }
  // Whether Make ran (or the communicator cannot have a region).
  bool tried() const { return tried_; }
  void set_tried() { tried_ = true; }
  const NodeLayout& layout() const { return layout_; }
  // The automatic choice for a collective and size class: -1 undecided,
  // else 0 (point-to-point) or 1 (the node path).
  int8_t& choice(Collective collective, uint64_t bytes) {
    return choice_[static_cast<size_t>(collective)][std::bit_width(bytes)];
  }

 private:
  const NodeLayout layout_;
  bool tried_ = false;
  VciWaiter waiter_;
  void* mapping_ = nullptr;
  size_t bytes_ = 0;
  std::optional<NodeRegion> region_;
  std::array<std::array<int8_t, kSizeClasses>, kCollectives> choice_;
};

std::atomic<uint64_t> regions_made{0};

// A reduce's step through the cells when every rank has a core of its own:
// the root's combining then works in its L1 (on 2 ranks, 1 MiB: 110 us with
// 8 KiB steps against 134 with 32 KiB cells; 64 KiB: 7.3 against 11.3).
// When ranks share cores, whole cells are faster (fewer hand-overs between
// ranks that take turns on a core: 64 KiB on 4 ranks, 32 against 42 us).
constexpr size_t kReduceStepBytes = 8192;

void NodeState::Make(Communicator& comm, size_t cell_bytes, size_t slot_bytes,
                     size_t direct_min) {
  p2p::PointToPoint& p2p = Services().p2p;
  const int local_ranks = static_cast<int>(layout_.members.size());
  const size_t bytes =
      NodeRegion::BytesFor(local_ranks, cell_bytes, slot_bytes);
  // Each node's leader makes its node's segment; everyone learns its
  // leader's name, maps the segment, attaches, and says whether it could;
  // the leaders remove the names once everyone has had its chance.
  struct Offer {
    char name[56];
    int32_t made;
    int32_t pid;       // the leader's process, and an address in it that
    uint64_t address;  // holds `name`: the others try a cross-memory read
  } offer{};
  offer.pid = static_cast<int32_t>(getpid());
  offer.address = reinterpret_cast<uintptr_t>(offer.name);
  if (layout_.leader()) {
    std::snprintf(offer.name, sizeof(offer.name), "/minimpi-coll-%d-%llu",
                  static_cast<int>(getpid()),
                  static_cast<unsigned long long>(regions_made++));
    const int fd = shm_open(offer.name, O_CREAT | O_EXCL | O_RDWR, 0600);
    offer.made = fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0;
    if (fd >= 0) close(fd);
  }
  std::vector<Offer> offers(comm.size);
  AllgatherBytes(p2p, comm, &offer, sizeof(offer), offers.data());
  const Offer& mine = offers[layout_.members[0]];
  void* mapping = nullptr;
  if (mine.made) {
    const int fd = shm_open(mine.name, O_RDWR, 0600);
    if (fd >= 0) {
      mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      close(fd);
      if (mapping == MAP_FAILED) mapping = nullptr;
    }
  }
  if (mapping != nullptr) {
    region_.emplace(mapping, local_ranks, layout_.my_index, cell_bytes,
                    slot_bytes, &waiter_);
    region_->Attach();
  }
  // Direct copies need cross-memory reads between the ranks (Linux's
  // ptrace rules allow them between a user's processes unless Yama or a
  // container forbids it): read the leader's name from its memory while it
  // waits in the allgather below, where `offer` is still alive.
  bool reads = true;
  if (!layout_.leader()) {
    char seen[sizeof(offer.name)] = {};
    reads =
        NodeRegion::ReadProcess(mine.pid, mine.address, seen, sizeof(seen)) &&
        std::memcmp(seen, mine.name, sizeof(seen)) == 0;
  }
  const int32_t mapped = (mapping != nullptr ? 1 : 0) | (reads ? 2 : 0) |
                         (waiter_.PollFirst() ? 4 : 0) |
                         (NodeRegion::CanUseAsymmetricFence() ? 8 : 0);
  std::vector<int32_t> all(comm.size);
  AllgatherBytes(p2p, comm, &mapped, sizeof(mapped), all.data());
  if (layout_.leader() && offer.made) shm_unlink(offer.name);
  bool everyone = true;
  bool direct = true;
  bool own_cores = true;
  bool asymmetric_fence = true;
  for (int32_t one : all) {
    everyone &= (one & 1) != 0;
    direct &= (one & 2) != 0;
    own_cores &= (one & 4) != 0;
    asymmetric_fence &= (one & 8) != 0;
  }
  if (everyone && direct) region_->set_direct_min(direct_min);
  if (everyone && own_cores) region_->set_reduce_step_bytes(kReduceStepBytes);
  // Only where waiters poll first: where ranks outnumber cores every wait
  // may sleep, and each would pay the waiter's side of the fence.
  if (everyone && own_cores && asymmetric_fence) {
    region_->set_asymmetric_fence(true);
  }
  if (!everyone) {
    region_.reset();
    if (mapping != nullptr) munmap(mapping, bytes);
    return;
  }
  mapping_ = mapping;
  bytes_ = bytes;
}

// Whether comm's ranks can share regions: ranks of a node reached through
// shared memory (with MINIMPI_TRANSPORT=tcp or ib the program asked for
// that transport between them, collectives included), and some node with
// two of them (else there is nothing to share).
bool Eligible(const Communicator& comm, const runtime::Settings& settings,
              const NodeLayout& layout) {
  if (comm.inter || comm.size < 2 || settings.coll_shm_cell == 0) return false;
  if (settings.transport != "auto" && settings.transport != "shm") return false;
  return layout.leaders.size() < static_cast<size_t>(comm.size);
}

// StateOf's first call on a communicator (and a forced "shm" call on one
// that spans nodes): makes the state, and the region when it may.
[[gnu::noinline]] NodeState& MakeState(Communicator& comm, bool automatic) {
  if (comm.collective_state == nullptr) {
    comm.collective_state = std::make_unique<NodeState>(comm, LayoutOf(comm));
  }
  auto& state = static_cast<NodeState&>(*comm.collective_state);
  if (!state.tried() && !(automatic && state.layout().spans_nodes())) {
    const runtime::Settings& settings = Services().settings;
    state.set_tried();
    if (Eligible(comm, settings, state.layout())) {
      state.Make(comm, settings.coll_shm_cell, settings.coll_shm_slot,
                 settings.coll_shm_direct);
    }
  }
  return state;
}

// comm's state, with its region made unless `automatic` and comm spans
// nodes: the automatic choice keeps such communicators on point-to-point
// (see RunOnNode), so they need no region until a program forces "shm".
// Every rank makes the same calls in the same order, so every rank makes
// the region (a collective step) in the same call. Inline: every call asks,
// and after the first it only looks.
inline NodeState& StateOf(Communicator& comm, bool automatic) {
  if (comm.collective_state != nullptr) [[likely]] {
    auto& state = static_cast<NodeState&>(*comm.collective_state);
    if (state.tried() || (automatic && state.layout().spans_nodes())) {
      return state;
    }
  }
  return MakeState(comm, automatic);
}

// The bytes per rank that size a call (what MINIMPI_COLL_SHM_MAX bounds).
uint64_t DataBytes(Collective collective, const Communicator& comm,
                   const Arguments& a) {
  auto bytes = [](int64_t count, size_t extent) {
    return static_cast<uint64_t>(count) * extent;
  };
  const bool root = comm.rank == a.root;
  switch (collective) {
    case Collective::kBcast:
    case Collective::kReduce:
    case Collective::kAllreduce:
      return bytes(a.count, a.extent);
    case Collective::kGather:
      return root ? bytes(a.receive_count, a.receive_extent)
                  : bytes(a.send_count, a.send_extent);
    case Collective::kScatter:
      return root ? bytes(a.send_count, a.send_extent)
                  : bytes(a.receive_count, a.receive_extent);
    case Collective::kAllgather:
    case Collective::kAlltoall:  // per destination
      return a.in_place ? bytes(a.receive_count, a.receive_extent)
                        : bytes(a.send_count, a.send_extent);
    default:
      return 0;
  }
}

bool NeverAsSchedule(const Communicator&, const Arguments&) { return false; }

// --- Across nodes
// -------------------------------------------------------------

bool HasNodeAwareAlgorithm(Collective collective) {
  return collective == Collective::kBarrier ||
         collective == Collective::kBcast ||
         collective == Collective::kAllreduce;
}

// Runs one round of point-to-point among the leaders: `sends` and
// `receives` are (leader comm rank, buffer, bytes).
struct Transfer {
  int peer;
  void* buffer;
  size_t bytes;
};
void LeaderRound(Communicator& comm, CollectiveKind kind, int32_t tag,
                 size_t message_bytes, const std::vector<Transfer>& sends,
                 const std::vector<Transfer>& receives) {
  auto schedule = std::make_unique<Schedule>(comm, kind, message_bytes, tag);
  for (const Transfer& t : receives)
    schedule->Receive(t.buffer, t.bytes, t.peer);
  for (const Transfer& t : sends) schedule->Send(t.buffer, t.bytes, t.peer);
  Schedule::Run(std::move(schedule), Services().p2p);
}

NodeOutcome NodeStep(NodeRegion& region, Collective collective,
                     const Arguments& arguments, NodeOutcome so_far) {
  const NodeOutcome outcome = RunThroughRegion(region, collective, arguments);
  return so_far == NodeOutcome::kTruncated ? so_far : outcome;
}

NodeOutcome AcrossNodes(NodeState& state, Collective collective,
                        Communicator& comm, const Arguments& a) {
  const NodeLayout& layout = state.layout();
  NodeRegion& region = *state.region();
  // Every rank takes the call's tag, so the sequence stays the same on all
  // of them; only the leaders send with it.
  const int32_t tag = comm.NextCollectiveTag();
  const int nodes = static_cast<int>(layout.leaders.size());
  NodeOutcome outcome = NodeOutcome::kDone;
  switch (collective) {
    case Collective::kBarrier: {
      Arguments nothing;
      nothing.root = 0;
      outcome = NodeStep(region, Collective::kGather, nothing, outcome);
      if (layout.leader()) {
        // Every leader tells every other one (few nodes: one round).
        std::vector<Transfer> sends, receives;
        for (int leader : layout.leaders) {
          if (leader == comm.rank) continue;
          sends.push_back({leader, nullptr, 0});
          receives.push_back({leader, nullptr, 0});
        }
        LeaderRound(comm, CollectiveKind::kBarrier, tag, 0, sends, receives);
      }
      return NodeStep(region, Collective::kBcast, nothing, outcome);
    }
    case Collective::kBcast: {
      const size_t bytes = static_cast<size_t>(a.count) * a.extent;
      const int root_node = layout.node_of[a.root];
      Arguments local = a;
      if (layout.my_node == root_node) {
        local.root = layout.index_of[a.root];
        outcome = NodeStep(region, Collective::kBcast, local, outcome);
      }
      if (layout.leader()) {
        std::vector<Transfer> sends, receives;
        if (layout.my_node == root_node) {
          for (int leader : layout.leaders) {
            if (leader != comm.rank)
              sends.push_back({leader, a.receive_buffer, bytes});
          }
        } else {
          receives.push_back(
              {layout.leaders[root_node], a.receive_buffer, bytes});
        }
        LeaderRound(comm, CollectiveKind::kBcast, tag, bytes, sends, receives);
      }
      if (layout.my_node != root_node) {
        local.root = 0;
        outcome = NodeStep(region, Collective::kBcast, local, outcome);
      }
      return outcome;
    }
    case Collective::kAllreduce: {
      const size_t bytes = static_cast<size_t>(a.count) * a.extent;
      Arguments local = a;
      local.root = 0;
      outcome = NodeStep(region, Collective::kReduce, local, outcome);
      if (layout.leader()) {
        // The first leader folds the nodes' partial results in node order
        // (rank order: the caller made sure), then sends the result back.
        auto* result = static_cast<std::byte*>(a.receive_buffer);
        if (layout.my_node == 0) {
          std::vector<std::byte> partials(bytes * (nodes - 1));
          std::vector<Transfer> receives;
          for (int i = 1; i < nodes; ++i) {
            receives.push_back(
                {layout.leaders[i], &partials[bytes * (i - 1)], bytes});
          }
          LeaderRound(comm, CollectiveKind::kAllreduce, tag, bytes, {},
                      receives);
          // result = result op partial(1) op ... : Apply(in, inout) makes
          // inout = in op inout, so fold into each partial in turn.
          std::byte* folded = result;
          for (int i = 1; i < nodes; ++i) {
            std::byte* next = &partials[bytes * (i - 1)];
            a.op->Apply(folded, next, a.count, a.type);
            folded = next;
          }
          if (folded != result) std::memcpy(result, folded, bytes);
          std::vector<Transfer> sends;
          for (int i = 1; i < nodes; ++i)
            sends.push_back({layout.leaders[i], result, bytes});
          LeaderRound(comm, CollectiveKind::kAllreduce, tag, bytes, sends, {});
        } else {
          LeaderRound(comm, CollectiveKind::kAllreduce, tag, bytes,
                      {{layout.leaders[0], result, bytes}}, {});
          LeaderRound(comm, CollectiveKind::kAllreduce, tag, bytes, {},
                      {{layout.leaders[0], result, bytes}});
        }
      }
      Arguments spread = a;
      spread.root = 0;
      return NodeStep(region, Collective::kBcast, spread, outcome);
    }
    default:
      return NodeOutcome::kNotRun;
  }
}

}  // namespace

void AddNodeAlgorithm(std::vector<CollectiveAlgorithms>& registry) {
  for (CollectiveAlgorithms& entry : registry) {
    if (!HasNodeAlgorithm(entry.collective)) continue;
    entry.algorithms.push_back(
        {kNodeAlgorithmName,
         "through the node's shared-memory region: flags and cells, no "
         "messages (blocking calls on a communicator inside one node; other "
         "calls take the automatic choice)",
         nullptr, NeverAsSchedule});
  }
}

namespace {

// The region a call runs through (nullptr: point-to-point), and comm's
// state in *state. Inline into RunOnNode, whose every call asks.
inline NodeRegion* ChooseRegion(Collective collective, Communicator& comm,
                                const Arguments& arguments,
                                NodeState** chosen_state) {
  if (comm.inter || comm.size < 2 || !HasNodeAlgorithm(collective)) {
    return nullptr;
  }
  const char* chosen = ChosenAlgorithm(collective);
  const bool automatic = chosen == nullptr;
  if (!automatic && std::strcmp(chosen, kNodeAlgorithmName) != 0) {
    return nullptr;
  }
  NodeState& state = StateOf(comm, automatic);
  *chosen_state = &state;
  // Across nodes the automatic choice stays on point-to-point: on the
  // simulated 2-node cluster (4 ranks, 2 cores) the node-aware barrier and
  // allreduce of 8 B took 120-130 and 130-190 us against 47-64 and 35-44
  // for dissemination and recursive doubling, whose cross-node and
  // in-node messages overlap where the leaders' exchange serializes them.
  if (automatic && state.layout().spans_nodes()) return nullptr;
  NodeRegion* region = state.region();
  if (region == nullptr) return nullptr;
  if (automatic) {
    const uint64_t bytes = DataBytes(collective, comm, arguments);
    int8_t& choice = state.choice(collective, bytes);
    if (choice < 0) {
      // A size class is [2^(k-1), 2^k): it takes the node path when its
      // smallest size is within MINIMPI_COLL_SHM_MAX, twice that for the
      // reductions and alltoall (their point-to-point algorithms copy and
      // combine more per byte, or send n - 1 messages: at 64 KiB the node
      // path's allreduce took 17 us against 25-28 on 2 ranks, its alltoall
      // 67 against 108 on 4, while bcast, gather and scatter were faster
      // with single-copy point-to-point).
      const uint64_t smallest = bytes == 0 ? 0 : std::bit_floor(bytes);
      uint64_t limit = Services().settings.coll_shm_max;
      if (collective == Collective::kReduce ||
          collective == Collective::kAllreduce ||
          collective == Collective::kAlltoall) {
        limit *= 2;
      }
      // Calls large enough to be read directly take the node path at any
      // size (allgather, alltoall, allreduce; bcast on more than 2 ranks).
      // On 4 ranks, 1 MiB: allgather 650 us against 1100 for
      // point-to-point (Open MPI 720), bcast 211 against 254, allreduce
      // 488 against 550; 256 KiB bcast 51 against 124. On 2 ranks they tie
      // with point-to-point or win (allreduce 256 KiB: 63 against 74).
      const bool direct =
          region->DirectFor(smallest) &&
          (collective == Collective::kAllgather ||
           collective == Collective::kAlltoall ||
           collective == Collective::kAllreduce ||
           (collective == Collective::kBcast && region->size() > 2));
      // A reduce on up to 4 ranks takes the node path at any size: its root
      // combines the inputs as they stream through the cells (1 MiB, best
      // of 3 runs: 133 us against 153 for binomial on 2 ranks, 391 against
      // 423 on 4; 256 KiB: 28 against 39, and 103 against 126).
      // With more ranks the root's n - 1 combines, alone, would lose to the
      // tree's, which run in parallel.
      const bool whole_reduce =
          collective == Collective::kReduce && region->size() <= 4;
      choice = smallest <= limit || direct || whole_reduce ? 1 : 0;
    }
    if (choice == 0) return nullptr;
  }
  if (!RegionServes(*region, collective, arguments)) return nullptr;
  return region;
}

}  // namespace

NodeRegion* SingleNodeRegionFor(Collective collective, Communicator& comm,
                                const Arguments& arguments) {
  NodeState* state = nullptr;
  NodeRegion* region = ChooseRegion(collective, comm, arguments, &state);
  if (region == nullptr || state->layout().spans_nodes()) return nullptr;
  return region;
}

NodeOutcome RunOnNode(Collective collective, Communicator& comm,
                      const Arguments& arguments) {
  NodeState* chosen_state = nullptr;
  NodeRegion* region =
      ChooseRegion(collective, comm, arguments, &chosen_state);
  if (region == nullptr) return NodeOutcome::kNotRun;
  // Persistent collectives started on this region end first: this call's
  // number comes after theirs (node_started.h).
  if (region->StartedPending()) [[unlikely]] {
    EndStartedCalls(comm, *region);
  }
  NodeState& state = *chosen_state;
  const NodeLayout& layout = state.layout();
  NodeOutcome outcome;
  if (!layout.spans_nodes()) {
    outcome = RunThroughRegion(*region, collective, arguments);
  } else if (!HasNodeAwareAlgorithm(collective) ||
             (collective == Collective::kAllreduce && !layout.consecutive &&
              !arguments.op->commutative())) {
    return NodeOutcome::kNotRun;
  } else {
    outcome = AcrossNodes(state, collective, comm, arguments);
  }
  if (outcome != NodeOutcome::kNotRun) NoteNodePath(comm, collective);
  return outcome;
}

}  // namespace minimpi::coll
