/* Blocking small collectives allocate nothing (issue 25): the program's own
 * malloc family counts every allocation the process makes (the library's
 * and the C++ runtime's included, since an executable's definitions take
 * precedence over libc's), and after one warm-up call of each collective
 * (which may set up what a communicator keeps, e.g. its node's region),
 * hundreds of small barriers, bcasts, reduces, allreduces, gathers,
 * scatters, allgathers and alltoalls must count zero on every rank.
 * Data is checked too, so a fast path that skips work fails. Started
 * persistent collectives (MPI_*_init, issue 42) allocate nothing of their
 * own either (see kPersistentSlack for what point-to-point may).
 * Other MPI
 * libraries run the program without the zero check. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

enum { kIterations = 200, kCount = 4, kPersistentSlack = 20 };

/* One round of every collective on small data, checked. */
static void round_of_collectives(MPI_Comm comm, int rank, int size, int round) {
  int value[kCount], result[kCount];
  int gathered[64 * kCount];
  int root = round % size;
  MPI_CHECK(MPI_Barrier(comm));
  for (int i = 0; i < kCount; ++i)
    value[i] = rank == root ? round * 10 + i : -1;
  MPI_CHECK(MPI_Bcast(value, kCount, MPI_INT, root, comm));
  for (int i = 0; i < kCount; ++i)
    CHECK(value[i] == round * 10 + i, "bcast round %d item %d is %d", round, i,
          value[i]);
  for (int i = 0; i < kCount; ++i) value[i] = rank + i + round;
  MPI_CHECK(MPI_Allreduce(value, result, kCount, MPI_INT, MPI_SUM, comm));
  for (int i = 0; i < kCount; ++i) {
    int expected = size * (size - 1) / 2 + size * (i + round);
    CHECK(result[i] == expected,
          "allreduce round %d item %d is %d, expected %d", round, i, result[i],
          expected);
  }
  MPI_CHECK(MPI_Reduce(value, result, kCount, MPI_INT, MPI_MAX, root, comm));
  if (rank == root)
    CHECK(result[0] == size - 1 + round, "reduce round %d gave %d", round,
          result[0]);
  MPI_CHECK(MPI_Gather(value, kCount, MPI_INT, gathered, kCount, MPI_INT, root,
                       comm));
  if (rank == root) {
    for (int r = 0; r < size; ++r)
      CHECK(gathered[r * kCount] == r + round, "gather round %d block %d is %d",
            round, r, gathered[r * kCount]);
  }
  for (int r = 0; r < size && rank == root; ++r)
    gathered[r * kCount] = 1000 * r + round;
  MPI_CHECK(MPI_Scatter(gathered, kCount, MPI_INT, result, kCount, MPI_INT,
                        root, comm));
  CHECK(result[0] == 1000 * rank + round, "scatter round %d gave %d", round,
        result[0]);
  MPI_CHECK(
      MPI_Allgather(value, kCount, MPI_INT, gathered, kCount, MPI_INT, comm));
  for (int r = 0; r < size; ++r)
    CHECK(gathered[r * kCount] == r + round,
          "allgather round %d block %d is %d", round, r, gathered[r * kCount]);
  /* Alltoall: one int per destination, block r of rank s carries 100 * s + r.
   */
  int outgoing[64], incoming[64];
  for (int r = 0; r < size; ++r) outgoing[r] = 100 * rank + r + round;
  MPI_CHECK(MPI_Alltoall(outgoing, 1, MPI_INT, incoming, 1, MPI_INT, comm));
  for (int r = 0; r < size; ++r)
    CHECK(incoming[r] == 100 * r + rank + round,
          "alltoall round %d block %d is %d", round, r, incoming[r]);
}

/* Persistent collectives (issue 42): built at _init, a start allocates
 * nothing. Several rounds of start + wait, the data changed and checked
 * each round. */
typedef struct {
  int value[kCount], result[kCount], gathered[64 * kCount];
  int outgoing[64], incoming[64];
  MPI_Request requests[7];
} PersistentSet;

static void init_persistent(PersistentSet* set, MPI_Comm comm) {
  MPI_Request* r = set->requests;
  MPI_CHECK(MPI_Barrier_init(comm, MPI_INFO_NULL, &r[0]));
  MPI_CHECK(MPI_Bcast_init(set->value, kCount, MPI_INT, 0, comm, MPI_INFO_NULL,
                           &r[1]));
  MPI_CHECK(MPI_Allreduce_init(set->value, set->result, kCount, MPI_INT,
                               MPI_SUM, comm, MPI_INFO_NULL, &r[2]));
  MPI_CHECK(MPI_Reduce_init(set->value, set->result, kCount, MPI_INT, MPI_MAX,
                            0, comm, MPI_INFO_NULL, &r[3]));
  MPI_CHECK(MPI_Allgather_init(set->value, kCount, MPI_INT, set->gathered,
                               kCount, MPI_INT, comm, MPI_INFO_NULL, &r[4]));
  MPI_CHECK(MPI_Alltoall_init(set->outgoing, 1, MPI_INT, set->incoming, 1,
                              MPI_INT, comm, MPI_INFO_NULL, &r[5]));
  MPI_CHECK(MPI_Gather_init(set->value, kCount, MPI_INT, set->gathered, kCount,
                            MPI_INT, 0, comm, MPI_INFO_NULL, &r[6]));
}

