/* Cancelling sends. MPI_Wait after MPI_Cancel must return whatever the
 * receiver does (MPI-4.1 section 3.8.4), and a cancelled message must never
 * be received, while one whose cancel failed must be. Rank 0 sends to rank
 * 1, which only learns afterwards whether to receive:
 *  - a rendezvous Isend and a small Issend (both wait for the receiver),
 *    cancelled before any receive is posted: cancelled;
 *  - a standard eager Isend: complete at once, so either outcome, but the
 *    outcome and the delivery must agree;
 *  - a persistent rendezvous send cancelled, then started again: the second
 *    round delivers its data;
 *  - a rendezvous send whose receive already matched: not cancelled, data
 *    delivered;
 *  - a burst of eager sends that may sit in the sender's backlog (tiny rings
 *    in the second run), the last one cancelled: every message that was not
 *    cancelled arrives, in order, and the cancelled one never does.
 * Every delivered byte is checked, and after each case rank 1 probes that
 * no withdrawn message is left to match. */
#include "test_util.h"

enum {
  kLarge = 1 << 20,
  kSmall = 64,
  kBurst = 40,
  kTagReport = 1,
  kTagBase = 100,
};

static int test_cancelled(MPI_Status* status) {
  int flag = -1;
  MPI_CHECK(MPI_Test_cancelled(status, &flag));
  return flag;
}

/* Rank 0: reports whether the message with `tag` and `bytes` was withdrawn;
 * rank 1: receives it unless it was, and checks it. */
