/* Small-message communication on a machine whose cores have other work: the
 * benchmark behind load_compare.sh. How a library waits (spin, yield, sleep)
 * decides what it delivers when its ranks share cores with compilers, test
 * runners or their own compute threads, and a quiet-machine benchmark never
 * shows it. Three kernels, one per run:
 *
 *   rate      pairs of ranks (rank 2i sends to rank 2i+1): windows of 64
 *             MPI_Isend / MPI_Irecv and MPI_Waitall, a one-int ack per
 *             window (OSU mbw_mr style); prints million messages per
 *             second, all pairs together.
 *   pingpong  every pair ping-pongs (rank 2i with 2i+1; with 2 ranks just
 *             ranks 0 and 1), batches of round trips; prints the half round
 *             trip in microseconds, the median over all batches of all
 *             pairs (a median shrugs off the batches a descheduled rank
 *             stretched; the mean would be ruled by them).
 *   halo      every rank on a periodic 2-D Cartesian grid (MPI_Dims_create)
 *             exchanges one face with each of its 4 neighbours (MPI_Irecv,
 *             MPI_Isend, MPI_Waitall), then runs a 5-point Jacobi sweep over
 *             its tile; prints microseconds per step.
 * An odd last rank has no partner in rate and pingpong: it only joins the
 * collectives.
 *
 * Plain C11, MPI and pthreads only, so the same source builds with minimpi's
 * mpicc, MPICH's and Open MPI's.
 *
 *   usage: loaded rate|pingpong|halo [options]
 *     --size B             message bytes for rate and pingpong (default 8),
 *                          face bytes for halo, a multiple of 8 (default
 *                          1024: tiles of 128 x 128 doubles, whose sweep
 *                          costs a few quiet exchanges, as in a small-grid
 *                          code; 2048 already quadruples it)
 *     --time S             measure for S seconds of wall time (default 1)
 *     --warmup S           unmeasured seconds first (default 0.1)
 *     --batches N          measure exactly N batches instead of --time
 *     --compute-threads N  each rank also runs N threads that compute
 *                          (a floating-point loop, no MPI) from before the
 *                          warm-up to the end, so threads can outnumber cores
 *     --quick              --time 0.05 --warmup 0.01 unless given: checks
 *                          the data, measures little
 *
 * Fixed wall time, not a fixed count: under load a library can run 50x
 * slower, and a count that takes a second alone would then take a minute.
 * Each kernel runs in batches (rate: 4 windows; pingpong: 32 round trips;
 * halo: 8 steps); after each batch rank 0 alone decides whether time is up
 * and tells everyone (MPI_Bcast of a flag; in halo an MPI_Allreduce, as a
 * solver reduces a residual every few steps), so all ranks agree on the
 * count and a run overshoots its budget by one batch at most.
 *
 * Every delivered byte is checked against a pattern of (sender, iteration,
 * index); a wrong one prints where and aborts the job (non-zero exit), so
 * the short correctness runs in tests/tests.bzl can fail.
 *
 * Output: a '# library:' line, then one line per run:
 *   loaded kernel=K ranks=R threads=N size=B batches=M time_s=T value=V unit=U
 * (threads = compute threads per rank; unit Mmsg/s for rate, us for
 * pingpong (half round trip) and us/step for halo); pingpong adds mean=US,
 * the mean over batches (time-weighted, where the median counts batches).
 * Bad usage exits 2.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
  kWindow = 64,          /* messages per rate window */
  kRateBatch = 4,        /* windows between stop decisions */
  kPingBatch = 32,       /* round trips per pingpong batch */
  kHaloBatch = 8,        /* halo steps between stop decisions */
  kMaxBatches = 1 << 18, /* pingpong keeps one latency per batch */
  kMaxBytes = 1 << 20,
  kMaxComputeThreads = 64,
  kDataTag = 1,
  kAckTag = 2,
};

enum Kernel { kRate, kPingpong, kHalo };
static const char* const kKernelNames[] = {"rate", "pingpong", "halo"};

static struct {
  enum Kernel kernel;
  long size; /* 0: the kernel's default */
  double time_s, warmup_s;
  long batches; /* 0: from --time */
  int compute_threads;
} opt = {kRate, 0, -1, -1, 0, 0};

static int rank, nranks;
static double pingpong_mean_us; /* rank 0, pingpong only */

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One line naming the rank, the kernel and what was wrong, then the whole
 * job ends with a non-zero exit. */
static void Fail(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  fprintf(stderr, "loaded: rank %d, %s: ", rank, kKernelNames[opt.kernel]);
  vfprintf(stderr, fmt, args);
  fputc('\n', stderr);
  va_end(args);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  exit(3); /* MPI_Abort does not return; this tells the compiler */
}

