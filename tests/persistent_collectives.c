/* Persistent collectives (MPI-4.0 section 6.13): every _init form, started
 * several times with the data changed between starts, checked item by item
 * against a reference computed here; several started at once with
 * MPI_Startall; starts interleaved with blocking and nonblocking
 * collectives on the same communicator; waits and tests on inactive
 * requests (MPI-4.1 section 3.7.3: they return at once with an empty
 * status); MPI_Request_get_status; MPI_Request_free after completion; a
 * derived datatype that is not dense; an intercommunicator. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { kStarts = 4, kMaxRanks = 16 };

static int g_rank, g_size;

static void start_and_wait(MPI_Request* request) {
  MPI_CHECK(MPI_Start(request));
  MPI_CHECK(MPI_Wait(request, MPI_STATUS_IGNORE));
  CHECK(*request != MPI_REQUEST_NULL,
        "a persistent request's handle survives its wait");
}

/* The value rank `rank` contributes as item `item` in start `start`. */
static int value(int rank, int item, int start) {
  return 1000 * start + 10 * rank + item;
}

/* Waiting on or testing an inactive persistent request returns at once with
 * an empty status. */
static void check_inactive(MPI_Request* request, const char* what) {
  MPI_Status status;
  memset(&status, 0x5a, sizeof status);
  MPI_CHECK(MPI_Wait(request, &status));
  CHECK(status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG,
        "%s: wait on an inactive request gave source %d tag %d", what,
        status.MPI_SOURCE, status.MPI_TAG);
  int count = -1;
  MPI_CHECK(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == 0, "%s: an inactive request's status counts %d items", what,
        count);
  int flag = 0;
  MPI_CHECK(MPI_Test(request, &flag, MPI_STATUS_IGNORE));
  CHECK(flag, "%s: test on an inactive request says not done", what);
  flag = 0;
  MPI_CHECK(MPI_Request_get_status(*request, &flag, MPI_STATUS_IGNORE));
  CHECK(flag, "%s: get_status on an inactive request says not done", what);
  CHECK(*request != MPI_REQUEST_NULL, "%s: inactive request lost its handle",
        what);
}

