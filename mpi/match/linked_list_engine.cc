#include "mpi/match/linked_list_engine.h"

namespace minimpi::match {

PostedReceive* LinkedListEngine::MatchArrival(const Envelope& arrived,
                                              const TrafficKind& /*kind*/) {
  for (PostedReceive* receive = posted_.front(); receive != nullptr;
       receive = posted_.next(receive)) {
    if (Matches(receive->wanted, arrived)) {
      posted_.Remove(receive);
      return receive;
    }
  }
  return nullptr;
}

void LinkedListEngine::AddUnexpected(UnexpectedMessage* message) {
  unexpected_.PushBack(message);
}

UnexpectedMessage* LinkedListEngine::MatchPosted(PostedReceive* receive) {
  if (UnexpectedMessage* message = Probe(receive->wanted)) {
    unexpected_.Remove(message);
    return message;
  }
  posted_.PushBack(receive);
  return nullptr;
}

UnexpectedMessage* LinkedListEngine::Probe(const Envelope& wanted) {
  for (UnexpectedMessage* message = unexpected_.front(); message != nullptr;
       message = unexpected_.next(message)) {
    if (Matches(wanted, message->arrived)) return message;
  }
  return nullptr;
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
