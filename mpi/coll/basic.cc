#include "mpi/coll/basic.h"

#include <memory>

#include "mpi/coll/schedule.h"

namespace minimpi::coll {

void AllgatherBytes(p2p::PointToPoint& p2p, Communicator& comm,
                    const void* contribution, size_t bytes, void* gathered) {
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kCommCreate, bytes);
  auto* out = static_cast<std::byte*>(gathered);
  schedule->Copy(contribution, out + comm.rank * bytes, bytes);
  // One round: every pair exchanges directly. Communicator creation is rare
  // and the data tiny; staggered peers keep rank 0 from being hit first.
  for (int step = 1; step < comm.size; ++step) {
    int to = (comm.rank + step) % comm.size;
    int from = (comm.rank - step + comm.size) % comm.size;
    schedule->Receive(out + from * bytes, bytes, from);
    schedule->Send(contribution, bytes, to);
  }
  Schedule::Run(std::move(schedule), p2p);
}

void Barrier(p2p::PointToPoint& p2p, Communicator& comm) {
  auto schedule = std::make_unique<Schedule>(comm, CollectiveKind::kBarrier, 0);
  for (int distance = 1; distance < comm.size; distance *= 2) {
    schedule->Send(nullptr, 0, (comm.rank + distance) % comm.size);
    schedule->Receive(nullptr, 0,
                      (comm.rank - distance + comm.size) % comm.size);
    schedule->EndRound();
  }
  Schedule::Run(std::move(schedule), p2p);
}

}  // namespace minimpi::coll
