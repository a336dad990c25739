/* The message rate a worker thread gets: a program initialised with
 * MPI_THREAD_MULTIPLE whose communication runs in a pthread it starts, not in
 * the main thread (issue 41: the way many MPI+threads programs are written,
 * and a path OSU's message-rate benchmarks, which run in the main thread,
 * never take). The main thread of each rank starts one worker and joins it; it
 * makes no MPI call in between.
 *
 * The worker's loop, 2 ranks, one window after another:
 *   rank 0  posts 64 MPI_Isend of 8 bytes to rank 1 (tag 1), MPI_Waitall,
 *           then MPI_Recv of a one-byte ack from rank 1 (tag 2)
 *   rank 1  posts 64 MPI_Irecv of 8 bytes from rank 0 (tag 1), MPI_Waitall,
 *           then MPI_Send of the one-byte ack
 * Each of the 64 messages of a window has a buffer of its own.
 * Phases: warm-up, then the timed windows. The warm-up runs in chunks of
 * windows (16, 32, 64, ...) until --warmup seconds have passed; before each
 * chunk rank 0 sends rank 1 its length (tag 3), so both agree on a count
 * without a clock of their own on rank 1. From the last warm-up chunk rank 0
 * takes the time of one window and chooses how many windows fill --time
 * seconds (at least 16), sends that count the same way, and times them from
 * its first MPI_Isend to the last ack, with no other message among them.
 * Rate = 64 x windows / that time.
 * Data check: rank 0 writes each message's 8 bytes (a function of the
 * window's number and the message's index) in the first warm-up window and
 * the last timed window; rank 1 checks both (the last after sending its
 * ack, outside rank 0's timing) and aborts on a mismatch.
 *
 * Plain C11, MPI and pthreads, so the same source builds with any library's
 * mpicc: apps/bench/osu_compare.sh builds it with minimpi's, MPICH's and
 * Open MPI's and runs it beside OSU's benchmarks.
 *
 *   usage: mpiexec -n 2 thread_rate [--time S] [--warmup S]
 *     --time S     seconds of timed windows (default 0.5)
 *     --warmup S   seconds of warm-up windows (default 0.1)
 *
 * Output on rank 0, in the layout of OSU's message-rate benchmarks so the
 * same parser reads both:
 *   # thread_rate: ...           what it ran
 *   # library: ...               MPI_Get_library_version's first line
 *   # windows: N timed, T s
 *   # Size     Messages/s
 *   8          R
 * A library that grants less than MPI_THREAD_MULTIPLE, or a run with other
 * than 2 ranks, prints why and exits 1.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  kWindow = 64, /* messages per window, as OSU's mbw_mr and issue 41 */
  kBytes = 8,   /* message size */
  kDataTag = 1,
  kAckTag = 2,
  kCountTag = 3,
  kMinWindows = 16,
};

static double time_s = 0.5;
static double warmup_s = 0.1;
static int rank;

static unsigned char send_buf[kWindow][kBytes];
static unsigned char recv_buf[kWindow][kBytes];

/* The byte that message `i` of window `w` carries at offset `j`. */
static unsigned char Pattern(long w, int i, int j) {
  return (unsigned char)(w * 131 + i * 7 + j + 1);
}

/* Rank 0: one window of sends and its ack. The send buffers carry window
 * `w`'s pattern only when `fill` is set (the windows rank 1 checks), so the
 * timed loop writes nothing but what MPI does. */
static void SendWindow(long w, int fill) {
  MPI_Request requests[kWindow];
  unsigned char ack;
  if (fill) {
    for (int i = 0; i < kWindow; i++) {
      for (int j = 0; j < kBytes; j++) send_buf[i][j] = Pattern(w, i, j);
    }
  }
  for (int i = 0; i < kWindow; i++) {
    MPI_Isend(send_buf[i], kBytes, MPI_BYTE, 1, kDataTag, MPI_COMM_WORLD,
              &requests[i]);
  }
  MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE);
  MPI_Recv(&ack, 1, MPI_BYTE, 1, kAckTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Rank 1: one window of receives and the ack. */
static void ReceiveWindow(void) {
  MPI_Request requests[kWindow];
  unsigned char ack = 1;
  for (int i = 0; i < kWindow; i++) {
    MPI_Irecv(recv_buf[i], kBytes, MPI_BYTE, 0, kDataTag, MPI_COMM_WORLD,
              &requests[i]);
  }
  MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE);
  MPI_Send(&ack, 1, MPI_BYTE, 0, kAckTag, MPI_COMM_WORLD);
}

