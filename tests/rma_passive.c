/* Passive target one-sided communication (MPI-4.1 section 12.5.3), every
 * window and every fetched buffer checked against a serial model each rank
 * computes for every rank.
 *
 *  - MPI_Win_lock/MPI_Win_unlock, MPI_LOCK_EXCLUSIVE and MPI_LOCK_SHARED
 *    by turns: puts from every rank to every rank (itself included) into
 *    disjoint places, then MPI_Get of whole windows under shared locks;
 *  - mutual exclusion of MPI_LOCK_EXCLUSIVE: a non-atomic read-modify-write
 *    (MPI_Get, MPI_Win_flush, MPI_Put) of one counter by every rank, K
 *    times: the final count must be exact;
 *  - in MPI_Win_lock_all epochs: MPI_Win_flush (a get after a flushed put
 *    sees it), MPI_Win_flush_local and MPI_Win_flush_local_all (the origin
 *    buffer may be reused at once), MPI_Win_flush_all; MPI_Rput, MPI_Rget,
 *    MPI_Raccumulate and MPI_Rget_accumulate completed by MPI_Wait,
 *    MPI_Test loops and MPI_Waitall;
 *  - MPI_Win_sync: local stores made visible to MPI_Get of other ranks,
 *    and puts of other ranks made visible to local loads (with barriers);
 *  - atomicity from many origins: K MPI_Accumulate(MPI_SUM) of 1 from
 *    every rank into the same counters of rank 0 under shared locks;
 *    MPI_Fetch_and_op tickets (every ticket 0..N*K-1 seen exactly once,
 *    each origin's own tickets increasing); a spin mutex built of
 *    MPI_Compare_and_swap protecting a Get+flush+Put increment, with a
 *    fetch-and-add occupancy count that must read 0 on entry.
 * Ranks that are targets keep calling MPI (their own RMA, or
 * MPI_Barrier) while the others access them, so nothing here needs
 * asynchronous progress.
 *
 * With argument "target-computes" only one case runs: rank 0 computes
 * for 0.5 s without calling MPI while every other rank locks it, puts,
 * gets and unlocks; each of those epochs must end before rank 0 stops
 * computing (by CLOCK_REALTIME: run it where the ranks' clocks agree to a
 * few ms), and the data must be right.  It passes only with asynchronous
 * progress. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "test_util.h"

#include "rma_util.h"

enum { kInitial = 9999 }; /* the "origin" of a window's initial content */
static int g_rank, g_size;

/* ---- 1. lock/unlock, exclusive and shared ------------------------------ */

enum { kSlot = 1024 }; /* bytes of each window reserved for each origin */

static void put_place(int test, int o, int t, int round, int* first, int* count) {
  uint64_t h = rma_hash((uint64_t)test, (uint64_t)o, (uint64_t)t, (uint64_t)round);
  *first = (int)(h % (kSlot / 2));
  *count = 1 + (int)((h >> 20) % (uint64_t)(kSlot - *first));
}

