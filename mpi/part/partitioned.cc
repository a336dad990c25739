#include "mpi/part/partitioned.h"

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mpi/datatype/pack.h"
#include "mpi/part/loopback_probe.h"
#include "mpi/part/model/loggp.h"

namespace minimpi::part {

using p2p::MessageHeader;
using p2p::MessageType;
using p2p::Request;
using p2p::RequestState;

namespace {

// kPartitionedClear flags.
constexpr uint32_t kSizeMismatch = 1;

// The immediate: slot | first unit | units - 1.
constexpr int kUnitBits = 11;
constexpr uint32_t kUnitMask = (1u << kUnitBits) - 1;
uint32_t EncodeImmediate(uint32_t slot, int64_t first, int64_t units) {
  return (slot << (2 * kUnitBits)) | (uint32_t(first) << kUnitBits) |
         uint32_t(units - 1);
}

// A small number naming the calling thread (for the adaptive aggregator's
// partitions-per-thread count).
uint32_t ThreadTag() {
  static std::atomic<uint32_t> next{1};
  static thread_local const uint32_t tag = next.fetch_add(1);
  return tag;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct alignas(64) PaddedCounter {
  std::atomic<int64_t> value{0};
};

}  // namespace

// What both kinds share.
struct PartitionedRequestBase {
  Request* request = nullptr;
  bool is_send = false;
  bool proc_null = false;
  net::PeerVci peer;  // the other side's rank and VCI
  int vci = 0;
  int32_t context = 0, source_rank = 0, tag = 0;
  int64_t partitions = 0;
  size_t partition_bytes = 0;
  size_t total_bytes = 0;
  void* data = nullptr;
  const datatype::Layout* layout = nullptr;
  int64_t item_count = 0;
  datatype::LayoutRef layout_hold;
  net::MemoryRegion region{};
  bool registered = false;
  // Rounds started; partitions stamp the round they were marked in.
  // Written by Start under the VCI lock, read by Pready/Parrived (which the
  // program orders after Start).
  std::atomic<uint32_t> round{0};
  // The totals of both sides disagree: every round fails. Set by the clear
  // handler, read by Pready threads.
  std::atomic<bool> size_mismatch{false};
};

struct PartitionedSend : PartitionedRequestBase {
  uint64_t id = 0;  // SendKey: how the receiver names this send
  std::unique_ptr<Aggregator> aggregator;
  PlanInput input;
  Plan plan;       // in force for the current round
  Plan next_plan;  // applied at the next Start
  bool plan_changed = false;
  int64_t units = 0;
  int64_t per_unit = 1;
  int num_vcis = 1;

  // The receiver, from its first clear. Guarded by the VCI lock.
  bool receiver_known = false;
  uint32_t receiver_slot = 0;
  net::RemoteBuffer remote{};
  int clears_waiting = 0;  // clears of rounds not started yet
  bool ever_started = false;
  // This round's clear has been applied (seq_cst: see ClaimAndPost).
  std::atomic<bool> cleared{false};

  std::unique_ptr<std::atomic<uint32_t>[]> ready_round;    // per partition
  std::unique_ptr<std::atomic<int32_t>[]> unit_remaining;  // per_unit > 1
  std::vector<int32_t> group_of_unit;
  std::unique_ptr<PaddedCounter[]> group_remaining;  // units + the clear
  // Timer: 0 not ready, 1 ready, 2 claimed (per unit); per group whether a
  // first thread arrived and whether its wait is over.
  std::unique_ptr<std::atomic<uint8_t>[]> unit_state;
  std::unique_ptr<std::atomic<uint8_t>[]> group_first;
  std::unique_ptr<std::atomic<uint8_t>[]> group_fired;
  // Deferred timer: each group's open window's deadline (0: none open), and
  // the earliest of them (INT64_MAX: none).
  std::unique_ptr<std::atomic<int64_t>[]> group_deadline;
  std::atomic<int64_t> earliest_deadline{INT64_MAX};
  std::unique_ptr<Partitioned::PendingWrite[]> writes;  // one per run start

  std::atomic<int64_t> units_posted{0};
  std::atomic<int64_t> writes_posted{0};
  std::atomic<int64_t> writes_done{0};

