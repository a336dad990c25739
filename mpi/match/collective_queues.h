// COL, the structure for collective elements (Ghazimirsaeed, Grant, Afsahi,
// Parallel Computing 2019), keyed by the hint mpi/coll attaches to every
// message and receive: which collective, how large the message (by power of
// two) and how many ranks.
//
// The first call with a given key is profiled: its elements go to a shared
// profiling queue, and the engine averages how many elements its searches
// inspect. When that call's elements are gone (or after enough searches),
// the average says how many queues would keep searches short: nq, a power
// of two. Later elements of profiled keys go to the newest level of queues,
// hashed by rank mod nq; a new level opens only when some key needs more
// queues than the newest level has. A search looks at the profiling queue,
// then at each level first to last, and takes the earliest-stamped match:
// levels only receive elements while they are the newest, so they are in
// stamping order, and the profiling queue is merged in by sequence number.
// Wildcard receives sit in their own list.
//
// A message and its receive may disagree about the key (a count mismatch,
// or a v-collective) without harm: the key decides where an element goes,
// never which queues a search looks at.
//
// Level queues come out of the engine's budget (kC * sqrt(ranks)); levels
// that have emptied are given back before a new one is opened.
//
// Owned by: mpi/match. Called by: the engines in match_engine.cc.
#ifndef MINIMPI_MPI_MATCH_COLLECTIVE_QUEUES_H_
#define MINIMPI_MPI_MATCH_COLLECTIVE_QUEUES_H_

#include <algorithm>
#include <bit>
#include <memory>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "mpi/match/match_engine.h"
#include "mpi/match/queue_search.h"

namespace minimpi::match {

template <typename T>
class CollectiveQueues {
 public:
  CollectiveQueues(const MatchEngineOptions& /*options*/, QueueBudget* budget)
      : budget_(budget) {}

  void Insert(T* element) {
    arrival_.Add(element);
    ++size_;
    const Envelope& at = PlacementOf(*element);
    if (at.source == kAnySource) {
      wildcards_.PushBack(element);
      return;
    }
    Profile& profile = ProfileOf(element->traffic);
    if (profile.profiling || levels_.empty()) {
      if (profile.profiling) ++profile.live;
      profiling_.PushBack(element);
      return;
    }
    levels_.back()->QueueFor(at.source).PushBack(element);
  }

  T* Find(const Envelope& probe, const TrafficKind& kind,
          uint64_t& traversals) {
    uint64_t inspected = 0;
    T* best = probe.source == kAnySource ? arrival_.FindAny(probe, inspected)
                                         : FindFromOne(probe, inspected);
    traversals += inspected;
    Profile& profile = ProfileOf(kind);
    if (profile.profiling) {
      ++profile.searches;
      profile.traversals += inspected;
      if (profile.searches >= SearchesToProfile(profile)) {
        EndProfiling(profile);
      }
    }
    return best;
  }

  void Remove(T* element) {
    Queue<T>* queue = Queue<T>::Of(element);
    queue->Remove(element);
    arrival_.Remove(element);
    --size_;
    if (queue == &profiling_) {
      Profile& profile = ProfileOf(element->traffic);
      if (profile.profiling && profile.live > 0 && --profile.live == 0 &&
          profile.searches > 0) {
        EndProfiling(profile);  // the profiled call's elements are all gone
      }
    }
  }
  T* PopAny() {
    T* element = arrival_.front();
    if (element != nullptr) Remove(element);
    return element;
  }
  size_t size() const { return size_; }

  void AddStructureStats(KindStats& stats) const {
    stats.levels = std::max(stats.levels, levels_.size());
    for (const auto& level : levels_) {
      stats.dedicated_queues += level->count();
      stats.dedicated_queue_bytes +=
          sizeof(Level) + level->count() * sizeof(Queue<T>);
    }
  }

 private:
  // A search inspecting this many elements on average is worth one more
  // queue: with nq = average / kTraversalsPerQueue queues, searches inspect
  // about two elements.
  static constexpr uint64_t kTraversalsPerQueue = 2;

  struct Profile {
    bool profiling = true;
    uint32_t comm_size = 0;
    uint64_t live = 0;  // elements in the profiling queue, while profiling
    uint64_t searches = 0;
    uint64_t traversals = 0;
  };

