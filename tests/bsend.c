/* Buffered sends: MPI_Buffer_attach/detach/flush/iflush, MPI_Bsend,
 * MPI_Ibsend, MPI_Bsend_init. Messages go around the ring (to rank + 1,
 * from rank - 1; to self at one rank) and every delivered byte is checked
 * against the pattern the sender wrote.
 *
 *   many_in_flight   dozens of messages of mixed sizes (eager and
 *                    rendezvous, contiguous and strided) buffered before
 *                    any is received, in a buffer sized by the standard's
 *                    formula;
 *   reuse            a buffer that holds two messages, reused for 40
 *                    rounds as the messages before leave;
 *   full             MPI_ERR_BUFFER when the buffer cannot hold one more
 *                    message (rendezvous messages cannot leave before the
 *                    receiver comes), for a message larger than the buffer,
 *                    and with no buffer attached;
 *   detach_waits     MPI_Buffer_detach returns only once the messages have
 *                    left: the sender scribbles over the buffer right after,
 *                    and the late receiver still gets every byte right;
 *   flush            MPI_Buffer_iflush stays incomplete while messages wait
 *                    for their receiver, then completes; MPI_Buffer_flush;
 *   persistent       MPI_Bsend_init started five times, the data changed
 *                    between starts (each start copies it);
 *   automatic        MPI_BUFFER_AUTOMATIC: no room limit, detach gives it
 *                    back with size 0;
 *   threads          four threads MPI_Ibsend at once into one buffer;
 *   arguments        error classes of bad calls, and the library still
 *                    usable after them.
 * With argument "fatal", MPI_Bsend with no buffer attached under the
 * default handler must end the job with one line saying so. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <time.h>

#include "test_util.h"

static int g_rank, g_size, g_next, g_previous;

enum { kRendezvousBytes = 20000 }; /* above the default eager limit */

static void expect_class(int code, int expected, const char* what) {
  int got = -1;
  CHECK(code != MPI_SUCCESS, "%s: succeeded, expected class %d", what,
        expected);
  MPI_Error_class(code, &got);
  CHECK(got == expected, "%s: error class %d, expected %d", what, got,
        expected);
}

/* Room for `count` messages of `bytes` bytes, as the standard says to
 * compute it. */
static int buffer_size(int count, int bytes) {
  int packed = 0;
  MPI_CHECK(MPI_Pack_size(bytes, MPI_BYTE, MPI_COMM_WORLD, &packed));
  return count * (packed + MPI_BSEND_OVERHEAD);
}

static void receive_and_check(int bytes, int tag, const char* what) {
  unsigned char* data = test_malloc((size_t)bytes);
  memset(data, 0, (size_t)bytes);
  MPI_Status status;
  MPI_CHECK(MPI_Recv(data, bytes, MPI_BYTE, g_previous, tag, MPI_COMM_WORLD,
                     &status));
  CHECK_STATUS(status, g_previous, tag, MPI_BYTE, bytes, what);
  CHECK_PATTERN(data, bytes, g_previous, tag, what);
  free(data);
}

static void detach_expect(void* expected_base, int expected_size) {
  void* base = NULL;
  int size = -1;
  MPI_CHECK(MPI_Buffer_detach(&base, &size));
  CHECK(base == expected_base && size == expected_size,
        "MPI_Buffer_detach gave %p size %d, expected %p size %d", base, size,
        expected_base, expected_size);
}