static void free_request(MPI_Request* request) {
  MPI_CHECK(MPI_Request_free(request));
  CHECK(*request == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
}

static void test_barrier_bcast(MPI_Comm comm) {
  MPI_Request barrier, bcast;
  int buffer[5];
  const int root = g_size - 1;
  MPI_CHECK(MPI_Barrier_init(comm, MPI_INFO_NULL, &barrier));
  MPI_CHECK(
      MPI_Bcast_init(buffer, 5, MPI_INT, root, comm, MPI_INFO_NULL, &bcast));
  check_inactive(&bcast, "bcast before its first start");
  for (int start = 0; start < kStarts; ++start) {
    start_and_wait(&barrier);
    for (int i = 0; i < 5; ++i)
      buffer[i] = g_rank == root ? value(root, i, start) : -1;
    start_and_wait(&bcast);
    for (int i = 0; i < 5; ++i)
      CHECK(buffer[i] == value(root, i, start), "bcast start %d item %d is %d",
            start, i, buffer[i]);
    check_inactive(&bcast, "bcast after a wait");
  }
  free_request(&barrier);
  free_request(&bcast);
}

static void test_reductions(MPI_Comm comm) {
  enum { kCount = 3 };
  int send[kMaxRanks * kCount], receive[kMaxRanks * kCount], in_place[kCount];
  MPI_Request reduce, allreduce, allreduce_in_place, scan, exscan,
      reduce_scatter, reduce_scatter_block;
  int counts[kMaxRanks];
  int total = 0;
  for (int r = 0; r < g_size; ++r) total += counts[r] = r + 1;
  MPI_CHECK(MPI_Reduce_init(send, receive, kCount, MPI_INT, MPI_SUM, 0, comm,
                            MPI_INFO_NULL, &reduce));
  MPI_CHECK(MPI_Allreduce_init(send, receive, kCount, MPI_INT, MPI_MAX, comm,
                               MPI_INFO_NULL, &allreduce));
  MPI_CHECK(MPI_Allreduce_init(MPI_IN_PLACE, in_place, kCount, MPI_INT, MPI_SUM,
                               comm, MPI_INFO_NULL, &allreduce_in_place));
  MPI_CHECK(MPI_Scan_init(send, receive, kCount, MPI_INT, MPI_SUM, comm,
                          MPI_INFO_NULL, &scan));
  MPI_CHECK(MPI_Exscan_init(send, receive, kCount, MPI_INT, MPI_SUM, comm,
                            MPI_INFO_NULL, &exscan));
  MPI_CHECK(MPI_Reduce_scatter_init(send, receive, counts, MPI_INT, MPI_SUM,
                                    comm, MPI_INFO_NULL, &reduce_scatter));
  MPI_CHECK(MPI_Reduce_scatter_block_init(send, receive, kCount, MPI_INT,
                                          MPI_SUM, comm, MPI_INFO_NULL,
                                          &reduce_scatter_block));
  for (int start = 0; start < kStarts; ++start) {
    for (int i = 0; i < kCount; ++i) send[i] = value(g_rank, i, start);
    memset(receive, 0, sizeof receive);
    start_and_wait(&reduce);
    if (g_rank == 0) {
      for (int i = 0; i < kCount; ++i) {
        int expected = 0;
        for (int r = 0; r < g_size; ++r) expected += value(r, i, start);
        CHECK(receive[i] == expected,
              "reduce start %d item %d is %d, expected %d", start, i,
              receive[i], expected);
      }
    }
    start_and_wait(&allreduce);
    for (int i = 0; i < kCount; ++i)
      CHECK(receive[i] == value(g_size - 1, i, start),
            "allreduce(max) start %d item %d is %d", start, i, receive[i]);
    for (int i = 0; i < kCount; ++i) in_place[i] = value(g_rank, i, start);
    start_and_wait(&allreduce_in_place);
    for (int i = 0; i < kCount; ++i) {
      int expected = 0;
      for (int r = 0; r < g_size; ++r) expected += value(r, i, start);
      CHECK(in_place[i] == expected,
            "in-place allreduce start %d item %d is %d, expected %d", start, i,
            in_place[i], expected);
    }
    start_and_wait(&scan);
    for (int i = 0; i < kCount; ++i) {
      int expected = 0;
      for (int r = 0; r <= g_rank; ++r) expected += value(r, i, start);
      CHECK(receive[i] == expected, "scan start %d item %d is %d, expected %d",
            start, i, receive[i], expected);
    }
    memset(receive, 0x7f, sizeof receive);
    start_and_wait(&exscan);
    for (int i = 0; i < kCount && g_rank > 0; ++i) {
      int expected = 0;
      for (int r = 0; r < g_rank; ++r) expected += value(r, i, start);
      CHECK(receive[i] == expected,
            "exscan start %d item %d is %d, expected %d", start, i, receive[i],
            expected);
    }
    /* Reduce_scatter: the vector has `total` items; rank r gets counts[r]. */
    for (int i = 0; i < total; ++i) send[i] = value(g_rank, i, start);
    start_and_wait(&reduce_scatter);
    int offset = 0;
    for (int r = 0; r < g_rank; ++r) offset += counts[r];
    for (int i = 0; i < counts[g_rank]; ++i) {
      int expected = 0;
      for (int r = 0; r < g_size; ++r) expected += value(r, offset + i, start);
      CHECK(receive[i] == expected,
            "reduce_scatter start %d item %d is %d, expected %d", start, i,
            receive[i], expected);
    }
    for (int i = 0; i < kCount * g_size; ++i)
      send[i] = value(g_rank, i, start) * 2;
    start_and_wait(&reduce_scatter_block);
    for (int i = 0; i < kCount; ++i) {
      int expected = 0;
      for (int r = 0; r < g_size; ++r)
        expected += 2 * value(r, g_rank * kCount + i, start);
      CHECK(receive[i] == expected,
            "reduce_scatter_block start %d item %d is %d, expected %d", start,
            i, receive[i], expected);
    }
  }
  MPI_Request all[] = {reduce, allreduce,      allreduce_in_place,  scan,
                       exscan, reduce_scatter, reduce_scatter_block};
  for (int i = 0; i < 7; ++i) free_request(&all[i]);
}

static void test_gather_scatter(MPI_Comm comm) {
  enum { kBlock = 2 };
  int send[kMaxRanks * kMaxRanks], receive[kMaxRanks * kMaxRanks];
  int counts[kMaxRanks], displs[kMaxRanks];
  const int root = g_size / 2;
  int total = 0;
  for (int r = 0; r < g_size; ++r) {
    counts[r] = r + 1;
    displs[r] = total + r; /* a gap of r items before each block */
    total = displs[r] + counts[r];
  }
  MPI_Request gather, gatherv, scatter, scatterv, allgather, allgatherv;
  MPI_CHECK(MPI_Gather_init(send, kBlock, MPI_INT, receive, kBlock, MPI_INT,
                            root, comm, MPI_INFO_NULL, &gather));
  MPI_CHECK(MPI_Gatherv_init(send, g_rank + 1, MPI_INT, receive, counts, displs,
                             MPI_INT, root, comm, MPI_INFO_NULL, &gatherv));
  MPI_CHECK(MPI_Scatter_init(send, kBlock, MPI_INT, receive, kBlock, MPI_INT,
                             root, comm, MPI_INFO_NULL, &scatter));
  MPI_CHECK(MPI_Scatterv_init(send, counts, displs, MPI_INT, receive,
                              g_rank + 1, MPI_INT, root, comm, MPI_INFO_NULL,
                              &scatterv));
  MPI_CHECK(MPI_Allgather_init(send, kBlock, MPI_INT, receive, kBlock, MPI_INT,
                               comm, MPI_INFO_NULL, &allgather));
  MPI_CHECK(MPI_Allgatherv_init(send, g_rank + 1, MPI_INT, receive, counts,
                                displs, MPI_INT, comm, MPI_INFO_NULL,
                                &allgatherv));
  for (int start = 0; start < kStarts; ++start) {
    for (int i = 0; i < kMaxRanks; ++i) send[i] = value(g_rank, i, start);
    start_and_wait(&gather);
    for (int r = 0; r < g_size && g_rank == root; ++r) {
      for (int i = 0; i < kBlock; ++i)
        CHECK(receive[r * kBlock + i] == value(r, i, start),
              "gather start %d block %d item %d is %d", start, r, i,
              receive[r * kBlock + i]);
    }
    start_and_wait(&gatherv);
    for (int r = 0; r < g_size && g_rank == root; ++r) {
      for (int i = 0; i < counts[r]; ++i)
        CHECK(receive[displs[r] + i] == value(r, i, start),
              "gatherv start %d block %d item %d is %d", start, r, i,
              receive[displs[r] + i]);
    }
    start_and_wait(&allgather);
    for (int r = 0; r < g_size; ++r) {
      for (int i = 0; i < kBlock; ++i)
        CHECK(receive[r * kBlock + i] == value(r, i, start),
              "allgather start %d block %d item %d is %d", start, r, i,
              receive[r * kBlock + i]);
    }
    start_and_wait(&allgatherv);
    for (int r = 0; r < g_size; ++r) {
      for (int i = 0; i < counts[r]; ++i)
        CHECK(receive[displs[r] + i] == value(r, i, start),
              "allgatherv start %d block %d item %d is %d", start, r, i,
              receive[displs[r] + i]);
    }
    /* The root's send buffer holds item j of block r as value(r, j, start). */
    for (int r = 0; r < g_size; ++r) {
      for (int i = 0; i < kBlock; ++i)
        send[r * kBlock + i] = value(r, i, start) + 7;
    }
    start_and_wait(&scatter);
    for (int i = 0; i < kBlock; ++i)
      CHECK(receive[i] == value(g_rank, i, start) + 7,
            "scatter start %d item %d is %d", start, i, receive[i]);
    for (int r = 0; r < g_size; ++r) {
      for (int i = 0; i < counts[r]; ++i)
        send[displs[r] + i] = value(r, i, start) + 9;
    }
    start_and_wait(&scatterv);
    for (int i = 0; i < g_rank + 1; ++i)
      CHECK(receive[i] == value(g_rank, i, start) + 9,
            "scatterv start %d item %d is %d", start, i, receive[i]);
  }
  MPI_Request all[] = {gather,   gatherv,   scatter,
                       scatterv, allgather, allgatherv};
  for (int i = 0; i < 6; ++i) free_request(&all[i]);
}

static void test_alltoall(MPI_Comm comm) {
  int send[kMaxRanks * kMaxRanks], receive[kMaxRanks * kMaxRanks];
  int send_counts[kMaxRanks], send_displs[kMaxRanks], receive_counts[kMaxRanks],
      receive_displs[kMaxRanks];
  int send_bytes[kMaxRanks], receive_bytes[kMaxRanks];
  MPI_Datatype types[kMaxRanks];
  /* Alltoallv: rank s sends s + d + 1 items to rank d. */
  int offset = 0;
  for (int d = 0; d < g_size; ++d) {
    send_counts[d] = g_rank + d + 1;
    send_displs[d] = offset;
    send_bytes[d] = offset * (int)sizeof(int);
    offset += send_counts[d];
    types[d] = MPI_INT;
  }
  offset = 0;
  for (int s = 0; s < g_size; ++s) {
    receive_counts[s] = s + g_rank + 1;
    receive_displs[s] = offset;
    receive_bytes[s] = offset * (int)sizeof(int);
    offset += receive_counts[s];
  }
  MPI_Request alltoall, alltoallv, alltoallw;
  MPI_CHECK(MPI_Alltoall_init(send, 2, MPI_INT, receive, 2, MPI_INT, comm,
                              MPI_INFO_NULL, &alltoall));
  MPI_CHECK(MPI_Alltoallv_init(send, send_counts, send_displs, MPI_INT, receive,
                               receive_counts, receive_displs, MPI_INT, comm,
                               MPI_INFO_NULL, &alltoallv));
  MPI_CHECK(MPI_Alltoallw_init(send, send_counts, send_bytes, types, receive,
                               receive_counts, receive_bytes, types, comm,
                               MPI_INFO_NULL, &alltoallw));
  for (int start = 0; start < kStarts; ++start) {
    for (int d = 0; d < g_size; ++d) {
      for (int i = 0; i < 2; ++i)
        send[2 * d + i] = value(g_rank, 100 * d + i, start);
    }
    start_and_wait(&alltoall);
    for (int s = 0; s < g_size; ++s) {
      for (int i = 0; i < 2; ++i)
        CHECK(receive[2 * s + i] == value(s, 100 * g_rank + i, start),
              "alltoall start %d block %d item %d is %d", start, s, i,
              receive[2 * s + i]);
    }
    for (int d = 0; d < g_size; ++d) {
      for (int i = 0; i < send_counts[d]; ++i)
        send[send_displs[d] + i] = value(g_rank, 100 * d + i, start);
    }
    start_and_wait(&alltoallv);
    for (int s = 0; s < g_size; ++s) {
      for (int i = 0; i < receive_counts[s]; ++i)
        CHECK(
            receive[receive_displs[s] + i] == value(s, 100 * g_rank + i, start),
            "alltoallv start %d block %d item %d is %d", start, s, i,
            receive[receive_displs[s] + i]);
    }
    for (int d = 0; d < g_size; ++d) {
      for (int i = 0; i < send_counts[d]; ++i)
        send[send_displs[d] + i] = value(g_rank, 100 * d + i, start) + 3;
    }
    memset(receive, 0, sizeof receive);
    start_and_wait(&alltoallw);
    for (int s = 0; s < g_size; ++s) {
      for (int i = 0; i < receive_counts[s]; ++i)
        CHECK(receive[receive_displs[s] + i] ==
                  value(s, 100 * g_rank + i, start) + 3,
              "alltoallw start %d block %d item %d is %d", start, s, i,
              receive[receive_displs[s] + i]);
    }
  }
  free_request(&alltoall);
  free_request(&alltoallv);
  free_request(&alltoallw);
}

/* On a periodic ring: sources and destinations are (left, right). */
static void test_neighbors(MPI_Comm comm) {
  MPI_Comm ring;
  int dims[1] = {g_size}, periods[1] = {1};
  MPI_CHECK(MPI_Cart_create(comm, 1, dims, periods, 0, &ring));
  int left, right;
  MPI_CHECK(MPI_Cart_shift(ring, 0, 1, &left, &right));
  int send[8], receive[8];
  int counts[2] = {2, 2}, displs[2] = {0, 4};
  MPI_Aint byte_displs[2] = {0, 4 * sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Request allgather, allgatherv, alltoall, alltoallv, alltoallw;
  MPI_CHECK(MPI_Neighbor_allgather_init(send, 2, MPI_INT, receive, 2, MPI_INT,
                                        ring, MPI_INFO_NULL, &allgather));
  MPI_CHECK(MPI_Neighbor_allgatherv_init(send, 2, MPI_INT, receive, counts,
                                         displs, MPI_INT, ring, MPI_INFO_NULL,
                                         &allgatherv));
  MPI_CHECK(MPI_Neighbor_alltoall_init(send, 2, MPI_INT, receive, 2, MPI_INT,
                                       ring, MPI_INFO_NULL, &alltoall));
  MPI_CHECK(MPI_Neighbor_alltoallv_init(send, counts, displs, MPI_INT, receive,
                                        counts, displs, MPI_INT, ring,
                                        MPI_INFO_NULL, &alltoallv));
  MPI_CHECK(MPI_Neighbor_alltoallw_init(send, counts, byte_displs, types,
                                        receive, counts, byte_displs, types,
                                        ring, MPI_INFO_NULL, &alltoallw));
  for (int start = 0; start < kStarts; ++start) {
    for (int i = 0; i < 8; ++i) send[i] = value(g_rank, i, start);
    start_and_wait(&allgather);
    for (int i = 0; i < 2; ++i) {
      CHECK(receive[i] == value(left, i, start),
            "neighbor_allgather start %d: item %d from the left is %d", start,
            i, receive[i]);
      CHECK(receive[2 + i] == value(right, i, start),
            "neighbor_allgather start %d: item %d from the right is %d", start,
            i, receive[2 + i]);
    }
    start_and_wait(&allgatherv);
    for (int i = 0; i < 2; ++i) {
      CHECK(receive[i] == value(left, i, start),
            "neighbor_allgatherv start %d: item %d from the left is %d", start,
            i, receive[i]);
      CHECK(receive[4 + i] == value(right, i, start),
            "neighbor_allgatherv start %d: item %d from the right is %d", start,
            i, receive[4 + i]);
    }
    /* Alltoall: block 0 goes left, block 1 right; the left neighbour's
     * block 1 arrives in block 0. */
    start_and_wait(&alltoall);
    for (int i = 0; i < 2; ++i) {
      CHECK(receive[i] == value(left, 2 + i, start),
            "neighbor_alltoall start %d: item %d from the left is %d", start, i,
            receive[i]);
      CHECK(receive[2 + i] == value(right, i, start),
            "neighbor_alltoall start %d: item %d from the right is %d", start,
            i, receive[2 + i]);
    }
    for (int i = 0; i < 8; ++i) send[i] = value(g_rank, i, start) + 5;
    MPI_Request both[2] = {alltoallv, alltoallw};
    int received[2][8];
    start_and_wait(&both[0]);
    memcpy(received[0], receive, sizeof receive);
    start_and_wait(&both[1]);
    memcpy(received[1], receive, sizeof receive);
    for (int k = 0; k < 2; ++k) {
      for (int i = 0; i < 2; ++i) {
        CHECK(received[k][i] == value(left, 4 + i, start) + 5,
              "neighbor_alltoall%c start %d: item %d from the left is %d",
              k ? 'w' : 'v', start, i, received[k][i]);
        CHECK(received[k][4 + i] == value(right, i, start) + 5,
              "neighbor_alltoall%c start %d: item %d from the right is %d",
              k ? 'w' : 'v', start, i, received[k][4 + i]);
      }
    }
  }
  MPI_Request all[] = {allgather, allgatherv, alltoall, alltoallv, alltoallw};
  for (int i = 0; i < 5; ++i) free_request(&all[i]);
  MPI_CHECK(MPI_Comm_free(&ring));
}

/* Several started at once, interleaved with blocking and nonblocking
 * collectives on the same communicator, and completed in any order. */
static void test_startall_interleaved(MPI_Comm comm) {
  int sum_in = 0, sum_out = 0, bcast_value = 0, gathered[kMaxRanks];
  MPI_Request requests[3];
  MPI_CHECK(MPI_Allreduce_init(&sum_in, &sum_out, 1, MPI_INT, MPI_SUM, comm,
                               MPI_INFO_NULL, &requests[0]));
  MPI_CHECK(MPI_Bcast_init(&bcast_value, 1, MPI_INT, 0, comm, MPI_INFO_NULL,
                           &requests[1]));
  MPI_CHECK(MPI_Allgather_init(&sum_in, 1, MPI_INT, gathered, 1, MPI_INT, comm,
                               MPI_INFO_NULL, &requests[2]));
  for (int start = 0; start < 2 * kStarts; ++start) {
    sum_in = value(g_rank, 0, start);
    bcast_value = g_rank == 0 ? value(0, 1, start) : -1;
    MPI_CHECK(MPI_Startall(3, requests));
    /* Blocking and nonblocking collectives while these are active. */
    int blocking_in = g_rank + start, blocking_out = 0;
    MPI_CHECK(
        MPI_Allreduce(&blocking_in, &blocking_out, 1, MPI_INT, MPI_SUM, comm));
    CHECK(blocking_out == g_size * (g_size - 1) / 2 + g_size * start,
          "blocking allreduce among persistent ones gave %d", blocking_out);
    int ibcast_value = g_rank == g_size - 1 ? start * 3 : -1;
    MPI_Request ibcast;
    MPI_CHECK(MPI_Ibcast(&ibcast_value, 1, MPI_INT, g_size - 1, comm, &ibcast));
    if (start % 2 == 0) {
      MPI_CHECK(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE));
    } else {
      for (int i = 2; i >= 0; --i) {
        int flag = 0;
        while (!flag)
          MPI_CHECK(MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE));
      }
    }
    MPI_CHECK(MPI_Wait(&ibcast, MPI_STATUS_IGNORE));
    CHECK(ibcast_value == start * 3, "ibcast among persistent ones gave %d",
          ibcast_value);
    int expected = 0;
    for (int r = 0; r < g_size; ++r) expected += value(r, 0, start);
    CHECK(sum_out == expected,
          "startall allreduce start %d gave %d, expected %d", start, sum_out,
          expected);
    CHECK(bcast_value == value(0, 1, start), "startall bcast start %d gave %d",
          start, bcast_value);
    for (int r = 0; r < g_size; ++r)
      CHECK(gathered[r] == value(r, 0, start),
            "startall allgather start %d block %d is %d", start, r,
            gathered[r]);
    for (int i = 0; i < 3; ++i) {
      int flag = 0;
      MPI_CHECK(MPI_Request_get_status(requests[i], &flag, MPI_STATUS_IGNORE));
      CHECK(flag, "get_status on a completed, inactive request says not done");
    }
  }
  /* Waitall over inactive requests returns at once. */
  MPI_CHECK(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 3; ++i) free_request(&requests[i]);
}

