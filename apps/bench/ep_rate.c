/* Message rate of P sender/receiver pairs, in the style of OSU's mbw_mr, with
 * the pairs placed four ways: as separate processes, as threads sharing one
 * rank (and one communicator, or one communicator each), and as threads that
 * each own an endpoint of an MPI endpoints communicator
 * (MPIX_Comm_create_endpoints, a minimpi extension after the MPI endpoints
 * proposal). The question it answers: does an endpoint per thread give
 * threads the message rate of processes, where threads sharing a rank fall
 * short?
 *
 * Plain C11, MPI and pthreads, so the same source builds against any MPI
 * library: apps/bench/ep_compare.sh builds it with minimpi, MPICH and
 * Open MPI. The endpoints mode is compiled only where mpi.h defines
 * MINIMPI_HAS_ENDPOINTS; elsewhere it reports itself unavailable (exit 0).
 *
 *   usage: ep_rate [options]
 *     --mode M       processes: run with 2P ranks; rank i < P sends to rank
 *                      i+P on MPI_COMM_WORLD, one thread per rank
 *                    threads: run with 2 ranks of P threads; thread t of
 *                      rank 0 sends to rank 1 on MPI_COMM_WORLD with tag t,
 *                      thread t of rank 1 receives from rank 0, tag t
 *                    threads-dup: like threads, but pair t has its own
 *                      communicator (MPI_Comm_dup of MPI_COMM_WORLD, made
 *                      before the threads start)
 *                    endpoints: 2 ranks; each calls
 *                      MPIX_Comm_create_endpoints(MPI_COMM_WORLD, P, ...)
 *                      once; thread t uses only handle t: endpoint rank t
 *                      (rank 0's) sends to endpoint rank P+t (rank 1's)
 *                    (default threads)
 *     --pairs P      sender/receiver pairs (default 2, at most 256)
 *     --sizes LIST   message sizes in bytes, comma separated, K/KiB and
 *                    M/MiB suffixes allowed, at least 1 B (default
 *                    8,64,512,4096,16384,65536)
 *     --windows N    measured windows per pair and size (default: a time
 *                    budget, --time)
 *     --time S       without --windows: each sender starts windows for S
 *                    seconds per size (default 0.2), then stops
 *     --warmup W     warm-up windows per pair and size (default 16)
 *     --quick        --time 0.02 --warmup 4 unless given: checks that it
 *                    works, measures little
 *
 * A window (every pair at once, each on its own): the receiver has 64
 * MPI_Irecv posted (window w+1's are posted before it acknowledges window w,
 * and window 0's before the start barrier, so every receive is pre-posted),
 * the sender posts 64 MPI_Isend and MPI_Waitall, the receiver MPI_Waitall,
 * checks, posts the next window's receives and sends a 0-byte ack, which the
 * sender receives (MPI_Recv) before its next window, so windows never run
 * ahead. Data tag = the pair's index, ack tag = 16384 + it, in every mode;
 * the 64 messages of a window have buffers of their own.
 * Per size two phases, the warm-up and the measured windows. Before each
 * every thread and rank synchronise (a barrier among the rank's threads,
 * MPI_Barrier on MPI_COMM_WORLD by the main thread, a barrier among the
 * threads again). The sender of each pair decides when to stop (after
 * --windows windows, or at the first window that starts past --time) and
 * marks the last window in its data (message 0's first byte), so pairs need
 * not agree on a count. Each sender times from its release to its last ack;
 * rate = all messages of all pairs / the longest sender time.
 * Data check: the sender writes the first and last byte of each message (a
 * function of size, window, message index and pair); the receiver sets
 * those bytes to something else before posting and checks them, the
 * status's source, tag and count after the window completes. A mismatch
 * prints where and aborts (non-zero exit).
 *
 * Output: '#' lines (library, mode, thread level), then one line per size:
 *   mode=M pairs=P size=B windows=N msgs=K time_s=T skew=X rate=R msgs/s
 * (windows = measured windows per pair, the mean; msgs = all pairs'
 * messages, time_s = the longest sender time, skew = the
 * longest / the shortest sender time, rate = msgs / time_s, printf %.4e). A
 * mode this library cannot run (no endpoints, or thread level below
 * MPI_THREAD_MULTIPLE for a threaded mode) prints instead
 *   mode=M pairs=P status=unavailable reason=WORD
 * and exits 0; bad usage exits 2.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
  kWindow = 64,
  kMaxPairs = 256,
  kMaxSizes = 32,
  kAckTagBase = 16384,
  kMaxBytes = 16 << 20,
  kMaxWindows = 10000000,
};

enum Mode { kProcesses, kThreads, kThreadsDup, kEndpoints };
static const char* const kModeNames[] = {"processes", "threads", "threads-dup",
                                         "endpoints"};

static struct {
  enum Mode mode;
  int pairs;
  int nsizes;
  long sizes[kMaxSizes];
  long windows; /* 0: from --time */
  double time_s;
  int warmup;
} opt = {kThreads, 2, 6, {8, 64, 512, 4096, 16384, 65536}, 0, 0.2, 16};

