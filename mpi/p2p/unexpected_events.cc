#include "mpi/p2p/unexpected_events.h"

#include <cstddef>

namespace minimpi::p2p {

std::atomic<tool::Event*> unexpected_enqueued_event{nullptr};
std::atomic<tool::Event*> unexpected_dequeued_event{nullptr};

void RaiseUnexpectedEvent(tool::Event& event, const match::MatchEngine& engine,
                          const UnexpectedRecord& record) {
  const match::ContextCounters* counters =
      engine.contexts().Find(record.arrived.context);
  if (counters == nullptr) return;
  const void* owner = counters->owner.load(std::memory_order_acquire);
  if (owner == nullptr) return;
  const UnexpectedEventPayload payload{
      .source = record.header.source,
      .tag = record.header.tag,
      .bytes = record.header.length,
      .queue_length = counters->unexpected.length.Read(),
      .collective = static_cast<int32_t>(record.traffic.collective),
  };
  event.Raise(owner, &payload);
}

namespace {

tool::Event* RegisterUnexpectedEvent(const char* name,
                                     const char* description) {
  tool::EventType type;
  type.name = name;
  type.description = description;
  type.category = "matching";
  type.verbosity = MPI_T_VERBOSITY_USER_DETAIL;
  type.binding = tool::Binding::kComm;
  type.elements = {
      {MPI_INT, offsetof(UnexpectedEventPayload, source), "source"},
      {MPI_INT, offsetof(UnexpectedEventPayload, tag), "tag"},
      {MPI_UNSIGNED_LONG_LONG, offsetof(UnexpectedEventPayload, bytes),
       "bytes"},
      {MPI_UNSIGNED_LONG_LONG, offsetof(UnexpectedEventPayload, queue_length),
       "queue_length"},
      {MPI_INT, offsetof(UnexpectedEventPayload, collective), "collective"},
  };
  type.payload_bytes = sizeof(UnexpectedEventPayload);
  return tool::RegisterEventType(std::move(type));
}

}  // namespace

void RegisterPointToPointToolEvents() {
  unexpected_enqueued_event.store(
      RegisterUnexpectedEvent(
          "unexp_message_enqueued",
          "A message arrived before any matching receive and joined the "
          "unexpected queue of its communicator. Payload: source (rank in "
          "the communicator), tag, bytes, queue_length (the queue's length "
          "after), collective (0: point-to-point, else the collective kind)."),
      std::memory_order_release);
  unexpected_dequeued_event.store(
      RegisterUnexpectedEvent(
          "unexp_message_dequeued",
          "A receive or matched probe took a message from its "
          "communicator's unexpected queue (or a cancelled send withdrew "
          "it). Payload as unexp_message_enqueued's, queue_length after "
          "the removal."),
      std::memory_order_release);
}

}  // namespace minimpi::p2p
