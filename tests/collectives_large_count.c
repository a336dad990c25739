/* The large-count collectives (MPI-4.0 _c forms): every one, blocking,
 * nonblocking (MPI_I..._c) and persistent (..._init_c), on small data
 * checked item by item against a reference computed here, with MPI_Count
 * counts and MPI_Aint displacements. With the argument "large" (2 ranks),
 * counts past INT_MAX: an MPI_Bcast_c of 2^31 + 24 bytes, an in-place
 * MPI_Allreduce_c of 2^31 + 24 uint8 items and an MPI_Reduce_c of as many by
 * an MPI_Op_create function (about 2.1 GiB a buffer). */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { kMaxRanks = 16, kModes = 3 };
static const char* const kModeNames[kModes] = {"blocking", "nonblocking",
                                               "persistent"};

static int g_rank, g_size;

/* Runs one collective in `mode`: the blocking call, the nonblocking call
 * (which sets r_) and a wait, or the persistent call (which sets r_), a
 * start, a wait and a free. */
#define RUN(mode, blocking, nonblocking, persistent) \
  do {                                               \
    MPI_Request r_ = MPI_REQUEST_NULL;               \
    if ((mode) == 0) {                               \
      MPI_CHECK(blocking);                           \
    } else if ((mode) == 1) {                        \
      MPI_CHECK(nonblocking);                        \
      MPI_CHECK(MPI_Wait(&r_, MPI_STATUS_IGNORE));   \
    } else {                                         \
      MPI_CHECK(persistent);                         \
      MPI_CHECK(MPI_Start(&r_));                     \
      MPI_CHECK(MPI_Wait(&r_, MPI_STATUS_IGNORE));   \
      MPI_CHECK(MPI_Request_free(&r_));              \
    }                                                \
  } while (0)

static int value(int rank, int item, int mode) {
  return 1000 * mode + 10 * rank + item;
}

