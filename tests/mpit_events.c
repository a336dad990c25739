/* MPI_T events with callbacks (MPI_T_CB_REQUIRE_THREAD_SAFE), counted and
 * their payloads checked:
 *   unexp_message_enqueued / unexp_message_dequeued, bound to a duplicate
 *   of MPI_COMM_WORLD: rank 1 sends kMessages messages (tags kTag0..) that
 *   rank 0 has no receive for; rank 0 sees exactly kMessages enqueued, in
 *   arrival order, queue lengths 1..kMessages, then receives them in order
 *   and sees exactly kMessages dequeued, lengths kMessages-1..0;
 *   partition_arrived, bound to rank 0's partitioned receive: rank 1 sends
 *   kPartitions partitions kRounds times, in the number of transport
 *   partitions the argument says (default kPartitions: one write per user
 *   partition, MINIMPI_PART_AGGR=none, set by the test case), so rank 0
 *   sees that many events a round, each user partition covered once per
 *   round, with its round and bytes. The partitioned counters are read too: the
 * receive's part_partitions_arrived, the send's part_rounds and part_writes (a
 *   round closes at the next start, so kRounds - 1 of them before the
 *   free). Every delivered byte is checked. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum {
  kMessages = 29,
  kTag0 = 300,
  kInts = 3,
  kPartitions = 6,
  kPartitionInts = 4,
  kRounds = 4,
  kGoTag = 9
};

struct Seen {
  int count;
  int collective_count;
  int source[kMessages];
  int tag[kMessages];
  unsigned long long bytes[kMessages];
  unsigned long long length[kMessages];
};
static struct Seen enqueued, dequeued;

static void OnUnexpected(MPI_T_event_instance event,
                         MPI_T_event_registration registration,
                         MPI_T_cb_safety safety, void* user_data) {
  (void)registration;
  (void)safety;
  struct Seen* seen = user_data;
  int collective = -1;
  MPI_T_event_read(event, 4, &collective);
  if (collective != 0) {
    __atomic_add_fetch(&seen->collective_count, 1, __ATOMIC_RELAXED);
    return;
  }
  int at = __atomic_fetch_add(&seen->count, 1, __ATOMIC_RELAXED);
  if (at >= kMessages) return;
  MPI_T_event_read(event, 0, &seen->source[at]);
  MPI_T_event_read(event, 1, &seen->tag[at]);
  MPI_T_event_read(event, 2, &seen->bytes[at]);
  MPI_T_event_read(event, 3, &seen->length[at]);
}

enum { kMaxArrivals = 4 * kPartitions * kRounds };
struct Arrival {
  int64_t transport_partition, first, last;
  unsigned long long round, bytes;
};
static struct Arrival arrivals[kMaxArrivals];
static int arrival_count;

static void OnPartitionArrived(MPI_T_event_instance event,
                               MPI_T_event_registration registration,
                               MPI_T_cb_safety safety, void* user_data) {
  (void)registration;
  (void)safety;
  (void)user_data;
  int at = __atomic_fetch_add(&arrival_count, 1, __ATOMIC_RELAXED);
  if (at >= kMaxArrivals) return;
  struct Arrival* a = &arrivals[at];
  MPI_T_event_read(event, 0, &a->transport_partition);
  MPI_T_event_read(event, 1, &a->first);
  MPI_T_event_read(event, 2, &a->last);
  MPI_T_event_read(event, 3, &a->round);
  MPI_T_event_read(event, 4, &a->bytes);
}

static MPI_T_event_registration Register(const char* name, void* object,
                                         MPI_T_event_cb_function* callback,
                                         void* user_data) {
  int index = -1;
  MPI_CHECK(MPI_T_event_get_index(name, &index));
  MPI_T_event_registration registration;
  MPI_CHECK(
      MPI_T_event_handle_alloc(index, object, MPI_INFO_NULL, &registration));
  MPI_CHECK(MPI_T_event_register_callback(registration,
                                          MPI_T_CB_REQUIRE_THREAD_SAFE,
                                          MPI_INFO_NULL, user_data, callback));
  return registration;
}

static void CheckSeen(const struct Seen* seen, const char* what,
                      int first_length, int step) {
  CHECK(seen->count == kMessages, "%s: %d events, want %d", what, seen->count,
        kMessages);
  CHECK(seen->collective_count == 0, "%s: %d collective events", what,
        seen->collective_count);
  for (int i = 0; i < kMessages; ++i) {
    CHECK(seen->source[i] == 1 && seen->tag[i] == kTag0 + i,
          "%s %d: source %d tag %d, want 1 and %d", what, i, seen->source[i],
          seen->tag[i], kTag0 + i);
    CHECK(seen->bytes[i] == kInts * sizeof(int), "%s %d: %llu bytes", what, i,
          seen->bytes[i]);
    CHECK(seen->length[i] == (unsigned long long)(first_length + step * i),
          "%s %d: queue length %llu, want %d", what, i, seen->length[i],
          first_length + step * i);
  }
}

static int Expected(int tag, int i) { return tag * 100 + i; }

static void UnexpectedEvents(MPI_Comm comm, int rank) {
  if (rank == 1) {
    int go = 0;
    MPI_CHECK(MPI_Recv(&go, 1, MPI_INT, 0, kGoTag, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE));
    for (int m = 0; m < kMessages; ++m) {
      int data[kInts];
      for (int i = 0; i < kInts; ++i) data[i] = Expected(kTag0 + m, i);
      MPI_CHECK(MPI_Send(data, kInts, MPI_INT, 0, kTag0 + m, comm));
    }
    return;
  }
  MPI_T_event_registration on_enqueue =
      Register("unexp_message_enqueued", &comm, OnUnexpected, &enqueued);
  MPI_T_event_registration on_dequeue =
      Register("unexp_message_dequeued", &comm, OnUnexpected, &dequeued);
  int go = 1;
  MPI_CHECK(MPI_Send(&go, 1, MPI_INT, 1, kGoTag, MPI_COMM_WORLD));
  MPI_Status status;
  MPI_CHECK(MPI_Probe(1, kTag0 + kMessages - 1, comm, &status));
  CheckSeen(&enqueued, "enqueued", 1, 1);
  CHECK(dequeued.count == 0, "dequeued %d before any receive", dequeued.count);
  for (int m = 0; m < kMessages; ++m) {
    int data[kInts];
    memset(data, 0xff, sizeof data);
    MPI_CHECK(MPI_Recv(data, kInts, MPI_INT, 1, kTag0 + m, comm, &status));
    for (int i = 0; i < kInts; ++i) {
      CHECK(data[i] == Expected(kTag0 + m, i), "message %d int %d: %d", m, i,
            data[i]);
    }
  }
  CheckSeen(&dequeued, "dequeued", kMessages - 1, -1);
  CHECK(enqueued.count == kMessages, "enqueued moved to %d", enqueued.count);
  MPI_CHECK(MPI_T_event_handle_free(on_enqueue, NULL, NULL));
  MPI_CHECK(MPI_T_event_handle_free(on_dequeue, NULL, NULL));
}

/* A handle bound to a request; counters count from its allocation. */
static MPI_T_pvar_handle Bind(MPI_T_pvar_session session, const char* name,
                              int var_class, MPI_Request* request) {
  int index = -1, count = 0;
  MPI_CHECK(MPI_T_pvar_get_index(name, var_class, &index));
  MPI_T_pvar_handle handle;
  MPI_CHECK(MPI_T_pvar_handle_alloc(session, index, request, &handle, &count));
  CHECK(count == 1, "%s count %d", name, count);
  return handle;
}

