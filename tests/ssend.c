/* Synchronous and ready sends, Sendrecv and Sendrecv_replace, between rank
 * pairs (0,1), (2,3), ... (an odd last rank sits out).  The lower rank of a
 * pair is the receiver R, the higher the sender S.
 *  - Issend must not complete before R posts the matching receive: S tests
 *    it repeatedly, then tells R (with a later message) to post it.
 *  - Ssend likewise: S reports completion with a second message, which R
 *    must not see during a wait before posting the receive.
 *  - Rsend/Irsend into a receive that R pre-posted before saying "ready". */
/* nanosleep is POSIX, not C11. */
#define _POSIX_C_SOURCE 200809L

#include <time.h>

#include "test_util.h"

enum { kTagSync = 1, kTagGo = 2, kTagDone = 3, kTagReady = 4, kTagRsend = 5, kTagIrsend = 6 };

static void sleep_ms(int ms) {
  struct timespec delay = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&delay, NULL);
}

static void issend_case(int rank, int peer, size_t bytes) {
  unsigned char* buffer = (unsigned char*)test_malloc(bytes);
  MPI_Status status;
  if (rank > peer) {
    test_fill(buffer, bytes, rank, kTagSync);
    MPI_Request request;
    MPI_CHECK(MPI_Issend(buffer, (int)bytes, MPI_BYTE, peer, kTagSync, MPI_COMM_WORLD, &request));
    /* Keep testing for a while: the receive cannot be posted yet. */
    const double until = MPI_Wtime() + 0.2;
    int flag = 0;
    while (MPI_Wtime() < until) {
      MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
      CHECK(!flag, "Issend of %zu bytes completed before the receiver posted a receive", bytes);
      sleep_ms(1);
    }
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, peer, kTagGo, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&request, &status));
  } else {
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, peer, kTagGo, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    memset(buffer, 0, bytes);
    MPI_Request request;
    MPI_CHECK(MPI_Irecv(buffer, (int)bytes, MPI_BYTE, peer, kTagSync, MPI_COMM_WORLD, &request));
    MPI_CHECK(MPI_Wait(&request, &status));
    CHECK_STATUS(status, peer, kTagSync, MPI_BYTE, (int)bytes, "Issend's message");
    CHECK_PATTERN(buffer, bytes, peer, kTagSync, "Issend's message");
  }
  free(buffer);
}

