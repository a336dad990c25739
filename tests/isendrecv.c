/* MPI_Isendrecv and MPI_Isendrecv_replace: one request per exchange that
 * completes when both halves have, with the receive's status. Every
 * delivered byte is checked against the pattern its sender wrote, and bytes
 * a datatype leaves out must stay untouched.
 *
 *   sizes        each rank exchanges with both ring neighbours, from 0 bytes
 *                through eager, rendezvous and split rendezvous sizes;
 *   replace      the same in place, the outgoing data taken before the
 *                incoming lands;
 *   datatypes    strided sends into contiguous receives and a strided
 *                in-place exchange;
 *   many         30 exchanges in flight at once with distinct tags,
 *                completed with MPI_Waitall alongside plain MPI_Irecv and
 *                MPI_Isend requests, and by polling MPI_Test;
 *   wildcards    MPI_ANY_SOURCE / MPI_ANY_TAG receives;
 *   proc_null    MPI_PROC_NULL on either side or both;
 *   errors       truncation reported at completion, bad arguments rejected
 *                at the call, a freed request that still completes. */
#include "test_util.h"

static int g_rank, g_size, g_next, g_previous;

static void expect_class(int code, int expected, const char* what) {
  int got = -1;
  CHECK(code != MPI_SUCCESS, "%s: succeeded, expected class %d", what,
        expected);
  MPI_Error_class(code, &got);
  CHECK(got == expected, "%s: error class %d, expected %d", what, got,
        expected);
}

static const int kSizes[] = {0, 1, 100, 8192, 8193, 70000, 300000};
enum { kSizeCount = sizeof kSizes / sizeof kSizes[0] };

static void sizes(void) {
  for (int s = 0; s < kSizeCount; ++s) {
    const int bytes = kSizes[s];
    /* Forward around the ring and backward, as two requests at once. */
    unsigned char* out_forward = test_malloc((size_t)bytes);
    unsigned char* out_backward = test_malloc((size_t)bytes);
    unsigned char* in_forward = test_malloc((size_t)bytes + 16);
    unsigned char* in_backward = test_malloc((size_t)bytes + 16);
    test_fill(out_forward, (size_t)bytes, g_rank, 10 + s);
    test_fill(out_backward, (size_t)bytes, g_rank, 50 + s);
    memset(in_forward, 0xCD, (size_t)bytes + 16);
    memset(in_backward, 0xCD, (size_t)bytes + 16);
    MPI_Request requests[2];
    MPI_CHECK(MPI_Isendrecv(out_forward, bytes, MPI_BYTE, g_next, 10 + s,
                            in_forward, bytes + 16, MPI_BYTE, g_previous,
                            10 + s, MPI_COMM_WORLD, &requests[0]));
    MPI_CHECK(MPI_Isendrecv(out_backward, bytes, MPI_BYTE, g_previous, 50 + s,
                            in_backward, bytes + 16, MPI_BYTE, g_next, 50 + s,
                            MPI_COMM_WORLD, &requests[1]));
    MPI_Status statuses[2];
    MPI_CHECK(MPI_Waitall(2, requests, statuses));
    CHECK(requests[0] == MPI_REQUEST_NULL && requests[1] == MPI_REQUEST_NULL,
          "MPI_Waitall left a request");
    CHECK_STATUS(statuses[0], g_previous, 10 + s, MPI_BYTE, bytes, "forward");
    CHECK_STATUS(statuses[1], g_next, 50 + s, MPI_BYTE, bytes, "backward");
    CHECK_PATTERN(in_forward, bytes, g_previous, 10 + s, "forward");
    CHECK_PATTERN(in_backward, bytes, g_next, 50 + s, "backward");
    for (int i = 0; i < 16; ++i) {
      CHECK(in_forward[bytes + i] == 0xCD && in_backward[bytes + i] == 0xCD,
            "bytes beyond the message were written (size %d)", bytes);
    }
    free(out_forward);
    free(out_backward);
    free(in_forward);
    free(in_backward);
  }
}

