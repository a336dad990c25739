/* Persistent collectives that run through the node's shared-memory region
 * (small barrier, bcast, reduce and allreduce on a communicator inside one
 * node): started together with MPI_Startall, interleaved with blocking
 * node-path and nonblocking collectives on the same communicator, with one
 * rank lagging so that the others run many starts ahead (past the region's
 * ring of slots), more started at once than the ring holds, a start that
 * must not wait for the peers (a rank receives before it waits, the peer
 * sends only after its wait), and blocking calls between a start and
 * its wait.
 * Every delivered item is checked. */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

enum { kItems = 6, kRounds = 300, kMany = 150 };

static int g_rank, g_size;

static int value(int rank, int item, int round) {
  return 1000 * round + 10 * rank + item;
}

static int sum_of(int item, int round) {
  int sum = 0;
  for (int r = 0; r < g_size; ++r) sum += value(r, item, round);
  return sum;
}

/* Startall of five persistent collectives, interleaved with blocking and
 * nonblocking ones. */
static void interleaved(void) {
  int bcast_data[kItems], reduce_in[kItems], reduce_out[kItems];
  int all_in[kItems], all_out[kItems], in_place[kItems];
  const int bcast_root = 1 % g_size, reduce_root = g_size - 1;
  MPI_Request requests[5];
  MPI_CHECK(MPI_Bcast_init(bcast_data, kItems, MPI_INT, bcast_root,
                           MPI_COMM_WORLD, MPI_INFO_NULL, &requests[0]));
  MPI_CHECK(MPI_Allreduce_init(all_in, all_out, kItems, MPI_INT, MPI_SUM,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &requests[1]));
  MPI_CHECK(MPI_Reduce_init(reduce_in, reduce_out, kItems, MPI_INT, MPI_MAX,
                            reduce_root, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &requests[2]));
  MPI_CHECK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &requests[3]));
  MPI_CHECK(MPI_Allreduce_init(MPI_IN_PLACE, in_place, kItems, MPI_INT, MPI_SUM,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &requests[4]));
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kItems; ++i) {
      bcast_data[i] = g_rank == bcast_root ? value(bcast_root, i, round) : -1;
      reduce_in[i] = value(g_rank, i, round);
      reduce_out[i] = -1;
      all_in[i] = value(g_rank, i, round);
      all_out[i] = -1;
      in_place[i] = value(g_rank, i, round);
    }
    /* The last rank lags now and then: the others run ahead. */
    if (g_rank == g_size - 1 && round % 50 < 10) usleep(200);
    MPI_CHECK(MPI_Startall(5, requests));
    if (round % 3 == 0) {
      /* A blocking node-path call between the starts and their waits. */
      long mine = g_rank + round, total = 0;
      MPI_CHECK(
          MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
      long want = 0;
      for (int r = 0; r < g_size; ++r) want += r + round;
      CHECK(total == want, "round %d: blocking allreduce %ld, want %ld", round,
            total, want);
    }
    if (round % 5 == 0) {
      /* A nonblocking (schedule) call between them. */
      int token = g_rank == 0 ? round : -1;
      MPI_Request ibcast;
      MPI_CHECK(MPI_Ibcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD, &ibcast));
      MPI_CHECK(MPI_Wait(&ibcast, MPI_STATUS_IGNORE));
      CHECK(token == round, "round %d: ibcast gave %d", round, token);
    }
    if (round % 2 == 0) {
      MPI_CHECK(MPI_Waitall(5, requests, MPI_STATUSES_IGNORE));
    } else {
      int done = 0;
      while (!done) {
        MPI_CHECK(MPI_Testall(5, requests, &done, MPI_STATUSES_IGNORE));
      }
    }
    for (int i = 0; i < kItems; ++i) {
      CHECK(bcast_data[i] == value(bcast_root, i, round),
            "round %d: bcast item %d is %d, want %d", round, i, bcast_data[i],
            value(bcast_root, i, round));
      CHECK(all_out[i] == sum_of(i, round),
            "round %d: allreduce item %d is %d, want %d", round, i, all_out[i],
            sum_of(i, round));
      CHECK(in_place[i] == sum_of(i, round),
            "round %d: in-place allreduce item %d is %d, want %d", round, i,
            in_place[i], sum_of(i, round));
      if (g_rank == reduce_root) {
        CHECK(reduce_out[i] == value(g_size - 1, i, round),
              "round %d: reduce item %d is %d, want %d", round, i,
              reduce_out[i], value(g_size - 1, i, round));
      }
    }
  }
  for (int i = 0; i < 5; ++i) MPI_CHECK(MPI_Request_free(&requests[i]));
}

