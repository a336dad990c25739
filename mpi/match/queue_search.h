// What every queue structure shares: how an element is searched for, the
// front-to-back search with MPI's ordering rule built in, and the budget
// that caps dedicated queues.
//
// Owned by: mpi/match. Called by: the queue structures of the engines.
#ifndef MINIMPI_MPI_MATCH_QUEUE_SEARCH_H_
#define MINIMPI_MPI_MATCH_QUEUE_SEARCH_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "absl/base/attributes.h"
#include "mpi/match/intrusive_list.h"
#include "mpi/match/match_engine.h"

namespace minimpi::match {

// A posted receive is searched with an arrived envelope; an unexpected
// message is searched with a wanted one (which may hold wildcards).
inline bool Accepts(const PostedReceive& receive, const Envelope& arrived) {
  return Matches(receive.wanted, arrived);
}
inline bool Accepts(const UnexpectedMessage& message, const Envelope& wanted) {
  return Matches(wanted, message.arrived);
}

// The envelope that decides where an element is queued.
inline const Envelope& PlacementOf(const PostedReceive& receive) {
  return receive.wanted;
}
inline const Envelope& PlacementOf(const UnexpectedMessage& message) {
  return message.arrived;
}

// One sender in one context: the unit PNP and perpeer give queues to.
inline uint64_t SenderKey(const Envelope& envelope) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(envelope.context))
          << 32) |
         static_cast<uint32_t>(envelope.source);
}

template <typename T>
using Queue = IntrusiveList<T>;
// Every unexpected message in arrival order (see OrderLinks).
using ArrivalOrder =
    IntrusiveList<UnexpectedMessage, &UnexpectedMessage::arrival_order>;

inline constexpr uint64_t kNoBound = std::numeric_limits<uint64_t>::max();

// The first element of `queue` that `probe` accepts. Each queue holds its
// elements in stamping order, so once an element is stamped later than
// `bound` (the best candidate found in another queue) nothing further on can
// win and the search stops. Counts inspected elements into `traversals`.
template <typename T, auto kLinks>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline T* FindFirst(
    const IntrusiveList<T, kLinks>& queue, const Envelope& probe,
    uint64_t bound, uint64_t& traversals) {
  for (T* element = queue.front(); element != nullptr;
       element = queue.next(element)) {
    if (element->links.sequence > bound) return nullptr;
    ++traversals;
    if (Accepts(*element, probe)) return element;
  }
  return nullptr;
}

// The earlier-posted of `best` (or none) and the first receive in
// `wildcards` (ANY_SOURCE receives, in posting order) that accepts `probe`.
template <typename T>
T* EarlierOfWildcard(T* best, const Queue<T>& wildcards, const Envelope& probe,
                     uint64_t& traversals) {
  if (wildcards.empty()) return best;
  T* wildcard = FindFirst(wildcards, probe,
                          best ? best->links.sequence : kNoBound, traversals);
  return wildcard != nullptr ? wildcard : best;
}

// For structures with several queues: unexpected messages are also kept in
// arrival order, for MPI_ANY_SOURCE receives and probes and for teardown.
// Posted receives need no such list (an arrival never has a wildcard).
template <typename T>
class ArrivalIndex {
 public:
  void Add(T*) {}
  void Remove(T*) {}
  T* FindAny(const Envelope&, uint64_t&) const { return nullptr; }
  T* front() const { return nullptr; }
};

template <>
class ArrivalIndex<UnexpectedMessage> {
 public:
  void Add(UnexpectedMessage* message) { order_.PushBack(message); }
  void Remove(UnexpectedMessage* message) { order_.Remove(message); }
  UnexpectedMessage* FindAny(const Envelope& wanted,
                             uint64_t& traversals) const {
    return FindFirst(order_, wanted, kNoBound, traversals);
  }
  UnexpectedMessage* front() const { return order_.front(); }

 private:
  ArrivalOrder order_;
};

// The dedicated queues one structure may still create. A design (COL or
// PNP) may have k * sqrt(ranks) in all, half for its posted-receive
// structure and half for its unexpected-message one, so that neither can
// starve the other.
class QueueBudget {
 public:
  QueueBudget(int k, int ranks, int shares = 1)
      : limit_(static_cast<size_t>(
            k * std::sqrt(static_cast<double>(ranks < 1 ? 1 : ranks)) /
            shares)) {}
  size_t limit() const { return limit_; }
  size_t available() const { return limit_ - used_; }
  void Take(size_t queues) { used_ += queues; }
  void Give(size_t queues) { used_ -= queues; }

 private:
  size_t limit_;
  size_t used_ = 0;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_QUEUE_SEARCH_H_
