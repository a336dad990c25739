// "perpeer": a queue per sender per communicator, as Open MPI's ob1 keeps.
// A search for one sender looks at that sender's queue and at the wildcard
// receives, and takes whichever was posted first; ANY_SOURCE searches walk
// the arrival-ordered list. Every sender that ever sent or was named gets a
// queue, so memory grows with the number of peers.
//
// Owned by: mpi/match. Called by: the engines in match_engine.cc.
#ifndef MINIMPI_MPI_MATCH_PER_PEER_QUEUES_H_
#define MINIMPI_MPI_MATCH_PER_PEER_QUEUES_H_

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "mpi/match/match_engine.h"
#include "mpi/match/queue_search.h"

namespace minimpi::match {

template <typename T>
class PerPeerQueues {
 public:
  PerPeerQueues(const MatchEngineOptions& /*options*/,
                QueueBudget* /*budget*/) {}

  void Insert(T* element) {
    arrival_.Add(element);
    ++size_;
    const Envelope& at = PlacementOf(*element);
    if (at.source == kAnySource) {
      wildcards_.PushBack(element);
      return;
    }
    std::unique_ptr<Queue<T>>& queue = peers_[SenderKey(at)];
    if (queue == nullptr) queue = std::make_unique<Queue<T>>();
    queue->PushBack(element);
  }

  T* Find(const Envelope& probe, const TrafficKind& /*kind*/,
          uint64_t& traversals) const {
    if (probe.source == kAnySource) return arrival_.FindAny(probe, traversals);
    T* best = nullptr;
    auto it = peers_.find(SenderKey(probe));
    if (it != peers_.end()) {
      best = FindFirst(*it->second, probe, kNoBound, traversals);
    }
    return EarlierOfWildcard(best, wildcards_, probe, traversals);
  }

  void Remove(T* element) {
    Queue<T>::Of(element)->Remove(element);
    arrival_.Remove(element);
    --size_;
  }
  T* PopAny() {
    T* element = arrival_.front();
    if (element != nullptr) Remove(element);
    return element;
  }
  size_t size() const { return size_; }

  uint64_t promotions() const { return 0; }  // no partners here
  void AddStructureStats(KindStats& stats) const {
    stats.dedicated_queues += peers_.size();
    stats.dedicated_queue_bytes +=
        peers_.size() * (sizeof(Queue<T>) + sizeof(uint64_t) + sizeof(void*));
  }

 private:
  absl::flat_hash_map<uint64_t, std::unique_ptr<Queue<T>>> peers_;
  Queue<T> wildcards_;  // posted with MPI_ANY_SOURCE
  ArrivalIndex<T> arrival_;
  size_t size_ = 0;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_PER_PEER_QUEUES_H_