static void many_in_flight(void) {
  enum { kMessages = 40 };
  int sizes[kMessages];
  int total = 0;
  for (int i = 0; i < kMessages; ++i) {
    sizes[i] = (i % 5 == 4) ? kRendezvousBytes + 3 * i : 1 + 97 * i;
    int packed;
    MPI_CHECK(MPI_Pack_size(sizes[i], MPI_BYTE, MPI_COMM_WORLD, &packed));
    total += packed + MPI_BSEND_OVERHEAD;
  }
  /* Plus one strided message: 50 blocks of 4 ints, every other block. */
  MPI_Datatype strided;
  MPI_CHECK(MPI_Type_vector(50, 4, 8, MPI_INT, &strided));
  MPI_CHECK(MPI_Type_commit(&strided));
  int packed;
  MPI_CHECK(MPI_Pack_size(1, strided, MPI_COMM_WORLD, &packed));
  total += packed + MPI_BSEND_OVERHEAD;
  void* buffer = test_malloc((size_t)total);
  MPI_CHECK(MPI_Buffer_attach(buffer, total));
  for (int i = 0; i < kMessages; ++i) {
    unsigned char* data = test_malloc((size_t)sizes[i]);
    test_fill(data, (size_t)sizes[i], g_rank, i);
    MPI_CHECK(MPI_Bsend(data, sizes[i], MPI_BYTE, g_next, i, MPI_COMM_WORLD));
    memset(data, 0xAB, (size_t)sizes[i]); /* the copy is what travels */
    free(data);
  }
  int ints[400];
  for (int i = 0; i < 400; ++i) ints[i] = g_rank * 1000000 + i;
  MPI_CHECK(MPI_Bsend(ints, 1, strided, g_next, 999, MPI_COMM_WORLD));
  for (int i = 0; i < 400; ++i) ints[i] = -7;
  /* Received in reverse order: the matching engine holds them meanwhile. */
  for (int i = kMessages - 1; i >= 0; --i) {
    receive_and_check(sizes[i], i, "many_in_flight");
  }
  int received[200];
  MPI_CHECK(MPI_Recv(received, 200, MPI_INT, g_previous, 999, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE));
  for (int block = 0; block < 50; ++block) {
    for (int j = 0; j < 4; ++j) {
      const int expected = g_previous * 1000000 + block * 8 + j;
      CHECK(received[block * 4 + j] == expected,
            "strided bsend: int %d is %d, expected %d", block * 4 + j,
            received[block * 4 + j], expected);
    }
  }
  detach_expect(buffer, total);
  free(buffer);
  MPI_CHECK(MPI_Type_free(&strided));
}

static void reuse(void) {
  const int size = buffer_size(2, kRendezvousBytes);
  void* buffer = test_malloc((size_t)size);
  unsigned char* data = test_malloc(kRendezvousBytes);
  MPI_CHECK(MPI_Buffer_attach(buffer, size));
  for (int round = 0; round < 40; ++round) {
    for (int m = 0; m < 2; ++m) {
      const int tag = 100 + 2 * round + m;
      const int bytes = (m == 0) ? kRendezvousBytes : 100 + round;
      test_fill(data, (size_t)bytes, g_rank, tag);
      MPI_CHECK(MPI_Bsend(data, bytes, MPI_BYTE, g_next, tag, MPI_COMM_WORLD));
    }
    for (int m = 0; m < 2; ++m) {
      receive_and_check((m == 0) ? kRendezvousBytes : 100 + round,
                        100 + 2 * round + m, "reuse");
    }
    /* Once everyone has received, the space comes back as progress sees
     * the messages complete. */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  }
  detach_expect(buffer, size);
  free(buffer);
  free(data);
}

