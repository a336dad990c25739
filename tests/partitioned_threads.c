/* Partitioned communication under MPI_THREAD_MULTIPLE, between rank pairs
 * (0,1), (2,3), ... (an odd last rank only joins the barriers).
 *
 * Part 1, one request shared by T threads: each rank has one partitioned
 * send to its partner and one partitioned receive from it (both directions
 * at once), and every thread owns some partitions of each (a block of
 * them, or every T-th one).  Per round a pthread barrier orders thread 0's
 * MPI_Startall before anything else; then each thread writes its own send
 * partitions and marks them ready (MPI_Pready, MPI_Pready_range or
 * MPI_Pready_list, random order, tiny random sleeps), and polls
 * MPI_Parrived on its own receive partitions, checking each one's bytes as
 * soon as it is reported.  In some rounds a thread sits in MPI_Wait on the
 * send request while the others are still marking partitions ready, and
 * another in MPI_Wait on the receive request while the others poll
 * MPI_Parrived.  After a barrier, thread 0 completes what is left and the
 * next round's buffers are only touched after another barrier: the test
 * itself has no data race (run it under ThreadSanitizer).
 *
 * Part 2, one request per thread: T threads each run their own partitioned
 * stream (its own partition counts, a communicator shared by two threads,
 * its own tag; sending or receiving, alternating by thread) with its own
 * init, rounds and free, all at once.
 *
 * Usage: partitioned_threads [--threads T] [--rounds N] [--quick]
 *                            [--watchdog SECONDS] */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#if MPI_VERSION < 4
TEST_SKIPPED_MAIN("partitioned_threads",
                  "MPI_VERSION < 4 has no partitioned communication")
#else

enum { kPoison = 0xA5, kMaxThreads = 64 };

static int g_rank, g_size, g_peer;
static int g_threads = 8;
static int g_rounds = 30;
static int g_watchdog_s = 120;
static int g_mpich;

/* ---- hang guard ------------------------------------------------------- */

static char g_watchdog_text[300];
static size_t g_watchdog_length;

static void on_watchdog(int signal_number) {
  (void)signal_number;
  ssize_t ignored = write(2, g_watchdog_text, g_watchdog_length);
  (void)ignored;
  _exit(3);
}

/* Called by one thread at a time (the main thread, or thread 0 between
 * barriers). */
static void watchdog(const char* part, int round) {
  alarm(0);
  int n = snprintf(g_watchdog_text, sizeof g_watchdog_text,
                   "FAIL [rank %d] partitioned_threads: %s round %d did not finish within %d s "
                   "(hang)\n", g_rank, part, round, g_watchdog_s);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof g_watchdog_text) n = (int)sizeof g_watchdog_text - 1;
  g_watchdog_length = (size_t)n;
  alarm((unsigned)g_watchdog_s);
}

/* ---- pattern and randomness -------------------------------------------- */

static TestRng rng_for(int part, int thread, int round) {
  TestRng rng = {
      test_mix64((uint64_t)g_rank * 1000003u + (uint64_t)part * 7919u +
                 (uint64_t)thread * 104729u + (uint64_t)round * 15485863u)};
  return rng;
}

/* Int `j` of the message `source` sends in `round` of stream `key`. */
static int pattern(int source, int key, int round, long j) {
  return (int)(uint32_t)test_mix64(test_mix64((uint64_t)(uint32_t)source * 0x100000001b3ull +
                                    (uint64_t)(uint32_t)key * 0x9e3779b1ull +
                                    (uint64_t)(uint32_t)round) + (uint64_t)j);
}

static void fill_ints(int* buf, long lo, long hi, int source, int key, int round) {
  for (long j = lo; j < hi; ++j) buf[j] = pattern(source, key, round, j);
}