static int world_rank;

/* One pair's half, run by one thread (by the main thread in processes mode). */
typedef struct {
  MPI_Comm comm;
  int peer;
  int sender;
  int pair;
  unsigned char* buf; /* kWindow slots of the current size */
  MPI_Request req[kWindow];
  MPI_Status st[kWindow];
  long next; /* number of the next window, counted across phases */
  /* Results of the last phase (sender): windows run, times in seconds. */
  long windows;
  double t_start, t_end;
} Half;

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The check bytes of message i of window w. Message 0 of a phase's last
 * window carries FirstByte ^ kLastMark instead. */
enum { kLastMark = 0x80 };
static unsigned char FirstByte(long size, long w, int i, int pair) {
  return (unsigned char)(1 + (unsigned long)(size * 131 + w * 31 + i * 7 +
                                             pair * 17) % 251);
}
static unsigned char LastByte(long size, long w, int i, int pair) {
  return (unsigned char)(1 + (unsigned long)(size * 17 + w * 131 + i * 29 +
                                             pair * 7 + 97) % 253);
}

static void Fail(const Half* h, long size, long w, int i, const char* what,
                 long got, long want) {
  fprintf(stderr,
          "ep_rate: data check failed: mode=%s pair=%d size=%ld window=%ld "
          "message=%d: %s is %ld, expected %ld\n",
          kModeNames[opt.mode], h->pair, size, w, i, what, got, want);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Receiver: make window w's check bytes wrong, then post its receives. */
static void PostReceives(Half* h, long size, long w) {
  for (int i = 0; i < kWindow; ++i) {
    unsigned char* m = h->buf + (size_t)i * (size_t)size;
    m[size - 1] = (unsigned char)~LastByte(size, w, i, h->pair);
    m[0] = (unsigned char)~FirstByte(size, w, i, h->pair);
    MPI_Irecv(m, (int)size, MPI_BYTE, h->peer, h->pair, h->comm, &h->req[i]);
  }
}

/* Receiver: checks window w; returns whether the sender marked it last. */
static int CheckWindow(const Half* h, long size, long w) {
  int last = 0;
  for (int i = 0; i < kWindow; ++i) {
    const unsigned char* m = h->buf + (size_t)i * (size_t)size;
    int count = -1;
    MPI_Get_count(&h->st[i], MPI_BYTE, &count);
    if (h->st[i].MPI_SOURCE != h->peer) {
      Fail(h, size, w, i, "source", h->st[i].MPI_SOURCE, h->peer);
    }
    if (h->st[i].MPI_TAG != h->pair) {
      Fail(h, size, w, i, "tag", h->st[i].MPI_TAG, h->pair);
    }
    if (count != size) Fail(h, size, w, i, "count", count, size);
    const unsigned char first = FirstByte(size, w, i, h->pair);
    if (size > 1 && m[size - 1] != LastByte(size, w, i, h->pair)) {
      Fail(h, size, w, i, "last byte", m[size - 1],
           LastByte(size, w, i, h->pair));
    }
    if (i == 0 && m[0] == (first ^ kLastMark)) {
      last = 1;
    } else if (m[0] != first) {
      Fail(h, size, w, i, "first byte", m[0], first);
    }
  }
  return last;
}

/* Before the start barrier: the receiver pre-posts its first window. */
static void Prepare(Half* h, long size) {
  if (!h->sender) PostReceives(h, size, h->next);
}

/* One phase: the sender runs windows until it has run max_windows or, when
 * budget_s > 0, until budget_s has passed at the start of a window, and
 * marks the last one in its data; the receiver runs until it sees the mark.
 * The sender stamps t_start and t_end (after the last ack) and counts. */
static void RunWindows(Half* h, long size, long max_windows, double budget_s) {
  const int ack_tag = kAckTagBase + h->pair;
  const long first = h->next;
  if (h->sender) {
    h->t_start = Now();
    for (long w = first;; ++w) {
      const int last = w + 1 == first + max_windows ||
                       (budget_s > 0 && Now() - h->t_start >= budget_s);
      for (int i = 0; i < kWindow; ++i) {
        unsigned char* m = h->buf + (size_t)i * (size_t)size;
        m[size - 1] = LastByte(size, w, i, h->pair);
        m[0] = FirstByte(size, w, i, h->pair);
        if (i == 0 && last) m[0] ^= kLastMark;
        MPI_Isend(m, (int)size, MPI_BYTE, h->peer, h->pair, h->comm,
                  &h->req[i]);
      }
      MPI_Waitall(kWindow, h->req, h->st);
      MPI_Recv(NULL, 0, MPI_BYTE, h->peer, ack_tag, h->comm,
               MPI_STATUS_IGNORE);
      if (last) {
        h->next = w + 1;
        break;
      }
    }
    h->t_end = Now();
    h->windows = h->next - first;
  } else {
    for (long w = first;; ++w) {
      MPI_Waitall(kWindow, h->req, h->st);
      const int last = CheckWindow(h, size, w);
      if (!last) PostReceives(h, size, w + 1);
      MPI_Send(NULL, 0, MPI_BYTE, h->peer, ack_tag, h->comm);
      if (last) {
        h->next = w + 1;
        break;
      }
    }
  }
}

/* --- threads of one rank ---------------------------------------------------
 * The main thread drives the phases; workers (one per local pair half) wait
 * at `gate` between them. Per phase: workers Prepare, gate, main
 * MPI_Barrier(MPI_COMM_WORLD), gate, workers run, gate. */

static int nlocal; /* pair halves on this rank */
static Half* halves;
static pthread_barrier_t gate;
static struct {
  long size, max_windows; /* the phase to run; max_windows == 0: exit */
  double budget_s;
} phase;

static void Gate(void) { pthread_barrier_wait(&gate); }

static void* Worker(void* arg) {
  Half* h = arg;
  for (;;) {
    Gate(); /* a phase is set */
    if (phase.max_windows == 0) break;
    Prepare(h, phase.size);
    Gate(); /* all prepared; main: MPI_Barrier */
    Gate(); /* released */
    RunWindows(h, phase.size, phase.max_windows, phase.budget_s);
    Gate(); /* done */
  }
#ifdef MINIMPI_HAS_ENDPOINTS
  /* Freeing an endpoint is collective over all endpoints of its
   * communicator: each thread frees its own handle, all at once. */
  if (opt.mode == kEndpoints) MPI_Comm_free(&h->comm);
#endif
  return NULL;
}

/* Runs one phase on every local half (main thread); in processes mode the
 * one half runs right here. */
static void RunPhase(long size, long max_windows, double budget_s) {
  phase.size = size;
  phase.max_windows = max_windows;
  phase.budget_s = budget_s;
  if (opt.mode == kProcesses) {
    Prepare(&halves[0], size);
    MPI_Barrier(MPI_COMM_WORLD);
    RunWindows(&halves[0], size, max_windows, budget_s);
    return;
  }
  Gate();
  Gate();
  MPI_Barrier(MPI_COMM_WORLD);
  Gate();
  Gate();
}

/* --- options ---------------------------------------------------------------- */

static void Usage(void) {
  if (world_rank == 0) {
    fprintf(stderr,
            "usage: ep_rate [--mode processes|threads|threads-dup|endpoints] "
            "[--pairs P] [--sizes LIST] [--windows N] [--time S] "
            "[--warmup W] [--quick]\n");
  }
  MPI_Finalize();
  exit(2);
}

static long ParseSize(const char* s) {
  char* end;
  long v = strtol(s, &end, 10);
  if (end == s) return -1;
  if (*end == 'K' || *end == 'k') {
    v <<= 10;
    ++end;
  } else if (*end == 'M' || *end == 'm') {
    v <<= 20;
    ++end;
  }
  if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0 || strcmp(end, "") == 0) {
    return v;
  }
  return -1;
}

