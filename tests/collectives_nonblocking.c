/* Every nonblocking collective, several outstanding at once on one
 * communicator and on duplicates, completed together with point-to-point
 * requests: one MPI_Waitall over everything, then MPI_Waitany and
 * MPI_Testsome loops over mixed requests.  Every result is checked against
 * a reference the test computes itself (inputs are functions of rank and
 * index). */
#include "test_util.h"

enum { kCount = 37, kLarge = 5003, kTag = 41 };

static int g_rank, g_size;

static int value_of(int rank, int dest, int i) { return (rank * 7919 + dest * 104729 + i * 31) % 1009 - 500; }

/* All of one round's buffers, so every result can be checked after the
 * requests completed in whatever order. */
typedef struct {
  int round;
  int bcast[kLarge];
  int reduce_send[kCount], reduce_recv[kCount];
  int allreduce_inout[kCount];
  int *gather_send, *gather_recv;     /* kCount per rank */
  int *gatherv_recv, *gatherv_counts, *gatherv_displs;
  int *scatter_send, scatter_recv[kCount];
  int scatterv_recv[kCount];
  int *allgather_recv, *allgatherv_recv;
  int *alltoall_send, *alltoall_recv, *alltoallv_send, *alltoallv_recv;
  int *a2av_counts, *a2av_displs;
  int *rs_send, rs_recv[kCount], rs_counts_buf[64];
  int *rsb_send, rsb_recv[kCount];
  int scan_send[kCount], scan_recv[kCount], exscan_recv[kCount];
  int p2p_send[kCount], p2p_recv[kCount];
} Round;

static int root_of(int round, int which) { return (round * 3 + which) % g_size; }

/* Rank r's reduction input at index i in round `round`. */
static int red_in(int round, int rank, int i) { return value_of(rank, round, i); }

static int* ints(size_t n) { return (int*)test_malloc(sizeof(int) * (n ? n : 1)); }

static int v_count(int rank) { return (rank + 1) % 3 == 0 ? 0 : kCount - (rank * 5) % 11; }

/* Starts every nonblocking collective of one round on `comm`, appending the
 * requests to `reqs`. */
