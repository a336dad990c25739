// One list for every element, wildcards included, searched front to back:
// the structure of "ll", and the plain side of "col+ll" and "ll+pnp".
//
// Owned by: mpi/match. Called by: the engines in match_engine.cc.
#ifndef MINIMPI_MPI_MATCH_SINGLE_QUEUE_H_
#define MINIMPI_MPI_MATCH_SINGLE_QUEUE_H_

#include "mpi/match/match_engine.h"
#include "mpi/match/queue_search.h"

namespace minimpi::match {

template <typename T>
class SingleQueue {
 public:
  SingleQueue(const MatchEngineOptions& /*options*/, QueueBudget* /*budget*/) {}

  void Insert(T* element) { queue_.PushBack(element); }
  // The list is in posting (arrival) order, so the first match is the
  // earliest, wildcard or not.
  T* Find(const Envelope& probe, const TrafficKind& /*kind*/,
          uint64_t& traversals) const {
    return FindFirst(queue_, probe, kNoBound, traversals);
  }
  void Remove(T* element) { queue_.Remove(element); }
  T* PopAny() {
    T* element = queue_.front();
    if (element != nullptr) queue_.Remove(element);
    return element;
  }
  size_t size() const { return queue_.size(); }
  uint64_t promotions() const { return 0; }  // no partners here
  void AddStructureStats(KindStats& /*stats*/) const {}

 private:
  Queue<T> queue_;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_SINGLE_QUEUE_H_