/* A datatype that is not dense (every other int): its data moves through
 * a packed copy, which must be made afresh at each start. */
static void test_derived_datatype(MPI_Comm comm) {
  MPI_Datatype every_other;
  MPI_CHECK(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other));
  MPI_CHECK(MPI_Type_commit(&every_other));
  int buffer[6], send[6], receive[6];
  MPI_Request bcast, allreduce;
  MPI_CHECK(
      MPI_Bcast_init(buffer, 1, every_other, 0, comm, MPI_INFO_NULL, &bcast));
  MPI_CHECK(MPI_Allreduce_init(send, receive, 1, every_other, MPI_SUM, comm,
                               MPI_INFO_NULL, &allreduce));
  for (int start = 0; start < kStarts; ++start) {
    for (int i = 0; i < 6; ++i)
      buffer[i] = g_rank == 0 ? value(0, i, start) : -1;
    start_and_wait(&bcast);
    for (int i = 0; i < 6; ++i) {
      int expected = i % 2 == 0 || g_rank == 0
                         ? (g_rank == 0 || i % 2 == 0 ? value(0, i, start) : -1)
                         : -1;
      CHECK(buffer[i] == expected,
            "strided bcast start %d item %d is %d, expected %d", start, i,
            buffer[i], expected);
    }
    for (int i = 0; i < 6; ++i) {
      send[i] = value(g_rank, i, start);
      receive[i] = -7;
    }
    start_and_wait(&allreduce);
    for (int i = 0; i < 6; ++i) {
      int expected = -7;
      if (i % 2 == 0) {
        expected = 0;
        for (int r = 0; r < g_size; ++r) expected += value(r, i, start);
      }
      CHECK(receive[i] == expected,
            "strided allreduce start %d item %d is %d, expected %d", start, i,
            receive[i], expected);
    }
  }
  free_request(&bcast);
  free_request(&allreduce);

  /* Alltoallw and a neighbourhood allgather sending strided blocks. */
  int w_send[kMaxRanks * 6], w_receive[kMaxRanks * 3], counts[kMaxRanks],
      send_displs[kMaxRanks], receive_displs[kMaxRanks];
  MPI_Datatype send_types[kMaxRanks], receive_types[kMaxRanks];
  for (int d = 0; d < g_size; ++d) {
    counts[d] = 1;
    send_displs[d] = d * 6 * (int)sizeof(int);
    receive_displs[d] = d * 3 * (int)sizeof(int);
    send_types[d] = every_other;
    receive_types[d] = MPI_INT;
  }
  int receive_counts[kMaxRanks];
  for (int d = 0; d < g_size; ++d) receive_counts[d] = 3;
  MPI_Request alltoallw, neighbor;
  MPI_CHECK(MPI_Alltoallw_init(w_send, counts, send_displs, send_types,
                               w_receive, receive_counts, receive_displs,
                               receive_types, comm, MPI_INFO_NULL, &alltoallw));
  MPI_Comm ring;
  int dims[1] = {g_size}, periods[1] = {1}, left, right, ring_receive[6];
  MPI_CHECK(MPI_Cart_create(comm, 1, dims, periods, 0, &ring));
  MPI_CHECK(MPI_Cart_shift(ring, 0, 1, &left, &right));
  MPI_CHECK(MPI_Neighbor_allgather_init(send, 1, every_other, ring_receive, 3,
                                        MPI_INT, ring, MPI_INFO_NULL,
                                        &neighbor));
  for (int start = 0; start < kStarts; ++start) {
    for (int i = 0; i < 6 * g_size; ++i) w_send[i] = value(g_rank, i, start);
    start_and_wait(&alltoallw);
    for (int s = 0; s < g_size; ++s) {
      for (int k = 0; k < 3; ++k) {
        const int expected = value(s, 6 * g_rank + 2 * k, start);
        CHECK(w_receive[3 * s + k] == expected,
              "strided alltoallw start %d block %d item %d is %d, expected %d",
              start, s, k, w_receive[3 * s + k], expected);
      }
    }
    for (int i = 0; i < 6; ++i) send[i] = value(g_rank, i, start) + 1;
    start_and_wait(&neighbor);
    for (int k = 0; k < 3; ++k) {
      CHECK(ring_receive[k] == value(left, 2 * k, start) + 1,
            "strided neighbor_allgather start %d item %d from the left is %d",
            start, k, ring_receive[k]);
      CHECK(ring_receive[3 + k] == value(right, 2 * k, start) + 1,
            "strided neighbor_allgather start %d item %d from the right is %d",
            start, k, ring_receive[3 + k]);
    }
  }
  free_request(&alltoallw);
  free_request(&neighbor);
  MPI_CHECK(MPI_Comm_free(&ring));
  MPI_CHECK(MPI_Type_free(&every_other));
}

