#include "mpi/match/linked_list_engine.h"

#include "mpi/match/search_stats.h"

namespace minimpi::match {

MatchStats LinkedListEngine::stats() const { return CountedStats(); }

PostedReceive* LinkedListEngine::MatchArrival(const Envelope& arrived,
                                              const TrafficKind& kind) {
  ContextCounters& counters = CountersFor(arrived.context, kind);
  counters.arrivals_by_kind[static_cast<int>(kind.collective)].Add();
  if (posted_.empty()) return RecordEmptySearch(counters.posted);
  PostedReceive* receive =
      RecordSearch(counters.posted, timed(), [&](uint64_t& traversals) {
        return FindFirst(posted_, arrived, kNoBound, traversals);
      });
  if (receive != nullptr) {
    posted_.Remove(receive);
    counters.posted.Dequeued();
  }
  return receive;
}

void LinkedListEngine::AddUnexpected(UnexpectedMessage* message) {
  unexpected_.PushBack(message);
  RecordQueued(
      CountersFor(message->arrived.context, message->traffic).unexpected,
      message->traffic, /*posted=*/false, unexpected_.size());
}

UnexpectedMessage* LinkedListEngine::MatchPosted(PostedReceive* receive) {
  ContextCounters& counters =
      CountersFor(receive->wanted.context, receive->traffic);
  if (UnexpectedMessage* message = ProbeIn(counters, receive->wanted)) {
    unexpected_.Remove(message);
    counters.unexpected.Dequeued();
    return message;
  }
  posted_.PushBack(receive);
  RecordQueued(counters.posted, receive->traffic, /*posted=*/true,
               posted_.size());
  return nullptr;
}

UnexpectedMessage* LinkedListEngine::Probe(const Envelope& wanted,
                                           const TrafficKind& kind) {
  return ProbeIn(CountersFor(wanted.context, kind), wanted);
}

UnexpectedMessage* LinkedListEngine::ProbeIn(ContextCounters& counters,
                                             const Envelope& wanted) {
  if (unexpected_.empty()) {
    return RecordEmptySearch<UnexpectedMessage>(counters.unexpected);
  }
  return RecordSearch(counters.unexpected, timed(), [&](uint64_t& traversals) {
    return FindFirst(unexpected_, wanted, kNoBound, traversals);
  });
}

void LinkedListEngine::RemoveUnexpected(UnexpectedMessage* message) {
  if (!message->links.queued) return;
  unexpected_.Remove(message);
  CountersFor(message->arrived.context, message->traffic).unexpected.Dequeued();
}

UnexpectedMessage* LinkedListEngine::PopAnyUnexpected() {
  UnexpectedMessage* message = unexpected_.front();
  if (message != nullptr) RemoveUnexpected(message);
  return message;
}

bool LinkedListEngine::CancelPosted(PostedReceive* receive) {
  if (!receive->links.queued) return false;
  posted_.Remove(receive);
  CountersFor(receive->wanted.context, receive->traffic).posted.Dequeued();
  return true;
}

}  // namespace minimpi::match
