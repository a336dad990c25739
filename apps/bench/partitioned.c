/* Partitioned point-to-point micro-benchmarks, after the suite of Temuçin,
 * Grant and Afsahi ("A partitioned communication micro-benchmark suite",
 * ICPP'22): what an MPI+threads program gains or loses when each thread
 * hands its part of a message to MPI as soon as it is computed
 * (MPI_Psend_init / MPI_Pready), compared with one persistent send per
 * partition and with one send of the whole buffer after the last thread.
 *
 * Plain C, MPI and pthreads, so the same source builds against any MPI
 * library: apps/bench/part_compare.sh builds it with minimpi, MPICH and
 * Open MPI. Without the MPI-4 partitioned API (MPI_VERSION < 4, e.g. Open
 * MPI 4.1) only the persistent and single variants exist.
 *
 *   usage: partitioned [options]        run with exactly 2 ranks
 *   (lists are comma separated; sizes take K/M/KiB/MiB suffixes; A:B is the
 *   powers of 4 from A to B)
 *     --mode LIST          overhead, bandwidth, earlybird, sweep (default
 *                          overhead,bandwidth,earlybird)
 *     --variant LIST       part (partitioned, no info key: the library's
 *                          default), none, size, table, ploggp, timer,
 *                          adaptive (partitioned with MPI_Info
 *                          minimpi_part_aggr=NAME; other libraries ignore
 *                          the key), persistent, single (default:
 *                          part,persistent,single)
 *     --partitions LIST    user partitions on the sender (default 16)
 *     --recv-partitions N  partitions on the receiver (default: the same)
 *     --threads T          sender threads; thread t owns partitions
 *                          [t*P/T, (t+1)*P/T) (default min(P, 16))
 *     --bytes LIST         whole-buffer sizes (default 1K:16M)
 *     --part-bytes LIST    bytes per user partition instead (buffer = P * it)
 *     --compute-us C       compute time per round (default 1000)
 *     --laggard-us L       extra delay of the laggard thread (default 10% of C)
 *     --noise-us N         others get uniform [0, N) extra (default 2% of C)
 *     --rounds R           measured rounds per point (default 30; 3 warm-up)
 *     --pready each|range|list   how a thread marks its partitions ready
 *                          (MPI_Pready per partition, one MPI_Pready_range,
 *                          one MPI_Pready_list; default each)
 *     --transport-partitions LIST, --channels LIST   MPI_Info keys
 *                          minimpi_part_transport_partitions and
 *                          minimpi_part_channels for the partitioned variants
 *                          (0 = do not set; values above P are skipped)
 *     --no-baseline        overhead mode: no single-send reference run
 *     --seed S             noise and laggard choice (default 1)
 *     --clock auto|shared|separate   how bandwidth mode dates the receiver's
 *                          completion: auto (default) shared when both ranks
 *                          report the same MPI_Get_processor_name, else
 *                          separate; shared: the ranks read one
 *                          CLOCK_MONOTONIC even with different names (nodes
 *                          simulated on one kernel, as tools/slurm/
 *                          start_cluster.sh makes); separate: never assume it
 *     --verbose            every round's times on stderr (sender side)
 *     --quick              3 rounds, 1 warm-up, small sizes unless given: a
 *                          correctness run, not a measurement
 *
 * A round (rank 0 sends, rank 1 receives):
 *   receiver: MPI_Start (or posts MPI_Irecv), sends a "go" token, waits for
 *     the data (MPI_Wait / MPI_Waitall, or polling in earlybird mode), sends a
 *     "done" token, then checks every byte (not timed);
 *   sender: receives "go", stamps t0, MPI_Start, releases its T threads.
 *     Thread t sleeps until t0 + C + noise_t (+ L for the laggard, chosen at
 *     random each round) with clock_nanosleep(TIMER_ABSTIME) -- compute is
 *     modelled by sleeping, never spinning, so sender threads do not steal
 *     the cores the two ranks' progress needs -- then stamps its wake time
 *     and marks its partitions ready (partitioned), MPI_Starts its own
 *     persistent sends (persistent), or does nothing (single: the main
 *     thread sends the whole buffer with MPI_Isend once all threads are
 *     done). The main thread joins the threads, MPI_Waits, receives "done".
 *     Then it fills the buffer for the next round (not timed).
 * Every byte is a function of (point, round, sender partition, offset), so a
 * byte from another round, partition or place fails the check; a mismatch
 * prints where and exits non-zero (MPI_Abort).
 *
 * Measurements (median over rounds unless said):
 *   overhead   round time (t0 to "done" received) minus the scheduled compute
 *              (the latest thread deadline). Both include one small-message
 *              latency (the "done" token) for every variant alike. ratio =
 *              the variant's overhead / the single send's overhead at the
 *              same point, measured in the same run (below 1: the variant
 *              hides communication behind compute).
 *   bandwidth  perceived bandwidth: bytes / (receiver's completion - the
 *              last thread's ready stamp), what the application sees after
 *              its last partition is ready. When both ranks run on one host
 *              (same MPI_Get_processor_name) they read the same system-wide
 *              CLOCK_MONOTONIC and the receiver's completion stamp travels in
 *              the "done" token; otherwise the completion is taken as the
 *              "done" token's arrival less one small-message latency
 *              (median of a ping-pong at start-up). The header says which.
 *   earlybird  fraction of the data at the receiver when the laggard thread
 *              becomes ready. The laggard thread sends a small "laggard now"
 *              message naming its partitions just before it marks them
 *              ready; the receiver alternates a test for that message with a
 *              pass of MPI_Parrived over every partition not yet seen
 *              (MPI_Test per request for persistent, on the one request for
 *              single). Counted: the data seen at least one full pass before
 *              the last test that found no message -- so it had arrived
 *              before the message did, hence before the laggard was ready --
 *              leaving out any unit holding laggard data. value = counted
 *              bytes / all bytes, mean over rounds; max = the bytes not the
 *              laggard's (the best possible). No clocks are compared, so it
 *              holds across hosts; it is conservative by about two polling
 *              passes, and never counts what arrived after the message.
 *   sweep      a two-rank wavefront (pipeline) like sweep3d: each rank owns a
 *              column of B blocks (k-planes; B = partitions), computes them in
 *              order, C/B each; the downstream rank needs block i of the
 *              upstream rank's face (partition i) before it computes its own
 *              block i. Sweeps alternate direction (0->1, then 1->0). One
 *              thread per rank. value = time per sweep (upstream start to
 *              downstream done), ratio = vs single, which sends the face after
 *              the upstream's last block: about 2C, against about C + C/B
 *              for a library that delivers partitions early.
 *
 * Output: '#' lines (library, options, clock), then one line per point:
 *   variant=V mode=M partitions=P recv_partitions=PR threads=T bytes=B
 *   part_bytes=b tp=K ch=C rounds=R value=X unit=U [fields of the mode]
 * (tp/ch: the transport-partition and channel info keys, 0 = not set).
 * Writes per round are internal to a library: part_compare.sh reads them
 * from minimpi's MINIMPI_PART_PROFILE files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#if MPI_VERSION >= 4
#define HAVE_PARTITIONED 1
#else
#define HAVE_PARTITIONED 0
#endif

enum {
  kMaxList = 64,
  kMaxThreads = 1024,
  kTagGo = 1,
  kTagDone = 2,
  kTagLaggard = 3,
  kTagSingle = 4,
  kTagPart = 5,
  kTagSweep = 6,
  kTagP2p = 100, /* + partition */
};