static void lock_unlock(void) {
  const int test = 100;
  const size_t full = (size_t)g_size * kSlot;
  unsigned char* base = (unsigned char*)test_malloc(full);
  unsigned char* model = (unsigned char*)test_malloc((size_t)g_size * full);
  unsigned char* send = (unsigned char*)test_malloc(kSlot);
  unsigned char* fetched = (unsigned char*)test_malloc(full);
  for (int t = 0; t < g_size; ++t) rma_fill(model + (size_t)t * full, full, test, kInitial, t, 0);
  memcpy(base, model + (size_t)g_rank * full, full);
  MPI_Win win;
  MPI_CHECK(MPI_Win_create(base, (MPI_Aint)full, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));

  const int rounds = 4;
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < g_size; ++k) {
      const int t = (g_rank + k + round) % g_size;
      const int type = (t + round) % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
      int first, count;
      put_place(test, g_rank, t, round, &first, &count);
      rma_fill(send, (size_t)count, test, g_rank, t, round);
      MPI_CHECK(MPI_Win_lock(type, t, 0, win));
      /* Half the puts in two pieces. */
      if (count > 1 && round % 2) {
        MPI_CHECK(MPI_Put(send, count / 2, MPI_BYTE, t, (MPI_Aint)g_rank * kSlot + first, count / 2,
                          MPI_BYTE, win));
        MPI_CHECK(MPI_Put(send + count / 2, count - count / 2, MPI_BYTE, t,
                          (MPI_Aint)g_rank * kSlot + first + count / 2, count - count / 2, MPI_BYTE, win));
      } else {
        MPI_CHECK(MPI_Put(send, count, MPI_BYTE, t, (MPI_Aint)g_rank * kSlot + first, count, MPI_BYTE, win));
      }
      MPI_CHECK(MPI_Win_unlock(t, win));
    }
    for (int t = 0; t < g_size; ++t) {
      for (int o = 0; o < g_size; ++o) {
        int first, count;
        put_place(test, o, t, round, &first, &count);
        rma_fill(model + (size_t)t * full + (size_t)o * kSlot + first, (size_t)count, test, o, t, round);
      }
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every put is complete */
    /* The own window, read under a lock of it (which makes the public
     * copy visible in the separate model too). */
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_rank, 0, win));
    RMA_CHECK_BYTES(base, model + (size_t)g_rank * full, full, "window after lock/put/unlock round %d",
                    round);
    MPI_CHECK(MPI_Win_unlock(g_rank, win));
    /* Every window through MPI_Get under a shared lock. */
    for (int k = 0; k < g_size; ++k) {
      const int t = (g_rank + k) % g_size;
      memset(fetched, 0, full);
      MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
      MPI_CHECK(MPI_Get(fetched, (int)full, MPI_BYTE, t, 0, (int)full, MPI_BYTE, win));
      MPI_CHECK(MPI_Win_unlock(t, win));
      RMA_CHECK_BYTES(fetched, model + (size_t)t * full, full, "MPI_Get of rank %d's window, round %d",
                      t, round);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* no gets during the next puts */
  }
  MPI_CHECK(MPI_Win_free(&win));
  free(base);
  free(model);
  free(send);
  free(fetched);
}

/* Every rank increments one counter on every rank K times with a plain
 * MPI_Get + MPI_Put under MPI_LOCK_EXCLUSIVE: exact only if the lock
 * excludes. */
static void exclusive_increments(void) {
  const int kTimes = 8;
  long long* counter = NULL;
  MPI_Win win;
  MPI_CHECK(MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win));
  MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g_rank, 0, win));
  counter[0] = 1000 * g_rank;
  MPI_CHECK(MPI_Win_unlock(g_rank, win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < kTimes; ++i) {
    for (int k = 0; k < g_size; ++k) {
      const int t = (g_rank + k) % g_size;
      long long value = -1;
      MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
      MPI_CHECK(MPI_Get(&value, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win));
      MPI_CHECK(MPI_Win_flush(t, win));
      ++value;
      MPI_CHECK(MPI_Put(&value, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win));
      MPI_CHECK(MPI_Win_unlock(t, win));
    }
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_rank, 0, win));
  CHECK(counter[0] == 1000LL * g_rank + (long long)kTimes * g_size,
        "counter incremented under MPI_LOCK_EXCLUSIVE is %lld, expected %lld (lost updates)", counter[0],
        1000LL * g_rank + (long long)kTimes * g_size);
  MPI_CHECK(MPI_Win_unlock(g_rank, win));
  MPI_CHECK(MPI_Win_free(&win));
}

/* ---- 2. flushes and request-based calls in lock_all -------------------- */

/* Window layout (long long words) for sections 2 and 3. */
enum {
  kPutFlushed = 0,                           /* [origin]: put, flush, get */
  kLocalA = kPutFlushed + 64,                /* [origin]: put after flush_local */
  kLocalB = kLocalA + 64,                    /* [origin]: put after flush_local_all */
  kRput = kLocalB + 64,                      /* [origin][4]: MPI_Rput */
  kRacc = kRput + 64 * 4,                    /* [8]: MPI_Raccumulate(MPI_SUM) from all */
  kRgacc = kRacc + 8,                        /* [1]: MPI_Rget_accumulate(MPI_SUM) bits */
  kSyncOwn = kRgacc + 8,                     /* [16]: local stores, then MPI_Win_sync */
  kSyncPut = kSyncOwn + 16,                  /* [16]: put by the left neighbour */
  kWords = kSyncPut + 16
};

