/* Ping-pong between ranks 0 and 1: half round-trip latency and bandwidth for
 * messages of 0 B and 1 B to MAX bytes in powers of two (default 64 MiB), or
 * from MIN bytes when given.
 *
 * Plain C and MPI only, so the same source builds against any MPI library
 * (apps/bench/compare.sh builds it with minimpi, MPICH and Open MPI).
 *
 *   usage: pingpong [MAX_BYTES [MIN_BYTES [MAX_ITERATIONS]]]
 *                                     run with exactly 2 ranks
 *     MIN_BYTES       smallest message (default 0: 0 B, then 1 B, 2 B, ...;
 *                     otherwise MIN_BYTES, 2 MIN_BYTES, ...)
 *     MAX_ITERATIONS  cap on round trips per trial (default 20000), to
 *                     shorten runs where a round trip is slow (across nodes)
 *
 * For each size the data is verified once (a size-dependent pattern each way,
 * and the received count); wrong data exits non-zero. Then the exchange is
 * timed in TRIALS trials; the fastest trial is reported, because on a small
 * machine a single descheduling would otherwise dominate a trial. Iterations
 * scale down with size so that each trial moves about BYTES_PER_TRIAL bytes
 * each way and the whole run takes a few seconds.
 *
 * Output: '#' comment lines, then one line per size:
 *   size_bytes  latency_us  bandwidth_GBps
 * latency is half a round trip; bandwidth is size / latency (1 GB = 1e9 B).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  kTag = 17,
  kTrials = 3,
  kMinIterations = 4,
  kMaxIterations = 20000,
};
static const size_t kBytesPerTrial = (size_t)64 << 20;
static const size_t kDefaultMaxBytes = (size_t)64 << 20;

static int Iterations(size_t size, size_t max_iterations) {
  size_t iterations = size == 0 ? max_iterations : kBytesPerTrial / size;
  if (iterations > max_iterations) iterations = max_iterations;
  if (iterations < kMinIterations) iterations = kMinIterations;
  return (int)iterations;
}

/* The byte at `index` of a message of `size` bytes sent by `rank`: varies
 * with all three, so a stale buffer, a shifted copy or the other side's
 * message never passes for the right one. */
static unsigned char PatternByte(size_t size, int rank, size_t index) {
  return (unsigned char)((index * 131u + size * 7u + (size_t)rank * 29u + 1u) &
                         0xffu);
}

static void Fill(unsigned char* buffer, size_t size, int rank) {
  for (size_t i = 0; i < size; ++i) buffer[i] = PatternByte(size, rank, i);
}

static void Verify(const unsigned char* buffer, size_t size, int sender,
                   const MPI_Status* status) {
  int count = -1;
  MPI_Get_count(status, MPI_BYTE, &count);
  if ((size_t)count != size) {
    fprintf(stderr, "pingpong: size %zu: received %d bytes\n", size, count);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  for (size_t i = 0; i < size; ++i) {
    if (buffer[i] != PatternByte(size, sender, i)) {
      fprintf(stderr,
              "pingpong: size %zu: wrong byte at offset %zu from rank %d: "
              "got %u, expected %u\n",
              size, i, sender, buffer[i], PatternByte(size, sender, i));
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
}

/* One verified round trip: 0 -> 1 -> 0, each side checking what it got. */
static void VerifiedExchange(unsigned char* send, unsigned char* recv,
                             size_t size, int rank) {
  int peer = 1 - rank;
  MPI_Status status;
  Fill(send, size, rank);
  memset(recv, 0xA5, size);
  if (rank == 0) {
    MPI_Send(send, (int)size, MPI_BYTE, peer, kTag, MPI_COMM_WORLD);
    MPI_Recv(recv, (int)size, MPI_BYTE, peer, kTag, MPI_COMM_WORLD, &status);
  } else {
    MPI_Recv(recv, (int)size, MPI_BYTE, peer, kTag, MPI_COMM_WORLD, &status);
    Verify(recv, size, peer, &status);
    MPI_Send(send, (int)size, MPI_BYTE, peer, kTag, MPI_COMM_WORLD);
    return;
  }
  Verify(recv, size, peer, &status);
}

/* Seconds for `iterations` round trips. */
static double TimedRoundTrips(unsigned char* send, unsigned char* recv,
                              size_t size, int rank, int iterations) {
  int peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    if (rank == 0) {
      MPI_Send(send, (int)size, MPI_BYTE, peer, kTag, MPI_COMM_WORLD);
      MPI_Recv(recv, (int)size, MPI_BYTE, peer, kTag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(recv, (int)size, MPI_BYTE, peer, kTag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(send, (int)size, MPI_BYTE, peer, kTag, MPI_COMM_WORLD);
    }
  }
  return MPI_Wtime() - start;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "pingpong: run with 2 ranks, not %d\n", size);
    MPI_Finalize();
    return 2;
  }

  /* MAX_BYTES, MIN_BYTES, MAX_ITERATIONS: all optional, in that order. */
  size_t arguments[3] = {kDefaultMaxBytes, 0, kMaxIterations};
  for (int a = 1; a < argc; ++a) {
    char* end = NULL;
    unsigned long long parsed = strtoull(argv[a], &end, 10);
    if (a > 3 || end == argv[a] || *end != '\0' || parsed > (size_t)INT32_MAX ||
        (a == 3 && parsed == 0)) {
      if (rank == 0)
        fprintf(stderr,
                "usage: pingpong [MAX_BYTES [MIN_BYTES [MAX_ITERATIONS]]]\n");
      MPI_Finalize();
      return 2;
    }
    arguments[a - 1] = (size_t)parsed;
  }
  size_t max_bytes = arguments[0];
  size_t min_bytes = arguments[1];
  size_t max_iterations = arguments[2];

  /* calloc touches no pages; memset does, so page faults stay out of the
   * timed loops. */
  size_t buffer_bytes = max_bytes > 0 ? max_bytes : 1;
  unsigned char* send = malloc(buffer_bytes);
  unsigned char* recv = malloc(buffer_bytes);
  if (send == NULL || recv == NULL) {
    fprintf(stderr, "pingpong: out of memory for %zu bytes\n", buffer_bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(send, 0, buffer_bytes);
  memset(recv, 0, buffer_bytes);

  if (rank == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    /* Only the first line: some libraries return a whole paragraph. */
    char* newline = strchr(version, '\n');
    if (newline != NULL) *newline = '\0';
    printf("# library: %s\n", version);
    printf("# ping-pong, 2 ranks, best of %d trials, ~%zu MiB per trial\n",
           kTrials, kBytesPerTrial >> 20);
    printf("# %-10s %12s %14s\n", "size_bytes", "latency_us", "bandwidth_GBps");
    fflush(stdout);
  }

  for (size_t message = min_bytes; message <= max_bytes;
       message = message == 0 ? 1 : message * 2) {
    VerifiedExchange(send, recv, message, rank);
    int iterations = Iterations(message, max_iterations);
    /* One untimed pass warms caches, connections and registrations. */
    TimedRoundTrips(send, recv, message, rank, iterations / 8 + 1);
    double best = -1.0;
    for (int trial = 0; trial < kTrials; ++trial) {
      double seconds = TimedRoundTrips(send, recv, message, rank, iterations);
      if (best < 0 || seconds < best) best = seconds;
    }
    if (rank == 0) {
      double half_round_trip = best / (2.0 * iterations);
      double bandwidth = (double)message / half_round_trip / 1e9;
      printf("  %-10zu %12.3f %14.3f\n", message, half_round_trip * 1e6,
             bandwidth);
      fflush(stdout);
    }
  }

  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