static unsigned long long Read(MPI_T_pvar_session session,
                               MPI_T_pvar_handle handle) {
  unsigned long long value = 0;
  MPI_CHECK(MPI_T_pvar_read(session, handle, &value));
  return value;
}

/* Every user partition of every round arrived once, in `per_round` events
 * a round (runs of whole partitions). */
static void CheckArrivals(int per_round) {
  CHECK(arrival_count == per_round * kRounds,
        "partition_arrived: %d events, want %d", arrival_count,
        per_round * kRounds);
  int seen[kRounds + 1][kPartitions];
  memset(seen, 0, sizeof seen);
  for (int e = 0; e < arrival_count && e < kMaxArrivals; ++e) {
    const struct Arrival* a = &arrivals[e];
    CHECK(a->round >= 1 && a->round <= kRounds, "event %d: round %llu", e,
          a->round);
    CHECK(a->first >= 0 && a->first <= a->last && a->last < kPartitions,
          "event %d: partitions %lld..%lld", e, (long long)a->first,
          (long long)a->last);
    CHECK(a->bytes == (a->last - a->first + 1) * kPartitionInts * sizeof(int),
          "event %d: %llu bytes for partitions %lld..%lld", e, a->bytes,
          (long long)a->first, (long long)a->last);
    if (per_round == kPartitions) {
      CHECK(a->first == a->last && a->transport_partition == a->first,
            "event %d: transport partition %lld, partitions %lld..%lld", e,
            (long long)a->transport_partition, (long long)a->first,
            (long long)a->last);
    }
    for (int64_t p = a->first; p <= a->last; ++p) ++seen[a->round][p];
  }
  for (int r = 1; r <= kRounds; ++r) {
    for (int p = 0; p < kPartitions; ++p) {
      CHECK(seen[r][p] == 1, "round %d partition %d arrived %d times", r, p,
            seen[r][p]);
    }
  }
}