/* Rank 1: the last window received must be window `w`'s pattern. */
static void Check(long w) {
  for (int i = 0; i < kWindow; i++) {
    for (int j = 0; j < kBytes; j++) {
      if (recv_buf[i][j] != Pattern(w, i, j)) {
        fprintf(
            stderr,
            "thread_rate: window %ld message %d byte %d: got %u, expected %u\n",
            w, i, j, recv_buf[i][j], Pattern(w, i, j));
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
}

/* Rank 0 tells rank 1 how many windows come next: a warm-up chunk, or the
 * timed windows (`timed` set), the last message of the protocol. */
static void SendCount(long windows, long timed) {
  long message[2] = {windows, timed};
  MPI_Send(message, 2, MPI_LONG, 1, kCountTag, MPI_COMM_WORLD);
}

/* The worker thread: every MPI call of the benchmark runs here. Rank 0's
 * window numbers run on across the phases, so the two checked windows
 * carry different patterns. */
static void* Worker(void* unused) {
  (void)unused;
  if (rank == 0) {
    long w = 0, chunk = kMinWindows;
    double per_window = 0, warm_start = MPI_Wtime();
    for (;;) {
      SendCount(chunk, 0);
      double start = MPI_Wtime();
      for (long i = 0; i < chunk; i++, w++) SendWindow(w, w == 0);
      double now = MPI_Wtime();
      per_window = (now - start) / (double)chunk;
      if (now - warm_start >= warmup_s) break;
      chunk *= 2;
    }
    long windows = per_window > 0 ? (long)(time_s / per_window) : kMinWindows;
    if (windows < kMinWindows) windows = kMinWindows;
    SendCount(windows, 1);
    double start = MPI_Wtime();
    for (long i = 0; i < windows - 1; i++, w++) SendWindow(w, 0);
    /* The last window carries its pattern: 512 stores inside the timing
     * once, against thousands of windows. */
    SendWindow(w, 1);
    double elapsed = MPI_Wtime() - start;
    printf("# windows: %ld timed, %.3f s\n", windows, elapsed);
    printf("# Size     Messages/s\n");
    printf("%-10d %.2f\n", kBytes, (double)kWindow * (double)windows / elapsed);
    fflush(stdout);
  } else {
    long w = 0, message[2];
    do {
      MPI_Recv(message, 2, MPI_LONG, 0, kCountTag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      for (long i = 0; i < message[0]; i++, w++) {
        ReceiveWindow();
        if (w == 0) Check(0);
      }
    } while (!message[1]);
    Check(w - 1);
  }
  return NULL;
}

static void Usage(void) {
  if (rank == 0)
    fprintf(stderr,
            "usage: mpiexec -n 2 thread_rate [--time S] [--warmup S]\n");
}

int main(int argc, char** argv) {
  int provided, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
      time_s = atof(argv[++i]);
    } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
      warmup_s = atof(argv[++i]);
    } else {
      Usage();
      MPI_Finalize();
      return 2;
    }
  }
  if (time_s <= 0 || warmup_s < 0) {
    Usage();
    MPI_Finalize();
    return 2;
  }
  if (provided != MPI_THREAD_MULTIPLE || size != 2) {
    if (rank == 0) {
      fprintf(stderr,
              "thread_rate: needs MPI_THREAD_MULTIPLE (granted %d) and 2 ranks "
              "(%d)\n",
              provided, size);
    }
    MPI_Finalize();
    return 1;
  }
  if (rank == 0) {
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(library, &length);
    char* newline = strchr(library, '\n');
    if (newline) *newline = '\0';
    printf(
        "# thread_rate: 2 ranks, one worker pthread each "
        "(MPI_THREAD_MULTIPLE); "
        "windows of %d MPI_Isend of %d B, MPI_Waitall, a 1-byte ack\n",
        kWindow, kBytes);
    printf("# library: %.120s\n", library);
  }
  pthread_t worker;
  if (pthread_create(&worker, NULL, Worker, NULL) != 0) {
    fprintf(stderr, "thread_rate: pthread_create failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  pthread_join(worker, NULL);
  MPI_Finalize();
  return 0;
}
