// mpi/part's Partitioned: making it, finding requests, starting a round
// (applying the aggregator's plan) and freeing requests. The init handshake
// is in init.cc, readiness and the aggregators' reactions in readiness.cc,
// posting writes in writes.cc, arrivals in arrivals.cc, statistics and the
// profile in statistics.cc.
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
#include "mpi/part/partitioned_requests.h"

namespace minimpi::part {

using p2p::MessageHeader;
using p2p::MessageType;
using vci::Request;
using vci::RequestState;

absl::StatusOr<std::unique_ptr<Partitioned>> Partitioned::Create(
    vci::VciSet& vcis, p2p::PointToPoint& p2p,
    const runtime::Settings& settings, int world_rank) {
  auto engine = std::unique_ptr<Partitioned>(
      new Partitioned(vcis, p2p, settings, world_rank));
  if (!settings.part_table.empty()) {
    absl::StatusOr<std::vector<TableEntry>> table =
        ReadTuningTable(settings.part_table);
    if (!table.ok()) return table.status();
    engine->config_.table = *std::move(table);
  }
  if (!settings.part_backend_table.empty()) {
    absl::StatusOr<AutoBackendRule> rule =
        ReadBackendTable(settings.part_backend_table);
    if (!rule.ok()) return rule.status();
    engine->auto_rule_ = *rule;
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
  absl::Status registered = vcis.Register({
      .traffic = vci::Traffic::kPartitioned,
      .handler = engine.get(),
      .message_types =
          {
              static_cast<uint8_t>(p2p::MessageType::kPartitionedInit),
              static_cast<uint8_t>(p2p::MessageType::kPartitionedClear),
              static_cast<uint8_t>(p2p::MessageType::kPartitionedFree),
              static_cast<uint8_t>(p2p::MessageType::kPartitionedData),
              static_cast<uint8_t>(p2p::MessageType::kPartitionedArrived),
          },
      .receives_writes_with_immediate = true,
      // Polls skip partitioned traffic while no partitioned request lives.
      .always_progress = false,
  });
  if (!registered.ok()) return registered;
  return engine;
}

Partitioned::Partitioned(vci::VciSet& vcis, p2p::PointToPoint& p2p,
                         const runtime::Settings& settings, int world_rank)
    : vcis_(vcis),
      p2p_(p2p),
      transport_(vcis.transport()),
      settings_(settings),
      world_rank_(world_rank),
      epoch_ns_(NowNs()),
      vci_states_(vcis.capacity()) {
  vci_states_.MakeAll();
  config_.aggregation_size = settings.part_aggregation_size;
  auto_rule_.on_node_persist_max = settings.part_auto_persist_max;
  config_.loggp = DefaultLogGP();
  config_.delay_us = settings.part_delay_us;
  config_.delta_us = settings.part_delta_us;
  config_.slack = settings.part_model_slack_percent / 100.0;
  config_.max_channels = vcis.num_vcis();
}

Partitioned::~Partitioned() {
  vcis_.Unregister(vci::Traffic::kPartitioned);
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
          vci::RequestPool::kGenerationMask);
}

PartitionedSend* Partitioned::FindSend(uint64_t key) const {
  Request* request = p2p_.LookupRequest(
      static_cast<uint32_t>(key >> 56),
      static_cast<uint32_t>(key >> 32) & 0xffffff, static_cast<uint32_t>(key));
  if (request == nullptr || request->kind != vci::RequestKind::kPartitioned ||
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

void Partitioned::Start(Request* request) {
  auto* base = static_cast<PartitionedRequestBase*>(request->extension);
  std::lock_guard lock(vcis_.mutex(base->vci));
  request->status = vci::Status{};
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
  if (send.timed) send.start_ns = NowNs();
  if (send.size_mismatch) {
    send.request->status.error = vci::Error::kTruncated;
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
  send.counters.planned_delta_ns.store(
      static_cast<uint64_t>(std::max(0.0, send.plan.delta_us) * 1000.0),
      std::memory_order_relaxed);
  ChooseReaction(send);
  send.reaction->StartRound(send.plan);
  if (send.per_unit == 1) return;
  for (int64_t u = 0; u < send.units; ++u) {
    const int64_t first = u * send.per_unit;
    const int64_t last = std::min(send.partitions, first + send.per_unit);
    send.unit_remaining[u].store(static_cast<int32_t>(last - first),
                                 std::memory_order_relaxed);
  }
}

void Partitioned::ChooseReaction(PartitionedSend& send) {
  if (send.reaction != nullptr && send.reaction->kind() == send.plan.reaction) {
    return;
  }
  if (send.poster == nullptr) {
    send.poster = std::make_unique<RunPoster>(*this, send);
  }
  send.reaction = MakeReaction(send.plan.reaction, send.units, *send.poster);
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
      std::lock_guard lock(vcis_.mutex(send->vci));
      vci::RequestPool::Invalidate(request);
      MessageHeader free{};
      free.type = MessageType::kPartitionedFree;
      free.context = send->context;
      free.source = send->source_rank;
      free.tag = send->tag;
      free.sender_request = send->id;
      free.flags = send->ever_started ? 0 : 1;
      p2p_.SendControlLocked(send->vci, send->peer, free);
      auto& sends = vci_states_[send->vci].progressed_sends;
      sends.erase(std::remove(sends.begin(), sends.end(), send), sends.end());
    }
    if (send->registered) transport_.DeregisterMemory(send->region);
    if (!send->proc_null) vcis_.RemoveUser(vci::Traffic::kPartitioned);
    p2p_.Free(request);
    delete send;
    return;
  }
  auto* receive = static_cast<PartitionedReceive*>(base);
  if (!receive->proc_null) {
    {
      std::lock_guard lock(vcis_.mutex(receive->vci));
      auto& posted = vci_states_[receive->vci].posted;
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
