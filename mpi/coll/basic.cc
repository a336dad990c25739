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

vci::Request* StartAllgatherBytes(p2p::PointToPoint& p2p, Communicator& comm,
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

void BcastBytes(p2p::PointToPoint& p2p, Communicator& comm, void* buffer,
                size_t bytes, int root) {
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kBcast, bytes);
  const int n = comm.size;
  const int me = (comm.rank - root + n) % n;
  // The parent is me with its lowest set bit cleared; children are me plus
  // each power of two below that bit.
  int mask = 1;
  while (mask < n && (me & mask) == 0) mask <<= 1;
  if (me != 0) {
    schedule->Receive(buffer, bytes, (me - mask + root) % n);
    schedule->EndRound();
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (me + mask < n) schedule->Send(buffer, bytes, (me + mask + root) % n);
  }
  Schedule::Run(std::move(schedule), p2p);
}

std::vector<std::byte> ExchangeBytes(p2p::PointToPoint& p2p, Communicator& comm,
                                     int peer, int32_t tag, const void* data,
                                     size_t bytes) {
  // The lengths first, then the strings: two rounds of one schedule each.
  uint64_t my_length = bytes, peer_length = 0;
  auto lengths = std::make_unique<Schedule>(comm, CollectiveKind::kCommCreate,
                                            sizeof(uint64_t), tag);
  lengths->Send(&my_length, sizeof(my_length), peer);
  lengths->Receive(&peer_length, sizeof(peer_length), peer);
  Schedule::Run(std::move(lengths), p2p);
  std::vector<std::byte> received(peer_length);
  auto strings =
      std::make_unique<Schedule>(comm, CollectiveKind::kCommCreate, bytes, tag);
  strings->Send(data, bytes, peer);
  strings->Receive(received.data(), received.size(), peer);
  Schedule::Run(std::move(strings), p2p);
  return received;
}

}  // namespace minimpi::coll