static void test_rooted(MPI_Comm comm, int mode) {
  const char* m = kModeNames[mode];
  const int root = g_size - 1;
  int buffer[4];
  for (int i = 0; i < 4; ++i)
    buffer[i] = g_rank == root ? value(root, i, mode) : -1;
  RUN(mode, MPI_Bcast_c(buffer, (MPI_Count)4, MPI_INT, root, comm),
      MPI_Ibcast_c(buffer, (MPI_Count)4, MPI_INT, root, comm, &r_),
      MPI_Bcast_init_c(buffer, (MPI_Count)4, MPI_INT, root, comm, MPI_INFO_NULL,
                       &r_));
  for (int i = 0; i < 4; ++i)
    CHECK(buffer[i] == value(root, i, mode), "%s bcast_c item %d is %d", m, i,
          buffer[i]);

  int send[kMaxRanks * 4], receive[kMaxRanks * 8];
  MPI_Count counts[kMaxRanks];
  MPI_Aint displs[kMaxRanks];
  MPI_Aint total = 0;
  for (int r = 0; r < g_size; ++r) {
    counts[r] = r + 1;
    displs[r] = total + 1; /* one item of gap before each block */
    total = displs[r] + counts[r];
  }
  for (int i = 0; i < 4; ++i) send[i] = value(g_rank, i, mode);
  RUN(mode,
      MPI_Gather_c(send, (MPI_Count)2, MPI_INT, receive, (MPI_Count)2, MPI_INT,
                   root, comm),
      MPI_Igather_c(send, (MPI_Count)2, MPI_INT, receive, (MPI_Count)2, MPI_INT,
                    root, comm, &r_),
      MPI_Gather_init_c(send, (MPI_Count)2, MPI_INT, receive, (MPI_Count)2,
                        MPI_INT, root, comm, MPI_INFO_NULL, &r_));
  for (int r = 0; r < g_size && g_rank == root; ++r) {
    for (int i = 0; i < 2; ++i)
      CHECK(receive[2 * r + i] == value(r, i, mode),
            "%s gather_c block %d item %d is %d", m, r, i, receive[2 * r + i]);
  }
  RUN(mode,
      MPI_Gatherv_c(send, (MPI_Count)(g_rank + 1), MPI_INT, receive, counts,
                    displs, MPI_INT, root, comm),
      MPI_Igatherv_c(send, (MPI_Count)(g_rank + 1), MPI_INT, receive, counts,
                     displs, MPI_INT, root, comm, &r_),
      MPI_Gatherv_init_c(send, (MPI_Count)(g_rank + 1), MPI_INT, receive,
                         counts, displs, MPI_INT, root, comm, MPI_INFO_NULL,
                         &r_));
  for (int r = 0; r < g_size && g_rank == root; ++r) {
    for (int i = 0; i < r + 1; ++i)
      CHECK(receive[displs[r] + i] == value(r, i, mode),
            "%s gatherv_c block %d item %d is %d", m, r, i,
            receive[displs[r] + i]);
  }
  for (int r = 0; r < g_size; ++r) {
    for (int i = 0; i < 2; ++i) send[2 * r + i] = value(r, i, mode) + 1;
  }
  RUN(mode,
      MPI_Scatter_c(send, (MPI_Count)2, MPI_INT, receive, (MPI_Count)2, MPI_INT,
                    root, comm),
      MPI_Iscatter_c(send, (MPI_Count)2, MPI_INT, receive, (MPI_Count)2,
                     MPI_INT, root, comm, &r_),
      MPI_Scatter_init_c(send, (MPI_Count)2, MPI_INT, receive, (MPI_Count)2,
                         MPI_INT, root, comm, MPI_INFO_NULL, &r_));
  for (int i = 0; i < 2; ++i)
    CHECK(receive[i] == value(g_rank, i, mode) + 1,
          "%s scatter_c item %d is %d", m, i, receive[i]);
  int scatter_source[kMaxRanks * 8];
  for (int r = 0; r < g_size; ++r) {
    for (int i = 0; i < counts[r]; ++i)
      scatter_source[displs[r] + i] = value(r, i, mode) + 2;
  }
  RUN(mode,
      MPI_Scatterv_c(scatter_source, counts, displs, MPI_INT, receive,
                     (MPI_Count)(g_rank + 1), MPI_INT, root, comm),
      MPI_Iscatterv_c(scatter_source, counts, displs, MPI_INT, receive,
                      (MPI_Count)(g_rank + 1), MPI_INT, root, comm, &r_),
      MPI_Scatterv_init_c(scatter_source, counts, displs, MPI_INT, receive,
                          (MPI_Count)(g_rank + 1), MPI_INT, root, comm,
                          MPI_INFO_NULL, &r_));
  for (int i = 0; i < g_rank + 1; ++i)
    CHECK(receive[i] == value(g_rank, i, mode) + 2,
          "%s scatterv_c item %d is %d", m, i, receive[i]);

  for (int i = 0; i < 3; ++i) send[i] = value(g_rank, i, mode);
  RUN(mode,
      MPI_Reduce_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, root, comm),
      MPI_Ireduce_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, root, comm,
                    &r_),
      MPI_Reduce_init_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, root,
                        comm, MPI_INFO_NULL, &r_));
  for (int i = 0; i < 3 && g_rank == root; ++i) {
    int expected = 0;
    for (int r = 0; r < g_size; ++r) expected += value(r, i, mode);
    CHECK(receive[i] == expected, "%s reduce_c item %d is %d, expected %d", m,
          i, receive[i], expected);
  }
}