static void check_ints(const int* buf, long lo, long hi, int source, int key, int round,
                       int partition, int parts, const char* what) {
  for (long j = lo; j < hi; ++j) {
    const int expected = pattern(source, key, round, j);
    if (buf[j] != expected) {
      long bad = 0;
      for (long k = j; k < hi; ++k) bad += buf[k] != pattern(source, key, round, k);
      const unsigned char* got = (const unsigned char*)&buf[j];
      const unsigned char* want = (const unsigned char*)&expected;
      int b = 0;
      while (b < 3 && got[b] == want[b]) ++b;
      test_fail(__FILE__, __LINE__,
                "%s round %d: receive partition %d of %d (data from rank %d): byte offset %ld "
                "of the buffer: expected 0x%02x, got 0x%02x (%ld ints wrong from there to the "
                "end of the partition)",
                what, round, partition, parts, source, j * (long)sizeof(int) + b, want[b], got[b],
                bad);
    }
  }
}

static void tiny_sleep(TestRng* rng) {
  if (test_rng_below(rng, 4) != 0) return;
  struct timespec nap = {0, 1000L * (1 + test_rng_below(rng, 50))};
  nanosleep(&nap, NULL);
}

static void shuffle(int* values, int n, TestRng* rng) {
  for (int i = n - 1; i > 0; --i) {
    int k = test_rng_below(rng, i + 1), t = values[i];
    values[i] = values[k];
    values[k] = t;
  }
}

/* Marks the partitions in own[0..n) of `request` ready, writing each one's
 * data first: one by one, as ranges (runs of consecutive partitions), or
 * as lists, in random order with tiny sleeps between calls. */
static void mark_ready(MPI_Request request, int* own, int n, int variant, int* buf,
                       long per_part, int key, int round, TestRng* rng) {
  shuffle(own, n, rng);
  if (variant == 1) {
    /* Ranges: sort, then cut into runs of consecutive partitions. */
    for (int i = 1; i < n; ++i)
      for (int k = i; k > 0 && own[k - 1] > own[k]; --k) {
        int t = own[k];
        own[k] = own[k - 1];
        own[k - 1] = t;
      }
    int lo[kMaxThreads * 8], hi[kMaxThreads * 8], runs = 0;
    for (int i = 0; i < n;) {
      int k = i;
      while (k + 1 < n && own[k + 1] == own[k] + 1 && test_rng_below(rng, 4) != 0) ++k;
      lo[runs] = own[i];
      hi[runs] = own[k];
      ++runs;
      i = k + 1;
    }
    int order[kMaxThreads * 8];
    for (int r = 0; r < runs; ++r) order[r] = r;
    shuffle(order, runs, rng);
    for (int r = 0; r < runs; ++r) {
      const int run = order[r];
      fill_ints(buf, lo[run] * per_part, (hi[run] + 1) * per_part, g_rank, key, round);
      tiny_sleep(rng);
      MPI_CHECK(MPI_Pready_range(lo[run], hi[run], request));
    }
    return;
  }
  for (int i = 0; i < n;) {
    const int length = variant == 0 ? 1 : 1 + test_rng_below(rng, n - i);
    for (int k = i; k < i + length; ++k)
      fill_ints(buf, own[k] * per_part, (own[k] + 1) * per_part, g_rank, key, round);
    tiny_sleep(rng);
    if (variant == 0) {
      MPI_CHECK(MPI_Pready(own[i], request));
    } else {
      MPI_CHECK(MPI_Pready_list(length, own + i, request));
    }
    i += length;
  }
}

/* ---- part 1: one request, many threads ----------------------------------- */

typedef struct {
  const char* name;
  int send_per_thread, recv_per_thread; /* partitions each thread owns */
  long recv_part_ints;                  /* ints per receive partition */
  int strided;                          /* thread t owns partitions t, t+T, ... */
} SharedConfig;

typedef struct {
  const SharedConfig* config;
  int ps, pr;
  long total, send_part_ints;
  int* send_buf;
  int* recv_buf;
  MPI_Request reqs[2]; /* send, receive */
  int key;
  pthread_barrier_t barrier;
  MPI_Status recv_status; /* written by whichever thread completes the receive */
  int recv_waited;        /* set by that thread, read after a barrier */
  int send_waited;
} Shared;

typedef struct {
  Shared* shared;
  int thread;
} SharedArg;

static int owns(const Shared* s, int parts_per_thread, int p, int thread) {
  return s->config->strided ? p % g_threads == thread : p / parts_per_thread == thread;
}