static void settle(int rank, int cancelled, int tag, int bytes, void* buffer) {
  int report[2] = {cancelled, tag};
  if (rank == 0) {
    MPI_CHECK(MPI_Send(report, 2, MPI_INT, 1, kTagReport, MPI_COMM_WORLD));
  } else {
    MPI_CHECK(MPI_Recv(report, 2, MPI_INT, 0, kTagReport, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    if (!report[0]) {
      MPI_Status status;
      memset(buffer, 0, (size_t)bytes);
      MPI_CHECK(MPI_Recv(buffer, bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD,
                         &status));
      CHECK_PATTERN(buffer, (size_t)bytes, 0, tag, "message not cancelled");
    }
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 1) {
    int left = 1;
    MPI_CHECK(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &left, MPI_STATUS_IGNORE));
    CHECK(!left, "a message with tag %d is still there after %s", tag,
          report[0] ? "its send was cancelled" : "it was received");
  }
  /* Nothing new may be sent with this tag before the probe is over. */
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A send that waits for its receiver, cancelled before any receive exists:
 * must be cancelled. */
static void cancel_unmatched(int rank, int tag, int bytes, int synchronous,
                             void* buffer) {
  int cancelled = 0;
  if (rank == 0) {
    test_fill(buffer, (size_t)bytes, 0, tag);
    MPI_Request request;
    if (synchronous) {
      MPI_CHECK(MPI_Issend(buffer, bytes, MPI_BYTE, 1, tag, MPI_COMM_WORLD,
                           &request));
    } else {
      MPI_CHECK(MPI_Isend(buffer, bytes, MPI_BYTE, 1, tag, MPI_COMM_WORLD,
                          &request));
    }
    MPI_CHECK(MPI_Cancel(&request));
    MPI_Status status;
    MPI_CHECK(MPI_Wait(&request, &status));
    cancelled = test_cancelled(&status);
    CHECK(cancelled, "%s of %d bytes with no receive posted: not cancelled",
          synchronous ? "Issend" : "Isend", bytes);
  }
  settle(rank, cancelled, tag, bytes, buffer);
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "runs with exactly 2 ranks");
  unsigned char* buffer = (unsigned char*)test_malloc(kLarge);
  MPI_Status status;
  int tag = kTagBase;

  {
    cancel_unmatched(rank, tag++, kLarge, /*synchronous=*/0, buffer);
    cancel_unmatched(rank, tag++, 100000, /*synchronous=*/0, buffer);
    cancel_unmatched(rank, tag++, kSmall, /*synchronous=*/1, buffer);

    /* Standard eager: the outcome may be either, delivery must agree. */
    {
      int cancelled = 0;
      if (rank == 0) {
        test_fill(buffer, kSmall, 0, tag);
        MPI_Request request;
        MPI_CHECK(MPI_Isend(buffer, kSmall, MPI_BYTE, 1, tag, MPI_COMM_WORLD,
                            &request));
        MPI_CHECK(MPI_Cancel(&request));
        MPI_CHECK(MPI_Wait(&request, &status));
        cancelled = test_cancelled(&status);
      }
      settle(rank, cancelled, tag++, kSmall, buffer);
    }

    /* Persistent: cancelled, then started again and delivered. */
    {
      const int persistent_tag = tag++;
      MPI_Request request = MPI_REQUEST_NULL;
      if (rank == 0) {
        test_fill(buffer, kLarge, 0, persistent_tag);
        MPI_CHECK(MPI_Send_init(buffer, kLarge, MPI_BYTE, 1, persistent_tag,
                                MPI_COMM_WORLD, &request));
        MPI_CHECK(MPI_Start(&request));
        MPI_CHECK(MPI_Cancel(&request));
        MPI_CHECK(MPI_Wait(&request, &status));
        CHECK(test_cancelled(&status), "persistent send: not cancelled");
        CHECK(request != MPI_REQUEST_NULL, "persistent request was freed");
      }
      settle(rank, 1, persistent_tag, kLarge, buffer);
      /* The second round must be received before it can complete. */
      if (rank == 0) {
        MPI_CHECK(MPI_Start(&request));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_CHECK(MPI_Wait(&request, &status));
        CHECK(!test_cancelled(&status), "restarted send reads cancelled");
        MPI_CHECK(MPI_Request_free(&request));
      } else {
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        memset(buffer, 0, kLarge);
        MPI_CHECK(MPI_Recv(buffer, kLarge, MPI_BYTE, 0, persistent_tag,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_PATTERN(buffer, kLarge, 0, persistent_tag, "restarted send");
      }
      MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* Already matched: the cancel fails, the data arrives. */
    {
      const int matched_tag = tag++;
      MPI_Request request;
      if (rank == 1) {
        memset(buffer, 0, kLarge);
        MPI_CHECK(MPI_Irecv(buffer, kLarge, MPI_BYTE, 0, matched_tag,
                            MPI_COMM_WORLD, &request));
      }
      MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      if (rank == 0) {
        test_fill(buffer, kLarge, 0, matched_tag);
        MPI_CHECK(MPI_Isend(buffer, kLarge, MPI_BYTE, 1, matched_tag,
                            MPI_COMM_WORLD, &request));
      } else {
        MPI_CHECK(MPI_Wait(&request, &status));
        CHECK_PATTERN(buffer, kLarge, 0, matched_tag, "matched send");
      }
      MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      if (rank == 0) {
        MPI_CHECK(MPI_Cancel(&request));
        MPI_CHECK(MPI_Wait(&request, &status));
        CHECK(!test_cancelled(&status), "a matched send reads cancelled");
      }
      MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* A burst, the last message cancelled (perhaps still in the backlog). */
    {
      const int first = tag;
      tag += kBurst;
      unsigned char(*burst)[kSmall] = test_malloc(kBurst * kSmall);
      int cancelled = 0;
      if (rank == 0) {
        MPI_Request requests[kBurst];
        for (int i = 0; i < kBurst; ++i) {
          test_fill(burst[i], kSmall, 0, first + i);
          MPI_CHECK(MPI_Isend(burst[i], kSmall, MPI_BYTE, 1, first + i,
                              MPI_COMM_WORLD, &requests[i]));
        }
        MPI_CHECK(MPI_Cancel(&requests[kBurst - 1]));
        MPI_Status statuses[kBurst];
        MPI_CHECK(MPI_Waitall(kBurst, requests, statuses));
        for (int i = 0; i < kBurst - 1; ++i) {
          CHECK(!test_cancelled(&statuses[i]), "burst message %d cancelled",
                i);
        }
        cancelled = test_cancelled(&statuses[kBurst - 1]);
      } else {
        for (int i = 0; i < kBurst - 1; ++i) {
          memset(burst[i], 0, kSmall);
          MPI_CHECK(MPI_Recv(burst[i], kSmall, MPI_BYTE, 0, first + i,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE));
          CHECK_PATTERN(burst[i], kSmall, 0, first + i, "burst message");
        }
      }
      settle(rank, cancelled, first + kBurst - 1, kSmall, burst[kBurst - 1]);
      free(burst);
    }
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  free(buffer);
  test_report_pass("cancel_send", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