  // Measurements (profile, statistics, adaptive): when each partition was
  // marked ready and when each run's write was posted, this round.
  bool timed = false;
  int64_t start_ns = 0;
  std::unique_ptr<int64_t[]> ready_ns;         // per partition
  std::unique_ptr<uint32_t[]> ready_thread;    // per partition: who marked
  std::unique_ptr<int64_t[]> write_posted_ns;  // per run start unit
  std::unique_ptr<int64_t[]> write_units;      // per run start unit
  // Totals over completed rounds (statistics).
  int64_t rounds_done = 0;
  int64_t total_writes = 0;
  double total_last_ready_to_write_us = 0;
};

struct PartitionedReceive : PartitionedRequestBase {
  uint32_t slot = 0;
  bool matched = false;  // guarded by the VCI lock
  net::PeerVci sender_peer;
  uint64_t sender_id = 0;
  int64_t send_partitions = 0;
  size_t send_partition_bytes = 0;
  int64_t send_per_unit = 1;
  int64_t send_units = 0;
  std::byte* staging = nullptr;  // non-contiguous receive buffers
  std::unique_ptr<std::atomic<int64_t>[]> remaining_bytes;  // per partition
  std::unique_ptr<std::atomic<uint32_t>[]> arrived_round;   // per partition
  std::atomic<int64_t> partitions_left{0};
  std::atomic<int64_t> units_left{0};  // zero-byte data: count writes
};

absl::StatusOr<std::unique_ptr<Partitioned>> Partitioned::Create(
    p2p::PointToPoint& p2p, const runtime::Settings& settings, int world_rank) {
  auto engine =
      std::unique_ptr<Partitioned>(new Partitioned(p2p, settings, world_rank));
  if (!settings.part_table.empty()) {
    absl::StatusOr<std::vector<TableEntry>> table =
        ReadTuningTable(settings.part_table);
    if (!table.ok()) return table.status();
    engine->config_.table = *std::move(table);
  }
  if (!settings.part_loggp.empty() && settings.part_loggp != "probe") {
    absl::StatusOr<LogGPParameters> loggp = ReadLogGPFile(settings.part_loggp);
    if (!loggp.ok()) return loggp.status();
    engine->config_.loggp = *loggp;
    engine->loggp_ready_ = true;
  }
  absl::StatusOr<std::unique_ptr<Aggregator>> check =
      MakeAggregator(settings.part_aggregator, engine->config_);
  if (!check.ok()) return check.status();
  p2p.SetExtension(engine.get());
  return engine;
}

Partitioned::Partitioned(p2p::PointToPoint& p2p,
                         const runtime::Settings& settings, int world_rank)
    : p2p_(p2p),
      transport_(p2p.transport()),
      settings_(settings),
      world_rank_(world_rank),
      epoch_ns_(NowNs()),
      vcis_(new VciState[p2p.vci_capacity()]) {
  config_.aggregation_size = settings.part_aggregation_size;
  config_.loggp = DefaultLogGP();
  config_.delay_us = settings.part_delay_us;
  config_.delta_us = settings.part_delta_us;
  config_.slack = settings.part_model_slack_percent / 100.0;
  config_.max_channels = p2p.num_vcis();
}

Partitioned::~Partitioned() {
  p2p_.SetExtension(nullptr);
  if (profile_ != nullptr) std::fclose(profile_);
}

const LogGPParameters& Partitioned::LogGP() {
  std::lock_guard<std::mutex> lock(control_mutex_);
  if (!loggp_ready_) {
    // MINIMPI_PART_LOGGP=probe: measured once, here, over this process's
    // own transport (see MeasureLoopbackLogGP).
    if (settings_.part_loggp == "probe") {
      config_.loggp = MeasureLoopbackLogGP();
    }
    loggp_ready_ = true;
  }
  return config_.loggp;
}

// A send names itself to its receiver by its request's place in p2p's pool
// and the slot's generation, so the receiver's clear finds it again through
// the pool's lock-free, generation-checked lookup (no table of our own, no
// lock), and a clear for a send freed meanwhile finds nothing.
uint64_t Partitioned::SendKey(const Request& request) {
  return uint64_t(request.vci) << 56 | uint64_t(request.index) << 32 |
         (request.generation.load(std::memory_order_relaxed) &
          p2p::RequestPool::kGenerationMask);
}

PartitionedSend* Partitioned::FindSend(uint64_t key) const {
  Request* request = p2p_.LookupRequest(
      static_cast<uint32_t>(key >> 56),
      static_cast<uint32_t>(key >> 32) & 0xffffff, static_cast<uint32_t>(key));
  if (request == nullptr || request->kind != p2p::RequestKind::kPartitioned ||
      !IsSend(request)) {
    return nullptr;
  }
  return static_cast<PartitionedSend*>(request->extension);
}

bool Partitioned::IsSend(const Request* request) {
  return static_cast<const PartitionedRequestBase*>(request->extension)
      ->is_send;
}

int64_t Partitioned::Partitions(const Request* request) {
  return static_cast<const PartitionedRequestBase*>(request->extension)
      ->partitions;
}

namespace {

void Describe(PartitionedRequestBase& base, PartitionedArguments& arguments) {
  base.proc_null = arguments.peer_world_rank < 0;
  base.peer = {arguments.peer_world_rank, arguments.peer_vci};
  base.vci = arguments.vci;
  base.context = arguments.context;
  base.source_rank = arguments.source_rank;
  base.tag = arguments.tag;
  base.partitions = arguments.partitions;
  base.total_bytes = arguments.total_bytes;
  base.partition_bytes =
      arguments.partitions > 0
          ? arguments.total_bytes / static_cast<size_t>(arguments.partitions)
          : 0;
  base.data = arguments.data;
  base.layout = arguments.layout;
  base.item_count = arguments.item_count;
  base.layout_hold = std::move(arguments.layout_hold);
}

// The memory a buffer's data touches, for registration.
std::pair<void*, size_t> Span(const PartitionedRequestBase& base) {
  if (base.layout == nullptr) return {base.data, base.total_bytes};
  const datatype::Layout& layout = *base.layout;
  if (base.item_count == 0 || layout.size() == 0) return {base.data, 0};
  const int64_t extent = layout.extent();
  const int64_t low = std::min<int64_t>(
      layout.true_lb(), layout.true_lb() + (base.item_count - 1) * extent);
  const int64_t high = std::max<int64_t>(
      layout.true_ub(), layout.true_ub() + (base.item_count - 1) * extent);
  return {static_cast<char*>(base.data) + low, size_t(high - low)};
}

}  // namespace

absl::StatusOr<Request*> Partitioned::NewSend(PartitionedArguments arguments) {
  AggregatorConfig config = config_;
  const std::string& name = arguments.aggregator.empty()
                                ? settings_.part_aggregator
                                : arguments.aggregator;
  if (name == "ploggp" || name == "timer" || name == "adaptive") {
    config.loggp = LogGP();
  }
  config.forced_transport_partitions = arguments.forced_transport_partitions;
  config.forced_channels = arguments.forced_channels;
  absl::StatusOr<std::unique_ptr<Aggregator>> aggregator =
      MakeAggregator(name, config);
  if (!aggregator.ok()) return aggregator.status();

  auto send = std::make_unique<PartitionedSend>();
  send->is_send = true;
  Describe(*send, arguments);
  send->aggregator = *std::move(aggregator);
  // An endpoint's request stays on its endpoint's VCI: channels spread
  // writes over the VCIs communicators share, never over other endpoints'.
  send->num_vcis = p2p_.IsEndpointVci(send->vci) ? 1 : p2p_.num_vcis();
  send->per_unit = PartitionsPerUnit(send->partitions);
  send->units = send->partitions > 0 ? UnitCount(send->partitions) : 0;
  send->input.send_partitions = send->partitions;
  send->input.receive_partitions = send->partitions;  // until it is known
  send->input.units = send->units;
  send->input.partition_bytes = send->partition_bytes;
  send->input.total_bytes = send->total_bytes;
  const int64_t n = send->partitions;
  send->ready_round.reset(new std::atomic<uint32_t>[std::max<int64_t>(n, 1)]);
  for (int64_t p = 0; p < n; ++p) send->ready_round[p].store(0);
  if (send->per_unit > 1) {
    send->unit_remaining.reset(new std::atomic<int32_t>[send->units]);
  }
  const int64_t units = std::max<int64_t>(send->units, 1);
  send->group_of_unit.assign(units, 0);
  send->group_remaining.reset(new PaddedCounter[units]);
  send->unit_state.reset(new std::atomic<uint8_t>[units]);
  send->group_first.reset(new std::atomic<uint8_t>[units]);
  send->group_fired.reset(new std::atomic<uint8_t>[units]);
  send->group_deadline.reset(new std::atomic<int64_t>[units]);
  for (int64_t g = 0; g < units; ++g) send->group_deadline[g].store(0);
  send->writes.reset(new PendingWrite[units]);
  send->timed = settings_.part_stats || !settings_.part_profile.empty() ||
                send->aggregator->wants_arrivals();
  if (send->timed) {
    send->ready_ns.reset(new int64_t[std::max<int64_t>(n, 1)]());
    send->ready_thread.reset(new uint32_t[std::max<int64_t>(n, 1)]());
    send->write_posted_ns.reset(new int64_t[units]());
    send->write_units.reset(new int64_t[units]());
  }
  if (send->units > 0) {
    send->plan = send->aggregator->Initial(send->input);
    send->plan.channels =
        std::max(1, std::min(send->plan.channels, send->num_vcis));
  }
  if (!send->proc_null) {
    auto [address, length] = Span(*send);
    absl::StatusOr<net::MemoryRegion> region =
        transport_.RegisterMemory(address, length);
    if (!region.ok()) return region.status();
    send->region = *region;
    send->registered = true;
  }

  PartitionedSend* raw = send.get();
  Request* request = p2p_.NewPartitionedRequest(arguments.vci, raw);
  request->owner = arguments.owner;
  raw->request = request;
  if (raw->proc_null) {
    send.release();
    return request;
  }
  raw->id = SendKey(*request);
  p2p_.ExtensionRequestAdded();
  if (raw->aggregator->wants_arrivals()) {
    // Its plan may use the deferred timer: progress checks its windows.
    std::lock_guard<std::mutex> lock(p2p_.VciMutex(raw->vci));
    vcis_[raw->vci].deferred_timers.push_back(raw);
  }
  MessageHeader init{};
  init.type = MessageType::kPartitionedInit;
  init.context = raw->context;
  init.source = raw->source_rank;
  init.tag = raw->tag;
  init.length = raw->total_bytes;
  init.sender_request = raw->id;
  init.sender_address = static_cast<uint64_t>(raw->partitions);
  {
    std::lock_guard<std::mutex> lock(p2p_.VciMutex(raw->vci));
    p2p_.SendControlLocked(raw->vci, raw->peer, init);
  }
  if (!settings_.part_profile.empty()) {
    ProfileLine(absl::StrFormat(
        "request %d send partitions %d bytes %d aggregator %s "
        "transport_partitions %d",
        raw->id, raw->partitions, raw->total_bytes, raw->aggregator->name(),
        raw->plan.transport_partitions));
  }
  send.release();
  return request;
}

absl::StatusOr<Request*> Partitioned::NewReceive(
    PartitionedArguments arguments) {
  auto receive = std::make_unique<PartitionedReceive>();
  Describe(*receive, arguments);
  const int64_t n = std::max<int64_t>(receive->partitions, 1);
  receive->remaining_bytes.reset(new std::atomic<int64_t>[n]);
  receive->arrived_round.reset(new std::atomic<uint32_t>[n]);
  for (int64_t p = 0; p < n; ++p) receive->arrived_round[p].store(0);
  PartitionedReceive* raw = receive.get();
  if (!raw->proc_null) {
    void* landing = raw->data;
    size_t length = raw->total_bytes;
    if (raw->layout != nullptr) {
      // The sender writes the packed stream; each partition is unpacked
      // into place as it completes.
      raw->staging = new std::byte[std::max<size_t>(length, 1)];
      landing = raw->staging;
    }
    absl::StatusOr<net::MemoryRegion> region =
        transport_.RegisterMemory(landing, length);
    if (!region.ok()) {
      delete[] raw->staging;
      return region.status();
    }
    raw->region = *region;
    raw->registered = true;
    std::lock_guard<std::mutex> lock(control_mutex_);
    int slot = -1;
    for (int i = 0; i < kSlots; ++i) {
      const int candidate = (next_slot_ + i) % kSlots;
      if (slots_[candidate].load(std::memory_order_relaxed) == nullptr) {
        slot = candidate;
        break;
      }
    }
    if (slot < 0) {
      transport_.DeregisterMemory(raw->region);
      delete[] raw->staging;
      return absl::ResourceExhaustedError(absl::StrCat(
          "more than ", kSlots,
          " partitioned receive requests at once (free some first)"));
    }
    next_slot_ = (slot + 1) % kSlots;
    raw->slot = static_cast<uint32_t>(slot);
    slots_[slot].store(raw, std::memory_order_release);
  }
  Request* request = p2p_.NewPartitionedRequest(arguments.vci, raw);
  request->owner = arguments.owner;
  raw->request = request;
  receive.release();
  if (raw->proc_null) return request;

  // Match an init that arrived first, else wait in the posted queue.
  std::lock_guard<std::mutex> lock(p2p_.VciMutex(raw->vci));
  VciState& state = vcis_[raw->vci];
  for (auto it = state.unexpected.begin(); it != state.unexpected.end(); ++it) {
    if (it->context == raw->context && it->source == raw->source_rank &&
        it->tag == raw->tag) {
      const UnexpectedInit init = *it;
      state.unexpected.erase(it);
      BindLocked(*raw, init);
      return request;
    }
  }
  state.posted.push_back(raw);
  return request;
}

void Partitioned::BindLocked(PartitionedReceive& receive,
                             const UnexpectedInit& init) {
  receive.matched = true;
  receive.sender_peer = init.peer;
  receive.sender_id = init.sender_id;
  receive.send_partitions = init.partitions;
  receive.send_partition_bytes =
      init.partitions > 0 ? init.total_bytes / uint64_t(init.partitions) : 0;
  receive.send_per_unit = PartitionsPerUnit(init.partitions);
  receive.send_units = init.partitions > 0 ? UnitCount(init.partitions) : 0;
  receive.size_mismatch.store(init.total_bytes != receive.total_bytes);
  // A receive that was started before its sender showed up clears now.
  if (receive.request->state.load(std::memory_order_acquire) ==
      RequestState::kActive) {
    receive.units_left.store(receive.send_units, std::memory_order_release);
    if (receive.size_mismatch) {
      CompleteReceiveRound(receive);
      SendClearLocked(receive);  // tells the sender, which fails too
    } else {
      SendClearLocked(receive);
    }
  }
}

void Partitioned::SendClearLocked(PartitionedReceive& receive) {
  MessageHeader clear{};
  clear.type = MessageType::kPartitionedClear;
  clear.sender_request = receive.sender_id;
  clear.receiver_request = receive.slot;
  clear.sender_address = reinterpret_cast<uint64_t>(
      receive.staging != nullptr ? static_cast<void*>(receive.staging)
                                 : receive.data);
  clear.remote_key = receive.region.remote_key;
  clear.length = receive.total_bytes;
  clear.split_offset = static_cast<uint64_t>(receive.partitions);
  clear.flags = receive.size_mismatch.load() ? kSizeMismatch : 0;
  p2p_.SendControlLocked(receive.vci, receive.sender_peer, clear);
}

void Partitioned::Start(Request* request) {
  auto* base = static_cast<PartitionedRequestBase*>(request->extension);
  std::lock_guard<std::mutex> lock(p2p_.VciMutex(base->vci));
  request->status = p2p::Status{};
  request->status.source = base->source_rank;
  request->status.tag = base->tag;
  base->round.store(base->round.load(std::memory_order_relaxed) + 1,
                    std::memory_order_release);
  request->state.store(RequestState::kActive, std::memory_order_release);
  if (base->proc_null) {
    // As for any receive from MPI_PROC_NULL (the bindings pass that rank):
    // source MPI_PROC_NULL, tag MPI_ANY_TAG, no data.
    request->status.tag = match::kAnyTag;
    request->state.store(RequestState::kComplete, std::memory_order_release);
    return;
  }
  if (base->is_send) {
    StartSendLocked(*static_cast<PartitionedSend*>(base));
  } else {
    StartReceiveLocked(*static_cast<PartitionedReceive*>(base));
  }
}

void Partitioned::StartSendLocked(PartitionedSend& send) {
  // `round` already counts the round starting now.
  if (send.ever_started) {
    RecordRound(send, send.round.load(std::memory_order_relaxed) - 1);
  }
  send.ever_started = true;
  if (send.plan_changed) {
    send.plan = send.next_plan;
    send.plan.channels =
        std::max(1, std::min(send.plan.channels, send.num_vcis));
    send.plan_changed = false;
  }
  ApplyPlanLocked(send);
  send.units_posted.store(0, std::memory_order_relaxed);
  send.writes_posted.store(0, std::memory_order_relaxed);
  send.writes_done.store(0, std::memory_order_relaxed);
  send.cleared.store(false, std::memory_order_seq_cst);
  if (send.timed) send.start_ns = NowNs();
  if (send.size_mismatch) {
    send.request->status.error = p2p::Error::kTruncated;
    send.request->state.store(RequestState::kComplete,
                              std::memory_order_release);
    return;
  }
  if (send.clears_waiting > 0) {
    --send.clears_waiting;
    ApplyClearLocked(send, send.vci);
  }
}

void Partitioned::ApplyPlanLocked(PartitionedSend& send) {
  const int64_t units = send.units;
  const int64_t groups = send.plan.transport_partitions;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t begin = GroupBegin(g, units, groups);
    const int64_t end = GroupBegin(g + 1, units, groups);
    for (int64_t u = begin; u < end; ++u) {
      send.group_of_unit[u] = static_cast<int32_t>(g);
    }
    send.group_remaining[g].value.store(end - begin + 1,
                                        std::memory_order_relaxed);
    send.group_first[g].store(0, std::memory_order_relaxed);
    send.group_fired[g].store(0, std::memory_order_relaxed);
    send.group_deadline[g].store(0, std::memory_order_relaxed);
  }
  send.earliest_deadline.store(INT64_MAX, std::memory_order_relaxed);
  for (int64_t u = 0; u < units; ++u) {
    send.unit_state[u].store(0, std::memory_order_relaxed);
    if (send.per_unit > 1) {
      const int64_t first = u * send.per_unit;
      const int64_t last = std::min(send.partitions, first + send.per_unit);
      send.unit_remaining[u].store(static_cast<int32_t>(last - first),
                                   std::memory_order_relaxed);
    }
  }
}

void Partitioned::StartReceiveLocked(PartitionedReceive& receive) {
  const int64_t n = receive.partitions;
  const int64_t each = static_cast<int64_t>(receive.partition_bytes);
  for (int64_t p = 0; p < n; ++p) {
    receive.remaining_bytes[p].store(each, std::memory_order_relaxed);
  }
  receive.partitions_left.store(n, std::memory_order_relaxed);
  receive.units_left.store(receive.send_units, std::memory_order_release);
  if (!receive.matched) return;  // cleared once an init matches
  if (receive.size_mismatch) CompleteReceiveRound(receive);
  SendClearLocked(receive);
}

Partitioned::ReadyResult Partitioned::Ready(Request* request,
                                            int64_t partition) {
  auto* base = static_cast<PartitionedRequestBase*>(request->extension);
  const uint32_t round = base->round.load(std::memory_order_acquire);
  if (base->proc_null) return ReadyResult::kOk;
  auto& send = *static_cast<PartitionedSend*>(base);
  if (send.ready_round[partition].exchange(round, std::memory_order_acq_rel) ==
      round) {
    return ReadyResult::kTwice;
  }
  if (send.timed) {
    send.ready_ns[partition] = NowNs();
    send.ready_thread[partition] = ThreadTag();
  }
  if (send.size_mismatch) return ReadyResult::kOk;
  const int64_t unit = partition / send.per_unit;
  if (send.per_unit > 1 &&
      send.unit_remaining[unit].fetch_sub(1, std::memory_order_acq_rel) != 1) {
    return ReadyResult::kOk;
  }
  UnitReady(send, unit, /*held_vci=*/-1);
  return ReadyResult::kOk;
}

void Partitioned::UnitReady(PartitionedSend& send, int64_t unit, int held_vci) {
  const int64_t group = send.group_of_unit[unit];
  if (!send.plan.timer) {
    if (send.group_remaining[group].value.fetch_sub(
            1, std::memory_order_acq_rel) == 1) {
      PostGroup(send, group, held_vci);
    }
    return;
  }
  // The timer (Temuçin et al.): the first thread of a transport partition
  // waits up to delta for the others; then the ready runs go out and every
  // latecomer sends its own. Claims are by compare-and-swap on the unit, so
  // however the threads, the timer and the clear interleave, each unit is
  // sent exactly once. The stores and loads of unit_state, group_fired and
  // cleared are sequentially consistent: of two threads that each store one
  // flag and then read the other's, at least one sees the other's.
  send.unit_state[unit].store(1, std::memory_order_seq_cst);
  const int64_t left = send.group_remaining[group].value.fetch_sub(
                           1, std::memory_order_seq_cst) -
                       1;
  if (left == 0) {
    ClaimAndPost(send, group, held_vci);
    return;
  }
  if (send.plan.deferred_timer) {
    // Open a window if none is, then close whatever window has expired.
    const int64_t now = NowNs();
    const int64_t deadline =
        now + static_cast<int64_t>(send.plan.delta_us * 1000);
    int64_t closed = 0;
    if (send.group_deadline[group].compare_exchange_strong(
            closed, deadline, std::memory_order_seq_cst)) {
      LowerEarliestDeadline(send, deadline);
    }
    FireExpired(send, now, held_vci);
    return;
  }
  if (send.group_fired[group].load(std::memory_order_seq_cst) != 0) {
    if (send.cleared.load(std::memory_order_seq_cst)) {
      uint8_t ready = 1;
      if (send.unit_state[unit].compare_exchange_strong(ready, 2)) {
        PostRun(send, unit, 1, held_vci);
      }
    }
    return;
  }
  if (held_vci >= 0 ||
      send.group_first[group].exchange(1, std::memory_order_acq_rel) != 0) {
    return;  // someone else waits for this group
  }
  // The wait sleeps in short slices rather than spinning: the threads it
  // waits for need the cores (a node has fewer cores than threads more
  // often than not), and the thread's timer slack is cut to 1 us once, so a
  // slice is not stretched by the kernel's default 50 us.
  static thread_local bool slack_set = false;
  if (!slack_set) {
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    slack_set = true;
  }
  constexpr int64_t kSliceNs = 5000;
  const int64_t deadline =
      NowNs() + static_cast<int64_t>(send.plan.delta_us * 1000);
  for (int64_t now = NowNs(); now < deadline; now = NowNs()) {
    if (send.group_remaining[group].value.load(std::memory_order_acquire) ==
        0) {
      return;  // the last thread (or the clear) sent the group
    }
    const int64_t nap = std::min(kSliceNs, deadline - now);
    const timespec pause = {0, static_cast<long>(nap)};
    nanosleep(&pause, nullptr);
  }
  send.group_fired[group].store(1, std::memory_order_seq_cst);
  if (send.cleared.load(std::memory_order_seq_cst)) {
    ClaimAndPost(send, group, held_vci);
  }
}

void Partitioned::LowerEarliestDeadline(PartitionedSend& send,
                                        int64_t deadline) {
  int64_t earliest = send.earliest_deadline.load(std::memory_order_seq_cst);
  while (deadline < earliest &&
         !send.earliest_deadline.compare_exchange_weak(
             earliest, deadline, std::memory_order_seq_cst)) {
  }
  // A window opened: a thread of ours sleeping in a wait must wake and keep
  // progressing until the window closes (MaySleepLocked says no meanwhile).
  if (earliest == INT64_MAX && deadline < earliest) p2p_.WakeSleepers(send.vci);
}

void Partitioned::FireExpired(PartitionedSend& send, int64_t now,
                              int held_vci) {
  if (now < send.earliest_deadline.load(std::memory_order_seq_cst) ||
      !send.cleared.load(std::memory_order_seq_cst)) {
    return;  // nothing expired, or nowhere to write yet (the clear fires)
  }
  // Recompute the earliest open window from scratch; an arrival opening
  // one meanwhile lowers it again after setting its deadline, so none is
  // lost. Closing a window is a compare-and-swap of its deadline to 0: one
  // closer sends its ready runs, and the next arrival opens a new window.
  send.earliest_deadline.store(INT64_MAX, std::memory_order_seq_cst);
  for (int64_t g = 0; g < send.plan.transport_partitions; ++g) {
    int64_t deadline = send.group_deadline[g].load(std::memory_order_seq_cst);
    if (deadline == 0) continue;
    if (deadline > now) {
      LowerEarliestDeadline(send, deadline);
      continue;
    }
    if (send.group_deadline[g].compare_exchange_strong(
            deadline, 0, std::memory_order_seq_cst)) {
      ClaimAndPost(send, g, held_vci);
    }
  }
}

void Partitioned::PostGroup(PartitionedSend& send, int64_t group,
                            int held_vci) {
  const int64_t groups = send.plan.transport_partitions;
  const int64_t begin = GroupBegin(group, send.units, groups);
  const int64_t end = GroupBegin(group + 1, send.units, groups);
  PostRun(send, begin, end - begin, held_vci);
}

void Partitioned::ClaimAndPost(PartitionedSend& send, int64_t group,
                               int held_vci) {
  const int64_t groups = send.plan.transport_partitions;
  const int64_t begin = GroupBegin(group, send.units, groups);
  const int64_t end = GroupBegin(group + 1, send.units, groups);
  int64_t run_start = -1;
  for (int64_t u = begin; u <= end; ++u) {
    bool claimed = false;
    if (u < end) {
      uint8_t ready = 1;
      claimed = send.unit_state[u].compare_exchange_strong(
          ready, 2, std::memory_order_seq_cst);
    }
    if (claimed) {
      if (run_start < 0) run_start = u;
      continue;
    }
    if (run_start >= 0) {
      PostRun(send, run_start, u - run_start, held_vci);
      run_start = -1;
    }
  }
}

int Partitioned::ChannelVci(const PartitionedSend& send, int64_t unit) const {
  if (send.plan.channels <= 1) return send.vci;
  const int64_t channel = send.group_of_unit[unit] % send.plan.channels;
  return static_cast<int>((send.vci + channel) % send.num_vcis);
}

void Partitioned::PostRun(PartitionedSend& send, int64_t first, int64_t units,
                          int held_vci) {
  PendingWrite& write = send.writes[first];
  write.send = &send;
  write.first_unit = first;
  write.units = units;
  write.bytes_done = 0;
  write.next = nullptr;
  if (send.timed) {
    send.write_posted_ns[first] = NowNs();
    send.write_units[first] = units;
  }
  const int vci = ChannelVci(send, first);
  VciState& state = vcis_[vci];
  if (vci == held_vci) {
    if (!state.refused.empty() || !PostWriteLocked(vci, write)) {
      state.refused.push_back(&write);
    }
    return;
  }
  std::mutex& mutex = p2p_.VciMutex(vci);
  if (mutex.try_lock()) {
    DrainLocked(vci);
    if (!state.refused.empty() || !PostWriteLocked(vci, write)) {
      state.refused.push_back(&write);
    }
    mutex.unlock();
    return;
  }
  // The VCI is busy: hand the write to whoever progresses it next, and
  // wake a thread of ours that may have armed its doorbell and taken its
  // last look just before (the exchange is sequentially consistent, as the
  // arming is, so one of the two sees the other).
  PendingWrite* head = state.handed_over.load(std::memory_order_relaxed);
  do {
    write.next = head;
  } while (!state.handed_over.compare_exchange_weak(
      head, &write, std::memory_order_seq_cst, std::memory_order_relaxed));
  p2p_.WakeSleepers(vci);
}

bool Partitioned::PostWriteLocked(int vci, PendingWrite& write) {
  PartitionedSend& send = *write.send;
  const int64_t first_partition = write.first_unit * send.per_unit;
  const int64_t end_partition = std::min(
      send.partitions, (write.first_unit + write.units) * send.per_unit);
  const uint64_t begin = uint64_t(first_partition) * send.partition_bytes;
  const uint64_t end = uint64_t(end_partition) * send.partition_bytes;
  const uint32_t immediate =
      EncodeImmediate(send.receiver_slot, write.first_unit, write.units);
  const uint64_t context =
      reinterpret_cast<uint64_t>(&send) | p2p::kExtensionContextBit;
  const int max_segments = transport_.max_io_segments();
  net::IoSegment local[1024];
  datatype::Segment pieces[1024];
  do {
    const uint64_t offset = begin + uint64_t(write.bytes_done);
    int count = 0;
    uint64_t length = 0;
    if (send.layout == nullptr) {
      length = end - offset;
      local[0] = {reinterpret_cast<uint64_t>(send.data) + offset, length};
      count = 1;
    } else {
      datatype::SegmentCursor cursor(send.data, send.item_count, send.layout,
                                     int64_t(offset));
      count = cursor.Fill(pieces, std::min(max_segments, 1024),
                          int64_t(end - offset));
      for (int i = 0; i < count; ++i) {
        local[i] = {reinterpret_cast<uint64_t>(pieces[i].address),
                    size_t(pieces[i].length)};
        length += uint64_t(pieces[i].length);
      }
    }
    const bool last = offset + length == end;
    send.writes_posted.fetch_add(1, std::memory_order_relaxed);
    const net::PostResult result = transport_.RdmaWritev(
        vci, vci == send.vci ? send.peer : net::PeerVci{send.peer.rank, vci},
        local, count, send.region,
        net::RemoteBuffer{send.remote.address + offset, send.remote.remote_key},
        last ? &immediate : nullptr, context);
    if (result == net::PostResult::kRetry) {
      send.writes_posted.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    write.bytes_done += int64_t(length);
  } while (begin + uint64_t(write.bytes_done) < end);
  send.units_posted.fetch_add(write.units, std::memory_order_acq_rel);
  return true;
}

bool Partitioned::DrainLocked(int vci) {
  VciState& state = vcis_[vci];
  bool posted = false;
  while (!state.refused.empty()) {
    if (!PostWriteLocked(vci, *state.refused.front())) return posted;
    state.refused.pop_front();
    posted = true;
  }
  PendingWrite* list =
      state.handed_over.exchange(nullptr, std::memory_order_acquire);
  while (list != nullptr) {
    PendingWrite* next = list->next;
    if (!state.refused.empty() || !PostWriteLocked(vci, *list)) {
      state.refused.push_back(list);
    } else {
      posted = true;
    }
    list = next;
  }
  return posted;
}

bool Partitioned::MaySleepLocked(int vci) {
  const VciState& state = vcis_[vci];
  if (!state.refused.empty() ||
      state.handed_over.load(std::memory_order_relaxed) != nullptr) {
    return false;
  }
  // An open deferred window closes by progress if nobody marks again.
  for (const PartitionedSend* send : state.deferred_timers) {
    if (send->earliest_deadline.load(std::memory_order_seq_cst) != INT64_MAX &&
        send->request->state.load(std::memory_order_acquire) ==
            RequestState::kActive) {
      return false;
    }
  }
  return true;
}

bool Partitioned::ProgressLocked(int vci) {
  VciState& state = vcis_[vci];
  // Deferred timers whose window expired with nobody marking after it.
  if (!state.deferred_timers.empty()) {
    const int64_t now = NowNs();
    for (PartitionedSend* send : state.deferred_timers) {
      if (send->plan.deferred_timer &&
          send->request->state.load(std::memory_order_acquire) ==
              RequestState::kActive) {
        FireExpired(*send, now, vci);
      }
    }
  }
  if (state.refused.empty() &&
      state.handed_over.load(std::memory_order_relaxed) == nullptr) {
    return false;
  }
  return DrainLocked(vci);
}

void Partitioned::OnWriteDoneLocked(int, uint64_t context) {
  auto& send =
      *reinterpret_cast<PartitionedSend*>(context & ~p2p::kExtensionContextBit);
  const int64_t done =
      send.writes_done.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (send.units_posted.load(std::memory_order_acquire) == send.units &&
      done == send.writes_posted.load(std::memory_order_acquire)) {
    CompleteSendRound(send);
  }
}

void Partitioned::CompleteSendRound(PartitionedSend& send) {
  send.request->state.store(RequestState::kComplete, std::memory_order_release);
}

void Partitioned::ApplyClearLocked(PartitionedSend& send, int held_vci) {
  send.cleared.store(true, std::memory_order_seq_cst);
  for (int64_t g = 0; g < send.plan.transport_partitions; ++g) {
    const int64_t left =
        send.group_remaining[g].value.fetch_sub(1, std::memory_order_seq_cst) -
        1;
    if (left == 0) {
      if (send.plan.timer) {
        ClaimAndPost(send, g, held_vci);
      } else {
        PostGroup(send, g, held_vci);
      }
    } else if (send.plan.timer && !send.plan.deferred_timer &&
               send.group_fired[g].load(std::memory_order_seq_cst) != 0) {
      ClaimAndPost(send, g, held_vci);
    }
  }
  if (send.plan.deferred_timer) FireExpired(send, NowNs(), held_vci);
}

void Partitioned::OnControlLocked(int vci, net::PeerVci peer,
                                  const MessageHeader& header) {
  VciState& state = vcis_[vci];
  switch (header.type) {
    case MessageType::kPartitionedInit: {
      const UnexpectedInit init{peer,
                                header.context,
                                header.source,
                                header.tag,
                                header.sender_request,
                                static_cast<int64_t>(header.sender_address),
                                header.length};
      for (auto it = state.posted.begin(); it != state.posted.end(); ++it) {
        PartitionedReceive& receive = **it;
        if (receive.context == init.context &&
            receive.source_rank == init.source && receive.tag == init.tag) {
          state.posted.erase(it);
          BindLocked(receive, init);
          return;
        }
      }
      state.unexpected.push_back(init);
      return;
    }
    case MessageType::kPartitionedClear: {
      PartitionedSend* send = FindSend(header.sender_request);
      if (send == nullptr) return;  // freed meanwhile (erroneous program)
      if (!send->receiver_known) {
        send->receiver_known = true;
        send->receiver_slot = static_cast<uint32_t>(header.receiver_request);
        send->remote = {header.sender_address, header.remote_key};
        send->size_mismatch.store((header.flags & kSizeMismatch) != 0);
        const int64_t receive_partitions =
            static_cast<int64_t>(header.split_offset);
        if (receive_partitions != send->input.receive_partitions &&
            send->units > 0) {
          // The plan of the first round assumed as many receive partitions
          // as send partitions (the size scheme depends on them).
          send->input.receive_partitions = receive_partitions;
          send->next_plan = send->aggregator->Initial(send->input);
          send->plan_changed = true;
        }
      }
      const RequestState current =
          send->request->state.load(std::memory_order_acquire);
      if (send->size_mismatch) {
        if (current == RequestState::kActive) {
          send->request->status.error = p2p::Error::kTruncated;
          CompleteSendRound(*send);
        }
        return;
      }
      // Round k's clear applies to the sender's round k: if the sender has
      // not started it yet (or is still in round k-1), it waits.
      if (current == RequestState::kActive &&
          !send->cleared.load(std::memory_order_relaxed)) {
        ApplyClearLocked(*send, vci);
      } else {
        ++send->clears_waiting;
      }
      return;
    }
    case MessageType::kPartitionedFree: {
      for (auto it = state.unexpected.begin(); it != state.unexpected.end();
           ++it) {
        if (it->peer == peer && it->sender_id == header.sender_request) {
          state.unexpected.erase(it);
          return;
        }
      }
      // Matched already: a receive bound to a send that was freed without
      // ever starting goes back to the front of the queue, to match the
      // next init instead.
      if ((header.flags & 1) == 0) return;  // it had started: nothing to do
      std::lock_guard<std::mutex> lock(control_mutex_);
      for (auto& slot : slots_) {
        PartitionedReceive* receive = slot.load(std::memory_order_relaxed);
        if (receive != nullptr && receive->matched &&
            receive->sender_peer == peer &&
            receive->sender_id == header.sender_request &&
            receive->vci == vci) {
          receive->matched = false;
          state.posted.push_front(receive);
          return;
        }
      }
      return;
    }
    default:
      return;
  }
}

void Partitioned::OnWriteImmediateLocked(int, net::PeerVci, uint32_t immediate,
                                         size_t) {
  PartitionedReceive* receive =
      slots_[immediate >> (2 * kUnitBits)].load(std::memory_order_acquire);
  if (receive == nullptr) return;
  const int64_t first = (immediate >> kUnitBits) & kUnitMask;
  const int64_t units = int64_t(immediate & kUnitMask) + 1;
  if (receive->total_bytes == 0) {
    if (receive->units_left.fetch_sub(units, std::memory_order_acq_rel) ==
        units) {
      for (int64_t p = 0; p < receive->partitions; ++p) {
        receive->arrived_round[p].store(receive->round.load(),
                                        std::memory_order_release);
      }
      CompleteReceiveRound(*receive);
    }
    return;
  }
  const int64_t first_partition = first * receive->send_per_unit;
  const int64_t end_partition = std::min(
      receive->send_partitions, (first + units) * receive->send_per_unit);
  ArrivedBytes(*receive,
               uint64_t(first_partition) * receive->send_partition_bytes,
               uint64_t(end_partition) * receive->send_partition_bytes);
}

void Partitioned::ArrivedBytes(PartitionedReceive& receive, uint64_t begin,
                               uint64_t end) {
  const uint64_t each = receive.partition_bytes;
  if (each == 0 || begin >= end) return;
  for (uint64_t p = begin / each;
       p < uint64_t(receive.partitions) && p * each < end; ++p) {
    const uint64_t low = std::max(begin, p * each);
    const uint64_t high = std::min(end, (p + 1) * each);
    const int64_t bytes = int64_t(high - low);
    const int64_t before =
        receive.remaining_bytes[p].fetch_sub(bytes, std::memory_order_acq_rel);
    if (before == bytes) {
      PartitionArrived(receive, int64_t(p));
    } else if (before < bytes) [[unlikely]] {
      // Some bytes came twice: a broken aggregator, never the program.
      std::fprintf(stderr,
                   "minimpi: internal error: partitioned receive (rank %d) "
                   "got bytes of partition %llu twice in one round\n",
                   world_rank_, static_cast<unsigned long long>(p));
      std::abort();
    }
  }
}

void Partitioned::PartitionArrived(PartitionedReceive& receive,
                                   int64_t partition) {
  if (receive.staging != nullptr) {
    const int64_t each = int64_t(receive.partition_bytes);
    datatype::Unpack(receive.staging + partition * each, each, receive.data,
                     receive.item_count, receive.layout, partition * each);
  }
  receive.arrived_round[partition].store(
      receive.round.load(std::memory_order_relaxed), std::memory_order_release);
  if (receive.partitions_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    CompleteReceiveRound(receive);
  }
}

void Partitioned::CompleteReceiveRound(PartitionedReceive& receive) {
  Request* request = receive.request;
  request->status.source = receive.source_rank;
  request->status.tag = receive.tag;
  if (receive.size_mismatch) {
    request->status.error = p2p::Error::kTruncated;
    request->status.bytes = 0;
    request->status.arrived_bytes = 0;
  } else {
    request->status.bytes = receive.total_bytes;
    request->status.arrived_bytes = receive.total_bytes;
  }
  request->state.store(RequestState::kComplete, std::memory_order_release);
}

bool Partitioned::Arrived(Request* request, int64_t partition) {
  auto* base = static_cast<PartitionedRequestBase*>(request->extension);
  if (base->proc_null || base->partitions == 0) return true;
  auto& receive = *static_cast<PartitionedReceive*>(base);
  const uint32_t round = receive.round.load(std::memory_order_acquire);
  auto arrived = [&] {
    return receive.arrived_round[partition].load(std::memory_order_acquire) ==
               round ||
           p2p::PointToPoint::IsComplete(request);
  };
  if (arrived()) return true;
  // A loop that only calls MPI_Parrived must see the data arrive: progress
  // the request's VCI, and now and then every VCI (writes may come on
  // another channel).
  static thread_local unsigned calls = 0;
  p2p_.TryProgress(receive.vci);
  if (++calls % 8 == 0) p2p_.ProgressBeyond(receive.vci);
  return arrived();
}

void Partitioned::RecordRound(PartitionedSend& send, uint32_t round) {
  if (!send.timed || send.units == 0) return;
  ++send.rounds_done;
  int64_t last_ready = 0, last_write = 0, writes = 0;
  for (int64_t p = 0; p < send.partitions; ++p) {
    last_ready = std::max(last_ready, send.ready_ns[p]);
  }
  for (int64_t u = 0; u < send.units; ++u) {
    if (send.write_units[u] > 0) {
      ++writes;
      last_write = std::max(last_write, send.write_posted_ns[u]);
    }
  }
  send.total_writes += writes;
  send.total_last_ready_to_write_us +=
      std::max<int64_t>(0, last_write - last_ready) / 1000.0;
  if (!settings_.part_profile.empty()) {
    // Times in the profile count from MPI_Init (the engine's creation).
    std::string lines = absl::StrFormat("start %d %d %d\n", send.id, round,
                                        send.start_ns - epoch_ns_);
    for (int64_t p = 0; p < send.partitions; ++p) {
      absl::StrAppendFormat(&lines, "ready %d %d %d %d\n", send.id, round, p,
                            send.ready_ns[p] - epoch_ns_);
    }
    for (int64_t u = 0; u < send.units; ++u) {
      if (send.write_units[u] == 0) continue;
      absl::StrAppendFormat(
          &lines, "write %d %d %d %d %d\n", send.id, round, u * send.per_unit,
          std::min(send.partitions, (u + send.write_units[u]) * send.per_unit) -
              u * send.per_unit,
          send.write_posted_ns[u] - epoch_ns_);
    }
    absl::StrAppendFormat(&lines, "done %d %d %d", send.id, round,
                          std::max(last_write, last_ready) - epoch_ns_);
    ProfileLine(lines);
  }
  if (send.aggregator->wants_arrivals()) {
    std::vector<double> unit_ready(send.units, 0);
    for (int64_t p = 0; p < send.partitions; ++p) {
      double& ready = unit_ready[p / send.per_unit];
      ready = std::max(ready, (send.ready_ns[p] - send.start_ns) / 1000.0);
    }
    std::vector<uint32_t> markers(send.ready_thread.get(),
                                  send.ready_thread.get() + send.partitions);
    std::sort(markers.begin(), markers.end());
    int64_t most = 0;
    for (size_t i = 0; i < markers.size();) {
      size_t j = i;
      while (j < markers.size() && markers[j] == markers[i]) ++j;
      most = std::max<int64_t>(most, int64_t(j - i));
      i = j;
    }
    send.next_plan =
        send.aggregator->Replan(send.input, send.plan, unit_ready, most);
    send.plan_changed = true;
  }
  for (int64_t u = 0; u < send.units; ++u) send.write_units[u] = 0;
}

void Partitioned::PrintStatistics(const PartitionedSend& send) {
  const int64_t rounds = std::max<int64_t>(send.rounds_done, 1);
  const double writes_per_round = double(send.total_writes) / double(rounds);
  std::fprintf(
      stderr,
      "minimpi part stats (rank %d): send to rank %d tag %d: %lld partitions "
      "of %zu bytes, aggregator %s, %lld rounds: %.1f writes/round, %.1f "
      "partitions/write, last MPI_Pready -> last write %.2f us/round; plan: "
      "%s\n",
      world_rank_, send.peer.rank, send.tag,
      static_cast<long long>(send.partitions), send.partition_bytes,
      send.aggregator->name(), static_cast<long long>(send.rounds_done),
      writes_per_round,
      writes_per_round > 0 ? double(send.partitions) / writes_per_round : 0.0,
      send.total_last_ready_to_write_us / double(rounds),
      send.plan.reason.c_str());
}

void Partitioned::ProfileLine(const std::string& line) {
  std::lock_guard<std::mutex> lock(profile_mutex_);
  if (profile_ == nullptr) {
    const std::string path =
        absl::StrCat(settings_.part_profile, ".", world_rank_);
    profile_ = std::fopen(path.c_str(), "w");
    if (profile_ == nullptr) return;
  }
  std::fprintf(profile_, "%s\n", line.c_str());
}

void Partitioned::Free(Request* request) {
  auto* base = static_cast<PartitionedRequestBase*>(request->extension);
  if (base->is_send) {
    auto* send = static_cast<PartitionedSend*>(base);
    if (send->ever_started) {
      RecordRound(*send, send->round.load(std::memory_order_relaxed));
    }
    if (settings_.part_stats && !send->proc_null) PrintStatistics(*send);
    if (!send->proc_null) {
      // Under the VCI lock the clears are handled under: once the handle
      // is invalid, a late clear finds nothing.
      std::lock_guard<std::mutex> lock(p2p_.VciMutex(send->vci));
      p2p::RequestPool::Invalidate(request);
      MessageHeader free{};
      free.type = MessageType::kPartitionedFree;
      free.context = send->context;
      free.source = send->source_rank;
      free.tag = send->tag;
      free.sender_request = send->id;
      free.flags = send->ever_started ? 0 : 1;
      p2p_.SendControlLocked(send->vci, send->peer, free);
      auto& timers = vcis_[send->vci].deferred_timers;
      timers.erase(std::remove(timers.begin(), timers.end(), send),
                   timers.end());
    }
    if (send->registered) transport_.DeregisterMemory(send->region);
    if (!send->proc_null) p2p_.ExtensionRequestRemoved();
    p2p_.Free(request);
    delete send;
    return;
  }
  auto* receive = static_cast<PartitionedReceive*>(base);
  if (!receive->proc_null) {
    {
      std::lock_guard<std::mutex> lock(p2p_.VciMutex(receive->vci));
      auto& posted = vcis_[receive->vci].posted;
      posted.erase(std::remove(posted.begin(), posted.end(), receive),
                   posted.end());
    }
    std::lock_guard<std::mutex> lock(control_mutex_);
    slots_[receive->slot].store(nullptr, std::memory_order_release);
  }
  if (receive->registered) transport_.DeregisterMemory(receive->region);
  delete[] receive->staging;
  p2p_.Free(request);
  delete receive;
}

}  // namespace minimpi::part