static void start_round(Round* r, MPI_Comm comm, MPI_Request* reqs, int* n) {
  int size = g_size, rank = g_rank, round = r->round;
  int root;
  /* Ibarrier */
  MPI_CHECK(MPI_Ibarrier(comm, &reqs[(*n)++]));
  /* Ibcast */
  root = root_of(round, 0);
  for (int i = 0; i < kLarge; ++i) r->bcast[i] = rank == root ? value_of(root, round, i) : 0;
  MPI_CHECK(MPI_Ibcast(r->bcast, kLarge, MPI_INT, root, comm, &reqs[(*n)++]));
  /* Ireduce (SUM) */
  root = root_of(round, 1);
  for (int i = 0; i < kCount; ++i) r->reduce_send[i] = red_in(round, rank, i), r->reduce_recv[i] = 0;
  MPI_CHECK(MPI_Ireduce(r->reduce_send, r->reduce_recv, kCount, MPI_INT, MPI_SUM, root, comm, &reqs[(*n)++]));
  /* Iallreduce (MAX), in place */
  for (int i = 0; i < kCount; ++i) r->allreduce_inout[i] = red_in(round, rank, i);
  MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, r->allreduce_inout, kCount, MPI_INT, MPI_MAX, comm, &reqs[(*n)++]));
  /* Igather / Igatherv */
  root = root_of(round, 2);
  r->gather_send = ints(kCount);
  r->gather_recv = ints((size_t)kCount * size);
  for (int i = 0; i < kCount; ++i) r->gather_send[i] = value_of(rank, round, i);
  MPI_CHECK(MPI_Igather(r->gather_send, kCount, MPI_INT, r->gather_recv, kCount, MPI_INT, root, comm,
                        &reqs[(*n)++]));
  r->gatherv_counts = ints(size);
  r->gatherv_displs = ints(size);
  int at = 0;
  for (int q = size - 1; q >= 0; --q) r->gatherv_counts[q] = v_count(q), r->gatherv_displs[q] = at, at += v_count(q) + 1;
  r->gatherv_recv = ints(at);
  MPI_CHECK(MPI_Igatherv(r->gather_send, v_count(rank), MPI_INT, r->gatherv_recv, r->gatherv_counts,
                         r->gatherv_displs, MPI_INT, root, comm, &reqs[(*n)++]));
  /* Iscatter / Iscatterv from the gatherv layout */
  root = root_of(round, 3);
  int scatter_len = kCount * size > at ? kCount * size : at;
  r->scatter_send = ints(scatter_len);
  for (int f = 0; f < scatter_len; ++f) r->scatter_send[f] = value_of(root, f / kCount + round, f % kCount);
  MPI_CHECK(MPI_Iscatter(r->scatter_send, kCount, MPI_INT, r->scatter_recv, kCount, MPI_INT, root, comm,
                         &reqs[(*n)++]));
  /* Iscatterv reads the same send vector with the irregular layout: blocks
   * at gatherv_displs. Two reads of one send buffer are allowed. */
  MPI_CHECK(MPI_Iscatterv(r->scatter_send, r->gatherv_counts, r->gatherv_displs, MPI_INT, r->scatterv_recv,
                          v_count(rank), MPI_INT, root, comm, &reqs[(*n)++]));
  /* Iallgather / Iallgatherv */
  r->allgather_recv = ints((size_t)kCount * size);
  MPI_CHECK(MPI_Iallgather(r->gather_send, kCount, MPI_INT, r->allgather_recv, kCount, MPI_INT, comm,
                           &reqs[(*n)++]));
  r->allgatherv_recv = ints(at);
  MPI_CHECK(MPI_Iallgatherv(r->gather_send, v_count(rank), MPI_INT, r->allgatherv_recv, r->gatherv_counts,
                            r->gatherv_displs, MPI_INT, comm, &reqs[(*n)++]));
  /* Ialltoall / Ialltoallv (count to peer q: (rank+q)%4, symmetric) */
  r->alltoall_send = ints((size_t)kCount * size);
  r->alltoall_recv = ints((size_t)kCount * size);
  for (int q = 0; q < size; ++q)
    for (int i = 0; i < kCount; ++i) r->alltoall_send[q * kCount + i] = value_of(rank, q * 100 + round, i);
  MPI_CHECK(MPI_Ialltoall(r->alltoall_send, kCount, MPI_INT, r->alltoall_recv, kCount, MPI_INT, comm,
                          &reqs[(*n)++]));
  r->a2av_counts = ints(size);
  r->a2av_displs = ints(size);
  for (int q = 0; q < size; ++q) r->a2av_counts[q] = (rank + q) % 4 * 3, r->a2av_displs[q] = q * kCount;
  r->alltoallv_send = r->alltoall_send;
  r->alltoallv_recv = ints((size_t)kCount * size);
  MPI_CHECK(MPI_Ialltoallv(r->alltoallv_send, r->a2av_counts, r->a2av_displs, MPI_INT, r->alltoallv_recv,
                           r->a2av_counts, r->a2av_displs, MPI_INT, comm, &reqs[(*n)++]));
  /* Ireduce_scatter (irregular counts) / Ireduce_scatter_block (SUM) */
  int total = 0;
  for (int q = 0; q < size; ++q) r->rs_counts_buf[q] = v_count(q), total += v_count(q);
  r->rs_send = ints(total);
  for (int i = 0; i < total; ++i) r->rs_send[i] = red_in(round, rank, i);
  MPI_CHECK(MPI_Ireduce_scatter(r->rs_send, r->rs_recv, r->rs_counts_buf, MPI_INT, MPI_SUM, comm, &reqs[(*n)++]));
  r->rsb_send = ints((size_t)kCount * size);
  for (int i = 0; i < kCount * size; ++i) r->rsb_send[i] = red_in(round, rank, i);
  MPI_CHECK(MPI_Ireduce_scatter_block(r->rsb_send, r->rsb_recv, kCount, MPI_INT, MPI_MIN, comm, &reqs[(*n)++]));
  /* Iscan / Iexscan (SUM) */
  for (int i = 0; i < kCount; ++i) r->scan_send[i] = red_in(round, rank, i);
  MPI_CHECK(MPI_Iscan(r->scan_send, r->scan_recv, kCount, MPI_INT, MPI_SUM, comm, &reqs[(*n)++]));
  MPI_CHECK(MPI_Iexscan(r->scan_send, r->exscan_recv, kCount, MPI_INT, MPI_SUM, comm, &reqs[(*n)++]));
  /* Point-to-point around the ring on the same communicator */
  for (int i = 0; i < kCount; ++i) r->p2p_send[i] = value_of(rank, 7 + round, i);
  MPI_CHECK(MPI_Irecv(r->p2p_recv, kCount, MPI_INT, (rank + size - 1) % size, kTag + round, comm, &reqs[(*n)++]));
  MPI_CHECK(MPI_Isend(r->p2p_send, kCount, MPI_INT, (rank + 1) % size, kTag + round, comm, &reqs[(*n)++]));
}
enum { kRequestsPerRound = 18 };

