#include "mpi/coll/basic.h"

#include <cstring>
#include <vector>

namespace minimpi::coll {
namespace {

// Tags inside the collective context; user tags never reach this context.
constexpr int32_t kAllgatherTag = 1;
constexpr int32_t kBarrierTag = 2;

p2p::SendArguments CollectiveSend(const Communicator& comm, int peer,
                                  int32_t tag, const void* buffer,
                                  size_t bytes) {
  p2p::SendArguments send;
  send.buffer = buffer;
  send.bytes = bytes;
  send.destination_world_rank = comm.world_ranks[peer];
  send.remote_context = comm.remote_collective_context(peer);
  send.source_rank = comm.rank;
  send.tag = tag;
  send.vci = comm.vci;
  return send;
}

p2p::ReceiveArguments CollectiveReceive(const Communicator& comm, int peer,
                                        int32_t tag, void* buffer,
                                        size_t bytes,
                                        match::TrafficKind::Collective op) {
  p2p::ReceiveArguments receive;
  receive.buffer = buffer;
  receive.capacity = bytes;
  receive.context = comm.collective_context();
  receive.source = peer;
  receive.tag = tag;
  receive.vci = comm.vci;
  receive.kind = {op, static_cast<uint32_t>(bytes),
                  static_cast<uint32_t>(comm.size)};
  return receive;
}

void WaitAll(p2p::PointToPoint& p2p, std::vector<p2p::Request*>& requests,
             int vci) {
  p2p.WaitUntil(vci, [&] {
    for (p2p::Request* request : requests) {
      if (!p2p::PointToPoint::IsComplete(request)) return false;
    }
    return true;
  });
  for (p2p::Request* request : requests) p2p.Retire(request);
  requests.clear();
}

}  // namespace

void AllgatherBytes(p2p::PointToPoint& p2p, const Communicator& comm,
                    const void* contribution, size_t bytes, void* gathered) {
  auto* out = static_cast<std::byte*>(gathered);
  if (bytes > 0) std::memcpy(out + comm.rank * bytes, contribution, bytes);
  std::vector<p2p::Request*> requests;
  requests.reserve(2 * comm.size);
  for (int peer = 0; peer < comm.size; ++peer) {
    if (peer == comm.rank) continue;
    requests.push_back(p2p.Irecv(CollectiveReceive(
        comm, peer, kAllgatherTag, out + peer * bytes, bytes,
        match::TrafficKind::Collective::kAllgather)));
  }
  for (int step = 1; step < comm.size; ++step) {
    // Staggered order so every rank does not hit rank 0 first.
    int peer = (comm.rank + step) % comm.size;
    requests.push_back(p2p.Isend(
        CollectiveSend(comm, peer, kAllgatherTag, contribution, bytes)));
  }
  WaitAll(p2p, requests, comm.vci);
}

void Barrier(p2p::PointToPoint& p2p, const Communicator& comm) {
  std::vector<p2p::Request*> requests;
  for (int distance = 1; distance < comm.size; distance *= 2) {
    int to = (comm.rank + distance) % comm.size;
    int from = (comm.rank - distance + comm.size) % comm.size;
    requests.push_back(p2p.Irecv(CollectiveReceive(
        comm, from, kBarrierTag, nullptr, 0,
        match::TrafficKind::Collective::kBarrier)));
    requests.push_back(
        p2p.Isend(CollectiveSend(comm, to, kBarrierTag, nullptr, 0)));
    WaitAll(p2p, requests, comm.vci);
  }
}

}  // namespace minimpi::coll