static void test_everywhere(MPI_Comm comm, int mode) {
  const char* m = kModeNames[mode];
  int send[kMaxRanks * 8], receive[kMaxRanks * 8];
  MPI_Count counts[kMaxRanks], send_counts[kMaxRanks];
  MPI_Aint displs[kMaxRanks], send_displs[kMaxRanks], byte_displs[kMaxRanks],
      send_byte_displs[kMaxRanks];
  MPI_Datatype types[kMaxRanks];
  MPI_Aint total = 0, send_total = 0;
  for (int r = 0; r < g_size; ++r) {
    counts[r] = r + 1;
    displs[r] = total;
    byte_displs[r] = total * (MPI_Aint)sizeof(int);
    total += counts[r];
    types[r] = MPI_INT;
  }
  for (int i = 0; i < 2; ++i) send[i] = value(g_rank, i, mode);
  RUN(mode,
      MPI_Allgather_c(send, (MPI_Count)2, MPI_INT, receive, (MPI_Count)2,
                      MPI_INT, comm),
      MPI_Iallgather_c(send, (MPI_Count)2, MPI_INT, receive, (MPI_Count)2,
                       MPI_INT, comm, &r_),
      MPI_Allgather_init_c(send, (MPI_Count)2, MPI_INT, receive, (MPI_Count)2,
                           MPI_INT, comm, MPI_INFO_NULL, &r_));
  for (int r = 0; r < g_size; ++r) {
    for (int i = 0; i < 2; ++i)
      CHECK(receive[2 * r + i] == value(r, i, mode),
            "%s allgather_c block %d item %d is %d", m, r, i,
            receive[2 * r + i]);
  }
  for (int i = 0; i < g_rank + 1; ++i) send[i] = value(g_rank, i, mode) + 3;
  RUN(mode,
      MPI_Allgatherv_c(send, (MPI_Count)(g_rank + 1), MPI_INT, receive, counts,
                       displs, MPI_INT, comm),
      MPI_Iallgatherv_c(send, (MPI_Count)(g_rank + 1), MPI_INT, receive, counts,
                        displs, MPI_INT, comm, &r_),
      MPI_Allgatherv_init_c(send, (MPI_Count)(g_rank + 1), MPI_INT, receive,
                            counts, displs, MPI_INT, comm, MPI_INFO_NULL, &r_));
  for (int r = 0; r < g_size; ++r) {
    for (int i = 0; i < counts[r]; ++i)
      CHECK(receive[displs[r] + i] == value(r, i, mode) + 3,
            "%s allgatherv_c block %d item %d is %d", m, r, i,
            receive[displs[r] + i]);
  }
  for (int d = 0; d < g_size; ++d) send[d] = value(g_rank, d, mode);
  RUN(mode,
      MPI_Alltoall_c(send, (MPI_Count)1, MPI_INT, receive, (MPI_Count)1,
                     MPI_INT, comm),
      MPI_Ialltoall_c(send, (MPI_Count)1, MPI_INT, receive, (MPI_Count)1,
                      MPI_INT, comm, &r_),
      MPI_Alltoall_init_c(send, (MPI_Count)1, MPI_INT, receive, (MPI_Count)1,
                          MPI_INT, comm, MPI_INFO_NULL, &r_));
  for (int s = 0; s < g_size; ++s)
    CHECK(receive[s] == value(s, g_rank, mode), "%s alltoall_c block %d is %d",
          m, s, receive[s]);
  /* Alltoallv: rank s sends s + d + 1 items to rank d. */
  for (int d = 0; d < g_size; ++d) {
    send_counts[d] = g_rank + d + 1;
    send_displs[d] = send_total;
    send_byte_displs[d] = send_total * (MPI_Aint)sizeof(int);
    for (int i = 0; i < send_counts[d]; ++i)
      send[send_total + i] = value(g_rank, 10 * d + i, mode);
    send_total += send_counts[d];
  }
  MPI_Count receive_counts[kMaxRanks];
  MPI_Aint receive_displs[kMaxRanks], receive_byte_displs[kMaxRanks];
  total = 0;
  for (int s = 0; s < g_size; ++s) {
    receive_counts[s] = s + g_rank + 1;
    receive_displs[s] = total;
    receive_byte_displs[s] = total * (MPI_Aint)sizeof(int);
    total += receive_counts[s];
  }
  for (int w = 0; w < 2; ++w) {
    memset(receive, 0, sizeof receive);
    if (w == 0) {
      RUN(mode,
          MPI_Alltoallv_c(send, send_counts, send_displs, MPI_INT, receive,
                          receive_counts, receive_displs, MPI_INT, comm),
          MPI_Ialltoallv_c(send, send_counts, send_displs, MPI_INT, receive,
                           receive_counts, receive_displs, MPI_INT, comm, &r_),
          MPI_Alltoallv_init_c(send, send_counts, send_displs, MPI_INT, receive,
                               receive_counts, receive_displs, MPI_INT, comm,
                               MPI_INFO_NULL, &r_));
    } else {
      RUN(mode,
          MPI_Alltoallw_c(send, send_counts, send_byte_displs, types, receive,
                          receive_counts, receive_byte_displs, types, comm),
          MPI_Ialltoallw_c(send, send_counts, send_byte_displs, types, receive,
                           receive_counts, receive_byte_displs, types, comm,
                           &r_),
          MPI_Alltoallw_init_c(send, send_counts, send_byte_displs, types,
                               receive, receive_counts, receive_byte_displs,
                               types, comm, MPI_INFO_NULL, &r_));
    }
    for (int s = 0; s < g_size; ++s) {
      for (int i = 0; i < receive_counts[s]; ++i)
        CHECK(receive[receive_displs[s] + i] == value(s, 10 * g_rank + i, mode),
              "%s alltoall%c_c block %d item %d is %d", m, w ? 'w' : 'v', s, i,
              receive[receive_displs[s] + i]);
    }
  }

  /* Reductions. */
  for (int i = 0; i < 3; ++i) send[i] = value(g_rank, i, mode);
  RUN(mode,
      MPI_Allreduce_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, comm),
      MPI_Iallreduce_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, comm,
                       &r_),
      MPI_Allreduce_init_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, comm,
                           MPI_INFO_NULL, &r_));
  for (int i = 0; i < 3; ++i) {
    int expected = 0;
    for (int r = 0; r < g_size; ++r) expected += value(r, i, mode);
    CHECK(receive[i] == expected, "%s allreduce_c item %d is %d, expected %d",
          m, i, receive[i], expected);
  }
  RUN(mode, MPI_Scan_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, comm),
      MPI_Iscan_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, comm, &r_),
      MPI_Scan_init_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, comm,
                      MPI_INFO_NULL, &r_));
  for (int i = 0; i < 3; ++i) {
    int expected = 0;
    for (int r = 0; r <= g_rank; ++r) expected += value(r, i, mode);
    CHECK(receive[i] == expected, "%s scan_c item %d is %d, expected %d", m, i,
          receive[i], expected);
  }
  RUN(mode, MPI_Exscan_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, comm),
      MPI_Iexscan_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, comm, &r_),
      MPI_Exscan_init_c(send, receive, (MPI_Count)3, MPI_INT, MPI_SUM, comm,
                        MPI_INFO_NULL, &r_));
  for (int i = 0; i < 3 && g_rank > 0; ++i) {
    int expected = 0;
    for (int r = 0; r < g_rank; ++r) expected += value(r, i, mode);
    CHECK(receive[i] == expected, "%s exscan_c item %d is %d, expected %d", m,
          i, receive[i], expected);
  }
  MPI_Aint items = 0;
  for (int r = 0; r < g_size; ++r) items += counts[r];
  for (int i = 0; i < items; ++i) send[i] = value(g_rank, i, mode);
  RUN(mode, MPI_Reduce_scatter_c(send, receive, counts, MPI_INT, MPI_SUM, comm),
      MPI_Ireduce_scatter_c(send, receive, counts, MPI_INT, MPI_SUM, comm, &r_),
      MPI_Reduce_scatter_init_c(send, receive, counts, MPI_INT, MPI_SUM, comm,
                                MPI_INFO_NULL, &r_));
  for (int i = 0; i < counts[g_rank]; ++i) {
    int expected = 0;
    for (int r = 0; r < g_size; ++r)
      expected += value(r, (int)displs[g_rank] + i, mode);
    CHECK(receive[i] == expected,
          "%s reduce_scatter_c item %d is %d, expected %d", m, i, receive[i],
          expected);
  }
  for (int i = 0; i < 2 * g_size; ++i) send[i] = value(g_rank, i, mode);
  RUN(mode,
      MPI_Reduce_scatter_block_c(send, receive, (MPI_Count)2, MPI_INT, MPI_SUM,
                                 comm),
      MPI_Ireduce_scatter_block_c(send, receive, (MPI_Count)2, MPI_INT, MPI_SUM,
                                  comm, &r_),
      MPI_Reduce_scatter_block_init_c(send, receive, (MPI_Count)2, MPI_INT,
                                      MPI_SUM, comm, MPI_INFO_NULL, &r_));
  for (int i = 0; i < 2; ++i) {
    int expected = 0;
    for (int r = 0; r < g_size; ++r) expected += value(r, 2 * g_rank + i, mode);
    CHECK(receive[i] == expected,
          "%s reduce_scatter_block_c item %d is %d, expected %d", m, i,
          receive[i], expected);
  }
}