#define EXPECT_EQ(got, want, what, index)                                                                   \
  CHECK((got) == (want), "round %d %s: element %d is %d, expected %d", r->round, (what), (int)(index), \
        (int)(got), (int)(want))

static void check_round(Round* r) {
  int size = g_size, rank = g_rank, round = r->round, root;
  root = root_of(round, 0);
  for (int i = 0; i < kLarge; ++i) EXPECT_EQ(r->bcast[i], value_of(root, round, i), "Ibcast", i);
  root = root_of(round, 1);
  if (rank == root)
    for (int i = 0; i < kCount; ++i) {
      int sum = 0;
      for (int q = 0; q < size; ++q) sum += red_in(round, q, i);
      EXPECT_EQ(r->reduce_recv[i], sum, "Ireduce SUM", i);
    }
  for (int i = 0; i < kCount; ++i) {
    int max = red_in(round, 0, i);
    for (int q = 1; q < size; ++q) max = red_in(round, q, i) > max ? red_in(round, q, i) : max;
    EXPECT_EQ(r->allreduce_inout[i], max, "Iallreduce MAX in place", i);
  }
  root = root_of(round, 2);
  if (rank == root) {
    for (int q = 0; q < size; ++q)
      for (int i = 0; i < kCount; ++i) EXPECT_EQ(r->gather_recv[q * kCount + i], value_of(q, round, i), "Igather", i);
    for (int q = 0; q < size; ++q)
      for (int i = 0; i < v_count(q); ++i)
        EXPECT_EQ(r->gatherv_recv[r->gatherv_displs[q] + i], value_of(q, round, i), "Igatherv", i);
  }
  root = root_of(round, 3);
  for (int i = 0; i < kCount; ++i) EXPECT_EQ(r->scatter_recv[i], value_of(root, rank + round, i), "Iscatter", i);
  for (int i = 0; i < v_count(rank); ++i) {
    int flat = r->gatherv_displs[rank] + i;
    EXPECT_EQ(r->scatterv_recv[i], value_of(root, flat / kCount + round, flat % kCount), "Iscatterv", i);
  }
  for (int q = 0; q < size; ++q)
    for (int i = 0; i < kCount; ++i)
      EXPECT_EQ(r->allgather_recv[q * kCount + i], value_of(q, round, i), "Iallgather", i);
  for (int q = 0; q < size; ++q)
    for (int i = 0; i < v_count(q); ++i)
      EXPECT_EQ(r->allgatherv_recv[r->gatherv_displs[q] + i], value_of(q, round, i), "Iallgatherv", i);
  for (int q = 0; q < size; ++q)
    for (int i = 0; i < kCount; ++i)
      EXPECT_EQ(r->alltoall_recv[q * kCount + i], value_of(q, rank * 100 + round, i), "Ialltoall", i);
  for (int q = 0; q < size; ++q)
    for (int i = 0; i < r->a2av_counts[q]; ++i)
      EXPECT_EQ(r->alltoallv_recv[q * kCount + i], value_of(q, rank * 100 + round, i), "Ialltoallv", i);
  int first = 0;
  for (int q = 0; q < rank; ++q) first += v_count(q);
  for (int i = 0; i < v_count(rank); ++i) {
    int sum = 0;
    for (int q = 0; q < size; ++q) sum += red_in(round, q, first + i);
    EXPECT_EQ(r->rs_recv[i], sum, "Ireduce_scatter SUM", i);
  }
  for (int i = 0; i < kCount; ++i) {
    int min = red_in(round, 0, rank * kCount + i);
    for (int q = 1; q < size; ++q) {
      int v = red_in(round, q, rank * kCount + i);
      min = v < min ? v : min;
    }
    EXPECT_EQ(r->rsb_recv[i], min, "Ireduce_scatter_block MIN", i);
  }
  for (int i = 0; i < kCount; ++i) {
    int sum = 0;
    for (int q = 0; q < rank; ++q) sum += red_in(round, q, i);
    if (rank > 0) EXPECT_EQ(r->exscan_recv[i], sum, "Iexscan SUM", i);
    EXPECT_EQ(r->scan_recv[i], sum + red_in(round, rank, i), "Iscan SUM", i);
  }
  for (int i = 0; i < kCount; ++i)
    EXPECT_EQ(r->p2p_recv[i], value_of((rank + size - 1) % size, 7 + round, i), "Irecv beside collectives", i);
}

