#include "mpi/match/linked_list_engine.h"

#include "mpi/match/search_stats.h"

namespace minimpi::match {

MatchStats LinkedListEngine::stats() const {
  MatchStats stats = stats_;
  if (timed_) TicksToNanoseconds(stats);
  return stats;
}

PostedReceive* LinkedListEngine::MatchArrival(const Envelope& arrived,
                                              const TrafficKind& kind) {
  if (posted_.empty()) return RecordEmptySearch(StatsFor(kind).posted);
  PostedReceive* receive =
      RecordSearch(StatsFor(kind).posted, timed_, [&](uint64_t& traversals) {
        return FindFirst(posted_, arrived, kNoBound, traversals);
      });
  if (receive != nullptr) posted_.Remove(receive);
  return receive;
}

void LinkedListEngine::AddUnexpected(UnexpectedMessage* message) {
  unexpected_.PushBack(message);
  RecordInsert(StatsFor(message->traffic).unexpected, unexpected_.size());
}

UnexpectedMessage* LinkedListEngine::MatchPosted(PostedReceive* receive) {
  if (UnexpectedMessage* message = Probe(receive->wanted, receive->traffic)) {
    unexpected_.Remove(message);
    return message;
  }
  posted_.PushBack(receive);
  RecordInsert(StatsFor(receive->traffic).posted, posted_.size());
  return nullptr;
}

UnexpectedMessage* LinkedListEngine::Probe(const Envelope& wanted,
                                           const TrafficKind& kind) {
  if (unexpected_.empty()) {
    return RecordEmptySearch<UnexpectedMessage>(StatsFor(kind).unexpected);
  }
  return RecordSearch(
      StatsFor(kind).unexpected, timed_, [&](uint64_t& traversals) {
        return FindFirst(unexpected_, wanted, kNoBound, traversals);
      });
}

void LinkedListEngine::RemoveUnexpected(UnexpectedMessage* message) {
  if (message->links.queued) unexpected_.Remove(message);
}

UnexpectedMessage* LinkedListEngine::PopAnyUnexpected() {
  UnexpectedMessage* message = unexpected_.front();
  if (message != nullptr) unexpected_.Remove(message);
  return message;
}

bool LinkedListEngine::CancelPosted(PostedReceive* receive) {
  if (!receive->links.queued) return false;
  posted_.Remove(receive);
  return true;
}

}  // namespace minimpi::match
