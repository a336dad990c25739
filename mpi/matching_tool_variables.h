// What the matching engines show a tool through MPI_T (mpi/tool/registry.h),
// for every engine (MINIMPI_MATCH). Per communicator (MPI_T_BIND_MPI_COMM;
// a communicator's point-to-point and collective contexts together, both
// matched on its VCI), and the same summed over the process under the name
// with "_process" appended (MPI_T_BIND_NO_OBJECT), for tools that do not
// know the program's communicators:
//   posted_recvq_length, unexpected_recvq_length            LEVEL
//   posted_recvq_length_hwm, unexpected_recvq_length_hwm    HIGHWATERMARK
//       (per communicator the higher of its two contexts' marks; per
//       process the most one VCI held for one kind of traffic)
//   posted_recvq_match_attempts, unexpected_recvq_match_attempts  COUNTER:
//       searches of the queue (an arrival searches the posted receives; a
//       receive or probe the unexpected messages)
//   posted_recvq_elements_searched, unexpected_recvq_elements_searched
//       COUNTER: elements those searches inspected
//   time_matching                  TIMER (double seconds), counted while a
//       handle on it is started or MINIMPI_MATCH_STATS is set
//   collective_messages_by_kind    COUNTER, 11 elements: messages arrived
//       per collective kind (barrier, bcast, reduce, allreduce, gather,
//       scatter, allgather, alltoall, reduce_scatter, scan, comm_create)
// and partner_promotions_process (COUNTER): senders PNP made partners.
// The events unexp_message_enqueued / _dequeued are mpi/p2p's
// (unexpected_events.h), registered from here too.
//
// Owned by: mpi/. Called by: mpi/bindings/tool_catalogue.cc.
#ifndef MINIMPI_MPI_MATCHING_TOOL_VARIABLES_H_
#define MINIMPI_MPI_MATCHING_TOOL_VARIABLES_H_

namespace minimpi {

void RegisterMatchingToolVariables();

}  // namespace minimpi

#endif  // MINIMPI_MPI_MATCHING_TOOL_VARIABLES_H_
