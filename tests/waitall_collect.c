/* MPI_Waitall collects the requests it has passed while it still waits for
 * later ones. This test makes that matter: each round, rank 0 waits on a
 * window whose entries complete out of order and over time, and checks what
 * every entry reports once the call returns.
 *
 * The window (kWindow entries) mixes:
 *  - receives from rank 1 (or rank 0 itself when alone), which the sender
 *    sends in an order shuffled per round, in bursts with pauses between
 *    them, some large enough for the rendezvous protocol;
 *  - MPI_REQUEST_NULL entries;
 *  - an active persistent receive and an inactive persistent receive;
 *  - a generalized request completed by a thread after the others;
 *  - on odd rounds, a receive whose buffer is too small (truncation).
 *
 * Checked for every entry: the status (source, tag, count, MPI_ERROR), the
 * data byte for byte, the handle (MPI_REQUEST_NULL, or unchanged for the
 * persistent ones, which must be inactive afterwards), the return code
 * (MPI_ERR_IN_STATUS exactly on truncation rounds), and that the
 * generalized request's query and free functions ran once each. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

enum {
  kWindow = 40,
  kRounds = 24,
  kNullEvery = 7,
  kPersistent = 5,   /* index of the active persistent receive */
  kInactive = 11,    /* index of the persistent receive never started */
  kGeneralized = 29, /* index of the generalized request */
  kTruncated = 23,   /* index of the short receive, odd rounds */
  kShortBytes = 8,
  kGeneralizedTag = 4242,
  kMaxBytes = 96 * 1024,
};

static int is_null(int i) { return i % kNullEvery == 3; }
static int is_message(int i) {
  return !is_null(i) && i != kInactive && i != kGeneralized;
}

/* Message i of round r: its tag and length (a few cross the eager limit). */
static int tag_of(int round, int i) { return round * 100 + i; }
static size_t bytes_of(int round, int i) {
  if ((i + round) % 9 == 4) return (size_t)kMaxBytes - (size_t)i;
  return (size_t)((i * 37 + round * 11) % 700);
}

static atomic_int g_queries;
static atomic_int g_frees;

static int query_fn(void* extra, MPI_Status* status) {
  (void)extra;
  atomic_fetch_add(&g_queries, 1);
  MPI_Status_set_elements(status, MPI_BYTE, 3);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = 77;
  status->MPI_TAG = kGeneralizedTag;
  return MPI_SUCCESS;
}
static int free_fn(void* extra) {
  (void)extra;
  atomic_fetch_add(&g_frees, 1);
  return MPI_SUCCESS;
}
static int cancel_fn(void* extra, int complete) {
  (void)extra;
  (void)complete;
  return MPI_SUCCESS;
}

static void* complete_later(void* arg) {
  MPI_Request request = *(MPI_Request*)arg;
  usleep(3000);
  MPI_Grequest_complete(request);
  return NULL;
}

/* The sender's order for round r: a shuffle of the message indices. */
static int send_order(int round, int order[kWindow]) {
  int n = 0;
  for (int i = 0; i < kWindow; ++i) {
    if (is_message(i)) order[n++] = i;
  }
  TestRng rng = {(uint64_t)round * 7919 + 17};
  for (int k = n - 1; k > 0; --k) {
    const int j = test_rng_below(&rng, k + 1);
    const int t = order[k];
    order[k] = order[j];
    order[j] = t;
  }
  return n;
}

static void send_round(int round, MPI_Request* sends, unsigned char** buffers) {
  int order[kWindow];
  const int n = send_order(round, order);
  for (int k = 0; k < n; ++k) {
    const int i = order[k];
    test_fill(buffers[i], bytes_of(round, i), 1, tag_of(round, i));
    MPI_CHECK(MPI_Isend(buffers[i], (int)bytes_of(round, i), MPI_BYTE, 0,
                        tag_of(round, i), MPI_COMM_WORLD, &sends[k]));
    if (k % 8 == 7) usleep(200); /* let the receiver's wait pass a few */
  }
}