/* The byte at index i of the message a sender sends at iteration it: every
 * input moves it, so a lost, stale, reordered or misrouted message shows. */
static unsigned char Pattern(int sender, long it, long i) {
  return (unsigned char)((unsigned long)(sender * 131 + it * 29 + i * 7 + 11) %
                         251);
}

/* ---- Stop protocol ----
 * Phase state: rank 0 alone reads the clock against the budget; everyone
 * calls Continue() after each batch and gets rank 0's answer. */
typedef struct {
  double start, budget_s;
  long limit; /* batches, 0: by time */
  long done;  /* batches finished */
} Phase;

static void PhaseStart(Phase* p, double budget_s, long limit) {
  p->budget_s = budget_s;
  p->limit = limit;
  p->done = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  p->start = Now();
}

/* Rank 0's verdict after one more batch: 1 to go on. */
static int Verdict(Phase* p) {
  p->done++;
  if (p->limit > 0) return p->done < p->limit;
  return p->done < kMaxBatches && Now() - p->start < p->budget_s;
}

/* After each batch, on every rank: 1 to run another. by_reduction carries
 * the verdict on an MPI_Allreduce (halo) instead of an MPI_Bcast. */
static int Continue(Phase* p, int by_reduction) {
  int go = rank == 0 ? Verdict(p) : 0;
  if (rank != 0) p->done++;
  if (by_reduction) {
    int mine = go;
    MPI_Allreduce(&mine, &go, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  } else {
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  return go;
}

/* ---- Compute threads ----
 * Busy floating-point work beside the MPI rank, never calling MPI: the
 * rank's waits then compete for cores with its own process's threads. */
static atomic_int compute_stop;
static double compute_sink[kMaxComputeThreads];

static void* Compute(void* arg) {
  int id = (int)(intptr_t)arg;
  double x = 1.0 + id, y = 0.5;
  while (!atomic_load_explicit(&compute_stop, memory_order_relaxed)) {
    for (int i = 0; i < 100000; i++) {
      x = x * 0.999999 + y;
      y = y * 1.000001 - 1e-7 * x;
    }
  }
  compute_sink[id] = x + y; /* keeps the loop from being optimized away */
  return NULL;
}

/* ---- rate ---- */
typedef struct {
  int peer, sender;
  long size, window; /* window: the next window's number, across phases */
  unsigned char* buf;
  MPI_Request req[kWindow];
} RateState;

static void RatePostReceives(RateState* s) {
  for (int m = 0; m < kWindow; m++)
    MPI_Irecv(s->buf + m * s->size, (int)s->size, MPI_BYTE, s->peer, kDataTag,
              MPI_COMM_WORLD, &s->req[m]);
}

/* One batch of windows. The receiver posts window w+1's receives before it
 * acks window w (so the sender's next window finds them posted), except
 * after a batch's last window: whether another comes is still undecided. */
static void RateBatch(RateState* s) {
  MPI_Status st[kWindow];
  for (int k = 0; k < kRateBatch; k++, s->window++) {
    long w = s->window;
    if (s->sender) {
      for (int m = 0; m < kWindow; m++) {
        unsigned char* msg = s->buf + m * s->size;
        for (long i = 0; i < s->size; i++)
          msg[i] = Pattern(rank, w * kWindow + m, i);
        MPI_Isend(msg, (int)s->size, MPI_BYTE, s->peer, kDataTag,
                  MPI_COMM_WORLD, &s->req[m]);
      }
      MPI_Waitall(kWindow, s->req, MPI_STATUSES_IGNORE);
      long ack = -1;
      MPI_Recv(&ack, 1, MPI_LONG, s->peer, kAckTag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      if (ack != w) Fail("the ack of window %ld reads %ld", w, ack);
    } else {
      if (k == 0) RatePostReceives(s);
      MPI_Waitall(kWindow, s->req, st);
      for (int m = 0; m < kWindow; m++) {
        int count = -1;
        MPI_Get_count(&st[m], MPI_BYTE, &count);
        if (count != s->size)
          Fail("window %ld message %d: %d bytes, expected %ld", w, m, count,
               s->size);
        const unsigned char* msg = s->buf + m * s->size;
        for (long i = 0; i < s->size; i++)
          if (msg[i] != Pattern(s->peer, w * kWindow + m, i))
            Fail("window %ld message %d byte %ld is %d, expected %d", w, m, i,
                 msg[i], Pattern(s->peer, w * kWindow + m, i));
      }
      if (k + 1 < kRateBatch) RatePostReceives(s);
      MPI_Send(&w, 1, MPI_LONG, s->peer, kAckTag, MPI_COMM_WORLD);
    }
  }
}

static void RunRate(long size, double* value, long* batches, double* time_s) {
  RateState s = {0};
  int pairs = nranks / 2;
  int active = rank < 2 * pairs;
  s.sender = rank % 2 == 0;
  s.peer = s.sender ? rank + 1 : rank - 1;
  s.size = size;
  s.buf = malloc((size_t)kWindow * (size_t)size);
  if (s.buf == NULL) Fail("out of memory");
  Phase p;
  for (int measured = 0; measured < 2; measured++) {
    PhaseStart(&p, measured ? opt.time_s : opt.warmup_s,
               measured ? opt.batches : 0);
    do {
      if (active) RateBatch(&s);
    } while (Continue(&p, 0));
  }
  *time_s = Now() - p.start;
  *batches = p.done;
  *value =
      (double)pairs * (double)p.done * kRateBatch * kWindow / *time_s / 1e6;
  free(s.buf);
}

/* ---- pingpong ---- */
static int CompareDoubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void RunPingpong(long size, double* value, long* batches,
                        double* time_s) {
  int pairs = nranks / 2;
  int active = rank < 2 * pairs;
  int pinger = rank % 2 == 0;
  int peer = pinger ? rank + 1 : rank - 1;
  unsigned char* buf = malloc((size_t)size);
  double* lat = calloc(kMaxBatches, sizeof(double)); /* us, per batch */
  if (buf == NULL || lat == NULL) Fail("out of memory");
  long it = 0; /* round trips so far, across phases */
  Phase p;
  for (int measured = 0; measured < 2; measured++) {
    PhaseStart(&p, measured ? opt.time_s : opt.warmup_s,
               measured ? opt.batches : 0);
    do {
      if (!active) continue; /* straight to Continue() */
      double t0 = Now();
      for (int k = 0; k < kPingBatch; k++, it++) {
        /* The ping carries the pinger's pattern, the pong the ponger's. */
        if (pinger) {
          for (long i = 0; i < size; i++) buf[i] = Pattern(rank, it, i);
          MPI_Send(buf, (int)size, MPI_BYTE, peer, kDataTag, MPI_COMM_WORLD);
          MPI_Recv(buf, (int)size, MPI_BYTE, peer, kDataTag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, (int)size, MPI_BYTE, peer, kDataTag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
        }
        for (long i = 0; i < size; i++)
          if (buf[i] != Pattern(peer, it, i))
            Fail("round trip %ld byte %ld is %d, expected %d", it, i, buf[i],
                 Pattern(peer, it, i));
        if (!pinger) {
          for (long i = 0; i < size; i++) buf[i] = Pattern(rank, it, i);
          MPI_Send(buf, (int)size, MPI_BYTE, peer, kDataTag, MPI_COMM_WORLD);
        }
      }
      /* Continue() has not counted this batch yet: p.done indexes it. */
      if (p.done < kMaxBatches)
        lat[p.done] = (Now() - t0) / (2.0 * kPingBatch) * 1e6;
    } while (Continue(&p, 0));
  }
  *time_s = Now() - p.start;
  *batches = p.done;
  /* Every pair's batches to rank 0 (odd ranks send theirs too: the same
   * count; rank 0 keeps only pingers'), then the median. */
  long n = p.done;
  double* all =
      rank == 0 ? malloc(sizeof(double) * (size_t)n * (size_t)nranks) : NULL;
  if (rank == 0 && all == NULL) Fail("out of memory");
  MPI_Gather(lat, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  if (rank == 0) {
    long kept = 0;
    double sum = 0;
    for (int r = 0; r < 2 * pairs; r += 2)
      for (long b = 0; b < n; b++) sum += all[kept++] = all[(long)r * n + b];
    /* Batches have equal round trips, so this mean weighs them by time:
     * what a program waits on average. The median counts batches, and a
     * spinning library runs many fast ones whenever both ranks are on a
     * core, so it shows the latency of those stretches. */
    pingpong_mean_us = sum / (double)kept;
    qsort(all, (size_t)kept, sizeof(double), CompareDoubles);
    *value =
        kept % 2 ? all[kept / 2] : 0.5 * (all[kept / 2 - 1] + all[kept / 2]);
    free(all);
  }
  free(lat);
  free(buf);
}

/* ---- halo ---- */
/* Directions: 0 -x, 1 +x, 2 -y, 3 +y; a face sent towards d arrives in the
 * neighbour's ghost row or column on side d^1. The tile is n x n doubles
 * plus one ghost cell on each side, row-major, x along a row. */
enum { kDirs = 4 };

typedef struct {
  int n;
  int nbr[kDirs];
  double *a, *b; /* the tile and the sweep's output, (n+2)^2 each */
  double *send[kDirs], *recv[kDirs];
} Halo;

static double* Cell(const Halo* h, double* t, int x, int y) {
  return &t[(size_t)y * (size_t)(h->n + 2) + (size_t)x];
}

/* Cell i (0..n-1) of side d: the tile's own edge cell, or with ghost set
 * the ghost cell beyond it. */
static double* Face(const Halo* h, int d, int i, int ghost) {
  int n = h->n, lo = ghost ? 0 : 1, hi = ghost ? n + 1 : n;
  switch (d) {
    case 0:
      return Cell(h, h->a, lo, i + 1);
    case 1:
      return Cell(h, h->a, hi, i + 1);
    case 2:
      return Cell(h, h->a, i + 1, lo);
    default:
      return Cell(h, h->a, i + 1, hi);
  }
}

/* The value of cell i of the face a rank sends towards d at a step: exact
 * small integers, so a double compares equal bit for bit. */
static double FaceValue(int sender, long step, int d, int i) {
  return (double)Pattern(sender, step * kDirs + d, i) + 256.0 * d;
}

static void HaloStep(Halo* h, long step) {
  int n = h->n;
  MPI_Request req[2 * kDirs];
  /* Own edge cells take the step's pattern (the data check needs a known
   * value; the sweep below still reads them), packed per side. */
  for (int d = 0; d < kDirs; d++) {
    for (int i = 0; i < n; i++) {
      *Face(h, d, i, 0) = FaceValue(rank, step, d, i);
      h->send[d][i] = *Face(h, d, i, 0);
    }
  }
  for (int d = 0; d < kDirs; d++)
    MPI_Irecv(h->recv[d], n, MPI_DOUBLE, h->nbr[d], kDataTag + (d ^ 1),
              MPI_COMM_WORLD, &req[d]);
  for (int d = 0; d < kDirs; d++)
    MPI_Isend(h->send[d], n, MPI_DOUBLE, h->nbr[d], kDataTag + d,
              MPI_COMM_WORLD, &req[kDirs + d]);
  MPI_Waitall(2 * kDirs, req, MPI_STATUSES_IGNORE);
  for (int d = 0; d < kDirs; d++) {
    for (int i = 0; i < n; i++) {
      /* Ghosts on side d came from nbr[d], sent towards d^1. */
      if (h->recv[d][i] != FaceValue(h->nbr[d], step, d ^ 1, i))
        Fail("step %ld: side %d cell %d (from rank %d) is %g, expected %g",
             step, d, i, h->nbr[d], h->recv[d][i],
             FaceValue(h->nbr[d], step, d ^ 1, i));
      *Face(h, d, i, 1) = h->recv[d][i];
    }
  }
  /* The computation between exchanges: one Jacobi sweep (rows as plain
   * pointers, so the compiler vectorizes it). */
  for (int y = 1; y <= n; y++) {
    const double* up = Cell(h, h->a, 0, y - 1);
    const double* row = Cell(h, h->a, 0, y);
    const double* down = Cell(h, h->a, 0, y + 1);
    double* out = Cell(h, h->b, 0, y);
    for (int x = 1; x <= n; x++)
      out[x] = 0.25 * (row[x - 1] + row[x + 1] + up[x] + down[x]);
  }
  double* t = h->a;
  h->a = h->b;
  h->b = t;
}

static void RunHalo(long size, double* value, long* batches, double* time_s) {
  Halo h;
  h.n = (int)(size / 8);
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Comm cart;
  MPI_Dims_create(nranks, 2, dims);
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Cart_shift(cart, 0, 1, &h.nbr[0], &h.nbr[1]);
  MPI_Cart_shift(cart, 1, 1, &h.nbr[2], &h.nbr[3]);
  MPI_Comm_free(&cart); /* not reordered: its ranks are MPI_COMM_WORLD's */
  size_t cells = (size_t)(h.n + 2) * (size_t)(h.n + 2);
  h.a = calloc(cells, sizeof(double));
  h.b = calloc(cells, sizeof(double));
  int ok = h.a != NULL && h.b != NULL;
  for (int d = 0; d < kDirs; d++) {
    h.send[d] = malloc(sizeof(double) * (size_t)h.n);
    h.recv[d] = malloc(sizeof(double) * (size_t)h.n);
    ok = ok && h.send[d] != NULL && h.recv[d] != NULL;
  }
  if (!ok) Fail("out of memory");
  long step = 0;
  Phase p;
  for (int measured = 0; measured < 2; measured++) {
    PhaseStart(&p, measured ? opt.time_s : opt.warmup_s,
               measured ? opt.batches : 0);
    do {
      for (int k = 0; k < kHaloBatch; k++) HaloStep(&h, step++);
    } while (Continue(&p, 1));
  }
  *time_s = Now() - p.start;
  *batches = p.done;
  *value = *time_s / ((double)p.done * kHaloBatch) * 1e6;
  for (int d = 0; d < kDirs; d++) {
    free(h.send[d]);
    free(h.recv[d]);
  }
  free(h.a);
  free(h.b);
}

/* ---- main ---- */
static void Usage(void) {
  if (rank == 0)
    fprintf(stderr,
            "usage: loaded rate|pingpong|halo [--size B] [--time S] "
            "[--warmup S] [--batches N] [--compute-threads N] [--quick]\n");
  MPI_Finalize();
  exit(2);
}

static void ParseArgs(int argc, char** argv) {
  int quick = 0, kernel_set = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--quick") == 0) {
      quick = 1;
    } else if (strcmp(a, "--size") == 0 && v) {
      opt.size = atol(v), i++;
    } else if (strcmp(a, "--time") == 0 && v) {
      opt.time_s = atof(v), i++;
    } else if (strcmp(a, "--warmup") == 0 && v) {
      opt.warmup_s = atof(v), i++;
    } else if (strcmp(a, "--batches") == 0 && v) {
      opt.batches = atol(v), i++;
    } else if (strcmp(a, "--compute-threads") == 0 && v) {
      opt.compute_threads = atoi(v), i++;
    } else if (!kernel_set && a[0] != '-') {
      int k = 0;
      while (k < 3 && strcmp(a, kKernelNames[k]) != 0) k++;
      if (k == 3) Usage();
      opt.kernel = (enum Kernel)k;
      kernel_set = 1;
    } else {
      Usage();
    }
  }
  if (!kernel_set) Usage();
  if (opt.time_s < 0) opt.time_s = quick ? 0.05 : 1.0;
  if (opt.warmup_s < 0) opt.warmup_s = quick ? 0.01 : 0.1;
  if (opt.size == 0) opt.size = opt.kernel == kHalo ? 1024 : 8;
  if (opt.size < 1 || opt.size > kMaxBytes || opt.time_s <= 0 ||
      opt.batches < 0 || opt.batches > kMaxBatches || opt.compute_threads < 0 ||
      opt.compute_threads > kMaxComputeThreads ||
      (opt.kernel == kHalo && (opt.size % 8 != 0 || opt.size < 16)))
    Usage();
}

int main(int argc, char** argv) {
  /* Only the main thread calls MPI; the compute threads never do. */
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  ParseArgs(argc, argv);
  if (nranks < 2 && opt.kernel != kHalo) {
    if (rank == 0)
      fprintf(stderr, "loaded: %s needs 2 ranks or more\n",
              kKernelNames[opt.kernel]);
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\n")] = '\0';
    printf("# library: %s\n", version);
  }

  pthread_t threads[kMaxComputeThreads];
  for (int t = 0; t < opt.compute_threads; t++)
    if (pthread_create(&threads[t], NULL, Compute, (void*)(intptr_t)t) != 0)
      Fail("cannot start compute thread %d", t);

  double value = 0, time_s = 0;
  long batches = 0;
  switch (opt.kernel) {
    case kRate:
      RunRate(opt.size, &value, &batches, &time_s);
      break;
    case kPingpong:
      RunPingpong(opt.size, &value, &batches, &time_s);
      break;
    case kHalo:
      RunHalo(opt.size, &value, &batches, &time_s);
      break;
  }

  atomic_store(&compute_stop, 1);
  for (int t = 0; t < opt.compute_threads; t++) pthread_join(threads[t], NULL);
  if (rank == 0) {
    static const char* const kUnits[] = {"Mmsg/s", "us", "us/step"};
    printf(
        "loaded kernel=%s ranks=%d threads=%d size=%ld batches=%ld "
        "time_s=%.3f value=%.4g unit=%s",
        kKernelNames[opt.kernel], nranks, opt.compute_threads, opt.size,
        batches, time_s, value, kUnits[opt.kernel]);
    if (opt.kernel == kPingpong) printf(" mean=%.4g", pingpong_mean_us);
    printf("\n");
  }
  MPI_Finalize();
  return 0;
}
