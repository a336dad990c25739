// Allgather(v) and Alltoall(v): the collectives that move every rank's
// data to every rank without combining it.
//
//   allgather   recursive_doubling: log2 n exchanges of doubling groups of
//               blocks (other sizes: the extra ranks fold into partners
//               first and get the result back last). bruck: ceil(log2 n)
//               rounds on a scratch copy, then a rotation; any size. Both for
//               small messages. ring: n - 1 steps passing one block to the
//               right, bandwidth-optimal: large messages.
//   allgatherv  ring.
//   alltoall    pairwise: in round k send to rank + k, receive from rank - k;
//               each block crosses once: large blocks. bruck: ceil(log2 n)
//               rounds, each moving the blocks whose index has bit k set,
//               packed into one message: fewer, larger messages for small
//               blocks.
//   alltoallv   pairwise.
//
// Blocks are count * extent bytes (the predefined types are contiguous).
// Every receive is posted with the size this rank expects, so counts that
// disagree between ranks surface as MPI_ERR_TRUNCATE.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "mpi/coll/families.h"

namespace minimpi::coll {
namespace {

size_t Bytes(int64_t count, size_t extent) {
  return static_cast<size_t>(count) * extent;
}

// --- Allgather --------------------------------------------------------------

size_t AllgatherBlock(const Arguments& arguments) {
  return Bytes(arguments.receive_count, arguments.receive_extent);
}

// Puts this rank's contribution at its place in the receive buffer (with
// MPI_IN_PLACE it is there already).
void CopyOwnAllgatherBlock(Schedule& schedule, const Arguments& arguments,
                           std::byte* destination, size_t block) {
  if (arguments.in_place) return;
  schedule.Copy(
      arguments.send_buffer, destination,
      std::min(block, Bytes(arguments.send_count, arguments.send_extent)));
}

// Ring over blocks given by offset and size, shared by Allgather and
// Allgatherv. In step s a rank passes block (rank - s) to the right and takes
// block (rank - s - 1) from the left. Its own block leaves straight from the
// send buffer, so a sender whose block is larger than the receivers expect
// shows up as truncation.
std::unique_ptr<Schedule> RingOverBlocks(Communicator& comm,
                                         const Arguments& arguments,
                                         const std::vector<size_t>& offsets,
                                         const std::vector<size_t>& sizes) {
  const int n = comm.size;
  const int me = comm.rank;
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kAllgather, sizes[me]);
  auto* receive = static_cast<std::byte*>(arguments.receive_buffer);
  CopyOwnAllgatherBlock(*schedule, arguments, receive + offsets[me], sizes[me]);
  const int right = (me + 1) % n;
  const int left = (me - 1 + n) % n;
  for (int step = 0; step < n - 1; ++step) {
    const int outgoing = (me - step + n) % n;
    const int incoming = (me - step - 1 + n) % n;
    if (step == 0 && !arguments.in_place) {
      schedule->Send(arguments.send_buffer,
                     Bytes(arguments.send_count, arguments.send_extent), right);
    } else {
      schedule->Send(receive + offsets[outgoing], sizes[outgoing], right);
    }
    schedule->Receive(receive + offsets[incoming], sizes[incoming], left);
    schedule->EndRound();
  }
  return schedule;
}

std::unique_ptr<Schedule> RingAllgather(Communicator& comm,
                                        const Arguments& arguments) {
  const size_t block = AllgatherBlock(arguments);
  std::vector<size_t> offsets(comm.size), sizes(comm.size, block);
  for (int i = 0; i < comm.size; ++i) offsets[i] = i * block;
  return RingOverBlocks(comm, arguments, offsets, sizes);
}

std::unique_ptr<Schedule> RingAllgatherv(Communicator& comm,
                                         const Arguments& arguments) {
  std::vector<size_t> offsets(comm.size), sizes(comm.size);
  for (int i = 0; i < comm.size; ++i) {
    offsets[i] =
        Bytes(arguments.receive_displacements[i], arguments.receive_extent);
    sizes[i] = Bytes(arguments.receive_counts[i], arguments.receive_extent);
  }
  return RingOverBlocks(comm, arguments, offsets, sizes);
}

bool IsPowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

std::unique_ptr<Schedule> RecursiveDoublingAllgather(
    Communicator& comm, const Arguments& arguments) {
  const size_t block = AllgatherBlock(arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kAllgather, block);
  auto* receive = static_cast<std::byte*>(arguments.receive_buffer);
  const int n = comm.size;
  const int me = comm.rank;
  // Sizes that are not a power of two: the `extras` ranks p..n-1 hand their
  // block to partner rank - p before the exchanges and get the whole result
  // back after them; the p core ranks do the doubling, a core rank holding
  // its partner's block beside its own.
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int extras = n - p;
  CopyOwnAllgatherBlock(*schedule, arguments, receive + me * block, block);
  schedule->EndRound();
  if (me >= p) {
    schedule->Send(receive + me * block, block, me - p);
    schedule->EndRound();
    schedule->Receive(receive, n * block, me - p);
    return schedule;
  }
  if (me < extras) {
    schedule->Receive(receive + (p + me) * block, block, p + me);
    schedule->EndRound();
  }
  // Before the exchange at `distance`, a core rank holds the blocks of its
  // aligned group [mine, mine + distance) and of that group's extras
  // [p + mine, p + mine + distance) (where they exist); the partner holds
  // the neighbouring group's.
  auto extras_in = [&](int group, int distance) {
    return std::max(0, std::min(extras, group + distance) - group);
  };
  for (int distance = 1; distance < p; distance <<= 1) {
    const int partner = me ^ distance;
    const int mine = me & ~(distance - 1);
    const int theirs = partner & ~(distance - 1);
    schedule->Send(receive + mine * block, distance * block, partner);
    schedule->Receive(receive + theirs * block, distance * block, partner);
    if (int count = extras_in(mine, distance); count > 0) {
      schedule->Send(receive + (p + mine) * block, count * block, partner);
    }
    if (int count = extras_in(theirs, distance); count > 0) {
      schedule->Receive(receive + (p + theirs) * block, count * block, partner);
    }
    schedule->EndRound();
  }
  if (me < extras) schedule->Send(receive, n * block, p + me);
  return schedule;
}

std::unique_ptr<Schedule> BruckAllgather(Communicator& comm,
                                         const Arguments& arguments) {
  const size_t block = AllgatherBlock(arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kAllgather, block);
  const int n = comm.size;
  const int me = comm.rank;
  auto* receive = static_cast<std::byte*>(arguments.receive_buffer);
  // gathered[i] is the block of rank (me + i) % n; it starts with our own.
  std::byte* gathered = schedule->Scratch(n * block);
  if (arguments.in_place) {
    schedule->Copy(receive + me * block, gathered, block);
  } else {
    CopyOwnAllgatherBlock(*schedule, arguments, gathered, block);
  }
  schedule->EndRound();
  // After the round at `distance`, a rank holds 2 * distance blocks (or n):
  // it passes its first ones to rank - distance and appends rank + distance's.
  for (int distance = 1; distance < n; distance <<= 1) {
    const int count = std::min(distance, n - distance);
    schedule->Send(gathered, count * block, (me - distance + n) % n);
    schedule->Receive(gathered + distance * block, count * block,
                      (me + distance) % n);
    schedule->EndRound();
  }
  // Rotate: gathered[i] belongs at receive[(me + i) % n].
  const int before_wrap = n - me;
  schedule->Copy(gathered, receive + me * block, before_wrap * block);
  schedule->Copy(gathered + before_wrap * block, receive, me * block);
  return schedule;
}

const char* ChooseAllgather(const Communicator& comm,
                            const Arguments& arguments) {
  // log2 n rounds win while latency dominates; the ring moves each block
  // once per link and wins on bandwidth.
  const size_t total = AllgatherBlock(arguments) * comm.size;
  if (total >= (size_t{64} << 10)) return "ring";
  return IsPowerOfTwo(comm.size) ? "recursive_doubling" : "bruck";
}

const char* ChooseAllgatherv(const Communicator&, const Arguments&) {
  return "ring";
}

// --- Alltoall ---------------------------------------------------------------

// With MPI_IN_PLACE the data to send is in the receive buffer, which the
// receives overwrite: send from a copy taken first.
const std::byte* AlltoallSendBuffer(Schedule& schedule,
                                    const Arguments& arguments, size_t bytes) {
  if (!arguments.in_place) {
    return static_cast<const std::byte*>(arguments.send_buffer);
  }
  std::byte* copy = schedule.Scratch(bytes);
  schedule.Copy(arguments.receive_buffer, copy, bytes);
  schedule.EndRound();
  return copy;
}

std::unique_ptr<Schedule> PairwiseAlltoall(Communicator& comm,
                                           const Arguments& arguments) {
  const size_t receive_block =
      Bytes(arguments.receive_count, arguments.receive_extent);
  const size_t send_block =
      arguments.in_place ? receive_block
                         : Bytes(arguments.send_count, arguments.send_extent);
  auto schedule = std::make_unique<Schedule>(comm, CollectiveKind::kAlltoall,
                                             receive_block);
  const int n = comm.size;
  const int me = comm.rank;
  auto* receive = static_cast<std::byte*>(arguments.receive_buffer);
  const std::byte* send =
      AlltoallSendBuffer(*schedule, arguments, n * receive_block);
  if (!arguments.in_place) {
    schedule->Copy(send + me * send_block, receive + me * receive_block,
                   std::min(send_block, receive_block));
  }
  for (int k = 1; k < n; ++k) {
    const int to = (me + k) % n;
    const int from = (me - k + n) % n;
    schedule->Send(send + to * send_block, send_block, to);
    schedule->Receive(receive + from * receive_block, receive_block, from);
    schedule->EndRound();
  }
  return schedule;
}

std::unique_ptr<Schedule> BruckAlltoall(Communicator& comm,
                                        const Arguments& arguments) {
  const size_t block = Bytes(arguments.receive_count, arguments.receive_extent);
  const size_t send_block =
      arguments.in_place ? block
                         : Bytes(arguments.send_count, arguments.send_extent);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kAlltoall, block);
  const int n = comm.size;
  const int me = comm.rank;
  auto* receive = static_cast<std::byte*>(arguments.receive_buffer);
  const auto* send = arguments.in_place
                         ? receive
                         : static_cast<const std::byte*>(arguments.send_buffer);

