/* Shared-memory footprint of endpoints: each process makes K endpoints
 * (default 8) and every endpoint talks to every endpoint of every process
 * (an alltoall and an all-pairs exchange over the endpoints communicator),
 * so every ring that endpoints can use is in use. Then each process sums
 * the proportional set size (Pss) of minimpi's shared-memory segments in
 * /proc/self/smaps: the sum over processes is the shared memory the job
 * holds, counted once. Prints one markdown row. A benchmark, not a test:
 *   mpiexec -n 8 ep_footprint [K]
 * Needs minimpi (MPIX_Comm_create_endpoints). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MINIMPI_HAS_ENDPOINTS
int main(void) {
  printf("ep_footprint needs minimpi's endpoints\n");
  return 0;
}
#else

static MPI_Comm* handles;

static void* Talk(void* arg) {
  MPI_Comm comm = handles[(long)arg];
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int* out = malloc(sizeof(int) * size);
  int* in = malloc(sizeof(int) * size);
  for (int i = 0; i < size; ++i) out[i] = rank * size + i;
  MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, comm);
  for (int i = 0; i < size; ++i) {
    if (in[i] != i * size + rank) {
      fprintf(stderr, "ep_footprint: alltoall delivered %d from %d\n", in[i],
              i);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  /* Many small messages each way, so every ring wraps around at least
   * once and all of its pages are touched. */
  enum { kRounds = 64 };
  char payload[4096] = {0};
  for (int round = 0; round < kRounds; ++round) {
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_BYTE, NULL, 0, MPI_BYTE, comm);
    for (int step = 1; step < size; ++step) {
      const int to = (rank + step) % size, from = (rank + size - step) % size;
      MPI_Sendrecv(payload, sizeof payload, MPI_BYTE, to, 0, payload,
                   sizeof payload, MPI_BYTE, from, 0, comm, MPI_STATUS_IGNORE);
    }
  }
  free(out);
  free(in);
  return NULL;
}

static double SharedPssKib(double* rss_kib) {
  FILE* smaps = fopen("/proc/self/smaps", "r");
  char line[512];
  int in_segment = 0;
  double pss = 0;
  *rss_kib = 0;
  while (smaps != NULL && fgets(line, sizeof line, smaps) != NULL) {
    unsigned long value;
    if (strchr(line, '-') != NULL && strstr(line, " rw") != NULL) {
      in_segment = strstr(line, "minimpi") != NULL;
    } else if (in_segment && sscanf(line, "Pss: %lu kB", &value) == 1) {
      pss += value;
    } else if (in_segment && sscanf(line, "Rss: %lu kB", &value) == 1) {
      *rss_kib += value;
    }
  }
  if (smaps != NULL) fclose(smaps);
  return pss;
}

int main(int argc, char** argv) {
  int provided, world_rank, world_size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const int k = argc > 1 ? atoi(argv[1]) : 8;
  handles = malloc(sizeof(MPI_Comm) * k);
  MPIX_Comm_create_endpoints(MPI_COMM_WORLD, k, MPI_INFO_NULL, handles);
  pthread_t* threads = malloc(sizeof(pthread_t) * k);
  for (long i = 0; i < k; ++i) pthread_create(&threads[i], NULL, Talk, (void*)i);
  for (int i = 0; i < k; ++i) pthread_join(threads[i], NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  double rss, pss = SharedPssKib(&rss), total_pss = 0, max_rss = 0;
  MPI_Reduce(&pss, &total_pss, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&rss, &max_rss, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (world_rank == 0) {
    const char* ring = getenv("MINIMPI_SHM_RING_BYTES");
    printf("| processes | endpoints each | ring bytes | shared memory, job (MiB) "
           "| per process (MiB) | largest RSS of the segments in one process "
           "(MiB) |\n|---:|---:|---:|---:|---:|---:|\n");
    printf("| %d | %d | %s | %.1f | %.1f | %.1f |\n", world_size, k,
           ring != NULL ? ring : "default", total_pss / 1024,
           total_pss / 1024 / world_size, max_rss / 1024);
  }
  for (int i = 0; i < k; ++i) MPI_Comm_free(&handles[i]);
  free(threads);
  free(handles);
  MPI_Finalize();
  return 0;
}
#endif
