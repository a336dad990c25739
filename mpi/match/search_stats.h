// Counting and (optionally) timing each search, shared by every engine.
#ifndef MINIMPI_MPI_MATCH_SEARCH_STATS_H_
#define MINIMPI_MPI_MATCH_SEARCH_STATS_H_

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "mpi/match/match_engine.h"

namespace minimpi::match {

// Runs `search(traversals)` and records it in `stats`. Timing costs two
// clock reads, so it is on only when asked for.
template <typename Search>
auto RecordSearch(QueueStats& stats, bool timed, Search&& search) {
  uint64_t traversals = 0;
  if (!timed) {
    auto* found = search(traversals);
    ++stats.searches;
    stats.traversals += traversals;
    stats.matches += found != nullptr;
    return found;
  }
  const auto start = std::chrono::steady_clock::now();
  auto* found = search(traversals);
  stats.search_ns += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - start)
          .count());
  ++stats.searches;
  stats.traversals += traversals;
  stats.matches += found != nullptr;
  return found;
}

inline void RecordInsert(QueueStats& stats, size_t queued_now) {
  ++stats.inserted;
  stats.longest = std::max(stats.longest, queued_now);
}

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_SEARCH_STATS_H_