static void ParseOptions(int argc, char** argv) {
  int quick = 0, time_given = 0, warmup_given = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--quick") == 0) {
      quick = 1;
      continue;
    }
    if (!v) Usage();
    ++i;
    if (strcmp(a, "--mode") == 0) {
      int found = 0;
      for (int m = 0; m < 4; ++m) {
        if (strcmp(v, kModeNames[m]) == 0) {
          opt.mode = (enum Mode)m;
          found = 1;
        }
      }
      if (!found) Usage();
    } else if (strcmp(a, "--pairs") == 0) {
      opt.pairs = atoi(v);
      if (opt.pairs < 1 || opt.pairs > kMaxPairs) Usage();
    } else if (strcmp(a, "--sizes") == 0) {
      char list[1024];
      snprintf(list, sizeof list, "%s", v);
      opt.nsizes = 0;
      for (char* save = NULL, *t = strtok_r(list, ",", &save); t;
           t = strtok_r(NULL, ",", &save)) {
        long s = ParseSize(t);
        if (s < 1 || s > kMaxBytes || opt.nsizes == kMaxSizes) Usage();
        opt.sizes[opt.nsizes++] = s;
      }
      if (opt.nsizes == 0) Usage();
    } else if (strcmp(a, "--windows") == 0) {
      opt.windows = atol(v);
      if (opt.windows < 1) Usage();
    } else if (strcmp(a, "--time") == 0) {
      opt.time_s = atof(v);
      time_given = 1;
      if (!(opt.time_s > 0)) Usage();
    } else if (strcmp(a, "--warmup") == 0) {
      opt.warmup = atoi(v);
      warmup_given = 1;
      if (opt.warmup < 1) Usage();
    } else {
      Usage();
    }
  }
  if (quick) {
    if (!time_given) opt.time_s = 0.02;
    if (!warmup_given) opt.warmup = 4;
  }
}