/* Neighbourhood collectives on a periodic ring: sources and destinations
 * are (left, right). */
static void test_neighbors(MPI_Comm comm, int mode) {
  const char* m = kModeNames[mode];
  MPI_Comm ring;
  int dims[1] = {g_size}, periods[1] = {1};
  MPI_CHECK(MPI_Cart_create(comm, 1, dims, periods, 0, &ring));
  int left, right;
  MPI_CHECK(MPI_Cart_shift(ring, 0, 1, &left, &right));
  int send[8], receive[8];
  MPI_Count counts[2] = {2, 2};
  MPI_Aint displs[2] = {0, 4}, byte_displs[2] = {0, 4 * sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  for (int i = 0; i < 8; ++i) send[i] = value(g_rank, i, mode);
  RUN(mode,
      MPI_Neighbor_allgather_c(send, (MPI_Count)2, MPI_INT, receive,
                               (MPI_Count)2, MPI_INT, ring),
      MPI_Ineighbor_allgather_c(send, (MPI_Count)2, MPI_INT, receive,
                                (MPI_Count)2, MPI_INT, ring, &r_),
      MPI_Neighbor_allgather_init_c(send, (MPI_Count)2, MPI_INT, receive,
                                    (MPI_Count)2, MPI_INT, ring, MPI_INFO_NULL,
                                    &r_));
  for (int i = 0; i < 2; ++i) {
    CHECK(receive[i] == value(left, i, mode),
          "%s neighbor_allgather_c item %d from the left is %d", m, i,
          receive[i]);
    CHECK(receive[2 + i] == value(right, i, mode),
          "%s neighbor_allgather_c item %d from the right is %d", m, i,
          receive[2 + i]);
  }
  RUN(mode,
      MPI_Neighbor_allgatherv_c(send, (MPI_Count)2, MPI_INT, receive, counts,
                                displs, MPI_INT, ring),
      MPI_Ineighbor_allgatherv_c(send, (MPI_Count)2, MPI_INT, receive, counts,
                                 displs, MPI_INT, ring, &r_),
      MPI_Neighbor_allgatherv_init_c(send, (MPI_Count)2, MPI_INT, receive,
                                     counts, displs, MPI_INT, ring,
                                     MPI_INFO_NULL, &r_));
  for (int i = 0; i < 2; ++i) {
    CHECK(receive[i] == value(left, i, mode),
          "%s neighbor_allgatherv_c item %d from the left is %d", m, i,
          receive[i]);
    CHECK(receive[4 + i] == value(right, i, mode),
          "%s neighbor_allgatherv_c item %d from the right is %d", m, i,
          receive[4 + i]);
  }
  RUN(mode,
      MPI_Neighbor_alltoall_c(send, (MPI_Count)2, MPI_INT, receive,
                              (MPI_Count)2, MPI_INT, ring),
      MPI_Ineighbor_alltoall_c(send, (MPI_Count)2, MPI_INT, receive,
                               (MPI_Count)2, MPI_INT, ring, &r_),
      MPI_Neighbor_alltoall_init_c(send, (MPI_Count)2, MPI_INT, receive,
                                   (MPI_Count)2, MPI_INT, ring, MPI_INFO_NULL,
                                   &r_));
  for (int i = 0; i < 2; ++i) {
    CHECK(receive[i] == value(left, 2 + i, mode),
          "%s neighbor_alltoall_c item %d from the left is %d", m, i,
          receive[i]);
    CHECK(receive[2 + i] == value(right, i, mode),
          "%s neighbor_alltoall_c item %d from the right is %d", m, i,
          receive[2 + i]);
  }
  for (int w = 0; w < 2; ++w) {
    memset(receive, 0, sizeof receive);
    if (w == 0) {
      RUN(mode,
          MPI_Neighbor_alltoallv_c(send, counts, displs, MPI_INT, receive,
                                   counts, displs, MPI_INT, ring),
          MPI_Ineighbor_alltoallv_c(send, counts, displs, MPI_INT, receive,
                                    counts, displs, MPI_INT, ring, &r_),
          MPI_Neighbor_alltoallv_init_c(send, counts, displs, MPI_INT, receive,
                                        counts, displs, MPI_INT, ring,
                                        MPI_INFO_NULL, &r_));
    } else {
      RUN(mode,
          MPI_Neighbor_alltoallw_c(send, counts, byte_displs, types, receive,
                                   counts, byte_displs, types, ring),
          MPI_Ineighbor_alltoallw_c(send, counts, byte_displs, types, receive,
                                    counts, byte_displs, types, ring, &r_),
          MPI_Neighbor_alltoallw_init_c(send, counts, byte_displs, types,
                                        receive, counts, byte_displs, types,
                                        ring, MPI_INFO_NULL, &r_));
    }
    for (int i = 0; i < 2; ++i) {
      CHECK(receive[i] == value(left, 4 + i, mode),
            "%s neighbor_alltoall%c_c item %d from the left is %d", m,
            w ? 'w' : 'v', i, receive[i]);
      CHECK(receive[4 + i] == value(right, i, mode),
            "%s neighbor_alltoall%c_c item %d from the right is %d", m,
            w ? 'w' : 'v', i, receive[4 + i]);
    }
  }
  MPI_CHECK(MPI_Comm_free(&ring));
}

/* MPI_Op_create's form of MPI_SUM on bytes. */
static void ByteSum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i)
    ((uint8_t*)inout)[i] = (uint8_t)(((uint8_t*)inout)[i] + ((uint8_t*)in)[i]);
}

