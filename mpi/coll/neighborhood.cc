#include "mpi/coll/neighborhood.h"

#include <algorithm>

namespace minimpi::coll {

BlockSpan BlockAt(const void* buffer, const NeighborBlock& block) {
  auto* base = static_cast<std::byte*>(const_cast<void*>(buffer));
  return {base + block.displacement,
          static_cast<size_t>(block.count) * block.extent};
}

std::unique_ptr<Schedule> BuildNeighborExchange(
    Communicator& comm, CollectiveKind kind,
    const topo::NeighborLists& neighbors, const void* send_buffer,
    const std::vector<NeighborBlock>& send_blocks, void* receive_buffer,
    const std::vector<NeighborBlock>& receive_blocks) {
  // The hint carries the largest block: the size the matching engine sees.
  size_t largest = 0;
  for (const NeighborBlock& block : receive_blocks) {
    largest = std::max(largest, BlockAt(receive_buffer, block).bytes);
  }
  auto schedule = std::make_unique<Schedule>(comm, kind, largest);
  // One round: receives first, so a message from ourselves (a periodic
  // dimension of size 1) finds its receive posted.
  for (size_t i = 0; i < neighbors.sources.size(); ++i) {
    if (neighbors.sources[i] == MPI_PROC_NULL) continue;
    const BlockSpan span = BlockAt(receive_buffer, receive_blocks[i]);
    schedule->Receive(span.address, span.bytes, neighbors.sources[i]);
  }
  for (int i : neighbors.send_order) {
    if (neighbors.destinations[i] == MPI_PROC_NULL) continue;
    const BlockSpan span = BlockAt(send_buffer, send_blocks[i]);
    schedule->Send(span.address, span.bytes, neighbors.destinations[i]);
  }
  return schedule;
}

}  // namespace minimpi::coll
