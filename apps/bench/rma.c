/* One-sided communication (MPI RMA) between ranks 0 and 1, OSU style: rank 0
 * (the origin) puts, gets and updates atomically in a window of rank 1 (the
 * target), which only waits in MPI_Barrier (or, for the fence tests, in the
 * matching MPI_Win_fence calls) while the origin measures.
 *
 * Plain C and MPI only, so the same source builds against any MPI library
 * (apps/bench/rma_compare.sh builds it with minimpi, MPICH and Open MPI).
 *
 *   usage: rma [MAX_BYTES [quick]]   run with exactly 2 ranks
 *   MAX_BYTES: largest put/get (default 4194304 = 4 MiB)
 *   quick: a few iterations only (a correctness run, not a measurement)
 *
 * Tests (the window comes from MPI_Win_allocate, displacement unit 1):
 *   put_lat_fence, get_lat_fence   one MPI_Put / MPI_Get, then MPI_Win_fence
 *       on both ranks; us per operation (osu_put_latency -s fence measures
 *       the same put + fence, alternating its direction)
 *   put_lat_flush, get_lat_flush   one MPI_Put / MPI_Get + MPI_Win_flush, in
 *       one MPI_Win_lock(MPI_LOCK_SHARED) epoch; us per operation
 *       (osu_put_latency -s flush)
 *   put_bw_flush, get_bw_flush     64 puts / gets, then one flush, in one
 *       shared-lock epoch; MB/s (1 MB = 1e6 B) (osu_put_bw -s flush). Each
 *       of the 64 goes to its own place in the window while 64 of that size
 *       fit in 16 MiB, else they share the places that fit, in turn
 *   acc_rate   MPI_Accumulate(MPI_SUM) of one MPI_INT + flush; 4 B
 *   fop_rate   MPI_Fetch_and_op(MPI_SUM) of one MPI_LONG + flush; 8 B
 *   cas_rate   MPI_Compare_and_swap of one MPI_LONG + flush; 8 B
 *       each in millions of operations per second (Mops/s)
 * Sizes: 8 B, then times 4 up to MAX_BYTES, and MAX_BYTES itself.
 * Each measurement runs warm-up iterations first, untimed, and the data it
 * moved is checked afterwards: every byte a put wrote (checked by the target
 * under a lock of its own window), every byte a get read, the value each
 * atomic returned and the target's final value. A wrong byte prints what
 * was wrong and ends the job with MPI_Abort (exit status non-zero).
 *
 * Output: a line "# library: <MPI_Get_library_version's first line>", then
 * one line per measurement:
 *   test  bytes  value  unit        (unit: us, MB/s or Mops/s)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kOrigin = 0, kTarget = 1, kWindowOps = 64 };
static const size_t kBandwidthRegion = 16u << 20; /* room for 64 in flight */

static int quick = 0;
static int rank = 0;
static size_t region = 0;       /* bytes of the window for puts and gets */
static unsigned char* base;     /* this rank's window */
static unsigned char* buffer;   /* the origin's buffer, region bytes */
static MPI_Win win;

/* The window's atomic variables, after the region (8-byte aligned). */
static MPI_Aint AccOffset(void) { return (MPI_Aint)region; }
static MPI_Aint FopOffset(void) { return (MPI_Aint)region + 8; }
static MPI_Aint CasOffset(void) { return (MPI_Aint)region + 16; }

/* The byte at offset `o` of a test's data, for seed `seed`. */
static unsigned char Pattern(size_t o, unsigned seed) {
  return (unsigned char)(o * 31u + (o >> 8) * 7u + (o >> 16) * 13u +
                         seed * 101u + 1u);
}

static void Fill(unsigned char* p, size_t n, unsigned seed, int inverted) {
  for (size_t o = 0; o < n; ++o) {
    unsigned char b = Pattern(o, seed);
    p[o] = inverted ? (unsigned char)~b : b;
  }
}

