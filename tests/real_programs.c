/* Small things real programs do that MPICH and Open MPI accept:
 *
 *   - empty messages described with MPI_DATATYPE_NULL (count 0): Send/Recv,
 *     Ssend, Isend/Irecv, Issend, Sendrecv, Sendrecv_replace, Isendrecv,
 *     Send_init/Recv_init restarted, Mprobe/Mrecv; each status says source,
 *     tag and count 0, and the receive buffer is not touched. Any other
 *     count with MPI_DATATYPE_NULL is still MPI_ERR_TYPE (under
 *     MPI_ERRORS_RETURN), and nothing of it arrives;
 *   - MPI_Pcontrol (and PMPI_Pcontrol), with any level and extra
 *     arguments: links and returns MPI_SUCCESS.
 *
 * Each rank sends to the next and receives from the previous one. */
#include "test_util.h"

enum { kGuard = 0x5A, kBytes = 64 };

static int g_rank, g_size, g_next, g_prev;

static void check_guard(const unsigned char* buffer, const char* what) {
  for (int b = 0; b < kBytes; ++b)
    CHECK(buffer[b] == kGuard, "%s: byte %d of the receive buffer was written (0x%02x)",
          what, b, buffer[b]);
}

/* A status from an empty message of g_prev with `tag`. */
static void check_empty_status(const MPI_Status* status, int tag, const char* what) {
  int count = -1;
  MPI_CHECK(MPI_Get_count(status, MPI_INT, &count));
  CHECK(status->MPI_SOURCE == g_prev && status->MPI_TAG == tag && count == 0,
        "%s: status source %d tag %d count %d, expected source %d tag %d count 0", what,
        status->MPI_SOURCE, status->MPI_TAG, count, g_prev, tag);
  MPI_CHECK(MPI_Get_elements(status, MPI_BYTE, &count));
  CHECK(count == 0, "%s: Get_elements says %d bytes", what, count);
}

