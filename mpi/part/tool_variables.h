// What partitioned requests show a tool through MPI_T
// (mpi/tool/registry.h), bound to the request (MPI_T_BIND_MPI_REQUEST: the
// request behind an MPI_Request from MPI_Psend_init or MPI_Precv_init).
// Send side (0 on a receive):
//   part_rounds               COUNTER: rounds closed (a round closes when
//                             the next MPI_Start begins another, or at the
//                             free: its writes are known then)
//   part_writes               COUNTER: transport partitions written, over
//                             closed rounds
//   part_writes_last_round    LEVEL: those of the last closed round
//   part_partitions_per_write LEVEL (double): user partitions per write,
//                             over closed rounds
//   part_planned_delta        LEVEL (double seconds): the aggregator's wait
//                             in the plan in force (0 for schemes without)
//   part_measured_delta       TIMER (double seconds): the last MPI_Pready
//                             to the last write, summed over closed rounds
//   part_early_bird_bytes     COUNTER: bytes written before their round's
//                             last MPI_Pready
// (the last two are measured when the send is timed: MINIMPI_PART_STATS,
// MINIMPI_PART_PROFILE or an adaptive aggregator; MINIMPI_PART_STATS
// prints these same counters). Receive side (0 on a send):
//   part_partitions_arrived   COUNTER: user partitions arrived, all rounds
// Event partition_arrived (bound to the receive request): one per transport
// partition that completes on the receiver, with its index (the sender's
// first transport unit), the receiver's first and last user partition it
// filled, the round and its bytes.
//
// Owned by: mpi/part. Called by: mpi/bindings/tool_catalogue.cc; the
// arrival paths raise the event.
#ifndef MINIMPI_MPI_PART_TOOL_VARIABLES_H_
#define MINIMPI_MPI_PART_TOOL_VARIABLES_H_

#include <atomic>
#include <cstdint>

#include "mpi/tool/registry.h"

namespace minimpi::part {

void RegisterPartitionedToolVariables();

struct PartitionArrivedPayload {
  int64_t transport_partition;
  int64_t first_partition;
  int64_t last_partition;
  uint64_t round;
  uint64_t bytes;
};

// Null until the registration ran.
extern std::atomic<tool::Event*> partition_arrived_event;

}  // namespace minimpi::part

#endif  // MINIMPI_MPI_PART_TOOL_VARIABLES_H_