/* Counts past INT_MAX, on 2 ranks. */
static void test_past_int_max(MPI_Comm comm) {
  const MPI_Count count = (MPI_Count)INT_MAX + 25; /* 2^31 + 24 */
  uint8_t* buffer = malloc((size_t)count);
  CHECK(buffer != NULL, "cannot allocate %lld bytes", (long long)count);
  /* Bcast from rank 0: byte i holds (i * 7 + i / 4096) mod 251. */
  for (MPI_Count i = 0; i < count; ++i)
    buffer[i] = g_rank == 0 ? (uint8_t)((i * 7 + i / 4096) % 251) : 0;
  MPI_CHECK(MPI_Bcast_c(buffer, count, MPI_BYTE, 0, comm));
  for (MPI_Count i = 0; i < count; ++i) {
    if (buffer[i] != (uint8_t)((i * 7 + i / 4096) % 251))
      CHECK(0, "bcast_c byte %lld is %d", (long long)i, buffer[i]);
  }
  /* Allreduce in place: rank r holds (i + r) mod 100 at byte i; the sum of
   * both ranks fits a byte. */
  for (MPI_Count i = 0; i < count; ++i)
    buffer[i] = (uint8_t)((i + g_rank) % 100);
  MPI_CHECK(
      MPI_Allreduce_c(MPI_IN_PLACE, buffer, count, MPI_UINT8_T, MPI_SUM, comm));
  for (MPI_Count i = 0; i < count; ++i) {
    uint8_t expected = 0;
    for (int r = 0; r < g_size; ++r)
      expected = (uint8_t)(expected + (i + r) % 100);
    if (buffer[i] != expected)
      CHECK(0, "allreduce_c byte %lld is %d, expected %d", (long long)i,
            buffer[i], expected);
  }
  /* The same sum by an MPI_Op_create function, whose int length cannot take
   * the count in one call: it must get the items in pieces (it got a
   * negative length, and the root kept its own bytes, before). */
  MPI_Op byte_sum;
  MPI_CHECK(MPI_Op_create(ByteSum, 1, &byte_sum));
  for (MPI_Count i = 0; i < count; ++i)
    buffer[i] = (uint8_t)((i + g_rank) % 100);
  MPI_CHECK(MPI_Reduce_c(g_rank == 0 ? MPI_IN_PLACE : buffer,
                         g_rank == 0 ? buffer : NULL, count, MPI_UINT8_T,
                         byte_sum, 0, comm));
  if (g_rank == 0) {
    for (MPI_Count i = 0; i < count; ++i) {
      uint8_t expected = 0;
      for (int r = 0; r < g_size; ++r)
        expected = (uint8_t)(expected + (i + r) % 100);
      if (buffer[i] != expected)
        CHECK(0,
              "reduce_c with an int user function: byte %lld is %d, "
              "expected %d",
              (long long)i, buffer[i], expected);
    }
  }
  MPI_CHECK(MPI_Op_free(&byte_sum));
  free(buffer);
  if (g_rank == 0)
    printf(
        "collectives_large_count: bcast_c, allreduce_c and reduce_c (int user "
        "function) of %lld items passed\n",
        (long long)count);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  CHECK(g_size <= kMaxRanks, "at most %d ranks", kMaxRanks);
  if (argc > 1 && strcmp(argv[1], "large") == 0) {
    test_past_int_max(MPI_COMM_WORLD);
  } else {
    for (int mode = 0; mode < kModes; ++mode) {
      test_rooted(MPI_COMM_WORLD, mode);
      test_everywhere(MPI_COMM_WORLD, mode);
      test_neighbors(MPI_COMM_WORLD, mode);
    }
    if (g_rank == 0)
      printf(
          "collectives_large_count: every _c collective passed on %d ranks\n",
          g_size);
  }
  MPI_Finalize();
  return 0;
}
