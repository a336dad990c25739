/* A sequence of different collectives, each timed over many iterations
 * right after the previous one, the way a widely used collective benchmark
 * times them: Barrier, then Bcast, Allreduce (SUM on doubles) and Alltoall
 * at 8 B, 64 B, 512 B, 4 KiB, 32 KiB, 256 KiB and 1 MiB per rank.  Unlike
 * collectives.c (each call alone, best of trials), nothing separates one
 * call from the next but the call itself, so what a rank does while it
 * waits for the others (spin, yield, sleep) shows in every figure.
 * Plain C and MPI only: builds with any MPI.
 *
 *   usage: coll_sequence [ITERATION_SCALE]   (default 1.0)
 *
 * Output: '#' comments, then lines  collective  size_bytes  latency_us,
 * the mean time per call over the iterations, the largest of any rank
 * (Barrier's size is that of the calls that follow it).  Every result is checked once per size before the
 * timed loop; wrong data exits non-zero. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static double scale = 1.0;

static void die(const char* what, size_t bytes) {
  fprintf(stderr, "coll_sequence: %s at %zu bytes: wrong data\n", what, bytes);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Enough iterations that one descheduling costs little, few enough that a
 * megabyte alltoall ends in a fraction of a second. */
static int iterations_for(size_t bytes) {
  double n = bytes <= 4096 ? 2000 : (double)(64u << 20) / (double)bytes;
  if (n > 2000) n = 2000;
  n *= scale;
  return n < 10 ? 10 : (int)n;
}

static void report(const char* name, size_t bytes, double seconds,
                   int iterations) {
  double mine = seconds * 1e6 / iterations, worst = 0;
  MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("%-10s %8zu %10.3f\n", name, bytes, worst);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1) scale = atof(argv[1]);
  if (scale <= 0) scale = 1.0;
  const size_t max_bytes = (size_t)1 << 20;
  char* send = malloc(max_bytes * size);
  char* recv = malloc(max_bytes * size);
  if (send == NULL || recv == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  if (rank == 0) {
    printf("# coll_sequence: %d ranks, each call after the previous one\n",
           size);
    printf("# collective bytes latency_us\n");
  }
  /* 8 B to 256 KiB in steps of 8, then 1 MiB. */
  for (size_t bytes = 8; bytes <= max_bytes;
       bytes = bytes * 8 > max_bytes && bytes < max_bytes ? max_bytes
                                                          : bytes * 8) {
    const int n = iterations_for(bytes * size);
    double t;

    /* Barrier, timed like the rest, once per size: it follows the
     * previous size's alltoall, and its line carries this size's bytes so
     * that every line names one figure. */
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (int i = 0; i < n; ++i) MPI_Barrier(MPI_COMM_WORLD);
    report("barrier", bytes, MPI_Wtime() - t, n);

    /* Bcast from rank 0: check, then time. */
    memset(send, rank == 0 ? (int)(bytes & 0x7f) + 1 : 0, bytes);
    MPI_Bcast(send, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (size_t i = 0; i < bytes; ++i) {
      if (send[i] != (char)((bytes & 0x7f) + 1)) die("bcast", bytes);
    }
    t = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      MPI_Bcast(send, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
    report("bcast", bytes, MPI_Wtime() - t, n);

    /* Allreduce of doubles: every rank contributes rank + 1. */
    const int doubles = (int)(bytes / sizeof(double));
    double* in = (double*)send;
    double* out = (double*)recv;
    for (int i = 0; i < doubles; ++i) in[i] = rank + 1 + i % 3;
    MPI_Allreduce(in, out, doubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < doubles; ++i) {
      if (out[i] != size * (size + 1) / 2.0 + size * (i % 3)) {
        die("allreduce", bytes);
      }
    }
    t = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      MPI_Allreduce(in, out, doubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    report("allreduce", bytes, MPI_Wtime() - t, n);

    /* Alltoall: block j of rank r carries r * size + j. */
    for (int j = 0; j < size; ++j) {
      memset(send + j * bytes, (rank * size + j) & 0x7f, bytes);
    }
    MPI_Alltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                 MPI_COMM_WORLD);
    for (int j = 0; j < size; ++j) {
      for (size_t i = 0; i < bytes; ++i) {
        if (recv[j * bytes + i] != (char)((j * size + rank) & 0x7f)) {
          die("alltoall", bytes);
        }
      }
    }
    t = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      MPI_Alltoall(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                   MPI_COMM_WORLD);
    }
    report("alltoall", bytes, MPI_Wtime() - t, n);
  }
  free(send);
  free(recv);
  MPI_Finalize();
  return 0;
}