static void* shared_worker(void* arg_pointer) {
  const SharedArg* arg = (const SharedArg*)arg_pointer;
  Shared* s = arg->shared;
  const int t = arg->thread;
  const SharedConfig* c = s->config;
  int own_send[kMaxThreads * 8], own_recv[kMaxThreads * 8], ns = 0, nr = 0;
  for (int p = 0; p < s->ps; ++p)
    if (owns(s, c->send_per_thread, p, t)) own_send[ns++] = p;
  for (int q = 0; q < s->pr; ++q)
    if (owns(s, c->recv_per_thread, q, t)) own_recv[nr++] = q;
  for (int round = 0; round < g_rounds; ++round) {
    TestRng rng = rng_for(s->key, t, round);
    /* Our receive partitions are ours again: the last round was completed
     * by thread 0 before the last barrier. */
    for (int i = 0; i < nr; ++i)
      memset(s->recv_buf + own_recv[i] * c->recv_part_ints, kPoison,
             (size_t)c->recv_part_ints * sizeof(int));
    pthread_barrier_wait(&s->barrier);
    if (t == 0) {
      watchdog(c->name, round);
      s->send_waited = s->recv_waited = 0;
      MPI_CHECK(MPI_Startall(2, s->reqs));
    }
    pthread_barrier_wait(&s->barrier);
    /* Every fourth round, thread 0 waits for the send while others are
     * still marking partitions ready, and thread 1 for the receive while
     * others poll MPI_Parrived.  (Not under MPICH 4.0.2: its MPI_Parrived
     * fails on the request once that is complete, where MPI-4.1 says
     * flag = true.) */
    const int waiters = round % 4 == 1 && g_threads >= 2;
    mark_ready(s->reqs[0], own_send, ns, (round + t) % 3, s->send_buf, s->send_part_ints, s->key,
               round, &rng);
    if (waiters && t == 0) {
      MPI_CHECK(MPI_Wait(&s->reqs[0], MPI_STATUS_IGNORE));
      s->send_waited = 1;
    }
    if (waiters && t == 1 && !g_mpich) {
      MPI_CHECK(MPI_Wait(&s->reqs[1], &s->recv_status));
      s->recv_waited = 1;
    }
    shuffle(own_recv, nr, &rng);
    int left = nr;
    unsigned char seen[kMaxThreads * 8];
    memset(seen, 0, sizeof seen);
    while (left > 0) {
      for (int i = 0; i < nr; ++i) {
        if (seen[i]) continue;
        int flag = 0;
        MPI_CHECK(MPI_Parrived(s->reqs[1], own_recv[i], &flag));
        if (flag) {
          const int q = own_recv[i];
          check_ints(s->recv_buf, q * c->recv_part_ints, (q + 1) * c->recv_part_ints, g_peer,
                     s->key, round, q, s->pr, c->name);
          seen[i] = 1;
          --left;
        }
      }
      if (left > 0) sched_yield();
    }
    pthread_barrier_wait(&s->barrier);
    if (t == 0) {
      if (!s->send_waited) MPI_CHECK(MPI_Wait(&s->reqs[0], MPI_STATUS_IGNORE));
      if (!s->recv_waited) MPI_CHECK(MPI_Wait(&s->reqs[1], &s->recv_status));
      int count = -1;
      MPI_CHECK(MPI_Get_count(&s->recv_status, MPI_INT, &count));
      CHECK(s->recv_status.MPI_SOURCE == g_peer && s->recv_status.MPI_TAG == s->key &&
                count == s->total,
            "%s round %d: receive status source %d tag %d count %d, expected %d %d %ld", c->name,
            round, s->recv_status.MPI_SOURCE, s->recv_status.MPI_TAG, count, g_peer, s->key,
            s->total);
      /* The whole buffer, now that the receive is complete. */
      for (int q = 0; q < s->pr; ++q)
        check_ints(s->recv_buf, q * c->recv_part_ints, (q + 1) * c->recv_part_ints, g_peer,
                   s->key, round, q, s->pr, c->name);
    }
    pthread_barrier_wait(&s->barrier);
  }
  return NULL;
}

