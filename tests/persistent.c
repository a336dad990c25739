/* Persistent requests between rank pairs (0,1), (2,3), ...: the initiator
 * uses Send_init, Ssend_init and Recv_init started together by Startall; the
 * responder uses Recv_init twice and Send_init started one by one.  Each
 * round rewrites the send buffers with a round-specific pattern and checks
 * every received byte.  Also: Wait/Test/Request_get_status on an inactive
 * persistent request return at once with an empty status, and
 * Request_free of an inactive persistent request nulls the handle. */
#include "test_util.h"

enum { kRounds = 60, kSmall = 100, kLarge = 200 * 1024 + 3 };

static void check_empty_status(const MPI_Status* status, const char* what) {
  int count = -1;
  MPI_Get_count(status, MPI_BYTE, &count);
  CHECK(status->MPI_SOURCE == MPI_ANY_SOURCE && status->MPI_TAG == MPI_ANY_TAG && count == 0,
        "%s: inactive request gave status source %d tag %d count %d, expected the empty "
        "status (MPI_ANY_SOURCE, MPI_ANY_TAG, 0)",
        what, status->MPI_SOURCE, status->MPI_TAG, count);
}

static void check_inactive(MPI_Request* request, const char* what) {
  MPI_Status status;
  MPI_CHECK(MPI_Wait(request, &status));
  CHECK(*request != MPI_REQUEST_NULL, "%s: Wait on an inactive persistent request freed it", what);
  check_empty_status(&status, what);
  int flag = 0;
  MPI_CHECK(MPI_Test(request, &flag, &status));
  CHECK(flag, "%s: Test on an inactive persistent request gave flag false", what);
  check_empty_status(&status, what);
  flag = 0;
  MPI_CHECK(MPI_Request_get_status(*request, &flag, &status));
  CHECK(flag, "%s: Request_get_status on an inactive request gave flag false", what);
  check_empty_status(&status, what);
}

/* Pattern key of message `k` in round `round`, so stale rounds are caught. */
static int round_key(int round, int k) { return round * 8 + k; }

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "persistent needs at least 2 ranks, got %d", size);
  const int peer = rank ^ 1;
  if (peer < size) {
    unsigned char* small = (unsigned char*)test_malloc(kSmall);
    unsigned char* large = (unsigned char*)test_malloc(kLarge);
    unsigned char* reply = (unsigned char*)test_malloc(kLarge);
    MPI_Request requests[3];
    MPI_Status statuses[3];
    if (rank < peer) {
      MPI_CHECK(MPI_Send_init(small, kSmall, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &requests[0]));
      MPI_CHECK(MPI_Ssend_init(large, kLarge, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &requests[1]));
      MPI_CHECK(MPI_Recv_init(reply, kLarge, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &requests[2]));
      for (int i = 0; i < 3; ++i) check_inactive(&requests[i], "initiator before first Start");
      for (int round = 0; round < kRounds; ++round) {
        test_fill(small, kSmall, rank, round_key(round, 1));
        test_fill(large, kLarge, rank, round_key(round, 2));
        memset(reply, 0, kLarge);
        MPI_CHECK(MPI_Startall(3, requests));
        MPI_CHECK(MPI_Waitall(3, requests, statuses));
        for (int i = 0; i < 3; ++i)
          CHECK(requests[i] != MPI_REQUEST_NULL, "Waitall freed persistent request %d", i);
        CHECK_STATUS(statuses[2], peer, 3, MPI_BYTE, kLarge, "initiator's Recv_init");
        CHECK_PATTERN(reply, kLarge, peer, round_key(round, 3), "initiator's Recv_init");
      }
      for (int i = 0; i < 3; ++i) check_inactive(&requests[i], "initiator after last round");
    } else {
      MPI_CHECK(MPI_Recv_init(small, kSmall, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &requests[0]));
      MPI_CHECK(MPI_Recv_init(large, kLarge, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &requests[1]));
      MPI_CHECK(MPI_Send_init(reply, kLarge, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &requests[2]));
      for (int round = 0; round < kRounds; ++round) {
        memset(small, 0, kSmall);
        memset(large, 0, kLarge);
        /* Alternate the posting order of the two receives between rounds. */
        MPI_CHECK(MPI_Start(&requests[round % 2]));
        MPI_CHECK(MPI_Start(&requests[1 - round % 2]));
        MPI_CHECK(MPI_Wait(&requests[1], &statuses[1]));
        MPI_CHECK(MPI_Wait(&requests[0], &statuses[0]));
        CHECK_STATUS(statuses[0], peer, 1, MPI_BYTE, kSmall, "responder's small Recv_init");
        CHECK_STATUS(statuses[1], peer, 2, MPI_BYTE, kLarge, "responder's large Recv_init");
        CHECK_PATTERN(small, kSmall, peer, round_key(round, 1), "responder's small Recv_init");
        CHECK_PATTERN(large, kLarge, peer, round_key(round, 2), "responder's large Recv_init");
        test_fill(reply, kLarge, rank, round_key(round, 3));
        MPI_CHECK(MPI_Start(&requests[2]));
        MPI_CHECK(MPI_Wait(&requests[2], MPI_STATUS_IGNORE));
      }
    }
    for (int i = 0; i < 3; ++i) {
      MPI_CHECK(MPI_Request_free(&requests[i]));
      CHECK(requests[i] == MPI_REQUEST_NULL, "Request_free did not null request %d", i);
    }
    free(small);
    free(large);
    free(reply);
  }
  /* A persistent request freed without ever being started. */
  int unused = 0;
  MPI_Request never_started;
  MPI_CHECK(MPI_Recv_init(&unused, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &never_started));
  MPI_CHECK(MPI_Request_free(&never_started));
  CHECK(never_started == MPI_REQUEST_NULL, "Request_free of an unstarted request left it allocated");

  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("persistent", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