  // Rotate up by `me`: held[i] is the block bound for rank (me + i) % n.
  // (In place this reads the receive buffer before anything overwrites it.)
  std::byte* held = schedule->Scratch(n * block);
  const size_t copied = std::min(block, send_block);
  for (int i = 0; i < n; ++i) {
    schedule->Copy(send + ((me + i) % n) * send_block, held + i * block,
                   copied);
  }
  schedule->EndRound();

  // In the round at `distance`, every block whose index has that bit set
  // travels `distance` ranks on; after all rounds block i has travelled i
  // ranks and sits at its destination, still at index i.
  std::byte* outgoing = schedule->Scratch((n / 2 + 1) * block);
  std::byte* incoming = schedule->Scratch((n / 2 + 1) * block);
  for (int distance = 1; distance < n; distance <<= 1) {
    int packed = 0;
    for (int i = distance; i < n; ++i) {
      if (i & distance) {
        schedule->Copy(held + i * block, outgoing + packed * block, block);
        ++packed;
      }
    }
    schedule->EndRound();
    schedule->Send(outgoing, packed * block, (me + distance) % n);
    schedule->Receive(incoming, packed * block, (me - distance + n) % n);
    schedule->EndRound();
    packed = 0;
    for (int i = distance; i < n; ++i) {
      if (i & distance) {
        schedule->Copy(incoming + packed * block, held + i * block, block);
        ++packed;
      }
    }
    schedule->EndRound();
  }