static void run_shared(const SharedConfig* c, int key, MPI_Comm comm) {
  Shared s;
  memset(&s, 0, sizeof s);
  s.config = c;
  s.key = key;
  s.ps = c->send_per_thread * g_threads;
  s.pr = c->recv_per_thread * g_threads;
  s.total = c->recv_part_ints * s.pr;
  CHECK(s.total % s.ps == 0, "%s: %ld ints do not split into %d send partitions", c->name, s.total,
        s.ps);
  s.send_part_ints = s.total / s.ps;
  s.send_buf = (int*)test_malloc((size_t)s.total * sizeof(int));
  s.recv_buf = (int*)test_malloc((size_t)s.total * sizeof(int));
  memset(s.send_buf, 0xEE, (size_t)s.total * sizeof(int));
  MPI_CHECK(MPI_Psend_init(s.send_buf, s.ps, s.send_part_ints, MPI_INT, g_peer, key, comm,
                           MPI_INFO_NULL, &s.reqs[0]));
  MPI_CHECK(MPI_Precv_init(s.recv_buf, s.pr, c->recv_part_ints, MPI_INT, g_peer, key, comm,
                           MPI_INFO_NULL, &s.reqs[1]));
  pthread_barrier_init(&s.barrier, NULL, (unsigned)g_threads);
  pthread_t threads[kMaxThreads];
  SharedArg args[kMaxThreads];
  for (int t = 0; t < g_threads; ++t) {
    args[t].shared = &s;
    args[t].thread = t;
    CHECK(pthread_create(&threads[t], NULL, shared_worker, &args[t]) == 0, "pthread_create");
  }
  for (int t = 0; t < g_threads; ++t) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&s.barrier);
  MPI_CHECK(MPI_Request_free(&s.reqs[0]));
  MPI_CHECK(MPI_Request_free(&s.reqs[1]));
  free(s.send_buf);
  free(s.recv_buf);
}

/* ---- part 2: one request per thread --------------------------------------- */

static MPI_Comm g_stream_comms[kMaxThreads];
static int g_num_stream_comms;

static void* stream_worker(void* arg_pointer) {
  const int t = *(const int*)arg_pointer;
  MPI_Comm comm = g_stream_comms[t % g_num_stream_comms];
  const int tag = 200 + t, key = 200 + t;
  const int sending = (g_rank < g_peer) == (t % 2 == 0);
  const int ps = 1 + (t % 5) * 3, pr = 1 + (t % 3) * 4;
  const long total = (long)ps * pr * 8 * (1 + t % 4);
  int* buf = (int*)test_malloc((size_t)total * sizeof(int));
  memset(buf, sending ? 0xEE : kPoison, (size_t)total * sizeof(int));
  MPI_Request request;
  if (sending) {
    MPI_CHECK(MPI_Psend_init(buf, ps, total / ps, MPI_INT, g_peer, tag, comm, MPI_INFO_NULL,
                             &request));
  } else {
    MPI_CHECK(MPI_Precv_init(buf, pr, total / pr, MPI_INT, g_peer, tag, comm, MPI_INFO_NULL,
                             &request));
  }
  int own[64];
  for (int round = 0; round < g_rounds; ++round) {
    TestRng rng = rng_for(1000 + t, t, round);
    if (sending) {
      MPI_CHECK(MPI_Start(&request));
      for (int p = 0; p < ps; ++p) own[p] = p;
      mark_ready(request, own, ps, round % 3, buf, total / ps, key, round, &rng);
      if (round % 2) {
        MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
      } else {
        int flag = 0;
        while (!flag) {
          MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
          if (!flag) sched_yield();
        }
      }
    } else {
      memset(buf, kPoison, (size_t)total * sizeof(int));
      MPI_CHECK(MPI_Start(&request));
      if (round % 2) {
        for (int q = 0; q < pr; ++q) {
          int flag = 0;
          while (!flag) {
            MPI_CHECK(MPI_Parrived(request, q, &flag));
            if (!flag) sched_yield();
          }
          check_ints(buf, q * (total / pr), (q + 1) * (total / pr), g_peer, key, round, q, pr,
                     "per-thread stream (MPI_Parrived)");
        }
      }
      MPI_Status status;
      MPI_CHECK(MPI_Wait(&request, &status));
      int count = -1;
      MPI_CHECK(MPI_Get_count(&status, MPI_INT, &count));
      CHECK(status.MPI_SOURCE == g_peer && status.MPI_TAG == tag && count == total,
            "stream of thread %d round %d: status source %d tag %d count %d, expected %d %d %ld",
            t, round, status.MPI_SOURCE, status.MPI_TAG, count, g_peer, tag, total);
      for (int q = 0; q < pr; ++q)
        check_ints(buf, q * (total / pr), (q + 1) * (total / pr), g_peer, key, round, q, pr,
                   "per-thread stream");
    }
  }
  MPI_CHECK(MPI_Request_free(&request));
  CHECK(request == MPI_REQUEST_NULL, "MPI_Request_free did not null the handle");
  free(buf);
  return NULL;
}