static void full(void) {
  unsigned char* data = test_malloc(kRendezvousBytes);
  test_fill(data, kRendezvousBytes, g_rank, 7);
  expect_class(MPI_Bsend(data, 10, MPI_BYTE, g_next, 7, MPI_COMM_WORLD),
               MPI_ERR_BUFFER, "MPI_Bsend with no buffer attached");
  int flag = 0;
  MPI_Request request;
  expect_class(
      MPI_Ibsend(data, 10, MPI_BYTE, g_next, 7, MPI_COMM_WORLD, &request),
      MPI_ERR_BUFFER, "MPI_Ibsend with no buffer attached");
  MPI_CHECK(MPI_Bsend(data, 10, MPI_BYTE, MPI_PROC_NULL, 7, MPI_COMM_WORLD));

  const int size = buffer_size(2, kRendezvousBytes);
  void* buffer = test_malloc((size_t)size);
  MPI_CHECK(MPI_Buffer_attach(buffer, size));
  MPI_CHECK(
      MPI_Bsend(data, kRendezvousBytes, MPI_BYTE, g_next, 7, MPI_COMM_WORLD));
  MPI_CHECK(MPI_Ibsend(data, kRendezvousBytes, MPI_BYTE, g_next, 7,
                       MPI_COMM_WORLD, &request));
  MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
  CHECK(flag, "an MPI_Ibsend request was not complete at once");
  /* Neither can leave before its receiver comes, which is after the
   * barrier: the buffer is full. */
  expect_class(MPI_Bsend(data, 1, MPI_BYTE, g_next, 8, MPI_COMM_WORLD),
               MPI_ERR_BUFFER, "MPI_Bsend into a full buffer");
  expect_class(
      MPI_Ibsend(data, 1, MPI_BYTE, g_next, 8, MPI_COMM_WORLD, &request),
      MPI_ERR_BUFFER, "MPI_Ibsend into a full buffer");
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  receive_and_check(kRendezvousBytes, 7, "full");
  receive_and_check(kRendezvousBytes, 7, "full");
  detach_expect(buffer, size);
  /* A message larger than the whole buffer never fits. */
  MPI_CHECK(MPI_Buffer_attach(buffer, size));
  unsigned char* big = test_malloc((size_t)size);
  expect_class(MPI_Bsend(big, size, MPI_BYTE, g_next, 9, MPI_COMM_WORLD),
               MPI_ERR_BUFFER, "MPI_Bsend of a message larger than the buffer");
  detach_expect(buffer, size);
  free(big);
  free(buffer);
  free(data);
}

