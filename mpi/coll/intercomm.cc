// Collectives on intercommunicators (MPI-4.1 6.2.2): data flows from one
// group to the other. Each is a schedule on the intercommunicator whose
// steps are messages to the remote group and, where a group must first
// combine or spread data among itself, whole collectives on the hidden
// intracommunicator over the local group (Communicator::local_group), run
// as nested steps with that collective's own algorithm choice.
//
//   barrier          local barrier; the two leaders (local rank 0) swap an
//                    empty message; local barrier again.
//   bcast            root -> remote leader; bcast in the receiving group.
//   gather(v)        every sender -> the root, directly.
//   scatter(v)       the root -> every receiver, directly.
//   allgather(v)     every process -> every remote process, directly.
//   alltoall(v)      the same, one block per remote process.
//   reduce           reduce in the sending group to its leader; leader ->
//                    root.
//   allreduce        each group reduces to its leader; the leaders swap the
//                    results; each group bcasts what it received.
//   reduce_scatter   as allreduce, then a scatterv of the remote group's
//   (_block)         reduction instead of a bcast.
//
// The direct exchanges send n x m messages; intercommunicator collectives
// are rare and usually small, and these schedules keep every message in the
// intercommunicator's collective context.
#include "mpi/coll/intercomm.h"

#include <cstdint>
#include <memory>

#include "mpi/coll/algorithms.h"

namespace minimpi::coll {
namespace {

size_t Bytes(int64_t count, size_t extent) {
  return static_cast<size_t>(count) * extent;
}

// The local group's own collective, built now (so its tag follows program
// order) and run later as a step.
std::unique_ptr<Schedule> Local(Collective collective, Communicator& comm,
                                const Arguments& arguments) {
  return Build(collective, *comm.local_group, arguments);
}

std::unique_ptr<Schedule> InterBarrier(Communicator& comm) {
  auto schedule = std::make_unique<Schedule>(comm, CollectiveKind::kBarrier, 0);
  schedule->Nested(Local(Collective::kBarrier, comm, Arguments{}));
  schedule->EndRound();
  if (comm.rank == 0) {
    schedule->Send(nullptr, 0, 0);
    schedule->Receive(nullptr, 0, 0);
  }
  schedule->EndRound();
  schedule->Nested(Local(Collective::kBarrier, comm, Arguments{}));
  return schedule;
}

std::unique_ptr<Schedule> InterBcast(Communicator& comm, const Arguments& a) {
  const size_t bytes = Bytes(a.count, a.extent);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kBcast, bytes);
  if (a.root == MPI_ROOT) {
    schedule->Send(a.receive_buffer, bytes, 0);
  } else if (a.root != MPI_PROC_NULL) {
    if (comm.rank == 0) schedule->Receive(a.receive_buffer, bytes, a.root);
    schedule->EndRound();
    Arguments local = a;
    local.root = 0;
    schedule->Nested(Local(Collective::kBcast, comm, local));
  }
  return schedule;
}

// Gather(v) and Scatter(v): the root talks to every remote process.
std::unique_ptr<Schedule> InterRooted(Collective collective, Communicator& comm,
                                      const Arguments& a) {
  const bool gather =
      collective == Collective::kGather || collective == Collective::kGatherv;
  const bool variable =
      collective == Collective::kGatherv || collective == Collective::kScatterv;
  const size_t own_bytes = gather ? Bytes(a.send_count, a.send_extent)
                                  : Bytes(a.receive_count, a.receive_extent);
  auto schedule = std::make_unique<Schedule>(
      comm, gather ? CollectiveKind::kGather : CollectiveKind::kScatter,
      own_bytes);
  if (a.root == MPI_ROOT) {
    const size_t extent = gather ? a.receive_extent : a.send_extent;
    const int64_t count = gather ? a.receive_count : a.send_count;
    const CountArray counts = gather ? a.receive_counts : a.send_counts;
    const CountArray displacements =
        gather ? a.receive_displacements : a.send_displacements;
    for (int peer = 0; peer < comm.peer_count(); ++peer) {
      const size_t offset =
          variable ? Bytes(displacements[peer], extent)
                   : Bytes(count, extent) * static_cast<size_t>(peer);
      const size_t bytes = Bytes(variable ? counts[peer] : count, extent);
      if (gather) {
        schedule->Receive(static_cast<std::byte*>(a.receive_buffer) + offset,
                          bytes, peer);
      } else {
        schedule->Send(static_cast<const std::byte*>(a.send_buffer) + offset,
                       bytes, peer);
      }
    }
  } else if (a.root != MPI_PROC_NULL) {
    if (gather) {
      schedule->Send(a.send_buffer, own_bytes, a.root);
    } else {
      schedule->Receive(a.receive_buffer, own_bytes, a.root);
    }
  }
  return schedule;
}

// Allgather(v), Alltoall(v): one message each way with every remote process.
std::unique_ptr<Schedule> InterAllToAll(Collective collective,
                                        Communicator& comm,
                                        const Arguments& a) {
  const bool alltoall = collective == Collective::kAlltoall ||
                        collective == Collective::kAlltoallv;
  const int n = comm.peer_count();
  auto schedule = std::make_unique<Schedule>(
      comm, alltoall ? CollectiveKind::kAlltoall : CollectiveKind::kAllgather,
      Bytes(a.send_count, a.send_extent) * (alltoall ? n : 1));
  const auto* send = static_cast<const std::byte*>(a.send_buffer);
  auto* receive = static_cast<std::byte*>(a.receive_buffer);
  for (int peer = 0; peer < n; ++peer) {
    size_t send_offset = 0;
    size_t send_bytes = Bytes(a.send_count, a.send_extent);
    if (collective == Collective::kAlltoall) {
      send_offset = send_bytes * static_cast<size_t>(peer);
    } else if (collective == Collective::kAlltoallv) {
      send_offset = Bytes(a.send_displacements[peer], a.send_extent);
      send_bytes = Bytes(a.send_counts[peer], a.send_extent);
    }
    size_t receive_offset;
    size_t receive_bytes;
    if (a.receive_counts != nullptr) {
      receive_offset = Bytes(a.receive_displacements[peer], a.receive_extent);
      receive_bytes = Bytes(a.receive_counts[peer], a.receive_extent);
    } else {
      receive_bytes = Bytes(a.receive_count, a.receive_extent);
      receive_offset = receive_bytes * static_cast<size_t>(peer);
    }
    schedule->Send(send + send_offset, send_bytes, peer);
    schedule->Receive(receive + receive_offset, receive_bytes, peer);
  }
  return schedule;
}

// Reduces the group's send buffers into a scratch area at local rank 0
// (nullptr elsewhere), as a nested local reduce of `count` items.
std::byte* ReduceToLeader(Schedule& schedule, Communicator& comm,
                          const Arguments& a, int64_t count) {
  std::byte* result =
      comm.rank == 0 ? schedule.Scratch(Bytes(count, a.extent)) : nullptr;
  Arguments local = a;
  local.root = 0;
  local.count = count;
  local.receive_buffer = result;
  schedule.Nested(Local(Collective::kReduce, comm, local));
  schedule.EndRound();
  return result;
}

std::unique_ptr<Schedule> InterReduce(Communicator& comm, const Arguments& a) {
  const size_t bytes = Bytes(a.count, a.extent);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kReduce, bytes);
  if (a.root == MPI_ROOT) {
    schedule->Receive(a.receive_buffer, bytes, 0);
  } else if (a.root != MPI_PROC_NULL) {
    std::byte* result = ReduceToLeader(*schedule, comm, a, a.count);
    if (comm.rank == 0) schedule->Send(result, bytes, a.root);
  }
  return schedule;
}

