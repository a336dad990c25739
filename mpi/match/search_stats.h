// Counting and (optionally) timing each search, shared by every engine.
//
// Timing reads the time-stamp counter where there is one (two reads cost a
// few nanoseconds; a clock call would cost tens and drown the short
// searches that the adaptive engines are meant to produce). Engines keep
// ticks in QueueCounters::search_ticks while they run and convert when they
// report (TicksToNanoseconds).
#ifndef MINIMPI_MPI_MATCH_SEARCH_STATS_H_
#define MINIMPI_MPI_MATCH_SEARCH_STATS_H_

#include <algorithm>
#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "absl/base/attributes.h"
#include "mpi/match/match_engine.h"

namespace minimpi::match {

inline uint64_t ReadTicks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
#endif
}

// Nanoseconds per tick, measured once per process (a 2 ms calibration
// against the steady clock, the first time an engine is created with
// timing on).
double NanosecondsPerTick();

// Turns the ticks an engine accumulated into nanoseconds.
void TicksToNanoseconds(MatchStats& stats);

// Runs `search(traversals)` and records it in `counters`.
template <typename Search>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline auto RecordSearch(QueueCounters& counters,
                                                      bool timed,
                                                      Search&& search) {
  uint64_t traversals = 0;
  const uint64_t start = timed ? ReadTicks() : 0;
  auto* found = search(traversals);
  if (timed) counters.search_ticks.Add(ReadTicks() - start);
  counters.searches.Add();
  counters.traversals.Add(traversals);
  counters.matches.Add(found != nullptr);
  return found;
}

// A search of an empty structure: nothing to time or inspect.
template <typename T = PostedReceive>
T* RecordEmptySearch(QueueCounters& counters) {
  counters.searches.Add();
  return nullptr;
}

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_SEARCH_STATS_H_