static void Check(const char* test, size_t bytes, const unsigned char* p,
                  size_t n, unsigned seed) {
  for (size_t o = 0; o < n; ++o) {
    if (p[o] != Pattern(o, seed)) {
      fprintf(stderr,
              "rma: %s %zu B: rank %d: wrong byte at offset %zu of %zu: "
              "0x%02x, expected 0x%02x\n",
              test, bytes, rank, o, n, p[o], Pattern(o, seed));
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
}

static void Fail(const char* test, const char* what, long got, long want) {
  fprintf(stderr, "rma: %s: rank %d: %s %ld, expected %ld\n", test, rank, what,
          got, want);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Local access to the target's own window, between epochs. */
static void LockSelf(void) { MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win); }
static void UnlockSelf(void) { MPI_Win_unlock(kTarget, win); }

static int LatencyIterations(size_t bytes) {
  if (quick) return 3;
  if (bytes <= 8192) return 10000;
  long n = 10000L * 8192 / (long)bytes;
  return n < 50 ? 50 : (int)n;
}

static int BandwidthLoops(size_t bytes) {
  if (quick) return 2;
  if (bytes <= 8192) return 400;
  long n = 400L * 8192 / (long)bytes;
  return n < 8 ? 8 : (int)n;
}

static int Warmup(int iterations) {
  if (quick) return 1;
  int n = iterations / 10;
  return n < 5 ? 5 : n;
}

static void Report(const char* test, size_t bytes, double value,
                   const char* unit) {
  printf("%s %zu %.*f %s\n", test, bytes, value < 10 ? 3 : 2, value, unit);
  fflush(stdout);
}

/* Before a test: the target's window holds the pattern (gets) or its
 * inverse (puts); the origin's buffer holds the pattern (puts) or its
 * inverse (gets), so that no byte is already right. */
static void Prepare(int is_put, size_t n, unsigned seed) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == kTarget) {
    LockSelf();
    Fill(base, n, seed, is_put);
    UnlockSelf();
  } else {
    Fill(buffer, n, seed, !is_put);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* After a test: the bytes it moved are where they should be. */
static void Verify(const char* test, size_t bytes, int is_put, size_t n,
                   unsigned seed) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (is_put && rank == kTarget) {
    LockSelf();
    Check(test, bytes, base, n, seed);
    UnlockSelf();
  } else if (!is_put && rank == kOrigin) {
    Check(test, bytes, buffer, n, seed);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void Transfer(int is_put, void* local, size_t bytes, MPI_Aint disp) {
  if (is_put) {
    MPI_Put(local, (int)bytes, MPI_BYTE, kTarget, disp, (int)bytes, MPI_BYTE,
            win);
  } else {
    MPI_Get(local, (int)bytes, MPI_BYTE, kTarget, disp, (int)bytes, MPI_BYTE,
            win);
  }
}

static void LatencyFence(const char* test, int is_put, size_t bytes,
                         unsigned seed) {
  const int iterations = LatencyIterations(bytes);
  const int warmup = Warmup(iterations);
  Prepare(is_put, bytes, seed);
  double start = 0;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  for (int i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) start = MPI_Wtime();
    if (rank == kOrigin) Transfer(is_put, buffer, bytes, 0);
    MPI_Win_fence(0, win);
  }
  double elapsed = MPI_Wtime() - start;
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  Verify(test, bytes, is_put, bytes, seed);
  if (rank == kOrigin) Report(test, bytes, elapsed * 1e6 / iterations, "us");
}

static void LatencyFlush(const char* test, int is_put, size_t bytes,
                         unsigned seed) {
  const int iterations = LatencyIterations(bytes);
  const int warmup = Warmup(iterations);
  Prepare(is_put, bytes, seed);
  if (rank == kOrigin) {
    double start = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, kTarget, 0, win);
    for (int i = 0; i < warmup + iterations; ++i) {
      if (i == warmup) start = MPI_Wtime();
      Transfer(is_put, buffer, bytes, 0);
      MPI_Win_flush(kTarget, win);
    }
    double elapsed = MPI_Wtime() - start;
    MPI_Win_unlock(kTarget, win);
    Report(test, bytes, elapsed * 1e6 / iterations, "us");
  }
  Verify(test, bytes, is_put, bytes, seed);
}

static void BandwidthFlush(const char* test, int is_put, size_t bytes,
                           unsigned seed) {
  const int loops = BandwidthLoops(bytes);
  const int warmup = quick ? 1 : (loops / 10 < 2 ? 2 : loops / 10);
  size_t places = region / bytes;
  if (places > kWindowOps) places = kWindowOps;
  if (places < 1) places = 1;
  Prepare(is_put, places * bytes, seed);
  if (rank == kOrigin) {
    double start = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, kTarget, 0, win);
    for (int i = 0; i < warmup + loops; ++i) {
      if (i == warmup) start = MPI_Wtime();
      for (int j = 0; j < kWindowOps; ++j) {
        size_t offset = (size_t)j % places * bytes;
        Transfer(is_put, buffer + offset, bytes, (MPI_Aint)offset);
      }
      MPI_Win_flush(kTarget, win);
    }
    double elapsed = MPI_Wtime() - start;
    MPI_Win_unlock(kTarget, win);
    Report(test, bytes, (double)bytes * kWindowOps * loops / elapsed / 1e6,
           "MB/s");
  }
  Verify(test, bytes, is_put, places * bytes, seed);
}

