// mpi/p2p's object: making it and its state for each VCI, the pool of
// unexpected-message records, and matching statistics. The protocols are in
// send.cc, receive.cc, rendezvous.cc and probe_cancel.cc; completion, progress
// and the dispatch of arrivals in progress.cc.
#include "mpi/p2p/point_to_point.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mpi/p2p/p2p_internal.h"
#include "runtime/topology.h"

namespace minimpi::p2p {

namespace {
std::atomic<const PointToPoint*> shown_to_tools{nullptr};
}  // namespace

absl::StatusOr<std::unique_ptr<PointToPoint>> PointToPoint::Create(
    vci::VciSet* vcis, const runtime::Settings& settings, int world_size) {
  std::unique_ptr<PointToPoint> p2p(
      new PointToPoint(vcis, settings, world_size));
  // Every message type but partitioned communication's.
  absl::Status registered = vcis->Register({
      .traffic = vci::Traffic::kPointToPoint,
      .handler = p2p.get(),
      .message_types =
          {
              static_cast<uint8_t>(MessageType::kEager),
              static_cast<uint8_t>(MessageType::kEagerSync),
              static_cast<uint8_t>(MessageType::kRendezvousRequest),
              static_cast<uint8_t>(MessageType::kSyncAck),
              static_cast<uint8_t>(MessageType::kRendezvousDone),
              static_cast<uint8_t>(MessageType::kClearToSend),
              static_cast<uint8_t>(MessageType::kWriteDone),
              static_cast<uint8_t>(MessageType::kCancelSend),
              static_cast<uint8_t>(MessageType::kCancelAnswer),
          },
  });
  if (!registered.ok()) return registered;
  shown_to_tools.store(p2p.get(), std::memory_order_release);
  return p2p;
}

absl::Status PointToPoint::AttachVci(int vci, vci::Vci& state) {
  auto engine = match::CreateMatchEngine(engine_name_, engine_options_);
  if (!engine.ok()) return engine.status();
  vci_states_.Make(vci, state, std::move(engine).value());
  return absl::OkStatus();
}

PointToPoint::PointToPoint(vci::VciSet* vcis, const runtime::Settings& settings,
                           int world_size)
    : vcis_(*vcis),
      transport_(&vcis->transport()),
      eager_max_(std::min(settings.eager_max, transport_->max_message_size() -
                                                  net::kMaxHeaderBytes)),
      widest_eager_max_(transport_->largest_message_size() -
                        net::kMaxHeaderBytes),
      split_min_(settings.rendezvous_split_min),
      network_read_piece_(settings.network_read_piece),
      gather_min_piece_(settings.gather_min_piece),
      world_size_(world_size),
      engine_name_(settings.match),
      vci_states_(vcis->capacity()) {
  engine_options_.theta = settings.match_theta;
  engine_options_.kc = settings.match_kc;
  engine_options_.kp = settings.match_kp;
  engine_options_.ranks = world_size;
  engine_options_.time_searches = settings.match_stats;
}

std::string PointToPoint::MatchStatistics() {
  std::string text;
  for (int v = 0; v < vci_states_.capacity(); ++v) {
    VciState* state = vci_states_.Find(v);
    if (state == nullptr) continue;
    std::lock_guard lock(state->mutex);
    const match::MatchStats stats = state->engine->stats();
    const uint64_t searches = stats.point_to_point.posted.searches +
                              stats.point_to_point.unexpected.searches +
                              stats.collective.posted.searches +
                              stats.collective.unexpected.searches;
    if (searches == 0) continue;
    absl::StrAppend(&text, "VCI ", v, ": ",
                    match::FormatMatchStats(state->engine->name(), stats));
  }
  return text;
}

void PointToPoint::SetContextOwner(int vci, int32_t context,
                                   const void* owner) {
  const VciState* state = vci_states_.Find(static_cast<uint32_t>(vci));
  if (state == nullptr) return;
  state->engine->contexts().Make(context).owner.store(
      owner, std::memory_order_release);
}

void PointToPoint::ForgetContexts(int32_t point_to_point_context,
                                  int32_t collective_context) {
  for (int v = 0; v < vci_states_.capacity(); ++v) {
    const VciState* state = vci_states_.Find(static_cast<uint32_t>(v));
    if (state == nullptr) continue;
    for (int32_t context : {point_to_point_context, collective_context}) {
      match::ContextCounterTable& table = state->engine->contexts();
      if (table.Find(context) == nullptr) continue;
      match::ContextCounters& counters = table.Make(context);
      counters.owner.store(nullptr, std::memory_order_release);
      RestartHighWatermarks(v, context);
    }
  }
}

void PointToPoint::RestartHighWatermarks(int vci, int32_t context) const {
  const VciState* state = vci_states_.Find(static_cast<uint32_t>(vci));
  if (state == nullptr || state->engine->contexts().Find(context) == nullptr) {
    return;
  }
  match::ContextCounters& counters = state->engine->contexts().Make(context);
  counters.posted.RestartHighWatermark();
  counters.unexpected.RestartHighWatermark();
}

const PointToPoint* ShownToTools() {
  return shown_to_tools.load(std::memory_order_acquire);
}

PointToPoint::~PointToPoint() {
  shown_to_tools.store(nullptr, std::memory_order_release);
  vcis_.Unregister(vci::Traffic::kPointToPoint);
  // Unexpected messages nobody received are the user's loss, not a leak of
  // ours: free their records. (vci_states_ then destroys the states.)
  for (int v = 0; v < vci_states_.capacity(); ++v) {
    VciState* state = vci_states_.Find(static_cast<uint32_t>(v));
    if (state == nullptr) continue;
    while (auto* message = state->engine->PopAnyUnexpected()) {
      auto* record = static_cast<UnexpectedRecord*>(message);
      record->~UnexpectedRecord();
      std::free(record);
    }
    for (UnexpectedRecord* record : state->spare_records) {
      record->~UnexpectedRecord();
      std::free(record);
    }
  }
}

namespace {
constexpr size_t kMaxSpareRecords = 1024;  // bounds what a burst leaves behind
}  // namespace

UnexpectedRecord* PointToPoint::NewRecordLocked(VciState& state,
                                                size_t payload_bytes) {
  const bool pooled = payload_bytes <= UnexpectedRecord::kPooledPayloadBytes;
  if (pooled && !state.spare_records.empty()) {
    UnexpectedRecord* record = state.spare_records.back();
    state.spare_records.pop_back();
    record->links = {};
    record->owner = 0;
    return record;
  }
  const size_t capacity =
      pooled ? UnexpectedRecord::kPooledPayloadBytes : payload_bytes;
  void* memory = std::malloc(sizeof(UnexpectedRecord) + capacity);
  if (memory == nullptr) {
    std::fprintf(stderr, "minimpi: out of memory queueing a message\n");
    std::abort();
  }
  auto* record = new (memory) UnexpectedRecord();
  record->payload_capacity = capacity;
  return record;
}

void PointToPoint::FreeRecordLocked(VciState& state, UnexpectedRecord* record) {
  if (record->payload_capacity == UnexpectedRecord::kPooledPayloadBytes &&
      state.spare_records.size() < kMaxSpareRecords) {
    state.spare_records.push_back(record);
    return;
  }
  record->~UnexpectedRecord();
  std::free(record);
}

}  // namespace minimpi::p2p