static void replace(void) {
  for (int s = 0; s < kSizeCount; ++s) {
    const int bytes = kSizes[s];
    unsigned char* data = test_malloc((size_t)bytes);
    test_fill(data, (size_t)bytes, g_rank, 100 + s);
    MPI_Request request;
    MPI_CHECK(MPI_Isendrecv_replace(data, bytes, MPI_BYTE, g_next, 100 + s,
                                    g_previous, 100 + s, MPI_COMM_WORLD,
                                    &request));
    MPI_Status status;
    MPI_CHECK(MPI_Wait(&request, &status));
    CHECK_STATUS(status, g_previous, 100 + s, MPI_BYTE, bytes, "replace");
    CHECK_PATTERN(data, bytes, g_previous, 100 + s, "replace");
    free(data);
  }
}

static void datatypes(void) {
  enum { kBlocks = 2000, kStride = 3 }; /* 8000 ints sent: rendezvous */
  MPI_Datatype strided;
  MPI_CHECK(MPI_Type_vector(kBlocks, 2, kStride, MPI_INT, &strided));
  MPI_CHECK(MPI_Type_commit(&strided));
  const int span = kBlocks * kStride;
  int* out = test_malloc(sizeof(int) * (size_t)span);
  int* in = test_malloc(sizeof(int) * 2 * kBlocks);
  for (int i = 0; i < span; ++i) out[i] = g_rank * 1000000 + i;
  MPI_Request request;
  MPI_CHECK(MPI_Isendrecv(out, 1, strided, g_next, 200, in, 2 * kBlocks,
                          MPI_INT, g_previous, 200, MPI_COMM_WORLD, &request));
  MPI_Status status;
  MPI_CHECK(MPI_Wait(&request, &status));
  CHECK_STATUS(status, g_previous, 200, MPI_INT, 2 * kBlocks, "strided send");
  for (int b = 0; b < kBlocks; ++b) {
    for (int j = 0; j < 2; ++j) {
      const int expected = g_previous * 1000000 + b * kStride + j;
      CHECK(in[2 * b + j] == expected,
            "strided send: int %d is %d, expected %d", 2 * b + j, in[2 * b + j],
            expected);
    }
  }
  /* In place through the strided type: the gaps keep our own values. */
  for (int i = 0; i < span; ++i) out[i] = g_rank * 1000000 + i;
  MPI_CHECK(MPI_Isendrecv_replace(out, 1, strided, g_next, 201, g_previous, 201,
                                  MPI_COMM_WORLD, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  CHECK_STATUS(status, g_previous, 201, strided, 1, "strided replace");
  for (int i = 0; i < span; ++i) {
    const int owner = (i % kStride < 2) ? g_previous : g_rank;
    CHECK(out[i] == owner * 1000000 + i, "strided replace: int %d is %d", i,
          out[i]);
  }
  free(out);
  free(in);
  MPI_CHECK(MPI_Type_free(&strided));
}

static void many(void) {
  enum { kExchanges = 30, kBytes = 5000 };
  unsigned char* out = test_malloc((size_t)kExchanges * kBytes);
  unsigned char* in = test_malloc((size_t)kExchanges * kBytes);
  unsigned char plain_out[64], plain_in[64];
  MPI_Request requests[kExchanges + 2];
  for (int x = 0; x < kExchanges; ++x) {
    test_fill(out + (size_t)x * kBytes, kBytes, g_rank, 300 + x);
  }
  test_fill(plain_out, sizeof plain_out, g_rank, 299);
  /* The receives of a plain exchange bracket the Isendrecv requests. */
  MPI_CHECK(MPI_Irecv(plain_in, sizeof plain_in, MPI_BYTE, g_previous, 299,
                      MPI_COMM_WORLD, &requests[0]));
  /* Posted in reverse tag order, so matching must go by tag. */
  for (int x = kExchanges - 1; x >= 0; --x) {
    MPI_CHECK(MPI_Isendrecv(out + (size_t)x * kBytes, kBytes, MPI_BYTE, g_next,
                            300 + x, in + (size_t)x * kBytes, kBytes, MPI_BYTE,
                            g_previous, 300 + x, MPI_COMM_WORLD,
                            &requests[1 + x]));
  }
  MPI_CHECK(MPI_Isend(plain_out, sizeof plain_out, MPI_BYTE, g_next, 299,
                      MPI_COMM_WORLD, &requests[kExchanges + 1]));
  MPI_Status statuses[kExchanges + 2];
  MPI_CHECK(MPI_Waitall(kExchanges + 2, requests, statuses));
  CHECK_PATTERN(plain_in, sizeof plain_in, g_previous, 299, "plain receive");
  for (int x = 0; x < kExchanges; ++x) {
    CHECK_STATUS(statuses[1 + x], g_previous, 300 + x, MPI_BYTE, kBytes,
                 "many");
    CHECK_PATTERN(in + (size_t)x * kBytes, kBytes, g_previous, 300 + x, "many");
  }
  /* Completed by polling: MPI_Test never blocks, and must get there. */
  MPI_Request request;
  memset(in, 0, kBytes);
  test_fill(out, kBytes, g_rank, 350);
  MPI_CHECK(MPI_Isendrecv(out, kBytes, MPI_BYTE, g_next, 350, in, kBytes,
                          MPI_BYTE, g_previous, 350, MPI_COMM_WORLD, &request));
  int flag = 0;
  MPI_Status status;
  long polls = 0;
  while (!flag) {
    MPI_CHECK(MPI_Test(&request, &flag, &status));
    ++polls;
  }
  CHECK(request == MPI_REQUEST_NULL, "MPI_Test left the request");
  CHECK_STATUS(status, g_previous, 350, MPI_BYTE, kBytes, "polled");
  test_fill(out, kBytes, g_previous, 350); /* reference in `out` */
  CHECK(memcmp(in, out, kBytes) == 0, "polled exchange: wrong bytes");
  free(out);
  free(in);
}

static void wildcards(void) {
  int out = g_rank * 7, in = -1;
  MPI_Request request;
  MPI_Status status;
  MPI_CHECK(MPI_Isendrecv(&out, 1, MPI_INT, g_next, 400 + g_rank, &in, 1,
                          MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                          &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  CHECK(in == g_previous * 7, "wildcard receive got %d", in);
  CHECK_STATUS(status, g_previous, 400 + g_previous, MPI_INT, 1, "wildcards");
}

static void proc_null(void) {
  int out = 11, in = -1;
  MPI_Request requests[3];
  MPI_Status statuses[3];
  MPI_CHECK(MPI_Isendrecv(&out, 1, MPI_INT, MPI_PROC_NULL, 1, &in, 1, MPI_INT,
                          MPI_PROC_NULL, 1, MPI_COMM_WORLD, &requests[0]));
  MPI_CHECK(MPI_Wait(&requests[0], &statuses[0]));
  CHECK_STATUS(statuses[0], MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0,
               "both MPI_PROC_NULL");
  CHECK(in == -1, "a receive from MPI_PROC_NULL wrote %d", in);
  /* One half real, the other MPI_PROC_NULL: around the ring. */
  int got = -1;
  out = 1000 + g_rank;
  MPI_CHECK(MPI_Isendrecv(&out, 1, MPI_INT, g_next, 2, &in, 1, MPI_INT,
                          MPI_PROC_NULL, 2, MPI_COMM_WORLD, &requests[1]));
  MPI_CHECK(MPI_Isendrecv(&out, 1, MPI_INT, MPI_PROC_NULL, 2, &got, 1, MPI_INT,
                          g_previous, 2, MPI_COMM_WORLD, &requests[2]));
  MPI_CHECK(MPI_Waitall(2, &requests[1], &statuses[1]));
  CHECK_STATUS(statuses[1], MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0,
               "receive from MPI_PROC_NULL");
  CHECK_STATUS(statuses[2], g_previous, 2, MPI_INT, 1, "send to MPI_PROC_NULL");
  CHECK(got == 1000 + g_previous, "got %d, expected %d", got,
        1000 + g_previous);
  int value = 5;
  MPI_CHECK(MPI_Isendrecv_replace(&value, 1, MPI_INT, MPI_PROC_NULL, 3,
                                  MPI_PROC_NULL, 3, MPI_COMM_WORLD,
                                  &requests[0]));
  MPI_CHECK(MPI_Wait(&requests[0], MPI_STATUS_IGNORE));
  CHECK(value == 5, "replace with MPI_PROC_NULL changed the buffer");
}

static void errors(void) {
  /* Truncation shows at completion, with the receive's status. */
  unsigned char out[200], in[100];
  test_fill(out, sizeof out, g_rank, 500);
  MPI_Request request;
  MPI_CHECK(MPI_Isendrecv(out, sizeof out, MPI_BYTE, g_next, 500, in, sizeof in,
                          MPI_BYTE, g_previous, 500, MPI_COMM_WORLD, &request));
  MPI_Status status;
  expect_class(MPI_Wait(&request, &status), MPI_ERR_TRUNCATE,
               "a truncated MPI_Isendrecv");
  CHECK_PATTERN(in, sizeof in, g_previous, 500, "truncated receive");
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  int value = 0;
  expect_class(MPI_Isendrecv(&value, 1, MPI_INT, g_size, 0, &value, 1, MPI_INT,
                             g_previous, 0, MPI_COMM_WORLD, &request),
               MPI_ERR_RANK, "MPI_Isendrecv to a rank out of range");
  expect_class(MPI_Isendrecv(&value, 1, MPI_INT, g_next, 0, &value, 1, MPI_INT,
                             g_previous, -5, MPI_COMM_WORLD, &request),
               MPI_ERR_TAG, "MPI_Isendrecv with receive tag -5");
  expect_class(MPI_Isendrecv(&value, 1, MPI_INT, g_next, 0, &value, 1, MPI_INT,
                             g_previous, 0, MPI_COMM_WORLD, NULL),
               MPI_ERR_REQUEST, "MPI_Isendrecv with a null request");
  expect_class(MPI_Isendrecv_replace(&value, 1, MPI_INT, g_next, 0, g_previous,
                                     0, MPI_COMM_NULL, &request),
               MPI_ERR_COMM, "MPI_Isendrecv_replace on MPI_COMM_NULL");
  expect_class(MPI_Isendrecv_replace(&value, -1, MPI_INT, g_next, 0, g_previous,
                                     0, MPI_COMM_WORLD, &request),
               MPI_ERR_COUNT, "MPI_Isendrecv_replace with count -1");

  /* A freed request still completes: the data arrives all the same. */
  int received = -1, sent = 4242 + g_rank;
  MPI_CHECK(MPI_Isendrecv(&sent, 1, MPI_INT, g_next, 600, &received, 1, MPI_INT,
                          g_previous, 600, MPI_COMM_WORLD, &request));
  MPI_CHECK(MPI_Request_free(&request));
  CHECK(request == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
  /* Once the neighbours' barrier is past, both exchanges have matched;
   * progress until the value lands. */
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  for (long spins = 0; received != 4242 + g_previous; ++spins) {
    int flag;
    MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 9999, MPI_COMM_WORLD, &flag,
                         MPI_STATUS_IGNORE));
    CHECK(spins < 100000000L, "the freed exchange never delivered");
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_next = (g_rank + 1) % g_size;
  g_previous = (g_rank + g_size - 1) % g_size;
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  sizes();
  replace();
  datatypes();
  many();
  wildcards();
  proc_null();
  errors();
  test_report_pass("isendrecv", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
