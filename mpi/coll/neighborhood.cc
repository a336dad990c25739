#include "mpi/coll/neighborhood.h"

#include <algorithm>

#include "mpi/datatype/layout.h"
#include "mpi/datatype/pack.h"

namespace minimpi::coll {
namespace {

// Where a block's bytes travel from (a send) or to (a receive), and how
// many there are: the block itself when its datatype is dense, else a
// packed copy in the schedule's scratch memory. A packed send block is
// filled now; a packed receive block is unpacked into the program's buffer
// when the schedule completes.
struct BlockSpan {
  std::byte* address;
  size_t bytes;
};

BlockSpan BlockAt(Schedule& schedule, const void* buffer,
                  const NeighborBlock& block, bool receive) {
  auto* at =
      static_cast<std::byte*>(const_cast<void*>(buffer)) + block.displacement;
  const int64_t bytes = int64_t{block.count} * block.type->size();
  if (block.type->dense()) return {at, static_cast<size_t>(bytes)};
  std::byte* packed = schedule.Scratch(static_cast<size_t>(bytes));
  if (!receive) {
    datatype::Pack(at, block.count, &block.type->layout(), 0, packed, bytes);
  } else {
    // The layout stays alive with the schedule, even if the program frees
    // its datatype while the collective runs.
    schedule.AtCompletion(
        [packed, bytes, at, count = block.count,
         layout = datatype::LayoutRef::Share(block.type->layout_pointer())] {
          datatype::Unpack(packed, bytes, at, count, layout.get(), 0);
        });
  }
  return {packed, static_cast<size_t>(bytes)};
}

}  // namespace

std::unique_ptr<Schedule> BuildNeighborExchange(
    Communicator& comm, CollectiveKind kind,
    const topo::NeighborLists& neighbors, const void* send_buffer,
    const std::vector<NeighborBlock>& send_blocks, void* receive_buffer,
    const std::vector<NeighborBlock>& receive_blocks) {
  // The hint carries the largest block: the size the matching engine sees.
  int64_t largest = 0;
  for (const NeighborBlock& block : receive_blocks) {
    largest = std::max(largest, int64_t{block.count} * block.type->size());
  }
  auto schedule =
      std::make_unique<Schedule>(comm, kind, static_cast<size_t>(largest));
  // One round. Receives first: arriving messages then find their receive
  // posted instead of waiting as unexpected ones.
  for (size_t i = 0; i < neighbors.sources.size(); ++i) {
    if (neighbors.sources[i] == MPI_PROC_NULL) continue;
    const BlockSpan span =
        BlockAt(*schedule, receive_buffer, receive_blocks[i], true);
    schedule->Receive(span.address, span.bytes, neighbors.sources[i]);
  }
  for (int i : neighbors.send_order) {
    if (neighbors.destinations[i] == MPI_PROC_NULL) continue;
    const BlockSpan span =
        BlockAt(*schedule, send_buffer, send_blocks[i], false);
    schedule->Send(span.address, span.bytes, neighbors.destinations[i]);
  }
  return schedule;
}

}  // namespace minimpi::coll
