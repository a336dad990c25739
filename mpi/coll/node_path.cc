// The node path's place in a library run: which calls take it, the region
// each communicator inside one node makes on first use, and how its ranks
// wait for each other (through their VCI, so a rank waiting in a
// collective still progresses its other traffic and sleeps as the wait
// policy says, woken by the transport's doorbell).
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
#include "mpi/instance.h"

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
  explicit VciWaiter(const Communicator& comm) : comm_(comm) {}
  void Wait(absl::FunctionRef<bool()> reached) override {
    Instance::Get().vcis().WaitUntil(comm_.vci, reached);
  }
  void Wake(int rank) override {
    Instance::Get().transport().WakePeer(
        {comm_.world_ranks[rank], comm_.remote_vci(rank)});
  }

 private:
  const Communicator& comm_;
};

class NodeState final : public CollectiveState {
 public:
  explicit NodeState(const Communicator& comm) : waiter_(comm) {
    for (auto& by_size : choice_) by_size.fill(-1);
  }
  ~NodeState() override {
    if (mapping_ != nullptr) munmap(mapping_, bytes_);
  }

  // Maps the region, or leaves it unavailable (every rank agrees which).
  void Make(Communicator& comm, size_t cell_bytes);

  NodeRegion* region() { return region_ ? &*region_ : nullptr; }
  // The automatic choice for a collective and size class: -1 undecided,
  // else 0 (point-to-point) or 1 (the node path).
  int8_t& choice(Collective collective, uint64_t bytes) {
    return choice_[static_cast<size_t>(collective)][std::bit_width(bytes)];
  }

 private:
  VciWaiter waiter_;
  void* mapping_ = nullptr;
  size_t bytes_ = 0;
  std::optional<NodeRegion> region_;
  std::array<std::array<int8_t, kSizeClasses>, kCollectives> choice_;
};

std::atomic<uint64_t> regions_made{0};

void NodeState::Make(Communicator& comm, size_t cell_bytes) {
  p2p::PointToPoint& p2p = Instance::Get().p2p();
  const size_t bytes = NodeRegion::BytesFor(comm.size, cell_bytes);
  // Rank 0 makes the segment; everyone maps it, attaches, and says whether
  // it could; rank 0 removes the name once everyone has had its chance.
  struct Offer {
    char name[56];
    int32_t made;
  } offer{};
  if (comm.rank == 0) {
    std::snprintf(offer.name, sizeof(offer.name), "/minimpi-coll-%d-%llu",
                  static_cast<int>(getpid()),
                  static_cast<unsigned long long>(regions_made++));
    const int fd = shm_open(offer.name, O_CREAT | O_EXCL | O_RDWR, 0600);
    offer.made = fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0;
    if (fd >= 0) close(fd);
  }
  BcastBytes(p2p, comm, &offer, sizeof(offer), 0);
  void* mapping = nullptr;
  if (offer.made) {
    const int fd = shm_open(offer.name, O_RDWR, 0600);
    if (fd >= 0) {
      mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      close(fd);
      if (mapping == MAP_FAILED) mapping = nullptr;
    }
  }
  if (mapping != nullptr) {
    region_.emplace(mapping, comm.size, comm.rank, cell_bytes, &waiter_);
    region_->Attach();
  }
  const int32_t mapped = mapping != nullptr;
  std::vector<int32_t> all(comm.size);
  AllgatherBytes(p2p, comm, &mapped, sizeof(mapped), all.data());
  if (comm.rank == 0 && offer.made) shm_unlink(offer.name);
  bool everyone = true;
  for (int32_t one : all) everyone &= one != 0;
  if (!everyone) {
    region_.reset();
    if (mapping != nullptr) munmap(mapping, bytes);
    return;
  }
  mapping_ = mapping;
  bytes_ = bytes;
}

// Whether comm's ranks can share a region: one node, reached through shared
// memory (with MINIMPI_TRANSPORT=tcp or ib the program asked for that
// transport between them, collectives included).
bool Eligible(const Communicator& comm, const runtime::Settings& settings) {
  if (comm.inter || comm.size < 2 || settings.coll_shm_cell == 0) return false;
  if (settings.transport != "auto" && settings.transport != "shm") return false;
  runtime::Bootstrap& bootstrap = Instance::Get().bootstrap();
  const int node = bootstrap.node_of(comm.world_ranks[0]);
  for (int r = 1; r < comm.size; ++r) {
    if (bootstrap.node_of(comm.world_ranks[r]) != node) return false;
  }
  return true;
}

NodeState& StateOf(Communicator& comm) {
  if (comm.collective_state == nullptr) {
    auto state = std::make_unique<NodeState>(comm);
    const runtime::Settings& settings = Instance::Get().settings();
    if (Eligible(comm, settings)) state->Make(comm, settings.coll_shm_cell);
    comm.collective_state = std::move(state);
  }
  return static_cast<NodeState&>(*comm.collective_state);
}

// The bytes per rank that size a call (what MINIMPI_COLL_SHM_MAX bounds).
uint64_t DataBytes(Collective collective, const Communicator& comm,
                   const Arguments& a) {
  auto bytes = [](int count, size_t extent) {
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
      return a.in_place ? bytes(a.receive_count, a.receive_extent)
                        : bytes(a.send_count, a.send_extent);
    default:
      return 0;
  }
}

bool NeverAsSchedule(const Communicator&, const Arguments&) { return false; }

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

NodeOutcome RunOnNode(Collective collective, Communicator& comm,
                      const Arguments& arguments) {
  if (comm.inter || comm.size < 2 || !HasNodeAlgorithm(collective)) {
    return NodeOutcome::kNotRun;
  }
  const char* chosen = ChosenAlgorithm(collective);
  const bool automatic = chosen == nullptr;
  if (!automatic && std::strcmp(chosen, kNodeAlgorithmName) != 0) {
    return NodeOutcome::kNotRun;
  }
  NodeState& state = StateOf(comm);
  NodeRegion* region = state.region();
  if (region == nullptr) return NodeOutcome::kNotRun;
  if (automatic) {
    const uint64_t bytes = DataBytes(collective, comm, arguments);
    int8_t& choice = state.choice(collective, bytes);
    if (choice < 0) {
      // A size class is [2^(k-1), 2^k): it takes the node path when its
      // smallest size is within MINIMPI_COLL_SHM_MAX.
      const uint64_t smallest = bytes == 0 ? 0 : std::bit_floor(bytes);
      choice = smallest <= Instance::Get().settings().coll_shm_max ? 1 : 0;
    }
    if (choice == 0) return NodeOutcome::kNotRun;
  }
  if (!RegionServes(*region, collective, arguments)) {
    return NodeOutcome::kNotRun;
  }
  return RunThroughRegion(*region, collective, arguments);
}

}  // namespace minimpi::coll
