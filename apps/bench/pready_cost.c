/* The cost of one MPI_Pready, measured on the sender (2 ranks):
 *   - one that posts nothing: 4096 partitions of 8 bytes grouped into one
 *     transport partition (info minimpi_part_transport_partitions=1), so
 *     every MPI_Pready but the last only decrements a counter;
 *   - one that posts: the "none" aggregator, so each MPI_Pready is the last
 *     of its transport partition and posts one 8-byte write with immediate;
 * each from 1 thread and from 2 threads marking disjoint halves at once (a
 * lock on the path would show as a higher cost with 2 threads). For scale,
 * an 8-byte MPI_Isend + MPI_Wait. The receiver is started (and its clear
 * received) before each timed round, as in a steady-state loop.
 *
 * Usage: mpiexec -n 2 pready_cost [rounds]
 * Prints one line per measurement: "what=... threads=N ns_per_call=X". */
#define _GNU_SOURCE /* pthread barriers under -std=c11 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kPartitions = 4096 };

static double NowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

struct Marker {
  MPI_Request request;
  int first, last; /* [first, last) */
  pthread_barrier_t* barrier;
  double elapsed_ns;
};

static void* Mark(void* argument) {
  struct Marker* m = (struct Marker*)argument;
  pthread_barrier_wait(m->barrier);
  const double begin = NowNs();
  for (int p = m->first; p < m->last; ++p) MPI_Pready(p, m->request);
  m->elapsed_ns = NowNs() - begin;
  return NULL;
}

/* One configuration: returns the mean ns per MPI_Pready over the rounds,
 * not counting the partition that completes a grouped transport partition
 * when `exclude_last` is set. */
static double Measure(int rank, const char* aggregator, const char* groups,
                      int threads, int rounds, int exclude_last) {
  static char buffer[kPartitions * 8];
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "minimpi_part_aggr", aggregator);
  if (groups != NULL) {
    MPI_Info_set(info, "minimpi_part_transport_partitions", groups);
  }
  MPI_Request request;
  if (rank == 0) {
    MPI_Psend_init(buffer, kPartitions, 8, MPI_BYTE, 1, 5, MPI_COMM_WORLD,
                   info, &request);
  } else {
    MPI_Precv_init(buffer, kPartitions, 8, MPI_BYTE, 0, 5, MPI_COMM_WORLD,
                   info, &request);
  }
  MPI_Info_free(&info);
  double total_ns = 0;
  int64_t calls = 0;
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, (unsigned)threads);
  for (int round = 0; round < rounds; ++round) {
    if (rank == 1) {
      MPI_Start(&request);
      MPI_Send(NULL, 0, MPI_BYTE, 0, 6, MPI_COMM_WORLD);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      continue;
    }
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Start(&request);
    const int timed = exclude_last ? kPartitions - 1 : kPartitions;
    struct Marker markers[2];
    pthread_t helper;
    for (int t = 0; t < threads; ++t) {
      markers[t] = (struct Marker){request, t * timed / threads,
                                   (t + 1) * timed / threads, &barrier, 0};
    }
    if (threads == 2) pthread_create(&helper, NULL, Mark, &markers[1]);
    Mark(&markers[0]);
    if (threads == 2) pthread_join(helper, NULL);
    if (exclude_last) MPI_Pready(kPartitions - 1, request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (round == 0) continue; /* warm-up */
    for (int t = 0; t < threads; ++t) {
      total_ns += markers[t].elapsed_ns;
      calls += markers[t].last - markers[t].first;
    }
  }
  pthread_barrier_destroy(&barrier);
  MPI_Request_free(&request);
  return calls > 0 ? total_ns / (double)calls : 0;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "pready_cost: run with 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int rounds = argc > 1 ? atoi(argv[1]) : 50;
  if (rank == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(version, &length);
    char* newline = strchr(version, '\n');
    if (newline != NULL) *newline = '\0';
    printf("# %s\n", version);
  }
  for (int threads = 1; threads <= 2; ++threads) {
    const double nothing = Measure(rank, "none", "1", threads, rounds, 1);
    const double posts = Measure(rank, "none", NULL, threads, rounds, 0);
    if (rank == 0) {
      printf("what=pready_posts_nothing threads=%d ns_per_call=%.1f\n",
             threads, nothing);
      printf("what=pready_posts_write threads=%d ns_per_call=%.1f\n", threads,
             posts);
    }
  }
  /* For scale: an 8-byte nonblocking send, started and completed. */
  char byte[8] = {0};
  const int sends = 20000;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const double begin = NowNs();
    for (int i = 0; i < sends; ++i) {
      MPI_Request r;
      MPI_Isend(byte, 8, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    printf("what=isend_wait_8_bytes threads=1 ns_per_call=%.1f\n",
           (NowNs() - begin) / sends);
  } else {
    for (int i = 0; i < sends; ++i) {
      MPI_Recv(byte, 8, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Finalize();
  return 0;
}
