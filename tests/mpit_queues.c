/* The matching engines' queues through MPI_T, with exact values (run under
 * every engine, MINIMPI_MATCH).
 *
 * Rank 0 makes its handles (counters count from a handle's allocation) and
 * tells rank 1 to start; on a duplicate of MPI_COMM_WORLD rank 1 sends
 * kMessages small messages, tags kTag0.., to rank 0. Rank 0 probes for the last
 * tag (messages from one sender arrive in order, so all are queued then) and
 * reads through handles bound to the duplicate and to MPI_COMM_WORLD:
 *   unexpected_recvq_length == kMessages (0 on MPI_COMM_WORLD), its
 *   high-water mark kMessages, posted_recvq_match_attempts == kMessages
 *   (each arrival searched the empty posted queue once);
 * receives kReceived of them in arrival order (each receive searches the
 * unexpected queue once and finds its message first: attempts and elements
 * searched move by exactly kReceived), reads kMessages - kReceived; posts
 * kPosted receives nothing matches (each searches all kMessages - kReceived
 * queued messages), reads posted_recvq_length == kPosted and its mark;
 * checks the process-wide twins and that time_matching, started around the
 * receives, moved; cancels the posted receives and receives the rest,
 * after which both lengths are 0 and the marks stay. Every payload is
 * checked. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

enum {
  kMessages = 37,
  kReceived = 10,
  kPosted = 5,
  kTag0 = 100,
  kPostedTag0 = 5000,
  kInts = 2,
  kGoTag = 77
};

static MPI_T_pvar_session session;

static int Index(const char* name, int var_class) {
  int index = -1;
  MPI_CHECK(MPI_T_pvar_get_index(name, var_class, &index));
  return index;
}

static MPI_T_pvar_handle Handle(const char* name, int var_class,
                                MPI_Comm* comm) {
  MPI_T_pvar_handle handle;
  int count = 0;
  MPI_CHECK(MPI_T_pvar_handle_alloc(session, Index(name, var_class), comm,
                                    &handle, &count));
  CHECK(count == 1, "%s: count %d, want 1", name, count);
  return handle;
}

static unsigned long long Read(MPI_T_pvar_handle handle) {
  unsigned long long value = 0;
  MPI_CHECK(MPI_T_pvar_read(session, handle, &value));
  return value;
}

static void CheckPayload(const int* data, int tag) {
  for (int i = 0; i < kInts; ++i) {
    CHECK(data[i] == tag * 10 + i, "tag %d int %d: %d, want %d", tag, i,
          data[i], tag * 10 + i);
  }
}

static void Receive(MPI_Comm comm, int tag) {
  int data[kInts];
  memset(data, 0xff, sizeof data);
  MPI_Status status;
  MPI_CHECK(MPI_Recv(data, kInts, MPI_INT, 1, tag, comm, &status));
  CHECK(status.MPI_SOURCE == 1 && status.MPI_TAG == tag,
        "receive of tag %d: source %d tag %d", tag, status.MPI_SOURCE,
        status.MPI_TAG);
  CheckPayload(data, tag);
}

/* Handles made before any message arrives: counters count from a handle's
 * allocation. */
struct Handles {
  MPI_T_pvar_handle unexpected, unexpected_mark, posted, posted_mark;
  MPI_T_pvar_handle posted_attempts, posted_searched;
  MPI_T_pvar_handle unexpected_attempts, unexpected_searched;
  MPI_T_pvar_handle world_unexpected, world_posted;
  MPI_T_pvar_handle process_unexpected, process_unexpected_mark;
  MPI_T_pvar_handle process_attempts, process_posted;
};

#define EXPECT_READ(handle, want)                                             \
  do {                                                                        \
    unsigned long long got_ = Read(handle);                                   \
    CHECK(got_ == (unsigned long long)(want), "%s: %llu, want %llu", #handle, \
          got_, (unsigned long long)(want));                                  \
  } while (0)

