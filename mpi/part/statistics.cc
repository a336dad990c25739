// Statistics and the profile: per-round measurements (ready times,
// write times) for MINIMPI_PART_STATS and MINIMPI_PART_PROFILE, and the
// adaptive aggregators' input.
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
#include "mpi/part/partitioned.h"
#include "mpi/part/partitioned_requests.h"

namespace minimpi::part {

using p2p::MessageHeader;
using p2p::MessageType;
using vci::Request;
using vci::RequestState;

void Partitioned::RecordRound(PartitionedSend& send, uint32_t round) {
  if (send.units == 0) return;
  // Counted for every send, without a clock: each run stamps its round.
  uint64_t writes = 0;
  for (int64_t u = 0; u < send.units; ++u) {
    writes += send.writes[u].round == round;
  }
  send.counters.rounds.Add();
  send.counters.writes.Add(writes);
  send.counters.last_round_writes.store(writes, std::memory_order_relaxed);
  if (!send.timed) return;
  int64_t last_ready = 0, last_write = 0;
  for (int64_t p = 0; p < send.partitions; ++p) {
    last_ready = std::max(last_ready, send.ready_ns[p]);
  }
  uint64_t early_bird_bytes = 0;
  for (int64_t u = 0; u < send.units; ++u) {
    if (send.write_units[u] == 0) continue;
    last_write = std::max(last_write, send.write_posted_ns[u]);
    if (send.write_posted_ns[u] < last_ready) {
      early_bird_bytes += RunBytes(send, u, send.write_units[u]);
    }
  }
  send.counters.last_ready_to_write_ns.Add(
      static_cast<uint64_t>(std::max<int64_t>(0, last_write - last_ready)));
  send.counters.early_bird_bytes.Add(early_bird_bytes);
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

uint64_t Partitioned::RunBytes(const PartitionedSend& send, int64_t first_unit,
                               int64_t units) {
  const int64_t first = first_unit * send.per_unit;
  const int64_t end =
      std::min(send.partitions, (first_unit + units) * send.per_unit);
  return static_cast<uint64_t>(end - first) * send.partition_bytes;
}

void Partitioned::PrintStatistics(const PartitionedSend& send) {
  const uint64_t rounds_done = send.counters.rounds.Read();
  const double rounds = static_cast<double>(std::max<uint64_t>(rounds_done, 1));
  const double writes_per_round =
      static_cast<double>(send.counters.writes.Read()) / rounds;
  std::fprintf(
      stderr,
      "minimpi part stats (rank %d): send to rank %d tag %d: %lld partitions "
      "of %zu bytes, aggregator %s, backend %s, %llu rounds: %.1f "
      "writes/round, %.1f partitions/write, last MPI_Pready -> last write "
      "%.2f us/round, %.0f early-bird bytes/round; plan: %s\n",
      world_rank_, send.peer.rank, send.tag,
      static_cast<long long>(send.partitions), send.partition_bytes,
      send.aggregator->name(), BackendName(send.backend),
      static_cast<unsigned long long>(rounds_done), writes_per_round,
      writes_per_round > 0 ? double(send.partitions) / writes_per_round : 0.0,
      static_cast<double>(send.counters.last_ready_to_write_ns.Read()) /
          1000.0 / rounds,
      static_cast<double>(send.counters.early_bird_bytes.Read()) / rounds,
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

}  // namespace minimpi::part
