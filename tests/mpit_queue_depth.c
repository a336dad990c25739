/* A program with queues of known depth, for watching it through MPI_T
 * (apps/mpit_trace's end-to-end test runs it under the tool; as a plain
 * multi-rank test it checks its own data).
 *
 * On a duplicate of MPI_COMM_WORLD (the second communicator the program
 * makes after MPI_COMM_WORLD itself: a split comes first), rank 1 sends
 * kMessages messages to rank 0, tags 0..kMessages-1, before a barrier; rank
 * 0 then probes for the last tag, which pulls every message into its
 * unexpected queue (depth kMessages, exactly), and receives them in reverse
 * tag order, so each receive searches that queue and removes one. Then rank
 * 1 sends rank 0 a partitioned message of kPartitions partitions,
 * kRounds times (kPartitions * kRounds partitions arrive at rank 0). Every
 * delivered byte is checked. Other ranks only take part in the
 * communicator calls and barriers.
 *
 * usage: mpit_queue_depth   (2 or more ranks) */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

enum {
  kMessages = 25,
  kInts = 4,
  kPartitions = 8,
  kPartitionInts = 16,
  kRounds = 3
};

static int Expected(int tag, int i) { return 1000 * tag + i; }

static void UnexpectedQueue(MPI_Comm comm, int rank) {
  /* Rank 0 must have finished MPI_Comm_dup before rank 1 sends: a tool
   * binds its event callbacks to comm once the constructor returns, and the
   * call may pull early arrivals into the queue before it does. */
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 1) {
    for (int tag = 0; tag < kMessages; ++tag) {
      int data[kInts];
      for (int i = 0; i < kInts; ++i) data[i] = Expected(tag, i);
      MPI_CHECK(MPI_Send(data, kInts, MPI_INT, 0, tag, comm));
    }
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) {
    MPI_Status status;
    MPI_CHECK(MPI_Probe(1, kMessages - 1, comm, &status));
    CHECK(status.MPI_TAG == kMessages - 1, "probe found tag %d, want %d",
          status.MPI_TAG, kMessages - 1);
    for (int tag = kMessages - 1; tag >= 0; --tag) {
      int data[kInts];
      memset(data, 0xff, sizeof data);
      MPI_CHECK(MPI_Recv(data, kInts, MPI_INT, 1, tag, comm, &status));
      CHECK(status.MPI_SOURCE == 1 && status.MPI_TAG == tag,
            "receive of tag %d got source %d tag %d", tag, status.MPI_SOURCE,
            status.MPI_TAG);
      for (int i = 0; i < kInts; ++i) {
        CHECK(data[i] == Expected(tag, i), "tag %d int %d: %d, want %d", tag, i,
              data[i], Expected(tag, i));
      }
    }
  }
}

static void PartitionedRound(MPI_Request* request, int* buffer, int rank,
                             int round) {
  if (rank == 0)
    memset(buffer, 0xff, kPartitions * kPartitionInts * sizeof *buffer);
  MPI_CHECK(MPI_Start(request));
  if (rank == 1) {
    for (int p = kPartitions - 1; p >= 0; --p) {
      for (int i = 0; i < kPartitionInts; ++i)
        buffer[p * kPartitionInts + i] = Expected(round * 100 + p, i);
      MPI_CHECK(MPI_Pready(p, *request));
    }
  }
  MPI_CHECK(MPI_Wait(request, MPI_STATUS_IGNORE));
  if (rank == 0) {
    for (int p = 0; p < kPartitions; ++p) {
      for (int i = 0; i < kPartitionInts; ++i) {
        int got = buffer[p * kPartitionInts + i];
        CHECK(got == Expected(round * 100 + p, i),
              "round %d partition %d int %d: %d, want %d", round, p, i, got,
              Expected(round * 100 + p, i));
      }
    }
  }
}

static void PartitionedRounds(MPI_Comm comm, int rank) {
  int buffer[kPartitions * kPartitionInts];
  MPI_Request request = MPI_REQUEST_NULL;
  if (rank == 1) {
    MPI_CHECK(MPI_Psend_init(buffer, kPartitions, kPartitionInts, MPI_INT, 0, 7,
                             comm, MPI_INFO_NULL, &request));
  } else if (rank == 0) {
    MPI_CHECK(MPI_Precv_init(buffer, kPartitions, kPartitionInts, MPI_INT, 1, 7,
                             comm, MPI_INFO_NULL, &request));
  }
  for (int round = 0; round < kRounds; ++round) {
    /* The other ranks only take part in the barrier, which is on
     * MPI_COMM_WORLD so that comm carries nothing but the test's own
     * messages (a collective's may be unexpected too). */
    if (rank <= 1) PartitionedRound(&request, buffer, rank, round);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  }
  if (rank <= 1) MPI_CHECK(MPI_Request_free(&request));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "needs 2 or more ranks, got %d", size);
  MPI_Comm halves, queue_comm;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves));
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &queue_comm));
  UnexpectedQueue(queue_comm, rank);
  PartitionedRounds(queue_comm, rank);
  MPI_CHECK(MPI_Comm_free(&queue_comm));
  MPI_CHECK(MPI_Comm_free(&halves));
  MPI_CHECK(MPI_Finalize());
  if (rank == 0)
    printf(
        "mpit_queue_depth: %d unexpected messages, %d partitions x %d rounds "
        "checked\n",
        kMessages, kPartitions, kRounds);
  return 0;
}
