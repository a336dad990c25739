// COL, the structure for collective elements (Ghazimirsaeed, Grant, Afsahi,
// Parallel Computing 2019), keyed by the hint mpi/coll attaches to every
// message and receive: which collective, how large the message (by power of
// two) and how many ranks.
//
// The first call with a given key is profiled: its elements go to a shared
// profiling queue, and the engine averages how many elements its searches
// inspect. When that call's elements are gone (or after a window of
// searches), the average says how many queues would keep searches short:
// nq, a power of two. Later elements of profiled keys go to the newest level
// of queues, hashed by rank mod nq; a new level opens only when some key
// needs more queues than the newest level has. The average keeps being
// taken, window by window, so a key whose lists grow later (a gather whose
// messages start arriving before their receives) still gets its queues.
// Searches of an empty structure are not counted (the engine skips them).
//
// A search looks at the profiling queue, then at each level first to last,
// and takes the earliest-stamped match: levels only receive elements while
// they are the newest, so they are in stamping order, and the profiling
// queue is merged in by sequence number. Wildcard receives sit in their own
// list. An ANY_SOURCE search of unexpected messages (which mpi/coll never
// makes) merges every queue by sequence number, so collective messages pay
// for no arrival-ordered list.
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

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
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
    T* best = probe.source == kAnySource ? FindFromAny(probe, inspected)
                                         : FindFromOne(probe, inspected);
    traversals += inspected;
    Profile& profile = ProfileOf(kind);
    ++profile.searches;
    profile.traversals += inspected;
    if (profile.searches >= SearchesPerWindow(profile)) Decide(profile);
    return best;
  }

  void Remove(T* element) {
    Queue<T>* queue = Queue<T>::Of(element);
    queue->Remove(element);
    --size_;
    if (queue == &profiling_) {
      Profile& profile = ProfileOf(element->traffic);
      if (profile.profiling && profile.live > 0 && --profile.live == 0 &&
          profile.searches > 0) {
        Decide(profile);  // the profiled call's elements are all gone
      }
    }
  }
  // Teardown only: any element, in no particular order.
  T* PopAny() {
    Queue<T>* queue = !profiling_.empty()   ? &profiling_
                      : !wildcards_.empty() ? &wildcards_
                                            : nullptr;
    for (size_t l = 0; queue == nullptr && l < levels_.size(); ++l) {
      queue = levels_[l]->AnyNonEmpty();
    }
    if (queue == nullptr) return nullptr;
    T* element = queue->front();
    Remove(element);
    return element;
  }
  size_t size() const { return size_; }

  uint64_t promotions() const { return 0; }  // no partners here
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
    // The current window: searches for this key and elements they inspected.
    uint64_t searches = 0;
    uint64_t traversals = 0;
  };
  struct CachedProfile {
    uint64_t key = ~uint64_t{0};
    Profile* profile = nullptr;
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
    const Queue<T>& queue(size_t index) const { return queues_[index]; }
    Queue<T>* AnyNonEmpty() const {
      for (size_t i = 0; i < count(); ++i) {
        if (!queues_[i].empty()) return &queues_[i];
      }
      return nullptr;
    }
    bool empty() const { return AnyNonEmpty() == nullptr; }

   private:
    size_t mask_;
    std::unique_ptr<Queue<T>[]> queues_;
  };

  static uint64_t KeyOf(const TrafficKind& kind) {
    return (static_cast<uint64_t>(kind.collective) << 48) |
           (static_cast<uint64_t>(kind.comm_size) << 8) |
           static_cast<uint64_t>(std::bit_width(kind.message_size));
  }

  // Collectives alternate between a few keys (an allreduce's rounds, then
  // an alltoall's), so a small direct-mapped cache in front of the hash
  // table answers almost every lookup.
  ABSL_ATTRIBUTE_ALWAYS_INLINE Profile& ProfileOf(const TrafficKind& kind) {
    const uint64_t key = KeyOf(kind);
    CachedProfile& cached =
        profile_cache_[(key ^ (key >> 48) ^ (key >> 8)) % kProfileCacheSize];
    if (ABSL_PREDICT_FALSE(cached.key != key)) Refill(cached, key, kind);
    return *cached.profile;
  }

  ABSL_ATTRIBUTE_NOINLINE void Refill(CachedProfile& cached, uint64_t key,
                                      const TrafficKind& kind) {
    auto [it, inserted] = profiles_.try_emplace(key);
    if (inserted) it->second.comm_size = kind.comm_size;
    cached.key = key;
    cached.profile = &it->second;
  }

  // How many searches make a window: the first decision comes at the latest
  // after this many (a call that never drains, calls overlapping without
  // end), and each later window may ask for more queues.
  static uint64_t SearchesPerWindow(const Profile& profile) {
    return std::max<uint64_t>(64, 2 * uint64_t{profile.comm_size});
  }

  // ANY_SOURCE: the earliest match over every queue.
  T* FindFromAny(const Envelope& probe, uint64_t& traversals) const {
    T* best = nullptr;
    auto consider = [&](const Queue<T>& queue) {
      T* found = FindFirst(queue, probe, best ? best->links.sequence : kNoBound,
                           traversals);
      if (found != nullptr) best = found;
    };
    consider(profiling_);
    consider(wildcards_);
    for (const auto& level : levels_) {
      for (size_t i = 0; i < level->count(); ++i) consider(level->queue(i));
    }
    return best;
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
    return EarlierOfWildcard(best, wildcards_, probe, traversals);
  }

  // Ends profiling or a window: the average search of this key says how
  // many queues it needs, and a level that small or larger must exist.
  void Decide(Profile& profile) {
    profile.profiling = false;
    const uint64_t average =
        (profile.traversals + profile.searches - 1) / profile.searches;
    profile.searches = 0;
    profile.traversals = 0;
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
  // node_hash_map: profiles stay put, so cached pointers stay valid.
  absl::node_hash_map<uint64_t, Profile> profiles_;
  static constexpr size_t kProfileCacheSize = 8;
  CachedProfile profile_cache_[kProfileCacheSize];
  Queue<T> wildcards_;  // posted with MPI_ANY_SOURCE
  size_t size_ = 0;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_COLLECTIVE_QUEUES_H_