static const char* LevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "SINGLE";
    case MPI_THREAD_FUNNELED: return "FUNNELED";
    case MPI_THREAD_SERIALIZED: return "SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MULTIPLE";
  }
  return "unknown";
}

static void PrintHeader(int provided, int size) {
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length;
  MPI_Get_library_version(library, &length);
  char* newline = strchr(library, '\n');
  if (newline) *newline = 0;
  for (char* p = library; *p; ++p) {
    if (*p == '\t') *p = ' ';
  }
  printf("# library: %.120s\n", library);
  if (opt.windows) {
    printf("# mode=%s pairs=%d ranks=%d window=%d warmup=%d windows=%ld "
           "thread_level=%s\n",
           kModeNames[opt.mode], opt.pairs, size, kWindow, opt.warmup,
           opt.windows, LevelName(provided));
  } else {
    printf("# mode=%s pairs=%d ranks=%d window=%d warmup=%d time_s=%g "
           "thread_level=%s\n",
           kModeNames[opt.mode], opt.pairs, size, kWindow, opt.warmup,
           opt.time_s, LevelName(provided));
  }
  fflush(stdout);
}

static void Unavailable(const char* reason) {
  if (world_rank == 0) {
    printf("mode=%s pairs=%d status=unavailable reason=%s\n",
           kModeNames[opt.mode], opt.pairs, reason);
    fflush(stdout);
  }
  MPI_Finalize();
  exit(0);
}