static void ssend_case(int rank, int peer, size_t bytes) {
  unsigned char* buffer = (unsigned char*)test_malloc(bytes);
  MPI_Status status;
  if (rank > peer) {
    test_fill(buffer, bytes, rank, kTagSync);
    MPI_CHECK(MPI_Ssend(buffer, (int)bytes, MPI_BYTE, peer, kTagSync, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, peer, kTagDone, MPI_COMM_WORLD));
  } else {
    const double until = MPI_Wtime() + 0.2;
    while (MPI_Wtime() < until) {
      int flag = 1;
      MPI_CHECK(MPI_Iprobe(peer, kTagDone, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
      CHECK(!flag, "Ssend of %zu bytes returned before the receiver posted a receive", bytes);
      sleep_ms(1);
    }
    memset(buffer, 0, bytes);
    MPI_CHECK(MPI_Recv(buffer, (int)bytes, MPI_BYTE, peer, kTagSync, MPI_COMM_WORLD, &status));
    CHECK_STATUS(status, peer, kTagSync, MPI_BYTE, (int)bytes, "Ssend's message");
    CHECK_PATTERN(buffer, bytes, peer, kTagSync, "Ssend's message");
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, peer, kTagDone, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  free(buffer);
}

static void rsend_case(int rank, int peer, size_t bytes) {
  unsigned char* first = (unsigned char*)test_malloc(bytes);
  unsigned char* second = (unsigned char*)test_malloc(bytes);
  MPI_Status statuses[2];
  if (rank < peer) {
    MPI_Request requests[2];
    memset(first, 0, bytes);
    memset(second, 0, bytes);
    MPI_CHECK(MPI_Irecv(first, (int)bytes, MPI_BYTE, peer, kTagRsend, MPI_COMM_WORLD, &requests[0]));
    MPI_CHECK(MPI_Irecv(second, (int)bytes, MPI_BYTE, peer, kTagIrsend, MPI_COMM_WORLD, &requests[1]));
    MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, peer, kTagReady, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Waitall(2, requests, statuses));
    CHECK_STATUS(statuses[0], peer, kTagRsend, MPI_BYTE, (int)bytes, "Rsend's message");
    CHECK_PATTERN(first, bytes, peer, kTagRsend, "Rsend's message");
    CHECK_STATUS(statuses[1], peer, kTagIrsend, MPI_BYTE, (int)bytes, "Irsend's message");
    CHECK_PATTERN(second, bytes, peer, kTagIrsend, "Irsend's message");
  } else {
    test_fill(first, bytes, rank, kTagRsend);
    test_fill(second, bytes, rank, kTagIrsend);
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, peer, kTagReady, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Rsend(first, (int)bytes, MPI_BYTE, peer, kTagRsend, MPI_COMM_WORLD));
    MPI_Request request;
    MPI_CHECK(MPI_Irsend(second, (int)bytes, MPI_BYTE, peer, kTagIrsend, MPI_COMM_WORLD, &request));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  }
  free(first);
  free(second);
}

static void sendrecv_case(int rank, int peer, size_t bytes) {
  /* Different sizes and tags each way, so a swapped argument shows. */
  const size_t my_bytes = bytes + (size_t)rank;
  const size_t peer_bytes = bytes + (size_t)peer;
  const int my_tag = 100 + rank, peer_tag = 100 + peer;
  unsigned char* out = (unsigned char*)test_malloc(my_bytes);
  unsigned char* in = (unsigned char*)test_malloc(peer_bytes + 16);
  test_fill(out, my_bytes, rank, my_tag);
  memset(in, 0, peer_bytes + 16);
  MPI_Status status;
  MPI_CHECK(MPI_Sendrecv(out, (int)my_bytes, MPI_BYTE, peer, my_tag, in, (int)peer_bytes + 16,
                         MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
  CHECK_STATUS(status, peer, peer_tag, MPI_BYTE, (int)peer_bytes, "Sendrecv");
  CHECK_PATTERN(in, peer_bytes, peer, peer_tag, "Sendrecv");
  for (size_t i = peer_bytes; i < peer_bytes + 16; ++i)
    CHECK(in[i] == 0, "Sendrecv wrote byte %zu beyond the message", i);

  /* Sendrecv_replace: the same buffer goes out with ours, back with theirs. */
  const size_t count = bytes / sizeof(int) + 1;
  int* values = (int*)test_malloc(count * sizeof(int));
  for (size_t i = 0; i < count; ++i) values[i] = (int)(i * 3) + rank * 1000003;
  MPI_CHECK(MPI_Sendrecv_replace(values, (int)count, MPI_INT, peer, 7, peer, 7, MPI_COMM_WORLD,
                                 &status));
  CHECK_STATUS(status, peer, 7, MPI_INT, (int)count, "Sendrecv_replace");
  for (size_t i = 0; i < count; ++i)
    CHECK(values[i] == (int)(i * 3) + peer * 1000003,
          "Sendrecv_replace of %zu ints: element %zu is %d, expected %d", count, i, values[i],
          (int)(i * 3) + peer * 1000003);
  free(values);
  free(out);
  free(in);
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "ssend needs at least 2 ranks, got %d", size);
  const int peer = rank ^ 1;
  const size_t sizes[] = {0, 8, 4000, 300000, 3u << 20};
  if (peer < size) {
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
      /* Long waits only for two sizes: they dominate the run time. */
      if (i == 1 || i == 3) {
        issend_case(rank, peer, sizes[i]);
        ssend_case(rank, peer, sizes[i]);
      }
      rsend_case(rank, peer, sizes[i]);
      sendrecv_case(rank, peer, sizes[i]);
    }
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("ssend", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