static int AtomicIterations(void) { return quick ? 10 : 30000; }

/* Sets the target's variable at `offset` to `value` before an atomic test,
 * or checks it afterwards. */
static void SetTarget(MPI_Aint offset, long value, int is_int) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == kTarget) {
    LockSelf();
    if (is_int) {
      *(int*)(base + offset) = (int)value;
    } else {
      *(long*)(base + offset) = value;
    }
    UnlockSelf();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void CheckTarget(const char* test, MPI_Aint offset, long want,
                        int is_int) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == kTarget) {
    LockSelf();
    long got = is_int ? *(int*)(base + offset) : *(long*)(base + offset);
    UnlockSelf();
    if (got != want) Fail(test, "target's final value", got, want);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void AccRate(void) {
  const int iterations = AtomicIterations();
  const int warmup = Warmup(iterations);
  const int increment = 3;
  SetTarget(AccOffset(), 0, 1);
  if (rank == kOrigin) {
    double start = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, kTarget, 0, win);
    for (int i = 0; i < warmup + iterations; ++i) {
      if (i == warmup) start = MPI_Wtime();
      MPI_Accumulate(&increment, 1, MPI_INT, kTarget, AccOffset(), 1, MPI_INT,
                     MPI_SUM, win);
      MPI_Win_flush(kTarget, win);
    }
    double elapsed = MPI_Wtime() - start;
    MPI_Win_unlock(kTarget, win);
    Report("acc_rate", sizeof(int), iterations / elapsed / 1e6, "Mops/s");
  }
  CheckTarget("acc_rate", AccOffset(), (long)increment * (warmup + iterations),
              1);
}

static void FopRate(void) {
  const int iterations = AtomicIterations();
  const int warmup = Warmup(iterations);
  const long first = 1000, increment = 5;
  SetTarget(FopOffset(), first, 0);
  if (rank == kOrigin) {
    double start = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, kTarget, 0, win);
    for (int i = 0; i < warmup + iterations; ++i) {
      if (i == warmup) start = MPI_Wtime();
      long fetched = -1;
      MPI_Fetch_and_op(&increment, &fetched, MPI_LONG, kTarget, FopOffset(),
                       MPI_SUM, win);
      MPI_Win_flush(kTarget, win);
      if (fetched != first + increment * i) {
        Fail("fop_rate", "fetched", fetched, first + increment * i);
      }
    }
    double elapsed = MPI_Wtime() - start;
    MPI_Win_unlock(kTarget, win);
    Report("fop_rate", sizeof(long), iterations / elapsed / 1e6, "Mops/s");
  }
  CheckTarget("fop_rate", FopOffset(),
              first + increment * (warmup + iterations), 0);
}

