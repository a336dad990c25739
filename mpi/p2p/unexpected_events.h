// The MPI_T events of the unexpected-message queue (MPICH's names):
// unexp_message_enqueued when an arriving message finds no receive and is
// kept, unexp_message_dequeued when a receive or a matched probe takes it
// (or a cancelled send withdraws it). Bound to the communicator (the owner
// mpi/ names for the message's context, PointToPoint::SetContextOwner);
// messages of a context without one (hidden communicators) raise nothing.
//
// Payload (UnexpectedEventPayload): source (the sender's rank in the
// communicator), tag, bytes (the whole message), queue_length (the
// context's unexpected messages after the change) and collective (0 for
// point-to-point traffic, else the collective kind, 1 = barrier ... as in
// match::TrafficKind::Collective).
//
// Cost when no tool listens: one load of the event and one relaxed load of
// its listener count.
//
// Owned by: mpi/p2p. Called by: the places p2p queues or takes an
// unexpected message; the registration by mpi/bindings/tool_catalogue.cc.
#ifndef MINIMPI_MPI_P2P_UNEXPECTED_EVENTS_H_
#define MINIMPI_MPI_P2P_UNEXPECTED_EVENTS_H_

#include <atomic>
#include <cstdint>

#include "mpi/match/match_engine.h"
#include "mpi/p2p/point_to_point.h"
#include "mpi/tool/registry.h"

namespace minimpi::p2p {

struct UnexpectedEventPayload {
  int32_t source;
  int32_t tag;
  uint64_t bytes;
  uint64_t queue_length;
  int32_t collective;
};

// Null until RegisterPointToPointToolEvents ran.
extern std::atomic<tool::Event*> unexpected_enqueued_event;
extern std::atomic<tool::Event*> unexpected_dequeued_event;

void RaiseUnexpectedEvent(tool::Event& event, const match::MatchEngine& engine,
                          const UnexpectedRecord& record);

// After the engine queued (or gave up) `record`. Caller holds the VCI's
// lock.
inline void NoteUnexpected(const std::atomic<tool::Event*>& slot,
                           const match::MatchEngine& engine,
                           const UnexpectedRecord& record) {
  tool::Event* event = slot.load(std::memory_order_acquire);
  if (event == nullptr || !event->active()) [[likely]]
    return;
  RaiseUnexpectedEvent(*event, engine, record);
}

}  // namespace minimpi::p2p

#endif  // MINIMPI_MPI_P2P_UNEXPECTED_EVENTS_H_
