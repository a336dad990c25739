/* Collective latency: Barrier, Bcast, Reduce and Allreduce (SUM on doubles),
 * Gather, Scatter (root 0), Allgather and Alltoall, 8 B, then 16 B to 1 MiB
 * per rank in powers of 4, in microseconds per
 * call, best of kTrials trials (one descheduling on a small machine would
 * otherwise dominate a trial).  Plain C and MPI only, so the same source
 * builds with any MPI (apps/bench/coll_compare.sh builds it with minimpi,
 * MPICH and Open MPI).
 *
 *   usage: collectives [MAX_BYTES]      (default 1 MiB)
 *
 * The data of every collective is verified once per size before timing;
 * wrong data exits non-zero.  Output: '#' comments, then lines
 *   collective  size_bytes  latency_us
 * (Barrier has size 0).  Sizes are bytes per rank's contribution: the Bcast
 * message, the Reduce/Allreduce vector, one Gather/Scatter/Allgather/Alltoall
 * block. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kTrials = 3, kMinIterations = 2, kMaxIterations = 200 };
static const size_t kBytesPerTrial = (size_t)2 << 20;

static int rank, size;

static void die(const char* what, size_t bytes, size_t index) {
  fprintf(stderr, "collectives: %s at %zu bytes: wrong data at element %zu\n", what, bytes, index);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

static int iterations_for(size_t moved) {
  size_t n = moved == 0 ? kMaxIterations : kBytesPerTrial / moved;
  if (n < kMinIterations) n = kMinIterations;
  if (n > kMaxIterations) n = kMaxIterations;
  return (int)n;
}

/* Best-of-trials microseconds per call; every rank agrees on the iteration
 * count, the reported time is rank 0's after a closing barrier per trial. */
#define TIME_IT(result, iterations, call)                       \
  do {                                                          \
    double best_ = 1e30;                                        \
    for (int trial_ = 0; trial_ < kTrials; ++trial_) {          \
      MPI_Barrier(MPI_COMM_WORLD);                              \
      double start_ = MPI_Wtime();                              \
      for (int it_ = 0; it_ < (iterations); ++it_) { call; }    \
      double t_ = (MPI_Wtime() - start_) / (iterations) * 1e6;  \
      MPI_Allreduce(MPI_IN_PLACE, &t_, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); \
      if (t_ < best_) best_ = t_;                               \
    }                                                           \
    (result) = best_;                                           \
  } while (0)

static double value(int r, size_t i) { return (double)((r * 7919 + (long)i * 31) % 1009 - 500); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  size_t max_bytes = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : ((size_t)1 << 20);
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(library, &length);
  for (char* p = library; *p; ++p)
    if (*p == '\n' || *p == '\t') *p = ' ';
  if (rank == 0) printf("# library: %.120s\n# ranks: %d\n", library, size);
  double us;
  TIME_IT(us, 200, MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) printf("barrier 0 %.3f\n", us);
  size_t max_doubles = max_bytes / sizeof(double);
  double* a = (double*)malloc(max_bytes > 8 ? max_bytes : 8);
  double* b = (double*)malloc((max_bytes > 8 ? max_bytes : 8) * (size_t)size);
  double* c = (double*)malloc((max_bytes > 8 ? max_bytes : 8) * (size_t)size);
  /* 8 B, then powers of 4 from 16 B: 1 MiB is 16 * 4^8. */
  for (size_t bytes = 8; bytes <= max_bytes; bytes = bytes == 8 ? 16 : bytes * 4) {
    size_t n = bytes / sizeof(double);
    (void)max_doubles;
    /* Bcast from rank 0 */
    for (size_t i = 0; i < n; ++i) a[i] = rank == 0 ? value(0, i) : 0.0;
    MPI_Bcast(a, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (size_t i = 0; i < n; ++i) if (a[i] != value(0, i)) die("Bcast", bytes, i);
    TIME_IT(us, iterations_for(bytes), MPI_Bcast(a, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("bcast %zu %.3f\n", bytes, us);
    /* Reduce SUM to rank 0 (exact: small integers) */
    for (size_t i = 0; i < n; ++i) a[i] = value(rank, i);
    MPI_Reduce(a, b, (int)n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    for (size_t i = 0; i < n && rank == 0; ++i) {
      double sum = 0;
      for (int r = 0; r < size; ++r) sum += value(r, i);
      if (b[i] != sum) die("Reduce", bytes, i);
    }
    TIME_IT(us, iterations_for(bytes), MPI_Reduce(a, b, (int)n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("reduce %zu %.3f\n", bytes, us);
    /* Allreduce SUM (exact: small integers) */
    for (size_t i = 0; i < n; ++i) a[i] = value(rank, i);
    MPI_Allreduce(a, b, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (size_t i = 0; i < n; ++i) {
      double sum = 0;
      for (int r = 0; r < size; ++r) sum += value(r, i);
      if (b[i] != sum) die("Allreduce", bytes, i);
    }
    TIME_IT(us, iterations_for(bytes), MPI_Allreduce(a, b, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) printf("allreduce %zu %.3f\n", bytes, us);
    /* Gather to rank 0 */
    MPI_Gather(a, (int)n, MPI_DOUBLE, b, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int r = 0; r < size && rank == 0; ++r)
      for (size_t i = 0; i < n; ++i) if (b[(size_t)r * n + i] != value(r, i)) die("Gather", bytes, i);
    TIME_IT(us, iterations_for(bytes * size), MPI_Gather(a, (int)n, MPI_DOUBLE, b, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("gather %zu %.3f\n", bytes, us);
    /* Scatter from rank 0: block r holds value(r, i) */
    for (int r = 0; r < size; ++r)
      for (size_t i = 0; i < n; ++i) b[(size_t)r * n + i] = value(r, i);
    MPI_Scatter(b, (int)n, MPI_DOUBLE, c, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (size_t i = 0; i < n; ++i) if (c[i] != value(rank, i)) die("Scatter", bytes, i);
    TIME_IT(us, iterations_for(bytes * size), MPI_Scatter(b, (int)n, MPI_DOUBLE, c, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (rank == 0) printf("scatter %zu %.3f\n", bytes, us);
    /* Allgather */
    MPI_Allgather(a, (int)n, MPI_DOUBLE, b, (int)n, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r)
      for (size_t i = 0; i < n; ++i) if (b[(size_t)r * n + i] != value(r, i)) die("Allgather", bytes, i);
    TIME_IT(us, iterations_for(bytes * size), MPI_Allgather(a, (int)n, MPI_DOUBLE, b, (int)n, MPI_DOUBLE, MPI_COMM_WORLD));
    if (rank == 0) printf("allgather %zu %.3f\n", bytes, us);
    /* Alltoall: block for rank d holds value(rank * size + d, i) */
    for (int d = 0; d < size; ++d)
      for (size_t i = 0; i < n; ++i) b[(size_t)d * n + i] = value(rank * size + d, i);
    MPI_Alltoall(b, (int)n, MPI_DOUBLE, c, (int)n, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int s = 0; s < size; ++s)
      for (size_t i = 0; i < n; ++i) if (c[(size_t)s * n + i] != value(s * size + rank, i)) die("Alltoall", bytes, i);
    TIME_IT(us, iterations_for(bytes * size), MPI_Alltoall(b, (int)n, MPI_DOUBLE, c, (int)n, MPI_DOUBLE, MPI_COMM_WORLD));
    if (rank == 0) printf("alltoall %zu %.3f\n", bytes, us);
  }
  free(a);
  free(b);
  free(c);
  MPI_Finalize();
  return 0;
}