int main(int argc, char** argv) {
  int provided, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ParseOptions(argc, argv);
  const int P = opt.pairs;
  const int want = opt.mode == kProcesses ? 2 * P : 2;
  if (size != want) {
    if (world_rank == 0) {
      fprintf(stderr, "ep_rate: mode %s with %d pairs needs %d ranks, not %d\n",
              kModeNames[opt.mode], P, want, size);
    }
    MPI_Finalize();
    return 2;
  }
#ifndef MINIMPI_HAS_ENDPOINTS
  if (opt.mode == kEndpoints) Unavailable("no_MPIX_Comm_create_endpoints");
#endif
  if (opt.mode != kProcesses && provided < MPI_THREAD_MULTIPLE) {
    char reason[64];
    snprintf(reason, sizeof reason, "thread_level_%s", LevelName(provided));
    Unavailable(reason);
  }
  if (world_rank == 0) PrintHeader(provided, size);

  /* The local halves: their communicators, peers and roles. */
  nlocal = opt.mode == kProcesses ? 1 : P;
  halves = calloc((size_t)nlocal, sizeof *halves);
  if (!halves) MPI_Abort(MPI_COMM_WORLD, 1);
  if (opt.mode == kProcesses) {
    Half* h = &halves[0];
    h->comm = MPI_COMM_WORLD;
    h->sender = world_rank < P;
    h->pair = world_rank % P;
    h->peer = h->sender ? world_rank + P : world_rank - P;
  } else {
    MPI_Comm* ep = NULL;
#ifdef MINIMPI_HAS_ENDPOINTS
    if (opt.mode == kEndpoints) {
      ep = calloc((size_t)P, sizeof *ep);
      if (!ep) MPI_Abort(MPI_COMM_WORLD, 1);
      MPIX_Comm_create_endpoints(MPI_COMM_WORLD, P, MPI_INFO_NULL, ep);
    }
#endif
    for (int t = 0; t < P; ++t) {
      Half* h = &halves[t];
      h->sender = world_rank == 0;
      h->pair = t;
      if (opt.mode == kThreads) {
        h->comm = MPI_COMM_WORLD;
        h->peer = 1 - world_rank;
      } else if (opt.mode == kThreadsDup) {
        MPI_Comm_dup(MPI_COMM_WORLD, &h->comm);
        h->peer = 1 - world_rank;
      } else {
        /* Endpoint t of world rank r is rank r*P + t of 2P. */
        int r = -1, n = -1;
        h->comm = ep[t];
        MPI_Comm_rank(h->comm, &r);
        MPI_Comm_size(h->comm, &n);
        if (r != world_rank * P + t || n != 2 * P) {
          fprintf(stderr,
                  "ep_rate: endpoint %d of rank %d has rank %d of %d, "
                  "expected %d of %d\n",
                  t, world_rank, r, n, world_rank * P + t, 2 * P);
          fflush(stderr);
          MPI_Abort(MPI_COMM_WORLD, 3);
        }
        h->peer = world_rank == 0 ? P + t : t;
      }
    }
    free(ep);
  }

  pthread_t* threads = NULL;
  if (opt.mode != kProcesses) {
    pthread_barrier_init(&gate, NULL, (unsigned)nlocal + 1);
    threads = calloc((size_t)nlocal, sizeof *threads);
    if (!threads) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int t = 0; t < nlocal; ++t) {
      if (pthread_create(&threads[t], NULL, Worker, &halves[t]) != 0) {
        fprintf(stderr, "ep_rate: pthread_create failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }

  for (int s = 0; s < opt.nsizes; ++s) {
    const long bytes = opt.sizes[s];
    for (int t = 0; t < nlocal; ++t) {
      halves[t].buf = malloc((size_t)kWindow * (size_t)bytes);
      if (!halves[t].buf) MPI_Abort(MPI_COMM_WORLD, 1);
      memset(halves[t].buf, 0, (size_t)kWindow * (size_t)bytes);
    }

    /* Warm-up, then the measured windows: --windows of them, or as many
     * as each sender starts within --time. */
    RunPhase(bytes, opt.warmup, 0);
    RunPhase(bytes, opt.windows ? opt.windows : kMaxWindows,
             opt.windows ? 0 : opt.time_s);
    /* {longest sender time, -shortest, windows of all pairs} */
    double mine[3] = {0, -1e300, 0}, all[3];
    for (int t = 0; t < nlocal; ++t) {
      const Half* h = &halves[t];
      if (!h->sender) continue;
      const double d = h->t_end - h->t_start;
      if (d > mine[0]) mine[0] = d;
      if (-d > mine[1]) mine[1] = -d;
      mine[2] += (double)h->windows;
    }
    MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine[2], &all[2], 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
      const double msgs = all[2] * kWindow;
      const double longest = all[0], shortest = -all[1];
      printf("mode=%s pairs=%d size=%ld windows=%.0f msgs=%.0f time_s=%.6f "
             "skew=%.3f rate=%.4e msgs/s\n",
             kModeNames[opt.mode], P, bytes, all[2] / P, msgs, longest,
             shortest > 0 ? longest / shortest : 0.0,
             longest > 0 ? msgs / longest : 0.0);
      fflush(stdout);
    }
    for (int t = 0; t < nlocal; ++t) {
      free(halves[t].buf);
      halves[t].buf = NULL;
    }
  }

  if (opt.mode != kProcesses) {
    phase.max_windows = 0;
    Gate();
    for (int t = 0; t < nlocal; ++t) pthread_join(threads[t], NULL);
    pthread_barrier_destroy(&gate);
    free(threads);
    if (opt.mode == kThreadsDup) {
      for (int t = 0; t < nlocal; ++t) MPI_Comm_free(&halves[t].comm);
    }
  }
  free(halves);
  MPI_Finalize();
  return 0;
}
