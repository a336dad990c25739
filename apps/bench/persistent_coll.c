/* Time per call of a collective in its three forms, IMB-MPI4 style: the
 * persistent form (MPI_Allreduce_init once, then MPI_Start + MPI_Wait per
 * iteration), the nonblocking form (MPI_Iallreduce + MPI_Wait) and the
 * blocking one (MPI_Allreduce), for MPI_Barrier, MPI_Bcast and
 * MPI_Allreduce at 8 B, 1 KiB and 64 KiB. Each figure is the slowest
 * rank's mean over the timed iterations, after a warm-up.
 *
 *   usage: mpiexec -n N persistent_coll [SCALE]
 *     SCALE multiplies the iteration counts (default 1; 0.05 for a check)
 *
 * Prints one line a figure: "collective bytes form microseconds". Builds
 * against any MPI-4.0 library (MPICH 4.0 has the persistent collectives;
 * Open MPI 4.1 only as MPIX_, so it does not build there). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum Collective { kBarrier, kBcast, kAllreduce };
enum Form { kPersistent, kNonblocking, kBlocking };
static const char* const kCollectiveNames[] = {"barrier", "bcast", "allreduce"};
static const char* const kFormNames[] = {"persistent", "nonblocking",
                                         "blocking"};

static char* g_send;
static char* g_receive;

/* One call of `collective` in the blocking or nonblocking form. */
static void call(enum Collective collective, enum Form form, int count) {
  MPI_Request request;
  switch (collective) {
    case kBarrier:
      if (form == kBlocking) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
      }
      MPI_Ibarrier(MPI_COMM_WORLD, &request);
      break;
    case kBcast:
      if (form == kBlocking) {
        MPI_Bcast(g_receive, count, MPI_BYTE, 0, MPI_COMM_WORLD);
        return;
      }
      MPI_Ibcast(g_receive, count, MPI_BYTE, 0, MPI_COMM_WORLD, &request);
      break;
    case kAllreduce:
      if (form == kBlocking) {
        MPI_Allreduce(g_send, g_receive, count / 8, MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD);
        return;
      }
      MPI_Iallreduce(g_send, g_receive, count / 8, MPI_DOUBLE, MPI_SUM,
                     MPI_COMM_WORLD, &request);
      break;
  }
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

static MPI_Request make_persistent(enum Collective collective, int count) {
  MPI_Request request = MPI_REQUEST_NULL;
  switch (collective) {
    case kBarrier:
      MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &request);
      break;
    case kBcast:
      MPI_Bcast_init(g_receive, count, MPI_BYTE, 0, MPI_COMM_WORLD,
                     MPI_INFO_NULL, &request);
      break;
    case kAllreduce:
      MPI_Allreduce_init(g_send, g_receive, count / 8, MPI_DOUBLE, MPI_SUM,
                         MPI_COMM_WORLD, MPI_INFO_NULL, &request);
      break;
  }
  return request;
}

/* Microseconds per call, the slowest rank's mean. */
static double time_form(enum Collective collective, enum Form form, int bytes,
                        int iterations) {
  MPI_Request persistent = MPI_REQUEST_NULL;
  if (form == kPersistent) persistent = make_persistent(collective, bytes);
  const int warmup = iterations / 10 + 1;
  double start = 0;
  for (int i = -warmup; i < iterations; ++i) {
    if (i == 0) {
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
    }
    if (form == kPersistent) {
      MPI_Start(&persistent);
      MPI_Wait(&persistent, MPI_STATUS_IGNORE);
    } else {
      call(collective, form, bytes);
    }
  }
  const double mine = (MPI_Wtime() - start) / iterations * 1e6;
  if (form == kPersistent) MPI_Request_free(&persistent);
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const double scale = argc > 1 ? atof(argv[1]) : 1.0;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int kLargest = 65536;
  g_send = calloc(kLargest, 1);
  g_receive = calloc(kLargest, 1);
  const int sizes[] = {8, 1024, 65536};
  for (int c = kBarrier; c <= kAllreduce; ++c) {
    for (int s = 0; s < 3; ++s) {
      if (c == kBarrier && s > 0) break;
      const int bytes = c == kBarrier ? 0 : sizes[s];
      const int base = bytes <= 1024 ? 20000 : 2000;
      int iterations = (int)(base * scale);
      if (iterations < 10) iterations = 10;
      for (int f = kPersistent; f <= kBlocking; ++f) {
        const double us =
            time_form((enum Collective)c, (enum Form)f, bytes, iterations);
        if (rank == 0)
          printf("%s %d %s %.3f\n", kCollectiveNames[c], bytes, kFormNames[f],
                 us);
      }
    }
  }
  free(g_send);
  free(g_receive);
  MPI_Finalize();
  return 0;
}
