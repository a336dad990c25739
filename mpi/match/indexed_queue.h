// A queue of PNP (a shared level or a partner's queue): elements in stamping
// order, and, once the queue is long, an index from envelope (context,
// source, tag) to the elements that carry it.
//
// Why: PNP cuts a search down to the queues that may hold the sender, but
// within a queue a search for one tag still walked past every element of
// the sender's other tags, and of the other senders sharing the queue. At 8
// ranks, rank 0 draining 1,171 queued messages from each of 7 senders in an
// order of its own (the unexpected scenario of apps/bench/match_hotspot.c)
// inspected 598 elements per receive, a cache miss each; that search was
// most of rank 0's time end to end, and splitting by sender cannot cut it
// by more than the number of senders (at 64 ranks, 31 senders beyond the
// partner budget still shared queues). With the index, a search that names
// source and tag inspects the first element of one or two chains.
//
// The index costs a hash lookup per insertion and removal, so a queue only
// builds it when it reaches `index_from` elements (PNP's theta, the length
// at which PNP itself judges a queue long) and drops it when it empties:
// short queues pay one branch.
//
// Every element of a chain has the same envelope, so for a search that
// names source and tag the earliest match is the first element of that
// envelope's chain, or (posted receives only) of the same sender's
// MPI_ANY_TAG chain, whichever was stamped first. Chains are in stamping
// order because elements only join at the back. Searches with a wildcard
// walk the queue front to back, as before. An IndexedQueue never holds
// MPI_ANY_SOURCE receives (PNP keeps those in a list of their own).
//
// Owned by: mpi/match. Called by: PartnerQueues.
#ifndef MINIMPI_MPI_MATCH_INDEXED_QUEUE_H_
#define MINIMPI_MPI_MATCH_INDEXED_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "mpi/match/match_engine.h"
#include "mpi/match/queue_search.h"

namespace minimpi::match {

// Derives from the list so that the list an element names (its QueueLinks)
// leads to the IndexedQueue without touching another line of the element.
template <typename T>
class IndexedQueue : private Queue<T> {
 public:
  explicit IndexedQueue(size_t index_from)
      : index_from_(index_from < 1 ? 1 : index_from) {}
  // Elements point back at their queue: it must not move.
  IndexedQueue(const IndexedQueue&) = delete;
  IndexedQueue& operator=(const IndexedQueue&) = delete;

  // The IndexedQueue whose list is `list` (one that Queue<T>::Of returned
  // for an element of an IndexedQueue).
  static IndexedQueue* FromList(Queue<T>* list) {
    return static_cast<IndexedQueue*>(list);
  }

  // Short queues (the common case) take only the first branch of each
  // operation; the index work sits out of line.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void PushBack(T* element) {
    Queue<T>::PushBack(element);
    if (ABSL_PREDICT_FALSE(indexed_ || size() >= index_from_)) {
      IndexNewest(element);
    }
  }

  ABSL_ATTRIBUTE_ALWAYS_INLINE void Remove(T* element) {
    Queue<T>::Remove(element);
    if (ABSL_PREDICT_FALSE(indexed_)) Unindex(element);
  }

  // The earliest-stamped element that `probe` accepts, or nullptr.
  ABSL_ATTRIBUTE_ALWAYS_INLINE T* Find(const Envelope& probe,
                                       uint64_t& traversals) const {
    if (ABSL_PREDICT_TRUE(!indexed_) || probe.source == kAnySource ||
        probe.tag == kAnyTag) {
      return FindFirst(list(), probe, kNoBound, traversals);
    }
    return FindIndexed(probe, traversals);
  }

  using Queue<T>::front;
  using Queue<T>::next;
  using Queue<T>::size;
  using Queue<T>::empty;
  // Bytes of the index, for the engine's statistics.
  size_t index_bytes() const {
    return chains_.capacity() * (sizeof(Key) + sizeof(Chain));
  }

 private:
  using Key = std::pair<uint64_t, int32_t>;  // SenderKey, tag
  struct Chain {
    T* head = nullptr;
    T* tail = nullptr;
  };

  static Key KeyOf(const Envelope& envelope) {
    return {SenderKey(envelope), envelope.tag};
  }

  // `element` joined the back: chain it, or chain the whole queue if it just
  // became long.
  ABSL_ATTRIBUTE_NOINLINE void IndexNewest(T* element) {
    if (indexed_) {
      Link(element);
      return;
    }
    indexed_ = true;
    for (T* queued = front(); queued != nullptr; queued = next(queued)) {
      Link(queued);
    }
  }

  ABSL_ATTRIBUTE_NOINLINE void Unindex(T* element) {
    Unlink(element);
    if (empty()) {
      // Frees the table's memory once it has grown (absl's clear()).
      chains_.clear();
      indexed_ = false;
    }
  }

  ABSL_ATTRIBUTE_NOINLINE T* FindIndexed(const Envelope& probe,
                                         uint64_t& traversals) const {
    T* best = FirstInChain(KeyOf(probe), traversals);
    // Only posted receives carry MPI_ANY_TAG.
    if constexpr (std::is_same_v<T, PostedReceive>) {
      Envelope any_tag = probe;
      any_tag.tag = kAnyTag;
      T* any = FirstInChain(KeyOf(any_tag), traversals);
      if (any != nullptr &&
          (best == nullptr || any->links.sequence < best->links.sequence)) {
        best = any;
      }
    }
    return best;
  }

  void Link(T* element) {
    Chain& chain = chains_[KeyOf(PlacementOf(*element))];
    element->same_envelope.next = nullptr;
    if (chain.tail != nullptr) {
      chain.tail->same_envelope.next = element;
    } else {
      chain.head = element;
    }
    chain.tail = element;
  }

  // Chains are singly linked, which keeps elements small: a match is always
  // the head of its chain (an element with the same envelope stamped
  // earlier would have matched first), so only a cancelled receive walks.
  void Unlink(T* element) {
    auto it = chains_.find(KeyOf(PlacementOf(*element)));
    Chain& chain = it->second;
    T* following = static_cast<T*>(element->same_envelope.next);
    if (chain.head == element) {
      chain.head = following;
      if (following == nullptr) chains_.erase(it);
      return;
    }
    T* previous = chain.head;
    while (previous->same_envelope.next != element) {
      previous = static_cast<T*>(previous->same_envelope.next);
    }
    previous->same_envelope.next = following;
    if (following == nullptr) chain.tail = previous;
  }

  T* FirstInChain(const Key& key, uint64_t& traversals) const {
    auto it = chains_.find(key);
    if (it == chains_.end()) return nullptr;
    ++traversals;
    return it->second.head;
  }

  const Queue<T>& list() const { return *this; }

  const size_t index_from_;
  bool indexed_ = false;
  absl::flat_hash_map<Key, Chain> chains_;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_INDEXED_QUEUE_H_