static long long word_value(int test, int o, int t, int index) {
  return (long long)rma_hash((uint64_t)test, (uint64_t)o, (uint64_t)t, (uint64_t)index);
}

static void flushes_and_requests(void) {
  if (g_size > 60) return;
  const int test = 200;
  long long* base = NULL;
  MPI_Win win;
  MPI_CHECK(MPI_Win_allocate(kWords * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  long long* model = (long long*)test_malloc(sizeof(long long) * g_size * kWords);
  for (int t = 0; t < g_size; ++t)
    for (int i = 0; i < kWords; ++i) model[t * kWords + i] = word_value(test, kInitial, t, i);
  for (int t = 0; t < g_size; ++t)
    for (int i = 0; i < 8; ++i) model[t * kWords + kRacc + i] = i * 1000;
  for (int t = 0; t < g_size; ++t) model[t * kWords + kRgacc] = 0;
  MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g_rank, 0, win));
  memcpy(base, model + g_rank * kWords, kWords * 8);
  MPI_CHECK(MPI_Win_unlock(g_rank, win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  long long* rgacc_results = (long long*)test_malloc(sizeof(long long) * g_size);
  MPI_CHECK(MPI_Win_lock_all(0, win));
  for (int k = 0; k < g_size; ++k) {
    const int t = (g_rank + k) % g_size;
    long long value = word_value(test, g_rank, t, kPutFlushed), got = 0;
    /* A flushed put is complete at the target: a later get sees it. */
    MPI_CHECK(MPI_Put(&value, 1, MPI_LONG_LONG, t, kPutFlushed + g_rank, 1, MPI_LONG_LONG, win));
    MPI_CHECK(MPI_Win_flush(t, win));
    MPI_CHECK(MPI_Get(&got, 1, MPI_LONG_LONG, t, kPutFlushed + g_rank, 1, MPI_LONG_LONG, win));
    MPI_CHECK(MPI_Win_flush(t, win));
    CHECK(got == value, "MPI_Get after a flushed MPI_Put to rank %d read %lld, expected %lld", t, got, value);

    /* After flush_local the origin buffer may be reused at once. */
    long long buffer = word_value(test, g_rank, t, kLocalA);
    MPI_CHECK(MPI_Put(&buffer, 1, MPI_LONG_LONG, t, kLocalA + g_rank, 1, MPI_LONG_LONG, win));
    MPI_CHECK(MPI_Win_flush_local(t, win));
    buffer = word_value(test, g_rank, t, kLocalB);
    MPI_CHECK(MPI_Put(&buffer, 1, MPI_LONG_LONG, t, kLocalB + g_rank, 1, MPI_LONG_LONG, win));
    MPI_CHECK(MPI_Win_flush_local_all(win));
    buffer = -1;
  }
  MPI_CHECK(MPI_Win_flush_all(win));

  /* Request-based puts (completed by MPI_Wait and MPI_Waitall, only
   * locally), then gets of the same places after a flush (MPI_Test). */
  long long rput_data[4], rget_data[4];
  for (int k = 0; k < g_size; ++k) {
    const int t = (g_rank + g_size - k) % g_size;
    MPI_Request requests[4];
    for (int j = 0; j < 4; ++j) rput_data[j] = word_value(test, g_rank, t, kRput + j);
    MPI_CHECK(MPI_Rput(&rput_data[0], 1, MPI_LONG_LONG, t, kRput + g_rank * 4, 1, MPI_LONG_LONG, win,
                       &requests[0]));
    MPI_CHECK(MPI_Wait(&requests[0], MPI_STATUS_IGNORE));
    CHECK(requests[0] == MPI_REQUEST_NULL, "MPI_Wait left an MPI_Rput request");
    rput_data[0] = -1; /* locally complete: the buffer is free */
    MPI_CHECK(MPI_Rput(&rput_data[1], 3, MPI_LONG_LONG, t, kRput + g_rank * 4 + 1, 3, MPI_LONG_LONG, win,
                       &requests[1]));
    MPI_CHECK(MPI_Waitall(1, &requests[1], MPI_STATUSES_IGNORE));
    MPI_CHECK(MPI_Win_flush(t, win));
    for (int j = 0; j < 4; ++j) rget_data[j] = 0;
    MPI_CHECK(MPI_Rget(rget_data, 4, MPI_LONG_LONG, t, kRput + g_rank * 4, 4, MPI_LONG_LONG, win,
                       &requests[2]));
    int flag = 0;
    while (!flag) MPI_CHECK(MPI_Test(&requests[2], &flag, MPI_STATUS_IGNORE));
    for (int j = 0; j < 4; ++j)
      CHECK(rget_data[j] == word_value(test, g_rank, t, kRput + j),
            "MPI_Rget after MPI_Rput+flush from rank %d: word %d is %lld, expected %lld", t, j, rget_data[j],
            word_value(test, g_rank, t, kRput + j));
  }

  /* MPI_Raccumulate from everyone to everyone (MPI_Wait), and
   * MPI_Rget_accumulate(MPI_SUM) of the origin's bit (MPI_Test). */
  long long acc[8];
  for (int i = 0; i < 8; ++i) acc[i] = (g_rank + 1) * (i + 1);
  const long long bit = 1LL << g_rank;
  MPI_Request* requests = (MPI_Request*)test_malloc(sizeof(MPI_Request) * 2 * g_size);
  for (int k = 0; k < g_size; ++k) {
    const int t = (g_rank + k) % g_size;
    MPI_CHECK(MPI_Raccumulate(acc, 8, MPI_LONG_LONG, t, kRacc, 8, MPI_LONG_LONG, MPI_SUM, win,
                              &requests[2 * k]));
    MPI_CHECK(MPI_Rget_accumulate(&bit, 1, MPI_LONG_LONG, &rgacc_results[t], 1, MPI_LONG_LONG, t, kRgacc, 1,
                                  MPI_LONG_LONG, MPI_SUM, win, &requests[2 * k + 1]));
  }
  for (int k = 0; k < g_size; ++k) MPI_CHECK(MPI_Wait(&requests[2 * k], MPI_STATUS_IGNORE));
  for (int k = 0; k < g_size; ++k) {
    int flag = 0;
    while (!flag) MPI_CHECK(MPI_Test(&requests[2 * k + 1], &flag, MPI_STATUS_IGNORE));
  }
  MPI_CHECK(MPI_Win_unlock_all(win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  for (int t = 0; t < g_size; ++t) {
    long long* m = model + t * kWords;
    for (int o = 0; o < g_size; ++o) {
      m[kPutFlushed + o] = word_value(test, o, t, kPutFlushed);
      m[kLocalA + o] = word_value(test, o, t, kLocalA);
      m[kLocalB + o] = word_value(test, o, t, kLocalB);
      for (int j = 0; j < 4; ++j) m[kRput + o * 4 + j] = word_value(test, o, t, kRput + j);
      for (int i = 0; i < 8; ++i) m[kRacc + i] += (long long)(o + 1) * (i + 1);
    }
    m[kRgacc] = (1LL << g_size) - 1;
  }
  MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_rank, 0, win));
  RMA_CHECK_BYTES(base, model + g_rank * kWords, kWords * 8, "window after the lock_all epoch");
  MPI_CHECK(MPI_Win_unlock(g_rank, win));

  /* The MPI_Rget_accumulate results: one chain per target. */
  long long* all = (long long*)test_malloc(sizeof(long long) * g_size * g_size);
  MPI_CHECK(MPI_Allgather(rgacc_results, g_size, MPI_LONG_LONG, all, g_size, MPI_LONG_LONG, MPI_COMM_WORLD));
  for (int t = 0; t < g_size; ++t) {
    long long seen_by[64];
    int order[64];
    for (int i = 0; i < g_size; ++i) order[i] = -1;
    for (int o = 0; o < g_size; ++o) {
      seen_by[o] = all[o * g_size + t];
      int before = 0;
      for (int b = 0; b < g_size; ++b) before += (int)((seen_by[o] >> b) & 1);
      CHECK(seen_by[o] >= 0 && seen_by[o] < (1LL << g_size) && !(seen_by[o] & (1LL << o)) && order[before] == -1,
            "MPI_Rget_accumulate on rank %d: origin %d fetched %lld: not a chain of distinct prefixes", t, o,
            seen_by[o]);
      order[before] = o;
    }
    long long expect = 0;
    for (int k = 0; k < g_size; ++k) {
      CHECK(seen_by[order[k]] == expect, "MPI_Rget_accumulate on rank %d: origin %d fetched %lld, expected %lld",
            t, order[k], seen_by[order[k]], expect);
      expect |= 1LL << order[k];
    }
  }

  /* ---- 3. MPI_Win_sync: local stores to remote gets, remote puts to
   * local loads. */
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  MPI_CHECK(MPI_Win_lock_all(0, win));
  for (int i = 0; i < 16; ++i) base[kSyncOwn + i] = word_value(test + 1, g_rank, g_rank, i);
  MPI_CHECK(MPI_Win_sync(win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  long long got[16];
  MPI_CHECK(MPI_Get(got, 16, MPI_LONG_LONG, right, kSyncOwn, 16, MPI_LONG_LONG, win));
  MPI_CHECK(MPI_Win_flush(right, win));
  for (int i = 0; i < 16; ++i)
    CHECK(got[i] == word_value(test + 1, right, right, i),
          "MPI_Get of rank %d's local stores (after its MPI_Win_sync): word %d is %lld, expected %lld", right, i,
          got[i], word_value(test + 1, right, right, i));
  long long put[16];
  for (int i = 0; i < 16; ++i) put[i] = word_value(test + 2, g_rank, right, i);
  MPI_CHECK(MPI_Put(put, 16, MPI_LONG_LONG, right, kSyncPut, 16, MPI_LONG_LONG, win));
  MPI_CHECK(MPI_Win_flush(right, win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_CHECK(MPI_Win_sync(win));
  for (int i = 0; i < 16; ++i) {
    volatile long long* word = &base[kSyncPut + i];
    CHECK(*word == word_value(test + 2, left, g_rank, i),
          "load after MPI_Win_sync of rank %d's put: word %d is %lld, expected %lld", left, i, *word,
          word_value(test + 2, left, g_rank, i));
  }
  MPI_CHECK(MPI_Win_unlock_all(win));
  MPI_CHECK(MPI_Win_free(&win));
  free(model);
  free(rgacc_results);
  free(requests);
  free(all);
}

/* ---- 4. atomicity from many origins ------------------------------------ */

enum { kCounters = 8, kTicket = kCounters, kMutex, kMutexCount, kInside, kAtomicWords };

static void atomicity(void) {
  const int kAccTimes = 64, kTickets = 32, kCritical = 6;
  long long* base = NULL;
  MPI_Win win;
  MPI_CHECK(MPI_Win_allocate(g_rank == 0 ? kAtomicWords * 8 : 0, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  if (g_rank == 0) {
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    for (int i = 0; i < kAtomicWords; ++i) base[i] = 0;
    base[kTicket] = 0;
    MPI_CHECK(MPI_Win_unlock(0, win));
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* a. K accumulates of 1 into the same counters, under a shared lock:
   * one element at a time into counter 0, all eight at once as well. */
  const long long ones[kCounters] = {1, 1, 1, 1, 1, 1, 1, 1};
  MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  for (int i = 0; i < kAccTimes; ++i) {
    MPI_CHECK(MPI_Accumulate(ones, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
    MPI_CHECK(MPI_Accumulate(ones, kCounters, MPI_LONG_LONG, 0, 0, kCounters, MPI_LONG_LONG, MPI_SUM, win));
    if (i % 16 == 0) MPI_CHECK(MPI_Win_flush(0, win));
  }
  MPI_CHECK(MPI_Win_unlock(0, win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) {
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    for (int c = 0; c < kCounters; ++c) {
      const long long expect = (long long)g_size * kAccTimes * (c == 0 ? 2 : 1);
      CHECK(base[c] == expect, "counter %d after %d ranks x %d MPI_Accumulate(MPI_SUM, 1) is %lld, expected %lld",
            c, g_size, kAccTimes, base[c], expect);
    }
    MPI_CHECK(MPI_Win_unlock(0, win));
  }

  /* b. MPI_Fetch_and_op tickets. */
  long long* tickets = (long long*)test_malloc(sizeof(long long) * kTickets);
  long long* all = (long long*)test_malloc(sizeof(long long) * kTickets * g_size);
  const long long one = 1;
  MPI_CHECK(MPI_Win_lock_all(0, win));
  for (int i = 0; i < kTickets; ++i) {
    MPI_CHECK(MPI_Fetch_and_op(&one, &tickets[i], MPI_LONG_LONG, 0, kTicket, MPI_SUM, win));
    MPI_CHECK(MPI_Win_flush(0, win));
    CHECK(i == 0 || tickets[i] > tickets[i - 1], "ticket %d (%lld) not above the one before (%lld)", i, tickets[i],
          tickets[i - 1]);
  }
  MPI_CHECK(MPI_Allgather(tickets, kTickets, MPI_LONG_LONG, all, kTickets, MPI_LONG_LONG, MPI_COMM_WORLD));
  const int total = kTickets * g_size;
  unsigned char* seen = (unsigned char*)test_malloc((size_t)total);
  memset(seen, 0, (size_t)total);
  for (int i = 0; i < total; ++i) {
    CHECK(all[i] >= 0 && all[i] < total, "rank %d drew ticket %lld, outside 0..%d", i / kTickets, all[i], total - 1);
    CHECK(!seen[all[i]], "ticket %lld drawn twice (the second time by rank %d)", all[i], i / kTickets);
    seen[all[i]] = 1;
  }

  /* c. A spin mutex of MPI_Compare_and_swap around Get+flush+Put. */
  const long long unlocked = 0, me = g_rank + 1;
  for (int i = 0; i < kCritical; ++i) {
    long long previous = -1;
    do {
      MPI_CHECK(MPI_Compare_and_swap(&me, &unlocked, &previous, MPI_LONG_LONG, 0, kMutex, win));
      MPI_CHECK(MPI_Win_flush(0, win));
      CHECK(previous >= 0 && previous <= g_size, "mutex word read %lld", previous);
    } while (previous != unlocked);
    long long inside = -1, count = -1;
    MPI_CHECK(MPI_Fetch_and_op(&one, &inside, MPI_LONG_LONG, 0, kInside, MPI_SUM, win));
    MPI_CHECK(MPI_Get(&count, 1, MPI_LONG_LONG, 0, kMutexCount, 1, MPI_LONG_LONG, win));
    MPI_CHECK(MPI_Win_flush(0, win));
    CHECK(inside == 0, "%lld other ranks inside the MPI_Compare_and_swap mutex", inside);
    ++count;
    MPI_CHECK(MPI_Put(&count, 1, MPI_LONG_LONG, 0, kMutexCount, 1, MPI_LONG_LONG, win));
    const long long minus_one = -1;
    MPI_CHECK(MPI_Accumulate(&minus_one, 1, MPI_LONG_LONG, 0, kInside, 1, MPI_LONG_LONG, MPI_SUM, win));
    MPI_CHECK(MPI_Win_flush(0, win));
    MPI_CHECK(MPI_Compare_and_swap(&unlocked, &me, &previous, MPI_LONG_LONG, 0, kMutex, win));
    MPI_CHECK(MPI_Win_flush(0, win));
    CHECK(previous == me, "releasing the mutex: it was held by %lld, not by this rank (%lld)", previous, me);
  }
  MPI_CHECK(MPI_Win_unlock_all(win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) {
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK(base[kMutexCount] == (long long)g_size * kCritical,
          "count incremented inside the mutex is %lld, expected %lld", base[kMutexCount],
          (long long)g_size * kCritical);
    CHECK(base[kMutex] == 0 && base[kInside] == 0, "mutex word %lld and occupancy %lld after all, expected 0 0",
          base[kMutex], base[kInside]);
    CHECK(base[kTicket] == total, "ticket counter %lld, expected %d", base[kTicket], total);
    MPI_CHECK(MPI_Win_unlock(0, win));
  }
  MPI_CHECK(MPI_Win_free(&win));
  free(tickets);
  free(all);
  free(seen);
}

/* ---- target-computes: needs asynchronous progress ---------------------- */

static double realtime_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void target_computes(void) {
  const int test = 300;
  const double kCompute = 0.5;
  unsigned char* base = NULL;
  MPI_Win win;
  const size_t full = (size_t)g_size * kSlot;
  MPI_CHECK(MPI_Win_allocate((MPI_Aint)full, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  unsigned char* model = (unsigned char*)test_malloc(full);
  rma_fill(model, full, test, kInitial, 0, 0);
  MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g_rank, 0, win));
  if (g_rank == 0) memcpy(base, model, full);
  MPI_CHECK(MPI_Win_unlock(g_rank, win));
  unsigned char* send = (unsigned char*)test_malloc(kSlot);
  unsigned char* got = (unsigned char*)test_malloc(kSlot);
  double epoch_end = 0, compute_end = 0;
  volatile uint64_t sink = 0;

  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) {
    /* No MPI call in here. */
    const double end = realtime_now() + kCompute;
    uint64_t x = 1;
    while (realtime_now() < end)
      for (int i = 0; i < 10000; ++i) x = test_mix64(x + (uint64_t)i);
    sink = x;
    compute_end = realtime_now();
  } else {
    int first, count;
    put_place(test, g_rank, 0, 0, &first, &count);
    rma_fill(send, (size_t)count, test, g_rank, 0, 0);
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MPI_CHECK(MPI_Put(send, count, MPI_BYTE, 0, (MPI_Aint)g_rank * kSlot + first, count, MPI_BYTE, win));
    MPI_CHECK(MPI_Win_unlock(0, win));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_CHECK(MPI_Get(got, count, MPI_BYTE, 0, (MPI_Aint)g_rank * kSlot + first, count, MPI_BYTE, win));
    MPI_CHECK(MPI_Win_unlock(0, win));
    epoch_end = realtime_now();
    RMA_CHECK_BYTES(got, send, (size_t)count, "MPI_Get of this rank's put to the computing rank 0");
  }
  (void)sink;
  MPI_CHECK(MPI_Bcast(&compute_end, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  CHECK(g_rank == 0 || epoch_end < compute_end,
        "the lock/put/unlock/lock/get/unlock epochs on rank 0 ended %.3f s after rank 0 stopped computing "
        "(%.1f s without MPI calls): they waited for it to call MPI (no asynchronous progress)",
        epoch_end - compute_end, kCompute);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every epoch has ended */
  if (g_rank == 0) {
    for (int o = 1; o < g_size; ++o) {
      int first, count;
      put_place(test, o, 0, 0, &first, &count);
      rma_fill(model + (size_t)o * kSlot + first, (size_t)count, test, o, 0, 0);
    }
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    RMA_CHECK_BYTES(base, model, full, "rank 0's window after the others' epochs");
    MPI_CHECK(MPI_Win_unlock(0, win));
  }
  MPI_CHECK(MPI_Win_free(&win));
  free(model);
  free(send);
  free(got);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc > 1 && strcmp(argv[1], "target-computes") == 0) {
    target_computes();
  } else {
    CHECK(argc == 1, "usage: rma_passive [target-computes]");
    lock_unlock();
    exclusive_increments();
    flushes_and_requests();
    if (g_size <= 62) atomicity();
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("rma_passive", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
