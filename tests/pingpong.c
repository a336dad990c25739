/* Ping-pong between rank pairs (0,1), (2,3), ... over every size from 0 B to
 * 64 MiB: powers of two and awkward sizes around them.  The ping carries the
 * initiator's pattern, the pong the responder's, and every byte of both is
 * verified.  Run once with blocking Send/Recv and once with Isend/Irecv
 * (the responder posting its receive before the ping arrives).  An odd last
 * rank sits out. */
#include "test_util.h"

static const size_t kOddSizes[] = {1, 3, 7, 4095, 4097, 16385, 65537,
                                   (1u << 20) + 7, (5u << 20) + 3};

static void exchange(int rank, int peer, size_t bytes, int tag,
                     int nonblocking, unsigned char* out, unsigned char* in) {
  const int initiator = rank < peer;
  /* Stale bytes from the last round must not pass the check by accident. */
  memset(in, 0xA5, bytes);
  test_fill(out, bytes, rank, tag);
  MPI_Status status;
  if (!nonblocking) {
    if (initiator) {
      MPI_CHECK(MPI_Send(out, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
      MPI_CHECK(MPI_Recv(in, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &status));
    } else {
      MPI_CHECK(MPI_Recv(in, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &status));
      MPI_CHECK(MPI_Send(out, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
    }
  } else {
    MPI_Request requests[2];
    MPI_Status statuses[2];
    if (initiator) {
      MPI_CHECK(MPI_Isend(out, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &requests[0]));
      MPI_CHECK(MPI_Irecv(in, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &requests[1]));
      MPI_CHECK(MPI_Waitall(2, requests, statuses));
      status = statuses[1];
    } else {
      MPI_CHECK(MPI_Irecv(in, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &requests[1]));
      MPI_CHECK(MPI_Wait(&requests[1], &status));
      /* Check before answering: the pong must not overwrite evidence. */
      MPI_CHECK(MPI_Isend(out, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &requests[0]));
      MPI_CHECK(MPI_Wait(&requests[0], MPI_STATUS_IGNORE));
    }
    CHECK(requests[0] == MPI_REQUEST_NULL && requests[1] == MPI_REQUEST_NULL,
          "completed requests were not set to MPI_REQUEST_NULL");
  }
  char what[96];
  snprintf(what, sizeof what, "%s %zu bytes", nonblocking ? "Isend/Irecv" : "Send/Recv", bytes);
  CHECK_STATUS(status, peer, tag, MPI_BYTE, (int)bytes, what);
  CHECK_PATTERN(in, bytes, peer, tag, what);
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "pingpong needs at least 2 ranks, got %d", size);
  const size_t kMaxBytes = (size_t)64 << 20;
  const int peer = rank ^ 1;
  if (peer < size) {
    unsigned char* out = (unsigned char*)test_malloc(kMaxBytes);
    unsigned char* in = (unsigned char*)test_malloc(kMaxBytes);
    for (int nonblocking = 0; nonblocking <= 1; ++nonblocking) {
      int tag = nonblocking * 1000;
      exchange(rank, peer, 0, tag++, nonblocking, out, in);
      for (size_t bytes = 1; bytes <= kMaxBytes; bytes *= 2)
        exchange(rank, peer, bytes, tag++, nonblocking, out, in);
      for (size_t i = 0; i < sizeof kOddSizes / sizeof kOddSizes[0]; ++i)
        exchange(rank, peer, kOddSizes[i], tag++, nonblocking, out, in);
    }
    /* Typed messages: the count is in elements, not bytes. */
    const int kDoubles = 300001;
    double* values = (double*)test_malloc(kDoubles * sizeof(double));
    MPI_Status status;
    if (rank < peer) {
      for (int i = 0; i < kDoubles; ++i) values[i] = i * 0.5 + rank;
      MPI_CHECK(MPI_Send(values, kDoubles, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD));
    } else {
      MPI_CHECK(MPI_Recv(values, kDoubles, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, &status));
      CHECK_STATUS(status, peer, 5, MPI_DOUBLE, kDoubles, "typed double message");
      for (int i = 0; i < kDoubles; ++i)
        CHECK(values[i] == i * 0.5 + peer, "double %d is %g, expected %g", i,
              values[i], i * 0.5 + peer);
    }
    free(values);
    free(out);
    free(in);
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("pingpong", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