  // Inverse rotation: held[i] came from rank (me - i) % n.
  for (int i = 0; i < n; ++i) {
    schedule->Copy(held + i * block, receive + ((me - i + n) % n) * block,
                   block);
  }
  return schedule;
}

std::unique_ptr<Schedule> PairwiseAlltoallv(Communicator& comm,
                                            const Arguments& arguments) {
  const int n = comm.size;
  const int me = comm.rank;
  const size_t receive_extent = arguments.receive_extent;
  auto* receive = static_cast<std::byte*>(arguments.receive_buffer);
  auto receive_at = [&](int peer) {
    return receive +
           Bytes(arguments.receive_displacements[peer], receive_extent);
  };
  auto receive_bytes = [&](int peer) {
    return Bytes(arguments.receive_counts[peer], receive_extent);
  };
  auto schedule = std::make_unique<Schedule>(comm, CollectiveKind::kAlltoall,
                                             receive_bytes(me));

  // Where each outgoing block lies and how big it is. In place the blocks
  // are the receive layout, copied to scratch (packed) before any receive.
  std::vector<const std::byte*> send_at(n);
  std::vector<size_t> send_bytes(n);
  if (arguments.in_place) {
    size_t total = 0;
    for (int peer = 0; peer < n; ++peer) total += receive_bytes(peer);
    std::byte* copy = schedule->Scratch(total);
    size_t offset = 0;
    for (int peer = 0; peer < n; ++peer) {
      schedule->Copy(receive_at(peer), copy + offset, receive_bytes(peer));
      send_at[peer] = copy + offset;
      send_bytes[peer] = receive_bytes(peer);
      offset += receive_bytes(peer);
    }
    schedule->EndRound();
  } else {
    const auto* send = static_cast<const std::byte*>(arguments.send_buffer);
    for (int peer = 0; peer < n; ++peer) {
      send_at[peer] = send + Bytes(arguments.send_displacements[peer],
                                   arguments.send_extent);
      send_bytes[peer] =
          Bytes(arguments.send_counts[peer], arguments.send_extent);
    }
    schedule->Copy(send_at[me], receive_at(me),
                   std::min(send_bytes[me], receive_bytes(me)));
  }
  for (int k = 1; k < n; ++k) {
    const int to = (me + k) % n;
    const int from = (me - k + n) % n;
    schedule->Send(send_at[to], send_bytes[to], to);
    schedule->Receive(receive_at(from), receive_bytes(from), from);
    schedule->EndRound();
  }
  return schedule;
}

