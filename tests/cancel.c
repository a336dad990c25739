/* Cancelling receives.  Rank 0 receives from S (rank 1, or itself alone):
 *  - a plain Irecv cancelled: completes, Test_cancelled true, freed by Wait;
 *  - a started persistent Recv_init cancelled: completes cancelled, stays
 *    allocated and inactive, and can be started again and receives data;
 *  - cancelled receives never consume the messages sent afterwards;
 *  - cancelling a receive that already completed is harmless: not cancelled,
 *    data delivered. */
#include "test_util.h"

enum { kTagPlain = 1, kTagPersistent = 2, kTagLate = 3, kTagGo = 4, kBytes = 5000 };

static void check_cancelled(const MPI_Status* status, int expected, const char* what) {
  int cancelled = -1;
  MPI_CHECK(MPI_Test_cancelled(status, &cancelled));
  CHECK(cancelled == expected, "%s: Test_cancelled gave %d, expected %d", what, cancelled,
        expected);
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  const int sender = size > 1 ? 1 : 0;
  unsigned char* buffer = (unsigned char*)test_malloc(kBytes);
  MPI_Status status;
  MPI_Request persistent = MPI_REQUEST_NULL;

  if (rank == 0) {
    MPI_Request request;
    MPI_CHECK(MPI_Irecv(buffer, kBytes, MPI_BYTE, sender, kTagPlain, MPI_COMM_WORLD, &request));
    MPI_CHECK(MPI_Cancel(&request));
    MPI_CHECK(MPI_Wait(&request, &status));
    CHECK(request == MPI_REQUEST_NULL, "Wait on a cancelled Irecv left the request allocated");
    check_cancelled(&status, 1, "Irecv cancelled, completed by Wait");

    MPI_CHECK(MPI_Irecv(buffer, kBytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                        &request));
    MPI_CHECK(MPI_Cancel(&request));
    int flag = 0;
    while (!flag) MPI_CHECK(MPI_Test(&request, &flag, &status));
    CHECK(request == MPI_REQUEST_NULL, "Test on a cancelled Irecv left the request allocated");
    check_cancelled(&status, 1, "wildcard Irecv cancelled, completed by Test");

    MPI_CHECK(MPI_Recv_init(buffer, kBytes, MPI_BYTE, sender, kTagPersistent, MPI_COMM_WORLD,
                            &persistent));
    MPI_CHECK(MPI_Start(&persistent));
    MPI_CHECK(MPI_Cancel(&persistent));
    MPI_CHECK(MPI_Wait(&persistent, &status));
    CHECK(persistent != MPI_REQUEST_NULL, "Wait freed a cancelled persistent request");
    check_cancelled(&status, 1, "started Recv_init cancelled");
    /* Cancel and start once more before any data exists. */
    MPI_CHECK(MPI_Start(&persistent));
    MPI_CHECK(MPI_Cancel(&persistent));
    MPI_CHECK(MPI_Wait(&persistent, &status));
    check_cancelled(&status, 1, "Recv_init cancelled a second time");

    /* Only now may S send: nothing cancelled above may take its messages. */
    if (sender != 0) MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, sender, kTagGo, MPI_COMM_WORLD));
  }
  unsigned char* out[3];
  MPI_Request sends[3];
  if (rank == sender) {
    if (sender != 0)
      MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, kTagGo, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    const int tags[3] = {kTagPlain, kTagPersistent, kTagLate};
    for (int i = 0; i < 3; ++i) {
      out[i] = (unsigned char*)test_malloc(kBytes);
      test_fill(out[i], kBytes, sender, tags[i]);
      MPI_CHECK(MPI_Isend(out[i], kBytes, MPI_BYTE, 0, tags[i], MPI_COMM_WORLD, &sends[i]));
    }
  }
  if (rank == 0) {
    memset(buffer, 0, kBytes);
    MPI_CHECK(MPI_Recv(buffer, kBytes, MPI_BYTE, sender, kTagPlain, MPI_COMM_WORLD, &status));
    CHECK_STATUS(status, sender, kTagPlain, MPI_BYTE, kBytes, "receive after cancels");
    CHECK_PATTERN(buffer, kBytes, sender, kTagPlain, "receive after cancels");
    check_cancelled(&status, 0, "ordinary receive");

    /* The persistent request created above, restarted after its cancels. */
    memset(buffer, 0, kBytes);
    MPI_CHECK(MPI_Start(&persistent));
    MPI_CHECK(MPI_Wait(&persistent, &status));
    CHECK_STATUS(status, sender, kTagPersistent, MPI_BYTE, kBytes, "restarted Recv_init");
    CHECK_PATTERN(buffer, kBytes, sender, kTagPersistent, "restarted Recv_init");
    check_cancelled(&status, 0, "restarted Recv_init");
    MPI_CHECK(MPI_Request_free(&persistent));
    CHECK(persistent == MPI_REQUEST_NULL, "Request_free did not null the handle");

    /* Cancel after completion: too late, the data stays delivered. */
    MPI_Request request;
    memset(buffer, 0, kBytes);
    MPI_CHECK(MPI_Irecv(buffer, kBytes, MPI_BYTE, sender, kTagLate, MPI_COMM_WORLD, &request));
    int flag = 0;
    while (!flag) MPI_CHECK(MPI_Request_get_status(request, &flag, &status));
    MPI_CHECK(MPI_Cancel(&request));
    MPI_CHECK(MPI_Wait(&request, &status));
    check_cancelled(&status, 0, "cancel after completion");
    CHECK_STATUS(status, sender, kTagLate, MPI_BYTE, kBytes, "cancel after completion");
    CHECK_PATTERN(buffer, kBytes, sender, kTagLate, "cancel after completion");
  }
  if (rank == sender) {
    MPI_CHECK(MPI_Waitall(3, sends, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; ++i) free(out[i]);
  }
  free(buffer);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("cancel", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