static void free_round(Round* r) {
  free(r->gather_send); free(r->gather_recv); free(r->gatherv_recv); free(r->gatherv_counts);
  free(r->gatherv_displs); free(r->scatter_send); free(r->allgather_recv); free(r->allgatherv_recv);
  free(r->alltoall_send); free(r->alltoall_recv); free(r->alltoallv_recv); free(r->a2av_counts);
  free(r->a2av_displs); free(r->rs_send); free(r->rsb_send);
}

enum { kRounds = 3 };

/* Rounds 0..2 on comms[0..2] (world and two duplicates, or world three
 * times), all outstanding together, completed by `how`. */
static void run(MPI_Comm* comms, const char* how) {
  Round* rounds = (Round*)test_malloc(sizeof(Round) * kRounds);
  MPI_Request reqs[kRounds * kRequestsPerRound];
  int n = 0;
  for (int k = 0; k < kRounds; ++k) {
    memset(&rounds[k], 0, sizeof(Round));
    rounds[k].round = k;
    start_round(&rounds[k], comms[k], reqs, &n);
  }
  CHECK(n == kRounds * kRequestsPerRound, "started %d requests", n);
  if (strcmp(how, "waitall") == 0) {
    MPI_Status statuses[kRounds * kRequestsPerRound];
    MPI_CHECK(MPI_Waitall(n, reqs, statuses));
  } else if (strcmp(how, "waitany") == 0) {
    for (int done = 0; done < n; ++done) {
      int index = -1;
      MPI_CHECK(MPI_Waitany(n, reqs, &index, MPI_STATUS_IGNORE));
      CHECK(index >= 0 && index < n && reqs[index] == MPI_REQUEST_NULL, "MPI_Waitany returned index %d", index);
    }
    int index = 0;
    MPI_CHECK(MPI_Waitany(n, reqs, &index, MPI_STATUS_IGNORE));
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany over null requests gave index %d", index);
  } else {
    int done = 0;
    while (done < n) {
      int outcount = 0, indices[kRounds * kRequestsPerRound];
      MPI_CHECK(MPI_Testsome(n, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
      CHECK(outcount != MPI_UNDEFINED, "MPI_Testsome said no active requests with %d of %d done", done, n);
      done += outcount;
    }
    for (int i = 0; i < n; ++i) CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not freed by Testsome", i);
  }
  for (int k = 0; k < kRounds; ++k) {
    check_round(&rounds[k]);
    free_round(&rounds[k]);
  }
  free(rounds);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  CHECK(g_size <= 64, "at most 64 ranks");
  MPI_Comm same[kRounds] = {MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_COMM_WORLD};
  MPI_Comm dups[kRounds] = {MPI_COMM_WORLD};
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dups[1]));
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dups[2]));
  static const char* const kCompletions[] = {"waitall", "waitany", "testsome"};
  for (int iteration = 0; iteration < 2; ++iteration)
    for (int c = 0; c < 3; ++c) {
      run(same, kCompletions[c]);
      run(dups, kCompletions[c]);
    }
  /* Blocking collectives still work afterwards and nothing is left over. */
  int one = 1, total = 0;
  MPI_CHECK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, dups[2]));
  CHECK(total == g_size, "Allreduce after the nonblocking rounds: %d", total);
  MPI_CHECK(MPI_Comm_free(&dups[1]));
  MPI_CHECK(MPI_Comm_free(&dups[2]));
  test_report_pass("collectives_nonblocking", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
