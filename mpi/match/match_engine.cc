#include "mpi/match/match_engine.h"

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <ranges>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mpi/match/collective_queues.h"
#include "mpi/match/linked_list_engine.h"
#include "mpi/match/partner_queues.h"
#include "mpi/match/per_peer_queues.h"
#include "mpi/match/search_stats.h"
#include "mpi/match/single_queue.h"
#include "mpi/match/split_engine.h"

namespace minimpi::match {

namespace {

// An engine made of a collective structure and a point-to-point one.
template <template <class> class Collective,
          template <class> class PointToPoint>
std::unique_ptr<MatchEngine> MakeSplit(std::string name,
                                       const MatchEngineOptions& options) {
  return std::make_unique<SplitEngine<Collective, PointToPoint>>(
      std::move(name), options);
}

constexpr MatchEngineChoice kMatchEngines[] = {
    {"colpnp",
     "COL for collectives (profiled, hashed queue levels) and PNP for "
     "point-to-point (partner queues); the default",
     MakeSplit<CollectiveQueues, PartnerQueues>},
    {"ll",
     "one posted and one unexpected list for all traffic, searched front to "
     "back (MPICH/MVAPICH style; the baseline)",
     [](std::string,
        const MatchEngineOptions& options) -> std::unique_ptr<MatchEngine> {
       return std::make_unique<LinkedListEngine>(options);
     }},
    {"perpeer",
     "a queue per sender per communicator, plus a wildcard list (Open MPI "
     "style)",
     MakeSplit<PerPeerQueues, PerPeerQueues>},
    {"col+ll", "COL for collectives, one list for point-to-point",
     MakeSplit<CollectiveQueues, SingleQueue>},
    {"ll+pnp", "one list for collectives, PNP for point-to-point",
     MakeSplit<SingleQueue, PartnerQueues>},
};

const MatchEngineChoice* FindEngine(std::string_view name) {
  for (const MatchEngineChoice& engine : kMatchEngines) {
    if (name == engine.name) return &engine;
  }
  return nullptr;
}

}  // namespace

std::span<const MatchEngineChoice> MatchEngineChoices() {
  return kMatchEngines;
}

std::vector<std::string> MatchEngineNames() {
  auto names = std::views::transform(kMatchEngines, &MatchEngineChoice::name);
  return {names.begin(), names.end()};
}

std::string MatchEngineDescription(std::string_view name) {
  const MatchEngineChoice* engine = FindEngine(name);
  return engine == nullptr ? "unknown engine" : engine->description;
}

absl::StatusOr<std::unique_ptr<MatchEngine>> CreateMatchEngine(
    std::string_view name, const MatchEngineOptions& options) {
  const std::string engine_name(name);
  const MatchEngineChoice* engine = FindEngine(name);
  if (engine == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown matching engine '", engine_name,
                     "'; known: ", absl::StrJoin(MatchEngineNames(), ", ")));
  }
  if (options.time_searches) NanosecondsPerTick();  // calibrate now, not later
  return engine->create(engine_name, options);
}

double NanosecondsPerTick() {
  static const double nanoseconds_per_tick = [] {
    const auto start = std::chrono::steady_clock::now();
    const uint64_t start_ticks = ReadTicks();
    auto now = start;
    while (now - start < std::chrono::milliseconds(2)) {
      now = std::chrono::steady_clock::now();
    }
    const uint64_t ticks = ReadTicks() - start_ticks;
    const double nanoseconds = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - start)
            .count());
    return ticks == 0 ? 1.0 : nanoseconds / static_cast<double>(ticks);
  }();
  return nanoseconds_per_tick;
}

namespace {
std::atomic<bool> search_timing_requested{false};
}  // namespace

void SetSearchTiming(bool on) {
  if (on) NanosecondsPerTick();
  search_timing_requested.store(on, std::memory_order_relaxed);
}

bool SearchTimingRequested() {
  return search_timing_requested.load(std::memory_order_relaxed);
}

void TicksToNanoseconds(MatchStats& stats) {
  const double scale = NanosecondsPerTick();
  for (KindStats* kind : {&stats.point_to_point, &stats.collective}) {
    for (QueueStats* queue : {&kind->posted, &kind->unexpected}) {
      queue->search_ns =
          static_cast<uint64_t>(static_cast<double>(queue->search_ns) * scale);
    }
  }
}

namespace {

void AddQueue(const QueueCounters& counters, QueueStats& stats) {
  stats.searches += counters.searches.Read();
  stats.traversals += counters.traversals.Read();
  stats.matches += counters.matches.Read();
  stats.search_ns += counters.search_ticks.Read();
  stats.inserted += counters.inserted.Read();
}

std::string FormatQueue(const char* label, const QueueStats& queue) {
  const double per_search = queue.searches == 0
                                ? 0.0
                                : static_cast<double>(queue.traversals) /
                                      static_cast<double>(queue.searches);
  return absl::StrFormat(
      "    %s: %d searches, %.2f traversals/search, %d matched, %.3f ms "
      "searching, %d queued, longest %d\n",
      label, queue.searches, per_search, queue.matches,
      static_cast<double>(queue.search_ns) / 1e6, queue.inserted,
      queue.longest);
}

}  // namespace

MatchStats MatchEngine::CountedStats() const {
  MatchStats stats;
  contexts_.ForEach([&](int32_t /*context*/, const ContextCounters& counters) {
    KindStats& kind = counters.collective.load(std::memory_order_relaxed)
                          ? stats.collective
                          : stats.point_to_point;
    AddQueue(counters.posted, kind.posted);
    AddQueue(counters.unexpected, kind.unexpected);
  });
  for (const bool collective : {false, true}) {
    KindStats& kind = collective ? stats.collective : stats.point_to_point;
    kind.posted.longest = longest(collective, /*posted=*/true);
    kind.unexpected.longest = longest(collective, /*posted=*/false);
  }
  // Calibrating costs 2 ms: only when something was timed.
  const auto timed_anything = [](const KindStats& kind) {
    return kind.posted.search_ns + kind.unexpected.search_ns != 0;
  };
  if (timed_anything(stats.point_to_point) ||
      timed_anything(stats.collective)) {
    TicksToNanoseconds(stats);
  }
  return stats;
}

std::string FormatMatchStats(std::string_view engine_name,
                             const MatchStats& stats) {
  std::string text =
      absl::StrCat("matching engine ", std::string(engine_name), "\n");
  for (const auto& [label, kind] :
       {std::pair<const char*, const KindStats*>{"point-to-point",
                                                 &stats.point_to_point},
        {"collective", &stats.collective}}) {
    if (kind->posted.searches + kind->unexpected.searches == 0) continue;
    absl::StrAppendFormat(
        &text, "  %s: %d dedicated queues (%d bytes), %d partners, %d levels\n",
        label, kind->dedicated_queues, kind->dedicated_queue_bytes,
        kind->partners, kind->levels);
    text += FormatQueue("PRQ", kind->posted);
    text += FormatQueue("UMQ", kind->unexpected);
  }
  return text;
}

}  // namespace minimpi::match