static void check_empty_null_type(void) {
  unsigned char in[kBytes], out[kBytes];
  memset(out, 0x11, sizeof out);
  MPI_Status status;

  /* Blocking, both sides MPI_DATATYPE_NULL, with and without a buffer. */
  memset(in, kGuard, sizeof in);
  MPI_CHECK(MPI_Sendrecv(out, 0, MPI_DATATYPE_NULL, g_next, 1, in, 0, MPI_DATATYPE_NULL, g_prev,
                         1, MPI_COMM_WORLD, &status));
  check_empty_status(&status, 1, "Sendrecv");
  check_guard(in, "Sendrecv");

  MPI_Request requests[2];
  memset(in, kGuard, sizeof in);
  MPI_CHECK(MPI_Irecv(in, 0, MPI_DATATYPE_NULL, g_prev, 2, MPI_COMM_WORLD, &requests[0]));
  MPI_CHECK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, g_next, 2, MPI_COMM_WORLD));
  MPI_CHECK(MPI_Wait(&requests[0], &status));
  check_empty_status(&status, 2, "Send into Irecv");
  check_guard(in, "Send into Irecv");

  /* Typed on one side, MPI_DATATYPE_NULL on the other: signatures of 0
   * items match. */
  memset(in, kGuard, sizeof in);
  MPI_CHECK(MPI_Isend(out, 0, MPI_DATATYPE_NULL, g_next, 3, MPI_COMM_WORLD, &requests[1]));
  MPI_CHECK(MPI_Recv(in, 0, MPI_INT, g_prev, 3, MPI_COMM_WORLD, &status));
  MPI_CHECK(MPI_Wait(&requests[1], MPI_STATUS_IGNORE));
  check_empty_status(&status, 3, "Isend into typed Recv");
  memset(in, kGuard, sizeof in);
  MPI_CHECK(MPI_Irecv(in, 0, MPI_DATATYPE_NULL, g_prev, 4, MPI_COMM_WORLD, &requests[0]));
  MPI_CHECK(MPI_Issend(out, 0, MPI_INT, g_next, 4, MPI_COMM_WORLD, &requests[1]));
  MPI_CHECK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
  check_guard(in, "typed Issend into Irecv");
  memset(in, kGuard, sizeof in);
  MPI_CHECK(MPI_Irecv(in, 0, MPI_DATATYPE_NULL, g_prev, 5, MPI_COMM_WORLD, &requests[0]));
  MPI_CHECK(MPI_Ssend(out, 0, MPI_DATATYPE_NULL, g_next, 5, MPI_COMM_WORLD));
  MPI_CHECK(MPI_Wait(&requests[0], &status));
  check_empty_status(&status, 5, "Ssend into Irecv");
  check_guard(in, "Ssend into Irecv");

  /* Sendrecv_replace and Isendrecv. */
  memset(in, kGuard, sizeof in);
  MPI_CHECK(MPI_Sendrecv_replace(in, 0, MPI_DATATYPE_NULL, g_next, 6, g_prev, 6, MPI_COMM_WORLD,
                                 &status));
  check_empty_status(&status, 6, "Sendrecv_replace");
  check_guard(in, "Sendrecv_replace");
  MPI_Request request;
  memset(in, kGuard, sizeof in);
  MPI_CHECK(MPI_Isendrecv(out, 0, MPI_DATATYPE_NULL, g_next, 7, in, 0, MPI_DATATYPE_NULL, g_prev,
                          7, MPI_COMM_WORLD, &request));
  MPI_CHECK(MPI_Wait(&request, &status));
  check_empty_status(&status, 7, "Isendrecv");
  check_guard(in, "Isendrecv");

  /* Persistent forms, started twice. */
  MPI_Request persistent[2];
  MPI_CHECK(MPI_Recv_init(in, 0, MPI_DATATYPE_NULL, g_prev, 8, MPI_COMM_WORLD, &persistent[0]));
  MPI_CHECK(MPI_Send_init(out, 0, MPI_DATATYPE_NULL, g_next, 8, MPI_COMM_WORLD, &persistent[1]));
  for (int round = 0; round < 2; ++round) {
    MPI_Status statuses[2];
    memset(in, kGuard, sizeof in);
    MPI_CHECK(MPI_Startall(2, persistent));
    MPI_CHECK(MPI_Waitall(2, persistent, statuses));
    check_empty_status(&statuses[0], 8, "Send_init/Recv_init");
    check_guard(in, "Send_init/Recv_init");
  }
  MPI_CHECK(MPI_Request_free(&persistent[0]));
  MPI_CHECK(MPI_Request_free(&persistent[1]));

  /* A matched probe's message received with MPI_DATATYPE_NULL. */
  MPI_CHECK(MPI_Isend(out, 0, MPI_INT, g_next, 9, MPI_COMM_WORLD, &request));
  MPI_Message message;
  MPI_CHECK(MPI_Mprobe(g_prev, 9, MPI_COMM_WORLD, &message, &status));
  memset(in, kGuard, sizeof in);
  MPI_CHECK(MPI_Mrecv(in, 0, MPI_DATATYPE_NULL, &message, &status));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(message == MPI_MESSAGE_NULL, "Mrecv left the message handle");
  check_empty_status(&status, 9, "Mprobe/Mrecv");
  check_guard(in, "Mprobe/Mrecv");

  /* Any other count with MPI_DATATYPE_NULL stays an error, locally: no
   * request is made and nothing is sent (the tag-10 receive below gets
   * the one valid message). */
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  request = MPI_REQUEST_NULL;
  CHECK_ERROR_CLASS(MPI_Send(out, 1, MPI_DATATYPE_NULL, g_next, 10, MPI_COMM_WORLD), MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Isend(out, 4, MPI_DATATYPE_NULL, g_next, 10, MPI_COMM_WORLD, &request),
                    MPI_ERR_TYPE);
  CHECK(request == MPI_REQUEST_NULL, "a refused Isend made a request");
  CHECK_ERROR_CLASS(MPI_Send_init(out, 2, MPI_DATATYPE_NULL, g_next, 10, MPI_COMM_WORLD, &request),
                    MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Irecv(in, 1, MPI_DATATYPE_NULL, g_prev, 10, MPI_COMM_WORLD, &request),
                    MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Recv(in, 3, MPI_DATATYPE_NULL, g_prev, 10, MPI_COMM_WORLD, &status),
                    MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Sendrecv(out, 1, MPI_DATATYPE_NULL, g_next, 10, in, 0, MPI_DATATYPE_NULL,
                                 g_prev, 10, MPI_COMM_WORLD, &status),
                    MPI_ERR_TYPE);
  CHECK_ERROR_CLASS(MPI_Recv_init(in, 5, MPI_DATATYPE_NULL, g_prev, 10, MPI_COMM_WORLD, &request),
                    MPI_ERR_TYPE);
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  int value = 1000 + g_rank, got = -1;
  MPI_CHECK(MPI_Sendrecv(&value, 1, MPI_INT, g_next, 10, &got, 1, MPI_INT, g_prev, 10,
                         MPI_COMM_WORLD, &status));
  CHECK(got == 1000 + g_prev, "after the refused sends, tag 10 delivered %d, expected %d", got,
        1000 + g_prev);
  int pending = 1;
  MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &pending, &status));
  CHECK(!pending, "a refused send delivered a message (source %d tag %d)", status.MPI_SOURCE,
        status.MPI_TAG);
}

static void check_pcontrol(void) {
  MPI_CHECK(MPI_Pcontrol(0));
  MPI_CHECK(MPI_Pcontrol(1));
  MPI_CHECK(MPI_Pcontrol(2, "a profiler's own argument", 42));
  MPI_CHECK(MPI_Pcontrol(-1));
  MPI_CHECK(PMPI_Pcontrol(1));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  g_next = (g_rank + 1) % g_size;
  g_prev = (g_rank + g_size - 1) % g_size;
  check_pcontrol();
  check_empty_null_type();
  /* Nobody leaves while a neighbour might still probe for strays. */
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("real_programs", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