enum Kind { kPartitioned, kPersistent, kSingle };
enum Mode { kOverhead, kBandwidth, kEarlybird, kSweep, kModes };
static const char* const kModeNames[kModes] = {"overhead", "bandwidth",
                                               "earlybird", "sweep"};
enum PreadyMode { kPreadyEach, kPreadyRange, kPreadyList };

typedef struct {
  const char* name;
  enum Kind kind;
  const char* aggregator; /* minimpi_part_aggr value, NULL: no key */
} Variant;

static const Variant kVariants[] = {
    {"part", kPartitioned, NULL},       {"none", kPartitioned, "none"},
    {"size", kPartitioned, "size"},     {"table", kPartitioned, "table"},
    {"ploggp", kPartitioned, "ploggp"}, {"timer", kPartitioned, "timer"},
    {"adaptive", kPartitioned, "adaptive"},
    {"persistent", kPersistent, NULL},  {"single", kSingle, NULL},
};
enum { kVariantCount = sizeof(kVariants) / sizeof(kVariants[0]) };

typedef struct {
  int modes[kModes];
  const Variant* variants[kMaxList];
  int variant_count;
  int partitions[kMaxList];
  int partition_count;
  int recv_partitions; /* 0: as the sender */
  int threads;         /* 0: min(P, 16) */
  size_t bytes[kMaxList];
  int bytes_count;
  int bytes_are_per_partition;
  double compute_us, laggard_us, noise_us; /* laggard/noise < 0: default */
  int rounds, warmup;
  enum PreadyMode pready;
  int tp[kMaxList], tp_count;
  int channels[kMaxList], channel_count;
  int baseline;
  unsigned long long seed;
  int quick;
  int verbose;
  int clock; /* kClockAuto, kClockShared, kClockSeparate */
} Options;

enum { kClockAuto, kClockShared, kClockSeparate };

static Options opt;
static int rank;
static MPI_Comm comm;
static int shared_clock;  /* both ranks on one host: one CLOCK_MONOTONIC */
static char processor_names[2][MPI_MAX_PROCESSOR_NAME]; /* of ranks 0, 1 */
static double latency_ns; /* one-way small message, median */
static uint64_t point_id; /* counts measured points, part of the pattern */

/* ---- time ---------------------------------------------------------------- */

