/* Blocking small collectives allocate nothing (issue 25): the program's own
 * malloc family counts every allocation the process makes (the library's
 * and the C++ runtime's included, since an executable's definitions take
 * precedence over libc's), and after one warm-up call of each collective
 * (which may set up what a communicator keeps, e.g. its node's region),
 * hundreds of small barriers, bcasts, reduces, allreduces, gathers,
 * scatters, allgathers and alltoalls must count zero on every rank.
 * Data is checked too, so a fast path that skips work fails. Other MPI
 * libraries run the program without the zero check. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* pointer, size_t size);
extern void* __libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void* pointer);

static volatile int g_counting = 0;
static long g_allocations = 0;

static void count_one(void) {
  if (g_counting) __atomic_add_fetch(&g_allocations, 1, __ATOMIC_RELAXED);
}
void* malloc(size_t size) {
  count_one();
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  count_one();
  return __libc_calloc(count, size);
}
void* realloc(void* pointer, size_t size) {
  count_one();
  return __libc_realloc(pointer, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  count_one();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  count_one();
  *out = __libc_memalign(alignment, size);
  return *out == NULL ? 12 /* ENOMEM */ : 0;
}
void free(void* pointer) { __libc_free(pointer); }

enum { kIterations = 200, kCount = 4 };

/* One round of every collective on small data, checked. */
static void round_of_collectives(MPI_Comm comm, int rank, int size, int round) {
  int value[kCount], result[kCount];
  int gathered[64 * kCount];
  int root = round % size;
  MPI_CHECK(MPI_Barrier(comm));
  for (int i = 0; i < kCount; ++i) value[i] = rank == root ? round * 10 + i : -1;
  MPI_CHECK(MPI_Bcast(value, kCount, MPI_INT, root, comm));
  for (int i = 0; i < kCount; ++i) CHECK(value[i] == round * 10 + i, "bcast round %d item %d is %d", round, i, value[i]);
  for (int i = 0; i < kCount; ++i) value[i] = rank + i + round;
  MPI_CHECK(MPI_Allreduce(value, result, kCount, MPI_INT, MPI_SUM, comm));
  for (int i = 0; i < kCount; ++i) {
    int expected = size * (size - 1) / 2 + size * (i + round);
    CHECK(result[i] == expected, "allreduce round %d item %d is %d, expected %d", round, i, result[i], expected);
  }
  MPI_CHECK(MPI_Reduce(value, result, kCount, MPI_INT, MPI_MAX, root, comm));
  if (rank == root) CHECK(result[0] == size - 1 + round, "reduce round %d gave %d", round, result[0]);
  MPI_CHECK(MPI_Gather(value, kCount, MPI_INT, gathered, kCount, MPI_INT, root, comm));
  if (rank == root) {
    for (int r = 0; r < size; ++r) CHECK(gathered[r * kCount] == r + round, "gather round %d block %d is %d", round, r, gathered[r * kCount]);
  }
  for (int r = 0; r < size && rank == root; ++r) gathered[r * kCount] = 1000 * r + round;
  MPI_CHECK(MPI_Scatter(gathered, kCount, MPI_INT, result, kCount, MPI_INT, root, comm));
  CHECK(result[0] == 1000 * rank + round, "scatter round %d gave %d", round, result[0]);
  MPI_CHECK(MPI_Allgather(value, kCount, MPI_INT, gathered, kCount, MPI_INT, comm));
  for (int r = 0; r < size; ++r) CHECK(gathered[r * kCount] == r + round, "allgather round %d block %d is %d", round, r, gathered[r * kCount]);
  /* Alltoall: one int per destination, block r of rank s carries 100 * s + r. */
  int outgoing[64], incoming[64];
  for (int r = 0; r < size; ++r) outgoing[r] = 100 * rank + r + round;
  MPI_CHECK(MPI_Alltoall(outgoing, 1, MPI_INT, incoming, 1, MPI_INT, comm));
  for (int r = 0; r < size; ++r) CHECK(incoming[r] == 100 * r + rank + round, "alltoall round %d block %d is %d", round, r, incoming[r]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 64) {
    if (rank == 0) fprintf(stderr, "collectives_no_allocation: at most 64 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_CHECK(MPI_Get_library_version(library, &length));
  const int strict = strncmp(library, "minimpi", 7) == 0;
  /* Warm-up: every collective once (and a few rounds, so every slot and
   * every root has been used). */
  for (int round = 0; round < 2 * size + 20; ++round) round_of_collectives(MPI_COMM_WORLD, rank, size, round);
  g_counting = 1;
  for (int round = 0; round < kIterations; ++round) round_of_collectives(MPI_COMM_WORLD, rank, size, round);
  g_counting = 0;
  long mine = g_allocations, most = 0;
  MPI_CHECK(MPI_Allreduce(&mine, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
  if (strict) CHECK(most == 0, "%ld allocations in %d rounds of small blocking collectives (this rank: %ld)", most, kIterations, mine);
  if (rank == 0) printf("collectives_no_allocation: %ld allocations at most on a rank over %d rounds\n", most, kIterations);
  MPI_Finalize();
  return 0;
}