/* Intercommunicator: even and odd world ranks. */
static void test_intercommunicator(void) {
  if (g_size < 2) return;
  MPI_Comm half, inter;
  const int color = g_rank % 2;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, g_rank, &half));
  MPI_CHECK(
      MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter));
  int local_rank, remote_size;
  MPI_CHECK(MPI_Comm_rank(half, &local_rank));
  MPI_CHECK(MPI_Comm_remote_size(inter, &remote_size));
  int send[2], receive[2], bcast_value;
  MPI_Request allreduce, bcast, barrier;
  MPI_CHECK(MPI_Allreduce_init(send, receive, 2, MPI_INT, MPI_SUM, inter,
                               MPI_INFO_NULL, &allreduce));
  /* The even group's rank 0 broadcasts to the odd group. */
  const int root =
      color == 0 ? (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_CHECK(MPI_Bcast_init(&bcast_value, 1, MPI_INT, root, inter, MPI_INFO_NULL,
                           &bcast));
  MPI_CHECK(MPI_Barrier_init(inter, MPI_INFO_NULL, &barrier));
  for (int start = 0; start < kStarts; ++start) {
    for (int i = 0; i < 2; ++i) send[i] = value(g_rank, i, start);
    start_and_wait(&allreduce);
    for (int i = 0; i < 2; ++i) {
      int expected = 0;
      for (int r = 1 - color; r < g_size; r += 2)
        expected += value(r, i, start);
      CHECK(receive[i] == expected,
            "intercommunicator allreduce start %d item %d is %d, expected %d",
            start, i, receive[i], expected);
    }
    bcast_value = root == MPI_ROOT ? value(0, 9, start) : -1;
    start_and_wait(&bcast);
    if (color == 1)
      CHECK(bcast_value == value(0, 9, start),
            "intercommunicator bcast start %d gave %d", start, bcast_value);
    start_and_wait(&barrier);
  }
  free_request(&allreduce);
  free_request(&bcast);
  free_request(&barrier);
  MPI_CHECK(MPI_Comm_free(&inter));
  MPI_CHECK(MPI_Comm_free(&half));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  CHECK(g_size <= kMaxRanks, "at most %d ranks", kMaxRanks);
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  test_barrier_bcast(comm);
  test_reductions(comm);
  test_gather_scatter(comm);
  test_alltoall(comm);
  test_neighbors(comm);
  test_startall_interleaved(comm);
  test_derived_datatype(comm);
  test_intercommunicator();
  /* A persistent request may outlive its communicator's handle. */
  int in = g_rank, out = -1;
  MPI_Request late;
  MPI_CHECK(MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, comm,
                               MPI_INFO_NULL, &late));
  MPI_CHECK(MPI_Comm_free(&comm));
  start_and_wait(&late);
  CHECK(out == g_size * (g_size - 1) / 2,
        "allreduce after MPI_Comm_free gave %d", out);
  free_request(&late);
  if (g_rank == 0) printf("persistent_collectives: %d ranks passed\n", g_size);
  MPI_Finalize();
  return 0;
}
