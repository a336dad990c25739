// What the VCIs show a tool through MPI_T (mpi/tool/registry.h): per VCI,
// messages and payload bytes sent and messages received by link (self,
// shm, tcp, ib), posts the transport refused and messages the outbox
// queued, and the waiters' sleeps, wake-ups and time asleep; and the
// events waiter_slept and waiter_woke.
//
// Every variable is bound to no object and has one element per VCI this
// process may have: the communicators' VCIs first (Settings::num_vcis),
// then the endpoints' (Settings::endpoint_vcis), which read 0 until an
// endpoint first uses them. Element i is VCI i.
//
// Owned by: mpi/vci. Called by: mpi/bindings/tool_catalogue.cc (the
// registration), VciSet (which set the variables read) and its waits (the
// events).
#ifndef MINIMPI_MPI_VCI_TOOL_VARIABLES_H_
#define MINIMPI_MPI_VCI_TOOL_VARIABLES_H_

#include <atomic>
#include <cstdint>

#include "mpi/tool/registry.h"

namespace minimpi::vci {

class VciSet;

// Registers the variables and events above, once per process.
void RegisterVciToolVariables();

// The VCIs the variables read: the last VciSet made, until it is destroyed.
void ShowToTools(VciSet* vcis);
void StopShowingToTools(VciSet* vcis);

// The events a wait raises around a sleep on a VCI's doorbell; each costs
// one load and one relaxed load while no tool listens.
void RaiseWaiterSlept(int vci);
void RaiseWaiterWoke(int vci, int64_t slept_ns);

// Payloads, as MPI_T_event_read and MPI_T_event_copy hand them out.
struct WaiterSleptPayload {
  int32_t vci;
};
struct WaiterWokePayload {
  int32_t vci;
  int32_t unused = 0;
  uint64_t microseconds;  // how long the sleep lasted
};

}  // namespace minimpi::vci

#endif  // MINIMPI_MPI_VCI_TOOL_VARIABLES_H_