static void detach_waits(void) {
  enum { kMessages = 3 };
  const int size = buffer_size(kMessages, kRendezvousBytes);
  unsigned char* buffer = test_malloc((size_t)size);
  unsigned char* data = test_malloc(kRendezvousBytes);
  MPI_CHECK(MPI_Buffer_attach(buffer, size));
  for (int m = 0; m < kMessages; ++m) {
    test_fill(data, kRendezvousBytes, g_rank, 300 + m);
    MPI_CHECK(MPI_Bsend(data, kRendezvousBytes, MPI_BYTE, g_next, 300 + m,
                        MPI_COMM_WORLD));
  }
  MPI_Request receives[kMessages];
  unsigned char* incoming[kMessages];
  if (g_size == 1) {
    /* At one rank the receiver is us: post the receives first, or detach
     * would wait forever. */
    for (int m = 0; m < kMessages; ++m) {
      incoming[m] = test_malloc(kRendezvousBytes);
      MPI_CHECK(MPI_Irecv(incoming[m], kRendezvousBytes, MPI_BYTE, g_previous,
                          300 + m, MPI_COMM_WORLD, &receives[m]));
    }
  }
  /* Odd ranks start receiving late, so their senders wait in detach. */
  if (g_size > 1 && g_rank % 2 == 1) {
    const struct timespec nap = {0, 200 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
  if (g_size > 1) {
    for (int m = 0; m < kMessages; ++m) {
      incoming[m] = test_malloc(kRendezvousBytes);
      MPI_CHECK(MPI_Irecv(incoming[m], kRendezvousBytes, MPI_BYTE, g_previous,
                          300 + m, MPI_COMM_WORLD, &receives[m]));
    }
  }
  detach_expect(buffer, size);
  /* The messages have left: scribbling over the buffer changes nothing the
   * receiver gets. */
  memset(buffer, 0xFF, (size_t)size);
  MPI_CHECK(MPI_Waitall(kMessages, receives, MPI_STATUSES_IGNORE));
  for (int m = 0; m < kMessages; ++m) {
    CHECK_PATTERN(incoming[m], kRendezvousBytes, g_previous, 300 + m,
                  "detach_waits");
    free(incoming[m]);
  }
  free(buffer);
  free(data);
}

static void flush(void) {
  const int size = buffer_size(3, kRendezvousBytes);
  void* buffer = test_malloc((size_t)size);
  unsigned char* data = test_malloc(kRendezvousBytes);
  MPI_CHECK(MPI_Buffer_attach(buffer, size));
  test_fill(data, kRendezvousBytes, g_rank, 400);
  MPI_CHECK(
      MPI_Bsend(data, kRendezvousBytes, MPI_BYTE, g_next, 400, MPI_COMM_WORLD));
  MPI_Request flushed;
  MPI_CHECK(MPI_Buffer_iflush(&flushed));
  int flag = 1;
  for (int i = 0; i < 20; ++i) {
    MPI_CHECK(MPI_Test(&flushed, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "MPI_Buffer_iflush completed before the receiver came");
  }
  /* A message buffered after the flush does not hold it back. */
  test_fill(data, 64, g_rank, 401);
  MPI_CHECK(MPI_Bsend(data, 64, MPI_BYTE, g_next, 401, MPI_COMM_WORLD));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  receive_and_check(kRendezvousBytes, 400, "flush");
  MPI_CHECK(MPI_Wait(&flushed, MPI_STATUS_IGNORE));
  CHECK(flushed == MPI_REQUEST_NULL, "the flush request was not freed");
  receive_and_check(64, 401, "flush");
  MPI_CHECK(MPI_Buffer_flush());
  /* With nothing in flight, a flush request is complete from the start. */
  MPI_CHECK(MPI_Buffer_iflush(&flushed));
  MPI_CHECK(MPI_Wait(&flushed, MPI_STATUS_IGNORE));
  detach_expect(buffer, size);
  free(buffer);
  free(data);
}

static void persistent(void) {
  const int size = buffer_size(5, 3000);
  void* buffer = test_malloc((size_t)size);
  unsigned char* data = test_malloc(3000);
  MPI_CHECK(MPI_Buffer_attach(buffer, size));
  MPI_Request request, null_request;
  MPI_CHECK(MPI_Bsend_init(data, 3000, MPI_BYTE, g_next, 500, MPI_COMM_WORLD,
                           &request));
  MPI_CHECK(MPI_Bsend_init(data, 3000, MPI_BYTE, MPI_PROC_NULL, 500,
                           MPI_COMM_WORLD, &null_request));
  for (int round = 0; round < 5; ++round) {
    /* Each start copies what the buffer holds then. */
    test_fill(data, 3000, g_rank, 500 + round);
    MPI_CHECK(MPI_Start(&request));
    MPI_CHECK(MPI_Start(&null_request));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&null_request, MPI_STATUS_IGNORE));
    memset(data, 0, 3000);
  }
  for (int round = 0; round < 5; ++round) {
    unsigned char incoming[3000];
    MPI_CHECK(MPI_Recv(incoming, 3000, MPI_BYTE, g_previous, 500,
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_PATTERN(incoming, 3000, g_previous, 500 + round, "persistent");
  }
  MPI_CHECK(MPI_Request_free(&request));
  MPI_CHECK(MPI_Request_free(&null_request));
  detach_expect(buffer, size);
  free(buffer);
  free(data);
}

static void automatic(void) {
  enum { kMessages = 12 };
  unsigned char* data = test_malloc(kRendezvousBytes);
  MPI_CHECK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
  for (int m = 0; m < kMessages; ++m) {
    test_fill(data, kRendezvousBytes, g_rank, 600 + m);
    MPI_CHECK(MPI_Bsend(data, kRendezvousBytes, MPI_BYTE, g_next, 600 + m,
                        MPI_COMM_WORLD));
  }
  expect_class(MPI_Buffer_attach(data, 100), MPI_ERR_BUFFER,
               "attaching a second buffer");
  for (int m = 0; m < kMessages; ++m) {
    receive_and_check(kRendezvousBytes, 600 + m, "automatic");
  }
  detach_expect(MPI_BUFFER_AUTOMATIC, 0);
  free(data);
}

enum { kThreads = 4, kPerThread = 25 };

struct ThreadArgs {
  int thread;
  int failures;
};

static void* ibsend_thread(void* argument) {
  struct ThreadArgs* args = argument;
  unsigned char data[1500];
  for (int m = 0; m < kPerThread; ++m) {
    const int tag = 1000 + args->thread * kPerThread + m;
    const int bytes = 1 + (tag * 37) % 1500;
    test_fill(data, (size_t)bytes, g_rank, tag);
    MPI_Request request;
    if (MPI_Ibsend(data, bytes, MPI_BYTE, g_next, tag, MPI_COMM_WORLD,
                   &request) != MPI_SUCCESS ||
        MPI_Wait(&request, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      ++args->failures;
    }
  }
  return NULL;
}

static void threads(void) {
  const int size = buffer_size(kThreads * kPerThread, 1500);
  void* buffer = test_malloc((size_t)size);
  MPI_CHECK(MPI_Buffer_attach(buffer, size));
  pthread_t ids[kThreads];
  struct ThreadArgs args[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    args[t] = (struct ThreadArgs){t, 0};
    CHECK(pthread_create(&ids[t], NULL, ibsend_thread, &args[t]) == 0,
          "pthread_create failed");
  }
  for (int t = 0; t < kThreads; ++t) pthread_join(ids[t], NULL);
  for (int t = 0; t < kThreads; ++t) {
    CHECK(args[t].failures == 0, "thread %d: %d MPI_Ibsend calls failed", t,
          args[t].failures);
  }
  for (int tag = 1000; tag < 1000 + kThreads * kPerThread; ++tag) {
    receive_and_check(1 + (tag * 37) % 1500, tag, "threads");
  }
  detach_expect(buffer, size);
  free(buffer);
}

static void arguments(void) {
  char memory[1024];
  expect_class(MPI_Buffer_attach(memory, -1), MPI_ERR_ARG,
               "MPI_Buffer_attach with size -1");
  expect_class(MPI_Buffer_attach(NULL, 100), MPI_ERR_BUFFER,
               "MPI_Buffer_attach of a null buffer");
  detach_expect(NULL, 0); /* nothing attached */
  MPI_CHECK(MPI_Buffer_attach(memory, sizeof memory));
  expect_class(MPI_Buffer_attach(memory, sizeof memory), MPI_ERR_BUFFER,
               "attaching twice");
  int size;
  expect_class(MPI_Buffer_detach(NULL, &size), MPI_ERR_ARG,
               "MPI_Buffer_detach with a null address");
  int value = 5;
  expect_class(MPI_Bsend(&value, 1, MPI_INT, g_size, 0, MPI_COMM_WORLD),
               MPI_ERR_RANK, "MPI_Bsend to a rank out of range");
  expect_class(MPI_Bsend(&value, -1, MPI_INT, g_next, 0, MPI_COMM_WORLD),
               MPI_ERR_COUNT, "MPI_Bsend with count -1");
  expect_class(MPI_Ibsend(&value, 1, MPI_INT, g_next, 0, MPI_COMM_NULL, NULL),
               MPI_ERR_COMM, "MPI_Ibsend on MPI_COMM_NULL");
  expect_class(MPI_Bsend_init(&value, 1, MPI_DATATYPE_NULL, g_next, 0,
                              MPI_COMM_WORLD, NULL),
               MPI_ERR_TYPE, "MPI_Bsend_init of MPI_DATATYPE_NULL");
  expect_class(MPI_Buffer_iflush(NULL), MPI_ERR_REQUEST,
               "MPI_Buffer_iflush with a null request");
  detach_expect(memory, sizeof memory);
}

int main(int argc, char** argv) {
  int provided;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_next = (g_rank + 1) % g_size;
  g_previous = (g_rank + g_size - 1) % g_size;
  if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
    int value = 1;
    MPI_Bsend(&value, 1, MPI_INT, g_next, 0, MPI_COMM_WORLD);
    CHECK(0,
          "MPI_Bsend without a buffer returned under "
          "MPI_ERRORS_ARE_FATAL");
  }
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  many_in_flight();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  reuse();
  full();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  detach_waits();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  flush();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  persistent();
  automatic();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  threads();
  arguments();
  test_report_pass("bsend", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
