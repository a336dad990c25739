// PNP, the partner/non-partner structure for point-to-point elements
// (Ghazimirsaeed, Grant, Afsahi, Parallel Computing 2019).
//
// Elements start in one shared queue. When the newest shared queue reaches
// theta elements, the senders with more than the average number of elements
// in it become partners, each with a queue of its own, and a fresh shared
// queue opens: a new level. A partner's older elements stay where they were,
// so a search for sender s looks at the shared queues of every level before
// s became a partner, then at s's own queue; a sender that is no partner
// looks at every shared queue. Shared queues only ever receive elements
// while they are the newest, so that search order is also posting order and
// the first match is the earliest. Wildcard receives (ANY_SOURCE) sit in
// their own list and win when they were posted earlier.
//
// Partners are looked up in an Abseil hash table. Partner queues come out of
// the engine's budget (kP * sqrt(ranks)); when it is spent, senders stay in
// the shared queues. Nothing queued is ever moved. Every queue indexes its
// elements by envelope once it holds theta of them (IndexedQueue), so a
// search that names sender and tag skips the rest of a long queue.
//
// Owned by: mpi/match. Called by: the engines in match_engine.cc.
#ifndef MINIMPI_MPI_MATCH_PARTNER_QUEUES_H_
#define MINIMPI_MPI_MATCH_PARTNER_QUEUES_H_

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "mpi/match/indexed_queue.h"
#include "mpi/match/match_engine.h"
#include "mpi/match/queue_search.h"

namespace minimpi::match {

template <typename T>
class PartnerQueues {
 public:
  PartnerQueues(const MatchEngineOptions& options, QueueBudget* budget)
      : theta_(std::max(options.theta, 1)),
        next_check_(static_cast<size_t>(theta_)),
        budget_(budget) {
    shared_.push_back(std::make_unique<IndexedQueue<T>>(theta_));
  }

  void Insert(T* element) {
    arrival_.Add(element);
    ++size_;
    const Envelope& at = PlacementOf(*element);
    if (at.source == kAnySource) {
      wildcards_.PushBack(element);
      return;
    }
    if (!partners_.empty()) {
      auto it = partners_.find(SenderKey(at));
      if (it != partners_.end()) {
        it->second.queue->PushBack(element);
        return;
      }
    }
    IndexedQueue<T>& newest = *shared_.back();
    newest.PushBack(element);
    if (newest.size() >= next_check_) MaybeAddLevel();
  }

  T* Find(const Envelope& probe, const TrafficKind& /*kind*/,
          uint64_t& traversals) const {
    if (probe.source == kAnySource) return arrival_.FindAny(probe, traversals);
    size_t shared_levels = shared_.size();
    const IndexedQueue<T>* own = nullptr;
    if (!partners_.empty()) {
      auto it = partners_.find(SenderKey(probe));
      if (it != partners_.end()) {
        shared_levels = it->second.level;
        own = it->second.queue;
      }
    }
    T* best = nullptr;
    for (size_t level = 0; level < shared_levels && best == nullptr; ++level) {
      best = shared_[level]->Find(probe, traversals);
    }
    if (best == nullptr && own != nullptr) {
      best = own->Find(probe, traversals);
    }
    return EarlierOfWildcard(best, wildcards_, probe, traversals);
  }

  void Remove(T* element) {
    Queue<T>* list = Queue<T>::Of(element);
    if (list == &wildcards_) {
      wildcards_.Remove(element);
    } else {
      IndexedQueue<T>::FromList(list)->Remove(element);
    }
    arrival_.Remove(element);
    --size_;
  }
  T* PopAny() {
    T* element = arrival_.front();
    if (element != nullptr) Remove(element);
    return element;
  }
  size_t size() const { return size_; }

  // Senders ever promoted to partners; read by tools on any thread.
  uint64_t promotions() const { return promotions_.Read(); }
  void AddStructureStats(KindStats& stats) const {
    stats.partners += partners_.size();
    stats.levels = std::max(stats.levels, shared_.size() - 1);
    stats.dedicated_queues += partners_.size();
    stats.dedicated_queue_bytes +=
        partner_queues_.size() * sizeof(IndexedQueue<T>) +
        partners_.capacity() * (sizeof(uint64_t) + sizeof(Partner));
    // The indexes of long queues, shared levels' included.
    for (const auto& queue : partner_queues_) {
      stats.dedicated_queue_bytes += queue->index_bytes();
    }
    for (const auto& queue : shared_) {
      stats.dedicated_queue_bytes += queue->index_bytes();
    }
  }

 private:
  struct Partner {
    size_t level;  // shared queues below this level may hold its elements
    IndexedQueue<T>* queue;
  };

  // The newest shared queue reached the threshold: promote its heavy
  // senders, heaviest first, as far as the budget allows.
  void MaybeAddLevel() {
    IndexedQueue<T>& newest = *shared_.back();
    // Look again only after theta more elements, whether or not a level is
    // added now: a queue of many light senders has no one to promote.
    next_check_ = newest.size() + static_cast<size_t>(theta_);
    if (budget_->available() == 0) return;
    absl::flat_hash_map<uint64_t, size_t> counts;
    for (T* e = newest.front(); e != nullptr; e = newest.next(e)) {
      ++counts[SenderKey(PlacementOf(*e))];
    }
    const double average =
        static_cast<double>(newest.size()) / static_cast<double>(counts.size());
    std::vector<std::pair<size_t, uint64_t>> heavy;
    for (const auto& [sender, count] : counts) {
      if (static_cast<double>(count) > average)
        heavy.push_back({count, sender});
    }
    if (heavy.empty()) return;
    std::sort(heavy.begin(), heavy.end(), std::greater<>());
    heavy.resize(std::min(heavy.size(), budget_->available()));
    budget_->Take(heavy.size());
    promotions_.Add(heavy.size());
    const size_t level = shared_.size();
    for (const auto& [count, sender] : heavy) {
      partner_queues_.push_back(std::make_unique<IndexedQueue<T>>(theta_));
      partners_.emplace(sender, Partner{level, partner_queues_.back().get()});
    }
    shared_.push_back(std::make_unique<IndexedQueue<T>>(theta_));
    next_check_ = static_cast<size_t>(theta_);
  }

  const int theta_;
  size_t next_check_;
  QueueBudget* budget_;
  // shared_[0] is the initial queue; shared_[l] opened with level l.
  std::vector<std::unique_ptr<IndexedQueue<T>>> shared_;
  absl::flat_hash_map<uint64_t, Partner> partners_;
  std::vector<std::unique_ptr<IndexedQueue<T>>> partner_queues_;
  Queue<T> wildcards_;  // posted with MPI_ANY_SOURCE
  ArrivalIndex<T> arrival_;
  size_t size_ = 0;
  OwnedCount promotions_;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_PARTNER_QUEUES_H_
