/* The cost of a message-rate window's calls on one core, with no second
 * core's cache lines in the way: one rank posts 64 MPI_Irecv from itself,
 * 64 MPI_Isend of 8 bytes to itself, then MPI_Waitall on the sends and on
 * the receives (which the wait progresses). Prints ns per message for each
 * phase, the best of 7 repetitions, each the mean over WINDOWS windows.
 * Steadier from run to run than any two-rank rate on a shared machine, so
 * it is what A/B comparisons of the per-call paths use; the two-rank
 * picture is window_phases.c's. A benchmark, never a timed test.
 *
 *   usage: mpiexec -n 1 self_window [WINDOWS]   (default 5000)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kWindow = 64, kRepetitions = 7, kPhases = 4 };

static double NowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int windows = argc > 1 ? atoi(argv[1]) : 5000;
  if (windows < 1) MPI_Abort(MPI_COMM_WORLD, 2);
  char sent[kWindow][8], received[kWindow][8];
  MPI_Request receives[kWindow], sends[kWindow];
  MPI_Status statuses[kWindow];
  double best[kPhases] = {1e30, 1e30, 1e30, 1e30};
  for (int repetition = 0; repetition < kRepetitions; ++repetition) {
    double spent[kPhases] = {0};
    for (int w = 0; w < windows; ++w) {
      const double t0 = NowNs();
      for (int i = 0; i < kWindow; ++i) {
        MPI_Irecv(received[i], 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &receives[i]);
      }
      const double t1 = NowNs();
      for (int i = 0; i < kWindow; ++i) {
        sent[i][0] = (char)(w + i);
        MPI_Isend(sent[i], 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &sends[i]);
      }
      const double t2 = NowNs();
      MPI_Waitall(kWindow, sends, MPI_STATUSES_IGNORE);
      const double t3 = NowNs();
      MPI_Waitall(kWindow, receives, statuses);
      const double t4 = NowNs();
      for (int i = 0; i < kWindow; ++i) {
        if (received[i][0] != (char)(w + i)) {
          fprintf(stderr, "self_window: window %d message %d: wrong data\n", w,
                  i);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      }
      spent[0] += t1 - t0;
      spent[1] += t2 - t1;
      spent[2] += t3 - t2;
      spent[3] += t4 - t3;
    }
    for (int k = 0; k < kPhases; ++k) {
      const double per_message = spent[k] / windows / kWindow;
      if (per_message < best[k]) best[k] = per_message;
    }
  }
  printf(
      "ns per message: irecv %.1f isend %.1f waitall(sends) %.1f "
      "waitall(receives) %.1f "
      "total %.1f\n",
      best[0], best[1], best[2], best[3],
      best[0] + best[1] + best[2] + best[3]);
  MPI_Finalize();
  return 0;
}