const char* ChooseAlltoall(const Communicator& comm,
                           const Arguments& arguments) {
  // Bruck sends ceil(log2 n) messages instead of n - 1 but moves each block
  // about log2(n) / 2 times: a gain only while blocks are small.
  const size_t block = Bytes(arguments.receive_count, arguments.receive_extent);
  return comm.size >= 4 && block <= 256 ? "bruck" : "pairwise";
}

const char* ChooseAlltoallv(const Communicator&, const Arguments&) {
  return "pairwise";
}

}  // namespace

void AddAllgatherAlltoall(std::vector<CollectiveAlgorithms>& registry) {
  registry.push_back(
      {Collective::kAllgather,
       "allgather",
       {{"recursive_doubling",
         "log2 n exchanges of doubling groups (extra ranks fold in first)",
         RecursiveDoublingAllgather},
        {"ring", "n - 1 steps passing one block to the right (large)",
         RingAllgather},
        {"bruck",
         "ceil(log2 n) rounds on a scratch copy, then a rotation (small)",
         BruckAllgather}},
       ChooseAllgather});
  registry.push_back(
      {Collective::kAllgatherv,
       "allgatherv",
       {{"ring", "n - 1 steps passing one block to the right", RingAllgatherv}},
       ChooseAllgatherv});
  registry.push_back(
      {Collective::kAlltoall,
       "alltoall",
       {{"pairwise",
         "n - 1 rounds: send to rank + k, receive from rank - k (large)",
         PairwiseAlltoall},
        {"bruck",
         "ceil(log2 n) rounds of packed blocks with index bit k set (small)",
         BruckAlltoall}},
       ChooseAlltoall});
  registry.push_back(
      {Collective::kAlltoallv,
       "alltoallv",
       {{"pairwise", "n - 1 rounds: send to rank + k, receive from rank - k",
         PairwiseAlltoallv}},
       ChooseAlltoallv});
}

}  // namespace minimpi::coll