  class Level {
   public:
    explicit Level(size_t count)
        : mask_(count - 1), queues_(std::make_unique<Queue<T>[]>(count)) {}
    size_t count() const { return mask_ + 1; }
    Queue<T>& QueueFor(int32_t source) {
      return queues_[static_cast<uint32_t>(source) & mask_];
    }
    const Queue<T>& QueueFor(int32_t source) const {
      return queues_[static_cast<uint32_t>(source) & mask_];
    }
    bool empty() const {
      for (size_t i = 0; i < count(); ++i) {
        if (!queues_[i].empty()) return false;
      }
      return true;
    }

   private:
    size_t mask_;
    std::unique_ptr<Queue<T>[]> queues_;
  };

  static uint64_t KeyOf(const TrafficKind& kind) {
    return (static_cast<uint64_t>(kind.collective) << 48) |
           (static_cast<uint64_t>(kind.comm_size) << 8) |
           static_cast<uint64_t>(std::bit_width(kind.message_size));
  }

  Profile& ProfileOf(const TrafficKind& kind) {
    const uint64_t key = KeyOf(kind);
    if (key != cached_key_) {
      auto [it, inserted] = profiles_.try_emplace(key);
      if (inserted) it->second.comm_size = kind.comm_size;
      cached_key_ = key;
      cached_profile_ = &it->second;
    }
    return *cached_profile_;
  }

  // A profile whose call never drains (calls overlapping without end) still
  // ends after this many searches.
  static uint64_t SearchesToProfile(const Profile& profile) {
    return std::max<uint64_t>(64, 2 * uint64_t{profile.comm_size});
  }

  T* FindFromOne(const Envelope& probe, uint64_t& traversals) const {
    T* best = profiling_.empty()
                  ? nullptr
                  : FindFirst(profiling_, probe, kNoBound, traversals);
    const uint64_t bound = best ? best->links.sequence : kNoBound;
    for (const auto& level : levels_) {
      T* found =
          FindFirst(level->QueueFor(probe.source), probe, bound, traversals);
      if (found != nullptr) {
        best = found;  // later levels hold only later elements
        break;
      }
    }
    if (!wildcards_.empty()) {
      T* wildcard =
          FindFirst(wildcards_, probe, best ? best->links.sequence : kNoBound,
                    traversals);
      if (wildcard != nullptr) best = wildcard;
    }
    return best;
  }

  void EndProfiling(Profile& profile) {
    profile.profiling = false;
    const uint64_t average =
        (profile.traversals + profile.searches - 1) / profile.searches;
    uint64_t needed = std::bit_ceil(std::max<uint64_t>(
        1, (average + kTraversalsPerQueue - 1) / kTraversalsPerQueue));
    needed = std::min<uint64_t>(
        needed, std::bit_ceil(std::max<uint64_t>(profile.comm_size, 1)));
    if (levels_.empty() || needed > levels_.back()->count()) AddLevel(needed);
  }

  void AddLevel(size_t needed) {
    // Emptied levels other than the newest are no longer searched usefully.
    for (size_t i = 0; i + 1 < levels_.size();) {
      if (levels_[i]->empty()) {
        budget_->Give(levels_[i]->count());
        levels_.erase(levels_.begin() + static_cast<ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    const size_t affordable = std::min(needed, budget_->available());
    if (affordable == 0) return;
    const size_t count = std::bit_floor(affordable);
    if (!levels_.empty() && count <= levels_.back()->count()) return;
    budget_->Take(count);
    levels_.push_back(std::make_unique<Level>(count));
  }

  QueueBudget* budget_;
  Queue<T> profiling_;
  std::vector<std::unique_ptr<Level>> levels_;  // oldest first
  // node_hash_map: profiles stay put, so the one-entry cache stays valid.
  absl::node_hash_map<uint64_t, Profile> profiles_;
  uint64_t cached_key_ = ~uint64_t{0};
  Profile* cached_profile_ = nullptr;
  Queue<T> wildcards_;  // posted with MPI_ANY_SOURCE
  ArrivalIndex<T> arrival_;
  size_t size_ = 0;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_COLLECTIVE_QUEUES_H_
