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

void AllgathervBytes(p2p::PointToPoint& p2p, Communicator& comm,
                     const void* contribution,
                     const std::vector<size_t>& counts, void* gathered) {
  std::vector<size_t> offsets(comm.size + 1, 0);
  for (int i = 0; i < comm.size; ++i) offsets[i + 1] = offsets[i] + counts[i];
  auto schedule = std::make_unique<Schedule>(comm, CollectiveKind::kCommCreate,
                                             counts[comm.rank]);
  auto* out = static_cast<std::byte*>(gathered);
  schedule->Copy(contribution, out + offsets[comm.rank], counts[comm.rank]);
  for (int step = 1; step < comm.size; ++step) {
    const int to = (comm.rank + step) % comm.size;
    const int from = (comm.rank - step + comm.size) % comm.size;
    schedule->Receive(out + offsets[from], counts[from], from);
    schedule->Send(contribution, counts[comm.rank], to);
  }
  Schedule::Run(std::move(schedule), p2p);
}

int32_t GroupExchangeTag(int tag) {
  // [0, 2^30) -> [2^30, 2^31); [2^30, 2^31) -> [-2^30 - 1, -2].
  constexpr int32_t kHalf = int32_t{1} << 30;
  return tag < kHalf ? tag + kHalf : -2 - (tag - kHalf);
}

void AllgatherBytesAmong(p2p::PointToPoint& p2p, Communicator& comm,
                         const std::vector<int>& members, int my_index,
                         int32_t tag, const void* contribution, size_t bytes,
                         void* gathered) {
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kCommCreate, bytes, tag);
  auto* out = static_cast<std::byte*>(gathered);
  const int n = static_cast<int>(members.size());
  schedule->Copy(contribution, out + my_index * bytes, bytes);
  for (int step = 1; step < n; ++step) {
    const int to = (my_index + step) % n;
    const int from = (my_index - step + n) % n;
    schedule->Receive(out + from * bytes, bytes, members[from]);
    schedule->Send(contribution, bytes, members[to]);
  }
  Schedule::Run(std::move(schedule), p2p);
}

p2p::Request* StartAllgatherBytes(p2p::PointToPoint& p2p, Communicator& comm,
                                  const void* contribution, size_t bytes,
                                  void* gathered,
                                  std::function<void()> on_complete) {
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kCommCreate, bytes);
  auto* out = static_cast<std::byte*>(gathered);
  schedule->Copy(contribution, out + comm.rank * bytes, bytes);
  for (int step = 1; step < comm.size; ++step) {
    const int to = (comm.rank + step) % comm.size;
    const int from = (comm.rank - step + comm.size) % comm.size;
    schedule->Receive(out + from * bytes, bytes, from);
    schedule->Send(contribution, bytes, to);
  }
  schedule->AtCompletion(std::move(on_complete));
  return schedule.release()->Start(p2p);
}

}  // namespace minimpi::coll