static int64_t NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void SleepUntil(int64_t deadline_ns) {
  struct timespec ts = {(time_t)(deadline_ns / 1000000000LL),
                        (long)(deadline_ns % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
}

static uint64_t rng_state;
static uint64_t Random(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}

static int CompareDoubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : (x > y ? 1 : 0);
}

static double Median(double* values, int n) {
  qsort(values, (size_t)n, sizeof(double), CompareDoubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* ---- the data pattern ---------------------------------------------------- */

static uint64_t Mix(uint64_t x) { /* splitmix64 finalizer */
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

static uint64_t Seed(int round, int partition) {
  return Mix(Mix(point_id * 1000003ULL + (uint64_t)round) ^
             ((uint64_t)partition << 32));
}

static const uint64_t kStride = 0x9E3779B97F4A7C15ULL;

/* Word k of a partition holds seed + k * stride, little end first. */
static void FillPartition(unsigned char* dst, size_t n, uint64_t seed) {
  uint64_t value = seed;
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    memcpy(dst + k, &value, 8);
    value += kStride;
  }
  for (size_t b = 0; k < n; ++k, ++b) dst[k] = (unsigned char)(value >> (8 * b));
}

/* Returns the offset of the first wrong byte, or n. */
static size_t CheckPartition(const unsigned char* src, size_t n,
                             uint64_t seed) {
  uint64_t value = seed;
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    uint64_t got;
    memcpy(&got, src + k, 8);
    if (got != value) {
      for (int b = 0; b < 8; ++b) {
        if (src[k + b] != (unsigned char)(value >> (8 * b))) return k + b;
      }
    }
    value += kStride;
  }
  for (size_t b = 0; k < n; ++k, ++b) {
    if (src[k] != (unsigned char)(value >> (8 * b))) return k;
  }
  return n;
}

static void FillBuffer(unsigned char* buffer, int partitions, size_t part_bytes,
                       int round) {
  for (int p = 0; p < partitions; ++p) {
    FillPartition(buffer + (size_t)p * part_bytes, part_bytes, Seed(round, p));
  }
}

static void CheckBuffer(const unsigned char* buffer, int partitions,
                        size_t part_bytes, int round, const char* what) {
  for (int p = 0; p < partitions; ++p) {
    const unsigned char* src = buffer + (size_t)p * part_bytes;
    size_t bad = CheckPartition(src, part_bytes, Seed(round, p));
    if (bad != part_bytes) {
      fprintf(stderr,
              "partitioned: %s: wrong data in round %d, sender partition %d "
              "(of %d, %zu B each), byte %zu: got 0x%02x\n",
              what, round, p, partitions, part_bytes, bad, src[bad]);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
}

/* ---- one measured point -------------------------------------------------- */

typedef struct {
  const Variant* variant;
  enum Mode mode;
  int partitions, recv_partitions, threads;
  size_t bytes, part_bytes;
  int tp, channels;
} Point;

/* What the sender's threads need for one round, and what they report. */
typedef struct {
  const Point* point;
  unsigned char* buffer;
  MPI_Request part_request;
  MPI_Request* requests; /* persistent: one per partition */
  int* part_lo;          /* thread t owns [part_lo[t], part_lo[t+1]) */
  int64_t t0;
  int64_t offset_ns[kMaxThreads];
  int64_t wake_ns[kMaxThreads];
  int laggard;
  int quit;
  pthread_barrier_t start, end;
} Round;

static void MarkReady(Round* round, int t) {
  const Point* pt = round->point;
  const int lo = round->part_lo[t], hi = round->part_lo[t + 1];
  if (hi <= lo) return;
  if (pt->variant->kind == kPersistent) {
    MPI_Startall(hi - lo, round->requests + lo);
    return;
  }
  if (pt->variant->kind != kPartitioned) return;
#if HAVE_PARTITIONED
  switch (opt.pready) {
    case kPreadyEach:
      for (int p = lo; p < hi; ++p) MPI_Pready(p, round->part_request);
      break;
    case kPreadyRange:
      MPI_Pready_range(lo, hi - 1, round->part_request);
      break;
    case kPreadyList: { /* in descending order: any order is allowed */
      int list[256];
      for (int top = hi - 1; top >= lo;) {
        int n = 0;
        while (top >= lo && n < 256) list[n++] = top--;
        MPI_Pready_list(n, list, round->part_request);
      }
      break;
    }
  }
#endif
}

static void* Worker(void* arg) {
  Round* round = ((void**)arg)[0];
  const int t = (int)(intptr_t)((void**)arg)[1];
  for (;;) {
    pthread_barrier_wait(&round->start);
    if (round->quit) break;
    SleepUntil(round->t0 + round->offset_ns[t]);
    round->wake_ns[t] = NowNs();
    if (t == round->laggard && round->point->mode == kEarlybird) {
      /* "Laggard now", naming the partitions it is about to mark ready. */
      int range[2] = {round->part_lo[t], round->part_lo[t + 1]};
      MPI_Send(range, 2, MPI_INT, 1, kTagLaggard, comm);
    }
    MarkReady(round, t);
    pthread_barrier_wait(&round->end);
  }
  return NULL;
}

/* The receiver's report of one round, in the "done" token. */
typedef struct {
  int64_t complete_ns;    /* its CLOCK_MONOTONIC at completion */
  int64_t arrived_bytes;  /* earlybird: bytes seen before the laggard */
  int64_t possible_bytes; /* earlybird: bytes not the laggard's */
  int64_t arrived_units;  /* earlybird: partitions (or requests) of those */
} Report;

static MPI_Info MakeInfo(const Point* pt) {
  if (!pt->variant->aggregator && pt->tp <= 0 && pt->channels <= 0) {
    return MPI_INFO_NULL;
  }
  MPI_Info info;
  char value[32];
  MPI_Info_create(&info);
  if (pt->variant->aggregator) {
    MPI_Info_set(info, "minimpi_part_aggr", pt->variant->aggregator);
  }
  if (pt->tp > 0) {
    snprintf(value, sizeof value, "%d", pt->tp);
    MPI_Info_set(info, "minimpi_part_transport_partitions", value);
  }
  if (pt->channels > 0) {
    snprintf(value, sizeof value, "%d", pt->channels);
    MPI_Info_set(info, "minimpi_part_channels", value);
  }
  return info;
}

static void FreeInfo(MPI_Info* info) {
  if (*info != MPI_INFO_NULL) MPI_Info_free(info);
}

typedef struct {
  double value;
  double extra[4];
} Result;

/* Sender side (rank 0) of one point: runs warm-up + measured rounds. */
static Result SendPoint(const Point* pt) {
  const int rounds = opt.warmup + opt.rounds;
  const int P = pt->partitions, T = pt->threads;
  unsigned char* buffer = malloc(pt->bytes);
  MPI_Request* requests = NULL;
  Round* round = calloc(1, sizeof(Round));
  int part_lo[kMaxThreads + 1];
  for (int t = 0; t <= T; ++t) part_lo[t] = (int)((long)t * P / T);
  round->point = pt;
  round->buffer = buffer;
  round->part_lo = part_lo;
  round->part_request = MPI_REQUEST_NULL;

  MPI_Info info = MakeInfo(pt);
  if (pt->variant->kind == kPartitioned) {
#if HAVE_PARTITIONED
    MPI_Psend_init(buffer, P, (MPI_Count)pt->part_bytes, MPI_BYTE, 1, kTagPart,
                   comm, info, &round->part_request);
#endif
  } else if (pt->variant->kind == kPersistent) {
    requests = malloc(sizeof(MPI_Request) * (size_t)P);
    for (int p = 0; p < P; ++p) {
      MPI_Send_init(buffer + (size_t)p * pt->part_bytes, (int)pt->part_bytes,
                    MPI_BYTE, 1, kTagP2p + p, comm, &requests[p]);
    }
  }
  FreeInfo(&info);
  round->requests = requests;

  pthread_barrier_init(&round->start, NULL, (unsigned)T + 1);
  pthread_barrier_init(&round->end, NULL, (unsigned)T + 1);
  pthread_t threads[kMaxThreads];
  void* args[kMaxThreads][2];
  for (int t = 0; t < T; ++t) {
    args[t][0] = round;
    args[t][1] = (void*)(intptr_t)t;
    if (pthread_create(&threads[t], NULL, Worker, args[t]) != 0) {
      fprintf(stderr, "partitioned: pthread_create failed at thread %d\n", t);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }

  const double compute_ns = opt.compute_us * 1e3;
  const double laggard_ns =
      (opt.laggard_us >= 0 ? opt.laggard_us : 0.1 * opt.compute_us) * 1e3;
  const double noise_ns =
      (opt.noise_us >= 0 ? opt.noise_us : 0.02 * opt.compute_us) * 1e3;
  double* overhead = malloc(sizeof(double) * (size_t)rounds);
  double* perceived = malloc(sizeof(double) * (size_t)rounds);
  double arrived_sum = 0, max_sum = 0, units_sum = 0;
  int measured = 0;

  FillBuffer(buffer, P, pt->part_bytes, 0);
  for (int r = 0; r < rounds; ++r) {
    MPI_Recv(NULL, 0, MPI_BYTE, 1, kTagGo, comm, MPI_STATUS_IGNORE);
    round->t0 = NowNs();
    round->laggard = (int)(Random() % (uint64_t)T);
    int64_t compute_end = 0;
    for (int t = 0; t < T; ++t) {
      double noise = noise_ns > 0 ? (double)(Random() % 1000000) / 1e6 * noise_ns : 0;
      round->offset_ns[t] = (int64_t)(compute_ns + noise +
                                      (t == round->laggard ? laggard_ns : 0));
      if (round->offset_ns[t] > compute_end) compute_end = round->offset_ns[t];
    }
#if HAVE_PARTITIONED
    if (pt->variant->kind == kPartitioned) MPI_Start(&round->part_request);
#endif
    pthread_barrier_wait(&round->start);
    pthread_barrier_wait(&round->end);
    if (pt->variant->kind == kSingle) {
      MPI_Request request;
      MPI_Isend(buffer, (int)pt->bytes, MPI_BYTE, 1, kTagSingle, comm, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else if (pt->variant->kind == kPersistent) {
      MPI_Waitall(P, requests, MPI_STATUSES_IGNORE);
    } else {
      MPI_Wait(&round->part_request, MPI_STATUS_IGNORE);
    }
    Report report;
    MPI_Recv(&report, (int)sizeof report, MPI_BYTE, 1, kTagDone, comm,
             MPI_STATUS_IGNORE);
    const int64_t t_end = NowNs();
    int64_t last_ready = 0;
    for (int t = 0; t < T; ++t) {
      if (round->wake_ns[t] > last_ready) last_ready = round->wake_ns[t];
    }
    if (opt.verbose) {
      fprintf(stderr, "round %d: overhead %.1f us, last ready to done %.1f us\n",
              r, (double)(t_end - round->t0 - compute_end) / 1e3,
              (double)(t_end - last_ready) / 1e3);
    }
    if (r >= opt.warmup) {
      overhead[measured] = (double)(t_end - round->t0 - compute_end);
      perceived[measured] =
          shared_clock ? (double)(report.complete_ns - last_ready)
                       : (double)(t_end - last_ready) - latency_ns;
      arrived_sum += (double)report.arrived_bytes / (double)pt->bytes;
      max_sum += (double)report.possible_bytes / (double)pt->bytes;
      units_sum += (double)report.arrived_units;
      ++measured;
    }
    if (r + 1 < rounds) FillBuffer(buffer, P, pt->part_bytes, r + 1);
  }

  round->quit = 1;
  pthread_barrier_wait(&round->start);
  for (int t = 0; t < T; ++t) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&round->start);
  pthread_barrier_destroy(&round->end);
  if (requests) {
    for (int p = 0; p < P; ++p) MPI_Request_free(&requests[p]);
  }
  if (round->part_request != MPI_REQUEST_NULL) {
    MPI_Request_free(&round->part_request);
  }

  Result result = {0, {0, 0, 0, 0}};
  switch (pt->mode) {
    case kOverhead:
      result.value = Median(overhead, measured) / 1e3;
      break;
    case kBandwidth: {
      double t = Median(perceived, measured);
      result.extra[0] = t / 1e3;
      result.extra[1] = t <= 0; /* clamped: below clock resolution */
      if (t < 1) t = 1;
      result.value = (double)pt->bytes / t * 1e3; /* MB/s */
      break;
    }
    case kEarlybird:
      result.value = arrived_sum / measured;
      result.extra[0] = units_sum / measured;
      result.extra[1] = max_sum / measured;
      break;
    default:
      break;
  }
  free(overhead);
  free(perceived);
  free(requests);
  free(round);
  free(buffer);
  return result;
}

/* Whether receiver partition i (or all data, for single) has arrived. */
static int Arrived(const Point* pt, MPI_Request part_request,
                   MPI_Request* requests, int i) {
  int flag = 0;
  (void)part_request; /* unused without the partitioned API */
  switch (pt->variant->kind) {
    case kPartitioned:
#if HAVE_PARTITIONED
      MPI_Parrived(part_request, i, &flag);
#endif
      break;
    case kPersistent:
      MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE);
      break;
    case kSingle:
      MPI_Test(requests, &flag, MPI_STATUS_IGNORE);
      break;
  }
  return flag;
}

/* Receiver side (rank 1) of one point. */
static void ReceivePoint(const Point* pt) {
  const int rounds = opt.warmup + opt.rounds;
  const int PR = pt->recv_partitions;
  const size_t recv_part_bytes = pt->bytes / (size_t)PR;
  (void)recv_part_bytes; /* unused without the partitioned API */
  unsigned char* buffer = malloc(pt->bytes);
  MPI_Request part_request = MPI_REQUEST_NULL;
  MPI_Request* requests =
      malloc(sizeof(MPI_Request) * (size_t)(pt->variant->kind == kPersistent
                                                ? pt->partitions
                                                : 1));
  int* seen_pass = malloc(sizeof(int) * (size_t)(PR > pt->partitions ? PR : pt->partitions));
  MPI_Info info = MakeInfo(pt);
  if (pt->variant->kind == kPartitioned) {
#if HAVE_PARTITIONED
    MPI_Precv_init(buffer, PR, (MPI_Count)recv_part_bytes, MPI_BYTE, 0,
                   kTagPart, comm, info, &part_request);
#endif
  } else if (pt->variant->kind == kPersistent) {
    for (int p = 0; p < pt->partitions; ++p) {
      MPI_Recv_init(buffer + (size_t)p * pt->part_bytes, (int)pt->part_bytes,
                    MPI_BYTE, 0, kTagP2p + p, comm, &requests[p]);
    }
  }
  FreeInfo(&info);
  /* What is polled: receiver partitions, persistent receives (one per
   * sender partition) or the single receive; unit i holds the bytes
   * [i * unit_bytes, (i + 1) * unit_bytes). */
  const int polled = pt->variant->kind == kPersistent ? pt->partitions
                     : pt->variant->kind == kSingle   ? 1
                                                      : PR;
  const size_t unit_bytes = pt->bytes / (size_t)polled;

  for (int r = 0; r < rounds; ++r) {
    memset(buffer, 0, pt->bytes);
    MPI_Request laggard = MPI_REQUEST_NULL;
    int laggard_range[2];
    switch (pt->variant->kind) {
      case kPartitioned:
        MPI_Start(&part_request);
        break;
      case kPersistent:
        MPI_Startall(pt->partitions, requests);
        break;
      case kSingle:
        MPI_Irecv(buffer, (int)pt->bytes, MPI_BYTE, 0, kTagSingle, comm,
                  &requests[0]);
        break;
    }
    if (pt->mode == kEarlybird) {
      MPI_Irecv(laggard_range, 2, MPI_INT, 0, kTagLaggard, comm, &laggard);
    }
    MPI_Send(NULL, 0, MPI_BYTE, 0, kTagGo, comm);
    Report report = {0, 0, 0, 0};
    if (pt->mode == kEarlybird) {
      /* Iteration k tests for the "laggard now" message, then polls every
       * unit not yet seen (pass k). When test k sees the message, only
       * units seen in passes up to k - 2 count: they were seen before test
       * k - 1 found no message, so they arrived before it did (and so
       * before the laggard marked its data ready, as it sends the message
       * first). Conservative by at most two passes. */
      int count = 0, laggard_test = -1;
      for (int i = 0; i < polled; ++i) seen_pass[i] = -1;
      for (int k = 0; laggard_test < 0 || count < polled; ++k) {
        if (laggard_test < 0) {
          int flag;
          MPI_Test(&laggard, &flag, MPI_STATUS_IGNORE);
          if (flag) laggard_test = k;
        }
        for (int i = 0; i < polled; ++i) {
          if (seen_pass[i] < 0 && Arrived(pt, part_request, requests, i)) {
            seen_pass[i] = k;
            ++count;
          }
        }
      }
      const size_t lag_lo = (size_t)laggard_range[0] * pt->part_bytes;
      const size_t lag_hi = (size_t)laggard_range[1] * pt->part_bytes;
      for (int i = 0; i < polled; ++i) {
        const size_t lo = (size_t)i * unit_bytes, hi = lo + unit_bytes;
        if (lo < lag_hi && lag_lo < hi) continue; /* holds laggard data */
        report.possible_bytes += (int64_t)unit_bytes;
        if (seen_pass[i] >= 0 && seen_pass[i] <= laggard_test - 2) {
          report.arrived_bytes += (int64_t)unit_bytes;
          ++report.arrived_units;
        }
      }
    }
    switch (pt->variant->kind) {
      case kPartitioned:
        MPI_Wait(&part_request, MPI_STATUS_IGNORE);
        break;
      case kPersistent:
        MPI_Waitall(pt->partitions, requests, MPI_STATUSES_IGNORE);
        break;
      case kSingle:
        MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
        break;
    }
    report.complete_ns = NowNs();
    MPI_Send(&report, (int)sizeof report, MPI_BYTE, 0, kTagDone, comm);
    char what[160];
    snprintf(what, sizeof what, "variant %s mode %s partitions %d bytes %zu",
             pt->variant->name, kModeNames[pt->mode], pt->partitions,
             pt->bytes);
    CheckBuffer(buffer, pt->partitions, pt->part_bytes, r, what);
  }

  if (pt->variant->kind == kPersistent) {
    for (int p = 0; p < pt->partitions; ++p) MPI_Request_free(&requests[p]);
  }
  if (part_request != MPI_REQUEST_NULL) MPI_Request_free(&part_request);
  free(seen_pass);
  free(requests);
  free(buffer);
}

/* ---- sweep: a two-rank wavefront ---------------------------------------- */

/* Time per sweep in ns, median; both ranks take turns upstream. */
static double SweepPoint(const Point* pt) {
  const int B = pt->partitions;
  const int sweeps = 2 * (opt.warmup + opt.rounds);
  const int peer = 1 - rank;
  const double block_ns = opt.compute_us * 1e3 / B;
  unsigned char* send_buffer = malloc(pt->bytes);
  unsigned char* recv_buffer = malloc(pt->bytes);
  MPI_Request send_part = MPI_REQUEST_NULL, recv_part = MPI_REQUEST_NULL;
  MPI_Request* sends = malloc(sizeof(MPI_Request) * (size_t)B);
  MPI_Request* recvs = malloc(sizeof(MPI_Request) * (size_t)B);
  double* times = malloc(sizeof(double) * (size_t)sweeps);
  int measured = 0;
  MPI_Info info = MakeInfo(pt);
  if (pt->variant->kind == kPartitioned) {
#if HAVE_PARTITIONED
    /* Rank 0 creates its send first, rank 1 its receive first: either
     * order must work, as init calls are local in MPI-4. */
    MPI_Psend_init(send_buffer, B, (MPI_Count)pt->part_bytes, MPI_BYTE, peer,
                   kTagSweep, comm, info, &send_part);
    MPI_Precv_init(recv_buffer, B, (MPI_Count)pt->part_bytes, MPI_BYTE, peer,
                   kTagSweep, comm, info, &recv_part);
#endif
  } else if (pt->variant->kind == kPersistent) {
    for (int p = 0; p < B; ++p) {
      MPI_Send_init(send_buffer + (size_t)p * pt->part_bytes,
                    (int)pt->part_bytes, MPI_BYTE, peer, kTagP2p + p, comm,
                    &sends[p]);
      MPI_Recv_init(recv_buffer + (size_t)p * pt->part_bytes,
                    (int)pt->part_bytes, MPI_BYTE, peer, kTagP2p + p, comm,
                    &recvs[p]);
    }
  }
  FreeInfo(&info);

  for (int s = 0; s < sweeps; ++s) {
    const int upstream = s % 2;
    if (rank == upstream) {
      FillBuffer(send_buffer, B, pt->part_bytes, s);
      MPI_Recv(NULL, 0, MPI_BYTE, peer, kTagGo, comm, MPI_STATUS_IGNORE);
      const int64_t t0 = NowNs();
#if HAVE_PARTITIONED
      if (pt->variant->kind == kPartitioned) MPI_Start(&send_part);
#endif
      for (int i = 0; i < B; ++i) {
        SleepUntil(t0 + (int64_t)(block_ns * (i + 1)));
        if (pt->variant->kind == kPersistent) MPI_Start(&sends[i]);
#if HAVE_PARTITIONED
        if (pt->variant->kind == kPartitioned) MPI_Pready(i, send_part);
#endif
      }
      if (pt->variant->kind == kSingle) {
        MPI_Send(send_buffer, (int)pt->bytes, MPI_BYTE, peer, kTagSingle, comm);
      } else if (pt->variant->kind == kPersistent) {
        MPI_Waitall(B, sends, MPI_STATUSES_IGNORE);
      } else {
        MPI_Wait(&send_part, MPI_STATUS_IGNORE);
      }
      Report report;
      MPI_Recv(&report, (int)sizeof report, MPI_BYTE, peer, kTagDone, comm,
               MPI_STATUS_IGNORE);
      const int64_t t_end = NowNs();
      if (s >= 2 * opt.warmup) {
        times[measured++] = shared_clock ? (double)(report.complete_ns - t0)
                                         : (double)(t_end - t0) - latency_ns;
      }
    } else {
      MPI_Request single = MPI_REQUEST_NULL;
      memset(recv_buffer, 0, pt->bytes);
      if (pt->variant->kind == kPartitioned) MPI_Start(&recv_part);
      if (pt->variant->kind == kPersistent) MPI_Startall(B, recvs);
      if (pt->variant->kind == kSingle) {
        MPI_Irecv(recv_buffer, (int)pt->bytes, MPI_BYTE, peer, kTagSingle, comm,
                  &single);
      }
      MPI_Send(NULL, 0, MPI_BYTE, peer, kTagGo, comm);
      int64_t block_end = 0;
      for (int i = 0; i < B; ++i) {
        /* Block i needs the upstream's partition i. */
        if (pt->variant->kind == kPartitioned) {
#if HAVE_PARTITIONED
          int flag = 0;
          while (!flag) MPI_Parrived(recv_part, i, &flag);
#endif
        } else if (pt->variant->kind == kPersistent) {
          MPI_Wait(&recvs[i], MPI_STATUS_IGNORE);
        } else if (i == 0) {
          MPI_Wait(&single, MPI_STATUS_IGNORE);
        }
        int64_t begin = NowNs();
        if (block_end > begin) begin = block_end;
        block_end = begin + (int64_t)block_ns;
        SleepUntil(block_end);
      }
      if (pt->variant->kind == kPartitioned) {
        MPI_Wait(&recv_part, MPI_STATUS_IGNORE);
      }
      Report report = {NowNs(), 0, 0, 0};
      MPI_Send(&report, (int)sizeof report, MPI_BYTE, peer, kTagDone, comm);
      char what[160];
      snprintf(what, sizeof what, "sweep variant %s blocks %d bytes %zu",
               pt->variant->name, B, pt->bytes);
      CheckBuffer(recv_buffer, B, pt->part_bytes, s, what);
    }
  }

  /* Rank 1's upstream sweeps join rank 0's. */
  if (rank == 1) {
    MPI_Send(times, measured, MPI_DOUBLE, 0, kTagDone, comm);
  } else {
    MPI_Status status;
    int count;
    MPI_Recv(times + measured, sweeps - measured, MPI_DOUBLE, 1, kTagDone, comm,
             &status);
    MPI_Get_count(&status, MPI_DOUBLE, &count);
    measured += count;
  }
  if (pt->variant->kind == kPersistent) {
    for (int p = 0; p < B; ++p) {
      MPI_Request_free(&sends[p]);
      MPI_Request_free(&recvs[p]);
    }
  }
  if (send_part != MPI_REQUEST_NULL) MPI_Request_free(&send_part);
  if (recv_part != MPI_REQUEST_NULL) MPI_Request_free(&recv_part);
  double result = rank == 0 ? Median(times, measured) : 0;
  free(times);
  free(sends);
  free(recvs);
  free(send_buffer);
  free(recv_buffer);
  return result;
}

/* ---- driver -------------------------------------------------------------- */

static void PrintPoint(const Point* pt, const char* tail) {
  printf("variant=%s mode=%s partitions=%d recv_partitions=%d threads=%d "
         "bytes=%zu part_bytes=%zu tp=%d ch=%d rounds=%d %s\n",
         pt->variant->name, kModeNames[pt->mode], pt->partitions,
         pt->recv_partitions, pt->threads, pt->bytes, pt->part_bytes, pt->tp,
         pt->channels, opt.rounds, tail);
  fflush(stdout);
}

/* Runs one point on both ranks; rank 0 returns the result. */
static Result Measure(const Point* pt) {
  ++point_id;
  Result result = {0, {0, 0, 0, 0}};
  if (pt->mode == kSweep) {
    result.value = SweepPoint(pt) / 1e3;
  } else if (rank == 0) {
    result = SendPoint(pt);
  } else {
    ReceivePoint(pt);
  }
  return result;
}

static void Usage(void) {
  if (rank == 0) {
    fprintf(stderr,
            "usage: partitioned [--mode LIST] [--variant LIST] "
            "[--partitions LIST]\n"
            "  [--recv-partitions N] [--threads T] [--bytes LIST | "
            "--part-bytes LIST]\n"
            "  [--compute-us C] [--laggard-us L] [--noise-us N] [--rounds R]\n"
            "  [--pready each|range|list] [--transport-partitions LIST]\n"
            "  [--channels LIST] [--no-baseline] [--seed S] [--verbose]\n"
            "  [--clock auto|shared|separate] [--quick]\n"
            "(see the comment at the top of apps/bench/partitioned.c)\n");
  }
  MPI_Finalize();
  exit(2);
}

static int ParseSize(const char* text, size_t* out) {
  char* end;
  double value = strtod(text, &end);
  if (end == text || value < 0) return 0;
  if (*end == 'k' || *end == 'K') {
    value *= 1024;
    ++end;
  } else if (*end == 'm' || *end == 'M') {
    value *= 1024 * 1024;
    ++end;
  } else if (*end == 'g' || *end == 'G') {
    value *= 1024.0 * 1024 * 1024;
    ++end;
  }
  if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0) end += strlen(end);
  if (*end) return 0;
  *out = (size_t)value;
  return 1;
}

/* "a,b,c" and "A:B" (powers of 4 from A to B) into sizes; 0 on bad input. */
static int ParseSizes(const char* text, size_t* out, int* count) {
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", text);
  *count = 0;
  for (char* save = NULL, *item = strtok_r(copy, ",", &save); item;
       item = strtok_r(NULL, ",", &save)) {
    char* colon = strchr(item, ':');
    if (colon) {
      size_t lo, hi;
      *colon = 0;
      if (!ParseSize(item, &lo) || !ParseSize(colon + 1, &hi) || lo == 0) {
        return 0;
      }
      for (size_t s = lo; s <= hi && *count < kMaxList; s *= 4) {
        out[(*count)++] = s;
      }
    } else {
      if (*count == kMaxList || !ParseSize(item, &out[*count])) return 0;
      ++*count;
    }
  }
  return *count > 0;
}

static int ParseInts(const char* text, int* out, int* count) {
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", text);
  *count = 0;
  for (char* save = NULL, *item = strtok_r(copy, ",", &save); item;
       item = strtok_r(NULL, ",", &save)) {
    char* end;
    long value = strtol(item, &end, 10);
    if (*end || value < 0 || *count == kMaxList) return 0;
    out[(*count)++] = (int)value;
  }
  return *count > 0;
}

static void ParseOptions(int argc, char** argv) {
  opt.modes[kOverhead] = opt.modes[kBandwidth] = opt.modes[kEarlybird] = 1;
  opt.partitions[0] = 16;
  opt.partition_count = 1;
  opt.compute_us = 1000;
  opt.laggard_us = -1;
  opt.noise_us = -1;
  opt.rounds = -1;
  opt.warmup = 3;
  opt.pready = kPreadyEach;
  opt.tp_count = opt.channel_count = 1; /* {0}: not set */
  opt.baseline = 1;
  opt.seed = 1;
  const char* variants = "part,persistent,single";
  const char* bytes = NULL;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    int takes_value = 1;
    if (strcmp(arg, "--quick") == 0) {
      opt.quick = 1;
      takes_value = 0;
    } else if (strcmp(arg, "--verbose") == 0) {
      opt.verbose = 1;
      takes_value = 0;
    } else if (strcmp(arg, "--no-baseline") == 0) {
      opt.baseline = 0;
      takes_value = 0;
    } else if (!value) {
      if (rank == 0) fprintf(stderr, "partitioned: %s needs a value\n", arg);
      Usage();
    } else if (strcmp(arg, "--mode") == 0) {
      memset(opt.modes, 0, sizeof opt.modes);
      char copy[256];
      snprintf(copy, sizeof copy, "%s", value);
      for (char* save = NULL, *item = strtok_r(copy, ",", &save); item;
           item = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int m = 0; m < kModes; ++m) {
          if (strcmp(item, kModeNames[m]) == 0) opt.modes[m] = found = 1;
        }
        if (!found) {
          if (rank == 0) fprintf(stderr, "partitioned: unknown mode %s\n", item);
          Usage();
        }
      }
    } else if (strcmp(arg, "--variant") == 0) {
      variants = value;
    } else if (strcmp(arg, "--partitions") == 0) {
      if (!ParseInts(value, opt.partitions, &opt.partition_count)) Usage();
    } else if (strcmp(arg, "--recv-partitions") == 0) {
      opt.recv_partitions = atoi(value);
    } else if (strcmp(arg, "--threads") == 0) {
      opt.threads = atoi(value);
    } else if (strcmp(arg, "--bytes") == 0) {
      bytes = value;
      opt.bytes_are_per_partition = 0;
    } else if (strcmp(arg, "--part-bytes") == 0) {
      bytes = value;
      opt.bytes_are_per_partition = 1;
    } else if (strcmp(arg, "--compute-us") == 0) {
      opt.compute_us = atof(value);
    } else if (strcmp(arg, "--laggard-us") == 0) {
      opt.laggard_us = atof(value);
    } else if (strcmp(arg, "--noise-us") == 0) {
      opt.noise_us = atof(value);
    } else if (strcmp(arg, "--rounds") == 0) {
      opt.rounds = atoi(value);
    } else if (strcmp(arg, "--pready") == 0) {
      if (strcmp(value, "each") == 0) opt.pready = kPreadyEach;
      else if (strcmp(value, "range") == 0) opt.pready = kPreadyRange;
      else if (strcmp(value, "list") == 0) opt.pready = kPreadyList;
      else Usage();
    } else if (strcmp(arg, "--transport-partitions") == 0) {
      if (!ParseInts(value, opt.tp, &opt.tp_count)) Usage();
    } else if (strcmp(arg, "--channels") == 0) {
      if (!ParseInts(value, opt.channels, &opt.channel_count)) Usage();
    } else if (strcmp(arg, "--clock") == 0) {
      if (strcmp(value, "auto") == 0) {
        opt.clock = kClockAuto;
      } else if (strcmp(value, "shared") == 0) {
        opt.clock = kClockShared;
      } else if (strcmp(value, "separate") == 0) {
        opt.clock = kClockSeparate;
      } else {
        Usage();
      }
    } else if (strcmp(arg, "--seed") == 0) {
      opt.seed = strtoull(value, NULL, 10);
    } else {
      if (rank == 0) fprintf(stderr, "partitioned: unknown option %s\n", arg);
      Usage();
    }
    i += takes_value;
  }

  char copy[512];
  snprintf(copy, sizeof copy, "%s", variants);
  for (char* save = NULL, *item = strtok_r(copy, ",", &save); item;
       item = strtok_r(NULL, ",", &save)) {
    const Variant* found = NULL;
    for (int v = 0; v < kVariantCount; ++v) {
      if (strcmp(item, kVariants[v].name) == 0) found = &kVariants[v];
    }
    if (!found) {
      if (rank == 0) fprintf(stderr, "partitioned: unknown variant %s\n", item);
      Usage();
    }
    if (found->kind == kPartitioned && !HAVE_PARTITIONED) {
      if (rank == 0) {
        fprintf(stderr,
                "partitioned: variant %s needs MPI-4 partitioned "
                "communication, which this MPI library (MPI_VERSION %d) "
                "lacks\n",
                item, MPI_VERSION);
      }
      Usage();
    }
    if (opt.variant_count == kMaxList) Usage();
    opt.variants[opt.variant_count++] = found;
  }
  if (opt.variant_count == 0) Usage();

  if (opt.rounds < 0) opt.rounds = opt.quick ? 3 : 30;
  if (opt.quick) opt.warmup = 1;
  if (opt.rounds < 1) opt.rounds = 1;
  if (!bytes) bytes = opt.quick ? "1K,64K" : "1K:16M";
  if (!ParseSizes(bytes, opt.bytes, &opt.bytes_count)) {
    if (rank == 0) fprintf(stderr, "partitioned: bad size list %s\n", bytes);
    Usage();
  }
  for (int i = 0; i < opt.partition_count; ++i) {
    if (opt.partitions[i] < 1) Usage();
  }
  if (opt.threads < 0 || opt.threads > kMaxThreads) Usage();
}

/* Ping-pong of the "done" token: the one-way latency of a small message. */
static void MeasureLatency(void) {
  enum { kWarm = 50, kCount = 400 };
  double samples[kCount];
  Report token = {0, 0, 0, 0};
  for (int i = 0; i < kWarm + kCount; ++i) {
    if (rank == 0) {
      const int64_t t0 = NowNs();
      MPI_Send(&token, (int)sizeof token, MPI_BYTE, 1, kTagDone, comm);
      MPI_Recv(&token, (int)sizeof token, MPI_BYTE, 1, kTagDone, comm,
               MPI_STATUS_IGNORE);
      if (i >= kWarm) samples[i - kWarm] = (double)(NowNs() - t0) / 2;
    } else {
      MPI_Recv(&token, (int)sizeof token, MPI_BYTE, 0, kTagDone, comm,
               MPI_STATUS_IGNORE);
      MPI_Send(&token, (int)sizeof token, MPI_BYTE, 0, kTagDone, comm);
    }
  }
  latency_ns = rank == 0 ? Median(samples, kCount) : 0;
  MPI_Bcast(&latency_ns, 1, MPI_DOUBLE, 0, comm);
}

static void PrintHeader(int size) {
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length;
  MPI_Get_library_version(library, &length);
  char* newline = strchr(library, '\n');
  if (newline) *newline = 0;
  for (char* p = library; *p; ++p) {
    if (*p == '\t') *p = ' ';
  }
  printf("# library: %.120s\n", library);
  printf("# ranks: %d, MPI_VERSION %d.%d, partitioned API: %s\n", size,
         MPI_VERSION, MPI_SUBVERSION, HAVE_PARTITIONED ? "yes" : "no");
  printf("# compute_us=%g laggard_us=%g noise_us=%g rounds=%d warmup=%d "
         "pready=%s seed=%llu%s\n",
         opt.compute_us,
         opt.laggard_us >= 0 ? opt.laggard_us : 0.1 * opt.compute_us,
         opt.noise_us >= 0 ? opt.noise_us : 0.02 * opt.compute_us, opt.rounds,
         opt.warmup,
         opt.pready == kPreadyEach ? "each"
         : opt.pready == kPreadyRange ? "range"
                                      : "list",
         opt.seed, opt.quick ? " quick" : "");
  const int one_host = strcmp(processor_names[0], processor_names[1]) == 0;
  printf("# clock: %s; small-message one-way latency %.2f us\n",
         shared_clock ? (one_host ? "one host, shared CLOCK_MONOTONIC"
                                  : "separate hosts (--clock shared), "
                                    "shared CLOCK_MONOTONIC")
                      : (one_host ? "one host (--clock separate), done token "
                                    "less one latency"
                                  : "separate hosts, done token less one "
                                    "latency"),
         latency_ns / 1e3);
  printf("# units: overhead us (ratio = / single), bandwidth MB/s (1e6 B/s), "
         "earlybird fraction of the data, sweep us per sweep\n");
  fflush(stdout);
}

int main(int argc, char** argv) {
  int provided, size;
#ifdef PR_SET_TIMERSLACK
  /* Sleeps end on time (the default slack is 50 us); threads inherit it. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
#endif
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ParseOptions(argc, argv);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "partitioned: run with exactly 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) {
      fprintf(stderr, "partitioned: needs MPI_THREAD_MULTIPLE (got %d)\n",
              provided);
    }
    MPI_Finalize();
    return 2;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  rng_state = Mix(opt.seed) | 1;

  int length;
  MPI_Get_processor_name(processor_names[rank], &length);
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, processor_names,
                MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  shared_clock =
      opt.clock == kClockShared ||
      (opt.clock == kClockAuto &&
       strcmp(processor_names[0], processor_names[1]) == 0);
  MeasureLatency();
  if (rank == 0) PrintHeader(size);

  for (int m = 0; m < kModes; ++m) {
    if (!opt.modes[m]) continue;
    for (int pi = 0; pi < opt.partition_count; ++pi) {
      const int P = opt.partitions[pi];
      const int PR = opt.recv_partitions > 0 ? opt.recv_partitions : P;
      int T = opt.threads > 0 ? opt.threads : (P < 16 ? P : 16);
      if (T > P) T = P;
      for (int bi = 0; bi < opt.bytes_count; ++bi) {
        Point pt = {NULL, (enum Mode)m, P, PR, T, 0, 0, 0, 0};
        pt.bytes = opt.bytes_are_per_partition ? opt.bytes[bi] * (size_t)P
                                               : opt.bytes[bi];
        if (pt.bytes == 0 || pt.bytes % (size_t)P || pt.bytes % (size_t)PR ||
            pt.bytes / (size_t)P > (size_t)0x7fffffff) {
          if (rank == 0) {
            printf("# skipped: %zu B do not split into %d and %d partitions\n",
                   pt.bytes, P, PR);
          }
          continue;
        }
        pt.part_bytes = pt.bytes / (size_t)P;
        if (m == kSweep) pt.threads = 1;
        /* The overhead reference: the single send at this point. */
        double single_overhead = -1;
        if (m == kOverhead || m == kSweep) {
          int listed = 0;
          for (int v = 0; v < opt.variant_count; ++v) {
            listed |= opt.variants[v]->kind == kSingle;
          }
          if (!listed && opt.baseline) {
            Point ref = pt;
            ref.variant = &kVariants[kVariantCount - 1];
            single_overhead = Measure(&ref).value;
          }
        }
        /* Single first, so the others' ratios can name it. */
        for (int w = 0; w < 2 * opt.variant_count; ++w) {
          const int v = w % opt.variant_count;
          if ((w < opt.variant_count) != (opt.variants[v]->kind == kSingle)) {
            continue;
          }
          pt.variant = opt.variants[v];
          const int tunable = pt.variant->kind == kPartitioned;
          for (int ti = 0; ti < (tunable ? opt.tp_count : 1); ++ti) {
            for (int ci = 0; ci < (tunable ? opt.channel_count : 1); ++ci) {
              pt.tp = tunable ? opt.tp[ti] : 0;
              pt.channels = tunable ? opt.channels[ci] : 0;
              if (pt.tp > P) continue;
              Result result = Measure(&pt);
              if (pt.variant->kind == kSingle) single_overhead = result.value;
              if (rank != 0) continue;
              char tail[256];
              switch (pt.mode) {
                case kOverhead:
                case kSweep:
                  if (single_overhead > 0) {
                    snprintf(tail, sizeof tail, "value=%.2f unit=us ratio=%.3f",
                             result.value, result.value / single_overhead);
                  } else {
                    snprintf(tail, sizeof tail, "value=%.2f unit=us ratio=-",
                             result.value);
                  }
                  break;
                case kBandwidth:
                  snprintf(tail, sizeof tail,
                           "value=%.1f unit=MB/s time_us=%.2f%s", result.value,
                           result.extra[0],
                           result.extra[1] ? " clamped=1" : "");
                  break;
                case kEarlybird:
                  snprintf(tail, sizeof tail,
                           "value=%.3f unit=fraction max=%.3f "
                           "arrived_partitions=%.2f",
                           result.value, result.extra[1], result.extra[0]);
                  break;
                default:
                  tail[0] = 0;
              }
              PrintPoint(&pt, tail);
            }
          }
        }
      }
    }
  }
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
