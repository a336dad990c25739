/* Where a message-rate window's time goes, phase by phase, on one node.
 *
 * The window is ep_rate.c's (and OSU's osu_mbw_mr's): rank 0 posts 64
 * MPI_Isend of 8 bytes and MPI_Waitall, then waits for a 0-byte
 * acknowledgement; rank 1 waits for the 64 pre-posted receives, checks them
 * (MPI_Get_count and the first byte), posts the next window's receives and
 * sends the acknowledgement. Both ranks stamp each phase with
 * CLOCK_MONOTONIC, which is one clock for every process of a node, so the
 * phases of the two ranks line up into the window's critical path:
 *
 *   isends     rank 0 posts the 64 sends
 *   lag        from rank 0's last post to rank 1's MPI_Waitall returning
 *              (the receiver catching up, and collecting its requests)
 *   check      rank 1 checks the 64 statuses and first bytes
 *   irecvs     rank 1 posts the next 64 receives
 *   ack        rank 1's MPI_Send of the acknowledgement
 *   to_sender  from that send's return to rank 0's MPI_Recv returning
 *   window     the sum: one window, start to start
 *   s_waitall  rank 0's MPI_Waitall on its sends (off the critical path
 *              while it is shorter than lag + check + irecvs + ack)
 *
 * Means over the last three quarters of the windows, in ns. A benchmark,
 * never a timed test: run it with `mpiexec --bind-to core -n 2`, and
 * compile the same source with another MPI to compare.
 *
 *   usage: window_phases [WINDOWS]   (default 20000)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kWindow = 64, kStamps = 5, kDataTag = 1, kAckTag = 2, kResultTag = 3 };

static double NowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "window_phases: run it on 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int windows = argc > 1 ? atoi(argv[1]) : 20000;
  if (windows < 4) MPI_Abort(MPI_COMM_WORLD, 2);
  char buffers[kWindow][8];
  MPI_Request requests[kWindow];
  MPI_Status statuses[kWindow];
  double* stamps = calloc((size_t)windows * kStamps, sizeof(double));
  if (stamps == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  if (rank == 1) {
    for (int i = 0; i < kWindow; ++i) {
      MPI_Irecv(buffers[i], 8, MPI_BYTE, 0, kDataTag, MPI_COMM_WORLD,
                &requests[i]);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = NowNs();
  for (int w = 0; w < windows; ++w) {
    double* t = stamps + (size_t)w * kStamps;
    if (rank == 0) {
      t[0] = NowNs();
      for (int i = 0; i < kWindow; ++i) {
        buffers[i][0] = (char)(w + i);
        MPI_Isend(buffers[i], 8, MPI_BYTE, 1, kDataTag, MPI_COMM_WORLD,
                  &requests[i]);
      }
      t[1] = NowNs();
      MPI_Waitall(kWindow, requests, statuses);
      t[2] = NowNs();
      MPI_Recv(NULL, 0, MPI_BYTE, 1, kAckTag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      t[3] = NowNs();
    } else {
      t[0] = NowNs();
      MPI_Waitall(kWindow, requests, statuses);
      t[1] = NowNs();
      for (int i = 0; i < kWindow; ++i) {
        int count;
        MPI_Get_count(&statuses[i], MPI_BYTE, &count);
        if (count != 8 || buffers[i][0] != (char)(w + i)) {
          fprintf(stderr, "window_phases: window %d message %d: wrong data\n",
                  w, i);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      }
      t[2] = NowNs();
      if (w + 1 < windows) {
        for (int i = 0; i < kWindow; ++i) {
          MPI_Irecv(buffers[i], 8, MPI_BYTE, 0, kDataTag, MPI_COMM_WORLD,
                    &requests[i]);
        }
      }
      t[3] = NowNs();
      MPI_Send(NULL, 0, MPI_BYTE, 0, kAckTag, MPI_COMM_WORLD);
      t[4] = NowNs();
    }
  }
  const double elapsed = NowNs() - start;
  if (rank == 1) {
    MPI_Send(stamps, windows * kStamps, MPI_DOUBLE, 0, kResultTag,
             MPI_COMM_WORLD);
  } else {
    double* theirs = calloc((size_t)windows * kStamps, sizeof(double));
    if (theirs == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Recv(theirs, windows * kStamps, MPI_DOUBLE, 1, kResultTag,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double sum[7] = {0};
    int counted = 0;
    for (int w = windows / 4; w < windows; ++w, ++counted) {
      const double* s = stamps + (size_t)w * kStamps; /* rank 0 */
      const double* r = theirs + (size_t)w * kStamps; /* rank 1 */
      sum[0] += s[1] - s[0];
      sum[1] += r[1] - s[1];
      sum[2] += r[2] - r[1];
      sum[3] += r[3] - r[2];
      sum[4] += r[4] - r[3];
      sum[5] += s[3] - r[4];
      sum[6] += s[2] - s[1];
    }
    for (int k = 0; k < 7; ++k) sum[k] /= counted;
    printf(
        "isends %.0f | lag %.0f | check %.0f | irecvs %.0f | ack %.0f | "
        "to_sender %.0f "
        "| window %.0f || s_waitall %.0f ns; rate %.2f M msg/s\n",
        sum[0], sum[1], sum[2], sum[3], sum[4], sum[5],
        sum[0] + sum[1] + sum[2] + sum[3] + sum[4] + sum[5], sum[6],
        (double)windows * kWindow / elapsed * 1e3);
    free(theirs);
  }
  free(stamps);
  MPI_Finalize();
  return 0;
}