static void run_streams(void) {
  pthread_t threads[kMaxThreads];
  int ids[kMaxThreads];
  for (int t = 0; t < g_threads; ++t) {
    ids[t] = t;
    CHECK(pthread_create(&threads[t], NULL, stream_worker, &ids[t]) == 0, "pthread_create");
  }
  for (int t = 0; t < g_threads; ++t) pthread_join(threads[t], NULL);
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided %d, expected "
        "MPI_THREAD_MULTIPLE", provided);
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int library_length = 0;
  MPI_CHECK(MPI_Get_library_version(library, &library_length));
  g_mpich = strstr(library, "MPICH") != NULL;
  for (int i = 1; i < argc; ++i) {
    const int has_value = i + 1 < argc;
    if (strcmp(argv[i], "--threads") == 0 && has_value) {
      g_threads = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--rounds") == 0 && has_value) {
      g_rounds = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--quick") == 0) {
      g_rounds = 5;
    } else if (strcmp(argv[i], "--watchdog") == 0 && has_value) {
      g_watchdog_s = atoi(argv[++i]);
    } else {
      if (g_rank == 0)
        fprintf(stderr, "usage: %s [--threads T] [--rounds N] [--quick] [--watchdog SECONDS]\n",
                argv[0]);
      MPI_Finalize();
      return 2;
    }
  }
  CHECK(g_threads >= 1 && g_threads <= kMaxThreads && g_rounds >= 1 && g_watchdog_s >= 1,
        "bad options: %d threads (1..%d), %d rounds", g_threads, kMaxThreads, g_rounds);
  CHECK(g_size >= 2, "partitioned_threads needs at least 2 ranks, got %d", g_size);
  g_peer = g_rank ^ 1;
  const int active = g_peer < g_size;
  signal(SIGALRM, on_watchdog);

  /* Part 1: one send and one receive request shared by every thread. */
  static const SharedConfig kConfigs[] = {
      {"shared request, blocks of 4 send / 2 receive partitions per thread", 4, 2, 128, 0},
      {"shared request, every T-th partition, 3 send / 1 receive (96 KiB) per thread", 3, 1,
       24576, 1},
      {"shared request, every T-th partition, 1 send / 6 receive per thread", 1, 6, 60, 1},
  };
  for (size_t i = 0; i < sizeof kConfigs / sizeof kConfigs[0]; ++i) {
    MPI_Comm comm;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    watchdog(kConfigs[i].name, -1);
    if (active) run_shared(&kConfigs[i], 100 + (int)i, comm);
    watchdog(kConfigs[i].name, g_rounds);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Comm_free(&comm));
    if (g_rank == 0)
      printf("partitioned_threads: %s: %d threads x %d rounds ok\n", kConfigs[i].name, g_threads,
             g_rounds);
    fflush(stdout);
  }

  /* Part 2: a request per thread; two threads share each communicator. */
  g_num_stream_comms = (g_threads + 1) / 2;
  for (int i = 0; i < g_num_stream_comms; ++i)
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &g_stream_comms[i]));
  watchdog("per-thread streams", -1);
  if (active) run_streams();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0)
    printf("partitioned_threads: one request per thread (%d threads, %d communicators, both "
           "directions): %d rounds ok\n", g_threads, g_num_stream_comms, g_rounds);
  for (int i = 0; i < g_num_stream_comms; ++i) MPI_CHECK(MPI_Comm_free(&g_stream_comms[i]));
  alarm(0);
  test_report_pass("partitioned_threads", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}

#endif /* MPI_VERSION >= 4 */