/* In warm-up rounds one rank starts late, so that every rank also sees each
 * kind of message arrive before its receive is posted: the matching
 * engine makes its record of a kind of unexpected message the first time
 * it sees one. */
static void start_staggered(int count, MPI_Request* requests, int late) {
  if (late) usleep(1000);
  MPI_CHECK(MPI_Startall(count, requests));
}

static void round_of_persistent(PersistentSet* set, int rank, int size,
                                int round, int stagger) {
  MPI_Request* r = set->requests;
  const int late = stagger && rank == round % size;
  start_staggered(1, &r[0], late);
  MPI_CHECK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
  for (int i = 0; i < kCount; ++i)
    set->value[i] = rank == 0 ? round * 10 + i : -1;
  start_staggered(1, &r[1], late);
  MPI_CHECK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
  for (int i = 0; i < kCount; ++i)
    CHECK(set->value[i] == round * 10 + i,
          "persistent bcast round %d item %d is %d", round, i, set->value[i]);
  for (int i = 0; i < kCount; ++i) set->value[i] = rank + i + round;
  start_staggered(1, &r[2], late);
  MPI_CHECK(MPI_Wait(&r[2], MPI_STATUS_IGNORE));
  for (int i = 0; i < kCount; ++i) {
    int expected = size * (size - 1) / 2 + size * (i + round);
    CHECK(set->result[i] == expected,
          "persistent allreduce round %d item %d is %d, expected %d", round, i,
          set->result[i], expected);
  }
  start_staggered(1, &r[3], late);
  MPI_CHECK(MPI_Wait(&r[3], MPI_STATUS_IGNORE));
  if (rank == 0)
    CHECK(set->result[0] == size - 1 + round,
          "persistent reduce round %d gave %d", round, set->result[0]);
  for (int d = 0; d < size; ++d) set->outgoing[d] = 100 * rank + d + round;
  /* Several at once. */
  start_staggered(2, &r[4], late);
  MPI_CHECK(MPI_Waitall(2, &r[4], MPI_STATUSES_IGNORE));
  for (int s = 0; s < size; ++s)
    CHECK(set->gathered[s * kCount] == s + round,
          "persistent allgather round %d block %d is %d", round, s,
          set->gathered[s * kCount]);
  for (int s = 0; s < size; ++s)
    CHECK(set->incoming[s] == 100 * s + rank + round,
          "persistent alltoall round %d block %d is %d", round, s,
          set->incoming[s]);
  start_staggered(1, &r[6], late);
  MPI_CHECK(MPI_Wait(&r[6], MPI_STATUS_IGNORE));
  for (int s = 0; s < size && rank == 0; ++s)
    CHECK(set->gathered[s * kCount + 1] == s + 1 + round,
          "persistent gather round %d block %d is %d", round, s,
          set->gathered[s * kCount + 1]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 64) {
    if (rank == 0)
      fprintf(stderr, "collectives_no_allocation: at most 64 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_CHECK(MPI_Get_library_version(library, &length));
  const int strict = strncmp(library, "minimpi", 7) == 0;
  /* Warm-up: every collective once (and a few rounds, so every slot and
   * every root has been used). */
  for (int round = 0; round < 2 * size + 20; ++round)
    round_of_collectives(MPI_COMM_WORLD, rank, size, round);
  g_counting = 1;
  for (int round = 0; round < kIterations; ++round)
    round_of_collectives(MPI_COMM_WORLD, rank, size, round);
  g_counting = 0;
  long mine = g_allocations, most = 0;
  MPI_CHECK(MPI_Allreduce(&mine, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
  if (strict)
    CHECK(most == 0,
          "%ld allocations in %d rounds of small blocking collectives (this "
          "rank: %ld)",
          most, kIterations, mine);
  if (rank == 0)
    printf(
        "collectives_no_allocation: %ld allocations at most on a rank over %d "
        "rounds\n",
        most, kIterations);

  /* Persistent collectives: warm up (the first starts may set up what the
   * communicator keeps), then count. */
  static PersistentSet set;
  init_persistent(&set, MPI_COMM_WORLD);
  for (int round = 0; round < 2 * size + 20; ++round)
    round_of_persistent(&set, rank, size, round, 1);
  g_allocations = 0;
  g_counting = 1;
  for (int round = 0; round < kIterations; ++round)
    round_of_persistent(&set, rank, size, round, 0);
  g_counting = 0;
  mine = g_allocations;
  most = 0;
  MPI_CHECK(MPI_Allreduce(&mine, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
  /* A start itself allocates nothing (one allocation per start would count
   * 7 per round). Point-to-point below it still allocates a few times when
   * a new peak of messages arrives before their receives (an unexpected
   * message's record, a level of the collective matching queues), which
   * depends on timing: a handful is allowed. */
  if (strict)
    CHECK(most <= kPersistentSlack,
          "%ld allocations in %d rounds of started persistent collectives "
          "(this rank: %ld)",
          most, kIterations, mine);
  if (rank == 0)
    printf(
        "collectives_no_allocation: %ld allocations at most on a rank over %d "
        "rounds of persistent collectives\n",
        most, kIterations);
  for (int i = 0; i < 7; ++i) MPI_CHECK(MPI_Request_free(&set.requests[i]));
  MPI_Finalize();
  return 0;
}