static void check_round(int round, int rc, const MPI_Request* requests,
                        const MPI_Status* statuses, unsigned char** buffers,
                        MPI_Request persistent, MPI_Request inactive,
                        int source) {
  const int truncating = round % 2 == 1;
  CHECK(test_error_class(rc) == (truncating ? MPI_ERR_IN_STATUS : MPI_SUCCESS),
        "round %d: Waitall returned class %d", round, test_error_class(rc));
  for (int i = 0; i < kWindow; ++i) {
    const MPI_Status* status = &statuses[i];
    if (i == kPersistent) {
      CHECK(requests[i] == persistent,
            "round %d: the persistent handle changed", round);
    } else if (i == kInactive) {
      CHECK(requests[i] == inactive, "round %d: the inactive handle changed",
            round);
    } else {
      CHECK(requests[i] == MPI_REQUEST_NULL, "round %d: entry %d not nulled",
            round, i);
    }
    if (is_null(i) || i == kInactive) {
      int count = -1;
      MPI_Get_count(status, MPI_BYTE, &count);
      CHECK(status->MPI_SOURCE == MPI_ANY_SOURCE &&
                status->MPI_TAG == MPI_ANY_TAG && count == 0,
            "round %d: entry %d: not the empty status (source %d tag %d count "
            "%d)",
            round, i, status->MPI_SOURCE, status->MPI_TAG, count);
      if (truncating) {
        CHECK(status->MPI_ERROR == MPI_SUCCESS, "round %d: entry %d error %d",
              round, i, status->MPI_ERROR);
      }
      continue;
    }
    if (i == kGeneralized) {
      int count = -1;
      MPI_Get_count(status, MPI_BYTE, &count);
      CHECK(status->MPI_SOURCE == 77 && status->MPI_TAG == kGeneralizedTag &&
                count == 3,
            "round %d: the generalized status (source %d tag %d count %d)",
            round, status->MPI_SOURCE, status->MPI_TAG, count);
      continue;
    }
    const size_t sent = bytes_of(round, i);
    if (truncating && i == kTruncated && sent > kShortBytes) {
      CHECK(test_error_class(status->MPI_ERROR) == MPI_ERR_TRUNCATE,
            "round %d: the short receive's error class is %d", round,
            test_error_class(status->MPI_ERROR));
      continue;
    }
    if (truncating) {
      CHECK(status->MPI_ERROR == MPI_SUCCESS, "round %d: entry %d error %d",
            round, i, status->MPI_ERROR);
    }
    char what[64];
    snprintf(what, sizeof(what), "round %d entry %d", round, i);
    CHECK_STATUS(*status, source, tag_of(round, i), MPI_BYTE, (int)sent, what);
    CHECK_PATTERN(buffers[i], sent, 1, tag_of(round, i), what);
  }
}

static void receive_round(int round, int source, unsigned char** buffers) {
  MPI_Request requests[kWindow];
  MPI_Status statuses[kWindow];
  MPI_Request persistent, inactive, generalized;
  for (int i = 0; i < kWindow; ++i) memset(buffers[i], 0, kMaxBytes);
  const int truncating = round % 2 == 1;
  for (int i = 0; i < kWindow; ++i) {
    if (is_null(i)) {
      requests[i] = MPI_REQUEST_NULL;
    } else if (i == kInactive) {
      MPI_CHECK(MPI_Recv_init(buffers[i], kMaxBytes, MPI_BYTE, source, 1,
                              MPI_COMM_WORLD, &inactive));
      requests[i] = inactive;
    } else if (i == kGeneralized) {
      MPI_CHECK(
          MPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, &generalized));
      requests[i] = generalized;
    } else if (i == kPersistent) {
      MPI_CHECK(MPI_Recv_init(buffers[i], kMaxBytes, MPI_BYTE, source,
                              tag_of(round, i), MPI_COMM_WORLD, &persistent));
      MPI_CHECK(MPI_Start(&persistent));
      requests[i] = persistent;
    } else {
      const int capacity =
          truncating && i == kTruncated ? kShortBytes : kMaxBytes;
      MPI_CHECK(MPI_Irecv(buffers[i], capacity, MPI_BYTE, source,
                          tag_of(round, i), MPI_COMM_WORLD, &requests[i]));
    }
    statuses[i].MPI_ERROR = -12345;
  }
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, complete_later, &generalized) == 0,
        "pthread_create");
  /* Tell the sender the receives are posted (it may send before, too: the
   * point is the order and the pauses). */
  if (source != 0)
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, source, 2, MPI_COMM_WORLD));
  const int queries = atomic_load(&g_queries), frees = atomic_load(&g_frees);
  const int rc = MPI_Waitall(kWindow, requests, statuses);
  pthread_join(thread, NULL);
  CHECK(atomic_load(&g_queries) == queries + 1 &&
            atomic_load(&g_frees) == frees + 1,
        "round %d: query ran %d times, free %d times", round,
        atomic_load(&g_queries) - queries, atomic_load(&g_frees) - frees);
  check_round(round, rc, requests, statuses, buffers, persistent, inactive,
              source);
  /* The persistent requests are inactive now: a wait returns at once. */
  MPI_Status status;
  MPI_CHECK(MPI_Wait(&persistent, &status));
  CHECK(persistent != MPI_REQUEST_NULL,
        "round %d: Wait freed an inactive persistent request", round);
  MPI_CHECK(MPI_Request_free(&persistent));
  MPI_CHECK(MPI_Request_free(&inactive));
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int sender = size > 1 ? 1 : 0;
  unsigned char* buffers[kWindow];
  unsigned char* send_buffers[kWindow];
  for (int i = 0; i < kWindow; ++i) {
    buffers[i] = (unsigned char*)test_malloc(kMaxBytes);
    send_buffers[i] = (unsigned char*)test_malloc(kMaxBytes);
  }
  for (int round = 0; round < kRounds; ++round) {
    MPI_Request sends[kWindow];
    int order[kWindow];
    const int n = send_order(round, order);
    if (rank == 0 && sender == 0) {
      /* Alone: post the sends first (they complete as the wait receives). */
      send_round(round, sends, send_buffers);
      receive_round(round, 0, buffers);
      MPI_CHECK(MPI_Waitall(n, sends, MPI_STATUSES_IGNORE));
    } else if (rank == 0) {
      receive_round(round, sender, buffers);
    } else if (rank == sender) {
      MPI_CHECK(
          MPI_Recv(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      send_round(round, sends, send_buffers);
      MPI_CHECK(MPI_Waitall(n, sends, MPI_STATUSES_IGNORE));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  }
  for (int i = 0; i < kWindow; ++i) {
    free(buffers[i]);
    free(send_buffers[i]);
  }
  test_report_pass("waitall_collect", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