static void CasRate(void) {
  const int iterations = AtomicIterations();
  const int warmup = Warmup(iterations);
  SetTarget(CasOffset(), 0, 0);
  if (rank == kOrigin) {
    double start = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, kTarget, 0, win);
    for (int i = 0; i < warmup + iterations; ++i) {
      if (i == warmup) start = MPI_Wtime();
      /* The target holds v; every other swap is meant to fail: it compares
       * with a stale value. */
      long v = (i + 1) / 2;
      long compare = (i % 2 == 0) ? v : v - 1;
      long swap = v + 1, result = -1;
      MPI_Compare_and_swap(&swap, &compare, &result, MPI_LONG, kTarget,
                           CasOffset(), win);
      MPI_Win_flush(kTarget, win);
      if (result != v) Fail("cas_rate", "result", result, v);
    }
    double elapsed = MPI_Wtime() - start;
    MPI_Win_unlock(kTarget, win);
    Report("cas_rate", sizeof(long), iterations / elapsed / 1e6, "Mops/s");
  }
  long n = warmup + iterations;
  CheckTarget("cas_rate", CasOffset(), (n + 1) / 2, 0);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "rma: run with exactly 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  size_t max_bytes = 4u << 20;
  if (argc > 1) max_bytes = strtoull(argv[1], NULL, 10);
  if (argc > 2 && strcmp(argv[2], "quick") == 0) quick = 1;
  if (max_bytes < 8 || max_bytes > (1u << 30)) {
    if (rank == 0) fprintf(stderr, "rma: MAX_BYTES must be 8 .. 1 GiB\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  region = max_bytes * kWindowOps;
  if (region > kBandwidthRegion) region = kBandwidthRegion;
  if (region < max_bytes) region = max_bytes;
  region = (region + 7) & ~(size_t)7;
  if (MPI_Win_allocate((MPI_Aint)(region + 64), 1, MPI_INFO_NULL,
                       MPI_COMM_WORLD, &base, &win) != MPI_SUCCESS) {
    fprintf(stderr, "rma: MPI_Win_allocate failed\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  buffer = malloc(region);
  if (buffer == NULL) {
    fprintf(stderr, "rma: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  if (rank == kOrigin) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    version[strcspn(version, "\n")] = '\0';
    printf("# library: %s\n", version);
    fflush(stdout);
  }

  size_t sizes[40];
  int count = 0;
  for (size_t s = 8; s <= max_bytes; s *= 4) sizes[count++] = s;
  if (sizes[count - 1] != max_bytes) sizes[count++] = max_bytes;

  struct {
    const char* name;
    void (*run)(const char*, int, size_t, unsigned);
    int is_put;
  } tests[] = {
      {"put_lat_fence", LatencyFence, 1}, {"get_lat_fence", LatencyFence, 0},
      {"put_lat_flush", LatencyFlush, 1}, {"get_lat_flush", LatencyFlush, 0},
      {"put_bw_flush", BandwidthFlush, 1}, {"get_bw_flush", BandwidthFlush, 0},
  };
  for (unsigned t = 0; t < sizeof tests / sizeof tests[0]; ++t) {
    for (int k = 0; k < count; ++k) {
      tests[t].run(tests[t].name, tests[t].is_put, sizes[k], t * 64u + k + 1);
    }
  }
  AccRate();
  FopRate();
  CasRate();

  MPI_Win_free(&win);
  free(buffer);
  MPI_Finalize();
  return 0;
}
