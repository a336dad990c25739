/* MPI_Comm_create_group from several threads at once on one parent
 * (MPI_COMM_WORLD), each thread with its own tags and its own groups, while
 * another thread runs collectives on a duplicate and point-to-point traffic
 * on the parent. Only the members of a group make the call, so exchanges
 * are told apart by tag alone: each new communicator must hold exactly the
 * group's processes, in group order, and only the matching thread of each
 * (checked with an allgather of world rank and thread number).
 *
 * Usage: comm_create_threads [threads] [iterations] */
#include <pthread.h>

#include "test_util.h"

static int g_rank, g_size, g_threads = 4, g_iterations = 20;

/* The group of thread t in iteration i: every rank r with
 * (r + t + i) % 3 != 2, in reverse order when (t + i) is odd; at least the
 * highest rank, so no group is empty. */
static int group_of(int thread, int iteration, int* members) {
  int n = 0;
  for (int r = 0; r < g_size; ++r)
    if ((r + thread + iteration) % 3 != 2) members[n++] = r;
  if (n == 0) members[n++] = g_size - 1;
  if ((thread + iteration) % 2) {
    for (int i = 0; i < n / 2; ++i) {
      int t = members[i];
      members[i] = members[n - 1 - i];
      members[n - 1 - i] = t;
    }
  }
  return n;
}

struct Pair {
  int world_rank;
  int thread;
};

static void* create_groups(void* argument) {
  const int thread = (int)(intptr_t)argument;
  int* members = (int*)test_malloc(sizeof(int) * (size_t)g_size);
  struct Pair* pairs =
      (struct Pair*)test_malloc(sizeof(struct Pair) * (size_t)g_size);
  MPI_Group world_group;
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  for (int iteration = 0; iteration < g_iterations; ++iteration) {
    const int n = group_of(thread, iteration, members);
    int position = -1;
    for (int i = 0; i < n; ++i)
      if (members[i] == g_rank) position = i;
    if (position < 0) continue; /* only members call */
    MPI_Group group;
    MPI_CHECK(MPI_Group_incl(world_group, n, members, &group));
    MPI_Comm comm;
    const int tag = thread * 100000 + iteration;
    MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &comm));
    int rank = -1, size = -1;
    MPI_CHECK(MPI_Comm_rank(comm, &rank));
    MPI_CHECK(MPI_Comm_size(comm, &size));
    CHECK(rank == position && size == n,
          "thread %d iteration %d: rank %d of %d, expected %d of %d", thread,
          iteration, rank, size, position, n);
    struct Pair mine = {g_rank, thread};
    MPI_CHECK(MPI_Allgather(&mine, 2, MPI_INT, pairs, 2, MPI_INT, comm));
    for (int i = 0; i < n; ++i)
      CHECK(pairs[i].world_rank == members[i] && pairs[i].thread == thread,
            "thread %d iteration %d: rank %d is world rank %d thread %d, "
            "expected world rank "
            "%d thread %d",
            thread, iteration, i, pairs[i].world_rank, pairs[i].thread,
            members[i], thread);
    MPI_CHECK(MPI_Comm_free(&comm));
    MPI_CHECK(MPI_Group_free(&group));
  }
  MPI_CHECK(MPI_Group_free(&world_group));
  free(members);
  free(pairs);
  return NULL;
}

/* Meanwhile: collectives on a duplicate, and a ring on the parent. */
static void* other_traffic(void* argument) {
  MPI_Comm dup = *(MPI_Comm*)argument;
  for (int i = 0; i < 3 * g_iterations; ++i) {
    int value = g_rank * 1000 + i, sum = 0;
    MPI_CHECK(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == 1000 * g_size * (g_size - 1) / 2 + g_size * i,
          "Allreduce %d gave %d", i, sum);
    unsigned char out[200], in[200];
    test_fill(out, sizeof out, g_rank, 500 + i);
    MPI_CHECK(MPI_Sendrecv(out, 200, MPI_BYTE, (g_rank + 1) % g_size, 500 + i,
                           in, 200, MPI_BYTE, (g_rank + g_size - 1) % g_size,
                           500 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_PATTERN(in, 200, (g_rank + g_size - 1) % g_size, 500 + i,
                  "ring on the parent");
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  if (argc > 1) g_threads = atoi(argv[1]);
  if (argc > 2) g_iterations = atoi(argv[2]);
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  pthread_t threads[16];
  CHECK(g_threads >= 1 && g_threads <= 15, "1 to 15 threads, not %d",
        g_threads);
  for (int t = 0; t < g_threads; ++t)
    CHECK(pthread_create(&threads[t], NULL, create_groups,
                         (void*)(intptr_t)t) == 0,
          "pthread_create failed");
  CHECK(pthread_create(&threads[g_threads], NULL, other_traffic, &dup) == 0,
        "pthread_create failed");
  for (int t = 0; t <= g_threads; ++t) pthread_join(threads[t], NULL);
  MPI_CHECK(MPI_Comm_free(&dup));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("comm_create_threads", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