std::unique_ptr<Schedule> InterAllreduce(Communicator& comm,
                                         const Arguments& a) {
  const size_t bytes = Bytes(a.count, a.extent);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kAllreduce, bytes);
  std::byte* result = ReduceToLeader(*schedule, comm, a, a.count);
  if (comm.rank == 0) {
    schedule->Send(result, bytes, 0);
    schedule->Receive(a.receive_buffer, bytes, 0);
  }
  schedule->EndRound();
  Arguments spread = a;
  spread.root = 0;
  schedule->Nested(Local(Collective::kBcast, comm, spread));
  return schedule;
}

// Reduce_scatter(_block): the whole vector is reduced in each group, the
// leaders swap the reductions, and each group scatters the remote one by
// its own counts.
std::unique_ptr<Schedule> InterReduceScatter(Collective collective,
                                             Communicator& comm,
                                             const Arguments& a) {
  const int n = comm.size;
  auto schedule = std::make_unique<Schedule>(
      comm, CollectiveKind::kReduceScatter, Bytes(a.count, a.extent));
  auto* counts =
      reinterpret_cast<int64_t*>(schedule->Scratch(sizeof(int64_t) * n));
  auto* displacements =
      reinterpret_cast<int64_t*>(schedule->Scratch(sizeof(int64_t) * n));
  int64_t total = 0;
  for (int rank = 0; rank < n; ++rank) {
    counts[rank] = collective == Collective::kReduceScatter
                       ? a.receive_counts[rank]
                       : a.count;
    displacements[rank] = total;
    total += counts[rank];
  }
  const size_t bytes = Bytes(total, a.extent);
  std::byte* result = ReduceToLeader(*schedule, comm, a, total);
  std::byte* remote = comm.rank == 0 ? schedule->Scratch(bytes) : nullptr;
  if (comm.rank == 0) {
    schedule->Send(result, bytes, 0);
    schedule->Receive(remote, bytes, 0);
  }
  schedule->EndRound();
  Arguments scatter;
  scatter.root = 0;
  scatter.send_buffer = remote;
  scatter.send_counts = counts;
  scatter.send_displacements = displacements;
  scatter.send_type = a.type;
  scatter.send_extent = a.extent;
  scatter.receive_buffer = a.receive_buffer;
  scatter.receive_count = counts[comm.rank];
  scatter.receive_type = a.type;
  scatter.receive_extent = a.extent;
  schedule->Nested(Local(Collective::kScatterv, comm, scatter));
  return schedule;
}

}  // namespace

bool DefinedOnIntercommunicators(Collective collective) {
  return collective != Collective::kScan && collective != Collective::kExscan;
}

std::unique_ptr<Schedule> BuildIntercomm(Collective collective,
                                         Communicator& comm,
                                         const Arguments& arguments) {
  switch (collective) {
    case Collective::kBarrier:
      return InterBarrier(comm);
    case Collective::kBcast:
      return InterBcast(comm, arguments);
    case Collective::kGather:
    case Collective::kGatherv:
    case Collective::kScatter:
    case Collective::kScatterv:
      return InterRooted(collective, comm, arguments);
    case Collective::kAllgather:
    case Collective::kAllgatherv:
    case Collective::kAlltoall:
    case Collective::kAlltoallv:
      return InterAllToAll(collective, comm, arguments);
    case Collective::kReduce:
      return InterReduce(comm, arguments);
    case Collective::kAllreduce:
      return InterAllreduce(comm, arguments);
    case Collective::kReduceScatter:
    case Collective::kReduceScatterBlock:
      return InterReduceScatter(collective, comm, arguments);
    case Collective::kScan:
    case Collective::kExscan:
      break;
  }
  return nullptr;  // the bindings refuse these first
}

}  // namespace minimpi::coll
