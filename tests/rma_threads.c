/* One-sided communication from many threads at once (MPI_THREAD_MULTIPLE):
 * in one MPI_Win_lock_all epoch, 4 threads per rank each issue, to every
 * rank (itself included), MPI_Accumulate (MPI_SUM on 8 counters, MPI_MAX
 * on one word) and MPI_Fetch_and_op (MPI_SUM of 1 on a ticket word), and
 * MPI_Win_flush the target after each round, from their own thread; one
 * thread also calls MPI_Win_flush_all and another MPI_Win_flush_local_all
 * now and then.  Afterwards every total must be exact: each counter the
 * sum of every thread's additions, the maximum the largest value sent,
 * and the tickets drawn on each rank exactly 0..N*T*K-1, each thread's
 * own tickets on one target increasing.
 *
 * Usage: rma_threads [threads-per-rank] [rounds-per-thread] */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>

#include "test_util.h"

enum { kCounters = 8, kMaxWord = kCounters, kTicketWord, kWords, kMaxThreads = 16 };

static int g_rank, g_size, g_threads = 4, g_rounds = 25;
static MPI_Win g_win;
static long long* g_tickets; /* [thread][target][round] */

static long long addend(int rank, int thread, int counter) { return (long long)(rank + 1) * 1000 + thread * 10 + counter; }
static long long max_value(int rank, int thread, int round) { return (long long)rank * 100000 + thread * 1000 + round; }

static void* thread_main(void* arg) {
  const int thread = (int)(intptr_t)arg;
  long long add[kCounters];
  for (int c = 0; c < kCounters; ++c) add[c] = addend(g_rank, thread, c);
  const long long one = 1;
  for (int round = 0; round < g_rounds; ++round) {
    for (int k = 0; k < g_size; ++k) {
      const int t = (g_rank + thread + k) % g_size;
      const long long mx = max_value(g_rank, thread, round);
      long long* ticket = &g_tickets[((size_t)thread * g_size + t) * g_rounds + round];
      MPI_CHECK(MPI_Accumulate(add, kCounters, MPI_LONG_LONG, t, 0, kCounters, MPI_LONG_LONG, MPI_SUM, g_win));
      MPI_CHECK(MPI_Accumulate(&mx, 1, MPI_LONG_LONG, t, kMaxWord, 1, MPI_LONG_LONG, MPI_MAX, g_win));
      MPI_CHECK(MPI_Fetch_and_op(&one, ticket, MPI_LONG_LONG, t, kTicketWord, MPI_SUM, g_win));
      MPI_CHECK(MPI_Win_flush(t, g_win));
      if (round > 0) {
        const long long before = g_tickets[((size_t)thread * g_size + t) * g_rounds + round - 1];
        CHECK(*ticket > before, "thread %d: ticket %lld from rank %d not above its previous one %lld", thread, *ticket,
              t, before);
      }
    }
    if (thread == 1 && round % 8 == 0) MPI_CHECK(MPI_Win_flush_all(g_win));
    if (thread == 2 && round % 8 == 4) MPI_CHECK(MPI_Win_flush_local_all(g_win));
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc > 1) g_threads = atoi(argv[1]);
  if (argc > 2) g_rounds = atoi(argv[2]);
  CHECK(g_threads >= 1 && g_threads <= kMaxThreads && g_rounds >= 1, "usage: rma_threads [threads] [rounds]");

  long long* base = NULL;
  MPI_CHECK(MPI_Win_allocate(kWords * sizeof(long long) + 48, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &base, &g_win));
  MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g_rank, 0, g_win));
  for (int i = 0; i < kWords; ++i) base[i] = i == kMaxWord ? -1 : 7 * i;
  base[kTicketWord] = 0;
  MPI_CHECK(MPI_Win_unlock(g_rank, g_win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  const size_t per_rank = (size_t)g_threads * g_size * g_rounds;
  g_tickets = (long long*)test_malloc(sizeof(long long) * per_rank);
  pthread_t threads[kMaxThreads];
  MPI_CHECK(MPI_Win_lock_all(0, g_win));
  for (int i = 0; i < g_threads; ++i)
    CHECK(pthread_create(&threads[i], NULL, thread_main, (void*)(intptr_t)i) == 0, "pthread_create failed");
  for (int i = 0; i < g_threads; ++i) pthread_join(threads[i], NULL);
  MPI_CHECK(MPI_Win_unlock_all(g_win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* This rank's window. */
  MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_rank, 0, g_win));
  for (int c = 0; c < kCounters; ++c) {
    long long expect = 7 * c;
    for (int r = 0; r < g_size; ++r)
      for (int th = 0; th < g_threads; ++th) expect += addend(r, th, c) * g_rounds;
    CHECK(base[c] == expect, "counter %d is %lld, expected %lld (%d ranks x %d threads x %d rounds)", c, base[c],
          expect, g_size, g_threads, g_rounds);
  }
  const long long max_expect = max_value(g_size - 1, g_threads - 1, g_rounds - 1);
  CHECK(base[kMaxWord] == max_expect, "MPI_MAX word is %lld, expected %lld", base[kMaxWord], max_expect);
  const long long total = (long long)g_size * g_threads * g_rounds;
  CHECK(base[kTicketWord] == total, "ticket word is %lld, expected %lld", base[kTicketWord], total);
  MPI_CHECK(MPI_Win_unlock(g_rank, g_win));

  /* Every ticket drawn on every rank, exactly once. */
  long long* all = (long long*)test_malloc(sizeof(long long) * per_rank * g_size);
  MPI_CHECK(MPI_Allgather(g_tickets, (int)per_rank, MPI_LONG_LONG, all, (int)per_rank, MPI_LONG_LONG, MPI_COMM_WORLD));
  unsigned char* seen = (unsigned char*)test_malloc((size_t)total);
  for (int t = 0; t < g_size; ++t) {
    memset(seen, 0, (size_t)total);
    for (int r = 0; r < g_size; ++r) {
      for (int th = 0; th < g_threads; ++th) {
        for (int round = 0; round < g_rounds; ++round) {
          const long long ticket = all[(size_t)r * per_rank + ((size_t)th * g_size + t) * g_rounds + round];
          CHECK(ticket >= 0 && ticket < total, "rank %d thread %d drew ticket %lld on rank %d, outside 0..%lld", r, th,
                ticket, t, total - 1);
          CHECK(!seen[ticket], "ticket %lld on rank %d drawn twice (again by rank %d thread %d)", ticket, t, r, th);
          seen[ticket] = 1;
        }
      }
    }
  }
  MPI_CHECK(MPI_Win_free(&g_win));
  free(g_tickets);
  free(all);
  free(seen);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("rma_threads", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