static void Receiver(MPI_Comm comm) {
  MPI_Comm world = MPI_COMM_WORLD;
  struct Handles h;
  h.unexpected =
      Handle("unexpected_recvq_length", MPI_T_PVAR_CLASS_LEVEL, &comm);
  h.unexpected_mark = Handle("unexpected_recvq_length_hwm",
                             MPI_T_PVAR_CLASS_HIGHWATERMARK, &comm);
  h.posted = Handle("posted_recvq_length", MPI_T_PVAR_CLASS_LEVEL, &comm);
  h.posted_mark =
      Handle("posted_recvq_length_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, &comm);
  h.posted_attempts =
      Handle("posted_recvq_match_attempts", MPI_T_PVAR_CLASS_COUNTER, &comm);
  h.posted_searched =
      Handle("posted_recvq_elements_searched", MPI_T_PVAR_CLASS_COUNTER, &comm);
  h.unexpected_attempts = Handle("unexpected_recvq_match_attempts",
                                 MPI_T_PVAR_CLASS_COUNTER, &comm);
  h.unexpected_searched = Handle("unexpected_recvq_elements_searched",
                                 MPI_T_PVAR_CLASS_COUNTER, &comm);
  h.world_unexpected =
      Handle("unexpected_recvq_length", MPI_T_PVAR_CLASS_LEVEL, &world);
  h.world_posted =
      Handle("posted_recvq_length", MPI_T_PVAR_CLASS_LEVEL, &world);
  h.process_unexpected =
      Handle("unexpected_recvq_length_process", MPI_T_PVAR_CLASS_LEVEL, NULL);
  h.process_unexpected_mark = Handle("unexpected_recvq_length_hwm_process",
                                     MPI_T_PVAR_CLASS_HIGHWATERMARK, NULL);
  h.process_attempts = Handle("unexpected_recvq_match_attempts_process",
                              MPI_T_PVAR_CLASS_COUNTER, NULL);
  h.process_posted =
      Handle("posted_recvq_length_process", MPI_T_PVAR_CLASS_LEVEL, NULL);
  EXPECT_READ(h.unexpected, 0);
  EXPECT_READ(h.unexpected_mark, 0);

  int go = 1;
  MPI_CHECK(MPI_Send(&go, 1, MPI_INT, 1, kGoTag, MPI_COMM_WORLD));
  MPI_Status status;
  MPI_CHECK(MPI_Probe(1, kTag0 + kMessages - 1, comm, &status));

  EXPECT_READ(h.unexpected, kMessages);
  EXPECT_READ(h.world_unexpected, 0);
  /* The communicator's collective traffic has queues of its own: the
   * program's messages are not in them. */
  MPI_T_pvar_handle collective_unexpected = Handle(
      "collective_unexpected_recvq_length", MPI_T_PVAR_CLASS_LEVEL, &comm);
  EXPECT_READ(collective_unexpected, 0);
  MPI_CHECK(MPI_T_pvar_handle_free(session, &collective_unexpected));
  EXPECT_READ(h.unexpected_mark, kMessages);
  EXPECT_READ(h.posted, 0);
  EXPECT_READ(h.posted_attempts, kMessages);
  EXPECT_READ(h.posted_searched, 0);
  EXPECT_READ(h.process_unexpected, kMessages);
  CHECK(Read(h.process_unexpected_mark) >= kMessages,
        "unexpected_recvq_length_hwm_process %llu, below %d",
        Read(h.process_unexpected_mark), kMessages);

  const unsigned long long attempts_before = Read(h.unexpected_attempts);
  const unsigned long long searched_before = Read(h.unexpected_searched);
  const unsigned long long process_attempts_before = Read(h.process_attempts);
  CHECK(attempts_before >= 1, "the probe searched no queue");

  /* Time spent matching, timed while a handle is started. */
  MPI_T_pvar_handle timer =
      Handle("time_matching", MPI_T_PVAR_CLASS_TIMER, &comm);
  MPI_CHECK(MPI_T_pvar_start(session, timer));
  for (int i = 0; i < kReceived; ++i) Receive(comm, kTag0 + i);
  MPI_CHECK(MPI_T_pvar_stop(session, timer));
  double seconds = -1;
  MPI_CHECK(MPI_T_pvar_read(session, timer, &seconds));
  CHECK(seconds > 0 && seconds < 1, "time_matching over %d receives: %g s",
        kReceived, seconds);
  MPI_CHECK(MPI_T_pvar_handle_free(session, &timer));

  const int left = kMessages - kReceived;
  EXPECT_READ(h.unexpected, left);
  EXPECT_READ(h.unexpected_attempts, attempts_before + kReceived);
  EXPECT_READ(h.unexpected_searched, searched_before + kReceived);
  CHECK(Read(h.process_attempts) >= process_attempts_before + kReceived,
        "unexpected_recvq_match_attempts_process moved less than %d",
        kReceived);

  /* Receives nothing matches: each searches every queued message. */
  MPI_Request posted[kPosted];
  int sink[kPosted][kInts];
  for (int i = 0; i < kPosted; ++i) {
    MPI_CHECK(MPI_Irecv(sink[i], kInts, MPI_INT, 1, kPostedTag0 + i, comm,
                        &posted[i]));
  }
  EXPECT_READ(h.posted, kPosted);
  EXPECT_READ(h.world_posted, 0);
  EXPECT_READ(h.posted_mark, kPosted);
  EXPECT_READ(h.unexpected_attempts, attempts_before + kReceived + kPosted);
  EXPECT_READ(h.unexpected_searched,
              searched_before + kReceived + kPosted * left);
  CHECK(Read(h.process_posted) >= kPosted,
        "posted_recvq_length_process %llu, below %d", Read(h.process_posted),
        kPosted);

  /* A reset restarts a handle's mark at the level now. */
  EXPECT_READ(h.unexpected_mark, kMessages);
  MPI_CHECK(MPI_T_pvar_reset(session, h.unexpected_mark));
  EXPECT_READ(h.unexpected_mark, left);

  for (int i = 0; i < kPosted; ++i) {
    MPI_CHECK(MPI_Cancel(&posted[i]));
    MPI_CHECK(MPI_Wait(&posted[i], &status));
    int cancelled = 0;
    MPI_CHECK(MPI_Test_cancelled(&status, &cancelled));
    CHECK(cancelled, "posted receive %d was not cancelled", i);
  }
  EXPECT_READ(h.posted, 0);
  for (int i = kReceived; i < kMessages; ++i) Receive(comm, kTag0 + i);
  EXPECT_READ(h.unexpected, 0);
  EXPECT_READ(h.unexpected_mark, left);
  EXPECT_READ(h.posted_mark, kPosted);

  /* The collective profile reads one counter per collective kind. */
  MPI_T_pvar_handle profile;
  int count = 0;
  MPI_CHECK(MPI_T_pvar_handle_alloc(
      session,
      Index("collective_messages_by_kind_process", MPI_T_PVAR_CLASS_COUNTER),
      NULL, &profile, &count));
  CHECK(count == 11, "collective_messages_by_kind_process count %d", count);
  unsigned long long by_kind[11];
  MPI_CHECK(MPI_T_pvar_read(session, profile, by_kind));
  MPI_CHECK(MPI_T_pvar_handle_free(session, &profile));
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank = 0, size = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "run with 2 ranks, not %d", size);
  MPI_CHECK(MPI_T_pvar_session_create(&session));
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  if (rank == 1) {
    int go = 0;
    MPI_CHECK(MPI_Recv(&go, 1, MPI_INT, 0, kGoTag, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    CHECK(go == 1, "go word %d", go);
    for (int i = 0; i < kMessages; ++i) {
      int data[kInts];
      for (int j = 0; j < kInts; ++j) data[j] = (kTag0 + i) * 10 + j;
      MPI_CHECK(MPI_Send(data, kInts, MPI_INT, 0, kTag0 + i, comm));
    }
  } else {
    Receiver(comm);
  }
  MPI_CHECK(MPI_Comm_free(&comm));
  MPI_CHECK(MPI_T_pvar_session_free(&session));
  MPI_CHECK(MPI_Finalize());
  MPI_CHECK(MPI_T_finalize());
  if (rank == 0) printf("mpit_queues: OK\n");
  return 0;
}