/* One root runs its bcasts far ahead of a slow reader, past the ring of
 * slots: its starts must not block, its waits end once the reader frees a
 * slot. */
static void root_runs_ahead(void) {
  long data = 0;
  MPI_Request request;
  MPI_CHECK(MPI_Bcast_init(&data, 1, MPI_LONG, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &request));
  for (int round = 0; round < kRounds; ++round) {
    data = g_rank == 0 ? 7L * round + 1 : -1;
    if (g_rank != 0 && round < 100) usleep(50);
    MPI_CHECK(MPI_Start(&request));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK(data == 7L * round + 1, "round %d: bcast gave %ld", round, data);
  }
  MPI_CHECK(MPI_Request_free(&request));
}

/* More started at once than the ring of slots holds. */
static void many_at_once(void) {
  static int in[kMany], out[kMany];
  static MPI_Request requests[kMany];
  for (int i = 0; i < kMany; ++i) {
    MPI_CHECK(MPI_Allreduce_init(&in[i], &out[i], 1, MPI_INT, MPI_SUM,
                                 MPI_COMM_WORLD, MPI_INFO_NULL, &requests[i]));
  }
  for (int repeat = 0; repeat < 3; ++repeat) {
    for (int i = 0; i < kMany; ++i) {
      in[i] = value(g_rank, i, repeat);
      out[i] = -1;
    }
    MPI_CHECK(MPI_Startall(kMany, requests));
    MPI_CHECK(MPI_Waitall(kMany, requests, MPI_STATUSES_IGNORE));
    for (int i = 0; i < kMany; ++i) {
      CHECK(out[i] == sum_of(i, repeat), "many: item %d is %d, want %d", i,
            out[i], sum_of(i, repeat));
    }
  }
  for (int i = 0; i < kMany; ++i) MPI_CHECK(MPI_Request_free(&requests[i]));
}

/* MPI_Start returns before the peers start: rank 0 receives from rank 1
 * between its start and its wait, and rank 1 sends only after its wait. */
static void start_does_not_wait(void) {
  int in = g_rank + 1, out = 0;
  MPI_Request request;
  MPI_CHECK(MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &request));
  int want = g_size * (g_size + 1) / 2;
  for (int round = 0; round < 20; ++round) {
    out = 0;
    MPI_CHECK(MPI_Start(&request));
    if (g_rank == 0) {
      int token = 0;
      MPI_CHECK(MPI_Recv(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
      CHECK(token == round, "round %d: token %d", round, token);
      MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    } else {
      MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
      if (g_rank == 1) {
        MPI_CHECK(MPI_Send(&round, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
      }
    }
    CHECK(out == want, "round %d: allreduce gave %d, want %d", round, out,
          want);
  }
  MPI_CHECK(MPI_Request_free(&request));
}

/* A started barrier followed by blocking calls: they run after it. */
static void blocking_after_start(void) {
  MPI_Request request;
  MPI_CHECK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &request));
  for (int round = 0; round < 10; ++round) {
    MPI_CHECK(MPI_Start(&request));
    int token = g_rank == 0 ? 42 + round : 0;
    MPI_CHECK(MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(token == 42 + round, "bcast after a started barrier gave %d", token);
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  }
  MPI_CHECK(MPI_Request_free(&request));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  interleaved();
  root_runs_ahead();
  many_at_once();
  if (g_size > 1) start_does_not_wait();
  blocking_after_start();
  MPI_CHECK(MPI_Finalize());
  if (g_rank == 0) printf("persistent_node: OK\n");
  return 0;
}