/* `per_round`: the transport partitions the sender's aggregator makes of
 * kPartitions (kPartitions with MINIMPI_PART_AGGR=none). */
static void PartitionEvents(int rank, int per_round) {
  int buffer[kPartitions * kPartitionInts];
  MPI_Request request;
  if (rank == 1) {
    MPI_CHECK(MPI_Psend_init(buffer, kPartitions, kPartitionInts, MPI_INT, 0, 5,
                             MPI_COMM_WORLD, MPI_INFO_NULL, &request));
  } else {
    MPI_CHECK(MPI_Precv_init(buffer, kPartitions, kPartitionInts, MPI_INT, 1, 5,
                             MPI_COMM_WORLD, MPI_INFO_NULL, &request));
  }
  MPI_T_pvar_session session;
  MPI_CHECK(MPI_T_pvar_session_create(&session));
  MPI_T_event_registration on_arrival = NULL;
  MPI_T_pvar_handle arrived = NULL, writes = NULL, last = NULL;
  MPI_T_pvar_handle rounds =
      Bind(session, "part_rounds", MPI_T_PVAR_CLASS_COUNTER, &request);
  if (rank == 0) {
    on_arrival =
        Register("partition_arrived", &request, OnPartitionArrived, NULL);
    arrived = Bind(session, "part_partitions_arrived", MPI_T_PVAR_CLASS_COUNTER,
                   &request);
  } else {
    writes = Bind(session, "part_writes", MPI_T_PVAR_CLASS_COUNTER, &request);
    last = Bind(session, "part_writes_last_round", MPI_T_PVAR_CLASS_LEVEL,
                &request);
  }
  for (int round = 0; round < kRounds; ++round) {
    if (rank == 0) memset(buffer, 0xff, sizeof buffer);
    MPI_CHECK(MPI_Start(&request));
    if (rank == 1) {
      for (int p = 0; p < kPartitions; ++p) {
        for (int i = 0; i < kPartitionInts; ++i) {
          buffer[p * kPartitionInts + i] = Expected(round * 10 + p, i);
        }
        MPI_CHECK(MPI_Pready(p, request));
      }
    }
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    if (rank == 0) {
      for (int p = 0; p < kPartitions; ++p) {
        for (int i = 0; i < kPartitionInts; ++i) {
          CHECK(buffer[p * kPartitionInts + i] == Expected(round * 10 + p, i),
                "round %d partition %d int %d: %d", round, p, i,
                buffer[p * kPartitionInts + i]);
        }
      }
    }
  }
  if (rank == 0) {
    CheckArrivals(per_round);
    CHECK(Read(session, arrived) == kPartitions * kRounds,
          "part_partitions_arrived: %llu, want %d", Read(session, arrived),
          kPartitions * kRounds);
    CHECK(Read(session, rounds) == 0, "part_rounds on a receive: %llu",
          Read(session, rounds));
    MPI_CHECK(MPI_T_event_handle_free(on_arrival, NULL, NULL));
  } else {
    /* A round closes when the next one starts: kRounds - 1 so far. */
    CHECK(Read(session, rounds) == kRounds - 1, "part_rounds %llu, want %d",
          Read(session, rounds), kRounds - 1);
    CHECK(
        Read(session, writes) == (unsigned long long)(kRounds - 1) * per_round,
        "part_writes %llu, want %d", Read(session, writes),
        (kRounds - 1) * per_round);
    CHECK(Read(session, last) == (unsigned long long)per_round,
          "part_writes_last_round %llu, want %d", Read(session, last),
          per_round);
  }
  MPI_CHECK(MPI_T_pvar_session_free(&session));
  MPI_CHECK(MPI_Request_free(&request));
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank = 0, size = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "run with 2 ranks, not %d", size);
  MPI_Comm comm;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  UnexpectedEvents(comm, rank);
  const int per_round = argc > 1 ? atoi(argv[1]) : kPartitions;
  CHECK(per_round >= 1 && per_round <= kPartitions, "bad argument %s", argv[1]);
  PartitionEvents(rank, per_round);
  MPI_CHECK(MPI_Comm_free(&comm));
  MPI_CHECK(MPI_Finalize());
  MPI_CHECK(MPI_T_finalize());
  if (rank == 0) printf("mpit_events: OK\n");
  return 0;
}
