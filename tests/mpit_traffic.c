/* What the VCIs, collectives and one-sided calls show a tool through MPI_T,
 * checked against traffic of known size (2 ranks on one node):
 *   - rank 0 sends K messages of B bytes to rank 1: the shm (or argv[1]'s
 *     link: tcp, ib) messages and
 *     bytes sent summed over the VCIs move by exactly K and K*B on rank 0,
 *     messages received by K on rank 1, nothing else moves; self-sends move
 *     the self counters the same way;
 *   - bcasts on a new communicator with MINIMPI_COLL_BCAST forcing an
 *     algorithm: coll_algorithm's bcast element names it, coll_calls moves
 *     by the calls made; allreduces forced onto the node path
 *     (MINIMPI_COLL_ALLREDUCE=shm) read "shm" and move coll_node_path_calls;
 *   - on a window, P puts and G gets (and one of each other kind) move
 *     rma_operations by exactly that, at the origin only; a lock request
 *     the target holds back moves rma_lock_waits by one;
 *   - a receive that must sleep (MINIMPI_WAIT_POLICY=sleep, no spin, the
 *     sender 50 ms late) raises waiter_slept/waiter_woke once per sleep the
 *     vci_waiter_sleeps counter counts, and their microseconds add up to
 *     vci_waiter_sleep_time;
 *   - with argv[1] "naps", only this: MPI_Parrived called in a loop on one
 *     late partition naps on the doorbell (vci_waiter_sleeps moves) where
 *     ranks and threads outnumber the cores (OMP_NUM_THREADS=100000 says
 *     so); a loop over two partitions never naps.
 * Every message's bytes are checked too. Run with the settings above (see
 * tests/tests.bzl). */
/* nanosleep is POSIX, not C11. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank;
static int failures;
static MPI_T_pvar_session session;

#define CHECK(call)                                                      \
  do {                                                                   \
    int check_error = (call);                                            \
    if (check_error != MPI_SUCCESS) {                                    \
      fprintf(stderr, "rank %d: %s failed: %d (line %d)\n", rank, #call, \
              check_error, __LINE__);                                    \
      MPI_Abort(MPI_COMM_WORLD, 1);                                      \
    }                                                                    \
  } while (0)

#define EXPECT(condition, ...)                               \
  do {                                                       \
    if (!(condition)) {                                      \
      fprintf(stderr, "rank %d: line %d: ", rank, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                          \
      fprintf(stderr, "\n");                                 \
      ++failures;                                            \
    }                                                        \
  } while (0)

enum { kMaxElements = 64 };

typedef struct {
  MPI_T_pvar_handle handle;
  int count;
  int index;
} Var;

/* A handle on the variable `name` of class `var_class` bound to `object`
 * (NULL: no object), started where the variable allows it. */
static Var Open(const char* name, int var_class, void* object) {
  Var v;
  CHECK(MPI_T_pvar_get_index(name, var_class, &v.index));
  CHECK(MPI_T_pvar_handle_alloc(session, v.index, object, &v.handle, &v.count));
  if (v.count < 1 || v.count > kMaxElements) {
    fprintf(stderr, "rank %d: %s has %d elements\n", rank, name, v.count);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int continuous = 1;
  CHECK(MPI_T_pvar_get_info(v.index, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL, NULL, NULL, &continuous, NULL));
  if (!continuous) CHECK(MPI_T_pvar_start(session, v.handle));
  return v;
}

static void Close(Var* v) {
  CHECK(MPI_T_pvar_handle_free(session, &v->handle));
}

static void ReadCounts(Var* v, unsigned long long* values) {
  CHECK(MPI_T_pvar_read(session, v->handle, values));
}

/* A counter summed over its elements (every VCI). */
static unsigned long long Sum(Var* v) {
  unsigned long long values[kMaxElements];
  ReadCounts(v, values);
  unsigned long long sum = 0;
  for (int i = 0; i < v->count; ++i) sum += values[i];
  return sum;
}

static double SumSeconds(Var* v) {
  double values[kMaxElements];
  CHECK(MPI_T_pvar_read(session, v->handle, values));
  double sum = 0;
  for (int i = 0; i < v->count; ++i) sum += values[i];
  return sum;
}

static void SleepMs(long ms) {
  struct timespec delay = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&delay, NULL);
}

static unsigned char Pattern(int message, int byte) {
  return (unsigned char)(message * 31 + byte * 7 + 3);
}

/* Sends from rank `from` to rank `to` (the same rank: self-sends) of
 * `messages` messages of `bytes` bytes on a quiet communicator, and what
 * the `link` counters say of them. */
static void CheckTraffic(const char* link, int from, int to, int messages,
                         int bytes) {
  char name[64];
  snprintf(name, sizeof name, "vci_%s_messages_sent", link);
  Var sent = Open(name, MPI_T_PVAR_CLASS_COUNTER, NULL);
  snprintf(name, sizeof name, "vci_%s_bytes_sent", link);
  Var bytes_sent = Open(name, MPI_T_PVAR_CLASS_COUNTER, NULL);
  snprintf(name, sizeof name, "vci_%s_messages_received", link);
  Var received = Open(name, MPI_T_PVAR_CLASS_COUNTER, NULL);

  MPI_Comm quiet;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &quiet));
  unsigned char* buffer = malloc((size_t)messages * bytes);
  /* The counting windows hold only messages whose number is known, over
   * any transport: a barrier may send messages (point-to-point off the
   * node path), so none runs inside a window. The receiver reads first,
   * then tells the sender to start (one empty message, in the receiver's
   * window); the sender reads, waits for that word, sends; the receiver
   * reads after its last receive and only then tells the sender it may go
   * on, so nothing of the next phase reaches a receiver still counting.
   * The sender may count the start word before or inside its window. */
  enum { kStart = 1000, kDone = 1001 };
  const int paired = from != to;
  CHECK(MPI_Barrier(quiet));
  const unsigned long long sent_before = Sum(&sent);
  const unsigned long long bytes_before = Sum(&bytes_sent);
  const unsigned long long received_before = Sum(&received);
  if (paired && rank == to) {
    CHECK(MPI_Send(NULL, 0, MPI_BYTE, from, kStart, quiet));
  }
  if (rank == from) {
    if (paired) {
      CHECK(MPI_Recv(NULL, 0, MPI_BYTE, to, kStart, quiet, MPI_STATUS_IGNORE));
    }
    MPI_Request requests[64];
    for (int m = 0; m < messages; ++m) {
      unsigned char* message = buffer + (size_t)m * bytes;
      for (int b = 0; b < bytes; ++b) message[b] = Pattern(m, b);
      CHECK(MPI_Isend(message, bytes, MPI_BYTE, to, m, quiet, &requests[m]));
    }
    if (!paired) {
      unsigned char* in = malloc(bytes);
      for (int m = 0; m < messages; ++m) {
        CHECK(MPI_Recv(in, bytes, MPI_BYTE, from, m, quiet, MPI_STATUS_IGNORE));
        for (int b = 0; b < bytes; ++b) {
          EXPECT(in[b] == Pattern(m, b), "self message %d byte %d", m, b);
        }
      }
      free(in);
    }
    CHECK(MPI_Waitall(messages, requests, MPI_STATUSES_IGNORE));
  } else if (rank == to) {
    for (int m = 0; m < messages; ++m) {
      CHECK(
          MPI_Recv(buffer, bytes, MPI_BYTE, from, m, quiet, MPI_STATUS_IGNORE));
      for (int b = 0; b < bytes; ++b) {
        EXPECT(buffer[b] == Pattern(m, b), "message %d byte %d", m, b);
      }
    }
  }
  const unsigned long long sent_delta = Sum(&sent) - sent_before;
  const unsigned long long bytes_delta = Sum(&bytes_sent) - bytes_before;
  const unsigned long long received_delta = Sum(&received) - received_before;
  if (paired && rank == to) {
    CHECK(MPI_Send(NULL, 0, MPI_BYTE, from, kDone, quiet));
  } else if (paired && rank == from) {
    CHECK(MPI_Recv(NULL, 0, MPI_BYTE, to, kDone, quiet, MPI_STATUS_IGNORE));
  }
  CHECK(MPI_Barrier(quiet));
  /* The receiver's start word is one message of no payload. */
  const unsigned long long expect_sent = rank == from           ? messages
                                         : paired && rank == to ? 1
                                                                : 0;
  const unsigned long long expect_bytes =
      rank == from ? (unsigned long long)messages * bytes : 0;
  const unsigned long long expect_received = rank == to ? messages : 0;
  EXPECT(sent_delta == expect_sent, "%s messages sent moved by %llu, not %llu",
         link, sent_delta, expect_sent);
  EXPECT(bytes_delta == expect_bytes, "%s bytes sent moved by %llu, not %llu",
         link, bytes_delta, expect_bytes);
  if (paired && rank == from) {
    EXPECT(received_delta <= 1,
           "%s messages received moved by %llu, not 0 or 1 (the start word)",
           link, received_delta);
  } else {
    EXPECT(received_delta == expect_received,
           "%s messages received moved by %llu, not %llu", link, received_delta,
           expect_received);
  }
  free(buffer);
  CHECK(MPI_Comm_free(&quiet));
  Close(&sent);
  Close(&bytes_sent);
  Close(&received);
}

/* The name of value `value` of the enumeration of variable `index`. */
static void EnumName(int index, int value, char* name, int name_size) {
  MPI_T_enum enumtype;
  CHECK(MPI_T_pvar_get_info(index, NULL, NULL, NULL, NULL, NULL, &enumtype,
                            NULL, NULL, NULL, NULL, NULL, NULL));
  int items;
  CHECK(MPI_T_enum_get_info(enumtype, &items, NULL, NULL));
  snprintf(name, name_size, "(value %d not in the enumeration)", value);
  for (int i = 0; i < items; ++i) {
    int item_value;
    char item_name[64];
    int length = sizeof item_name;
    CHECK(MPI_T_enum_get_item(enumtype, i, &item_value, item_name, &length));
    if (item_value == value) snprintf(name, name_size, "%s", item_name);
  }
}

enum { kBcast = 1, kAllreduce = 3, kKinds = 16 };

static void CheckCollectives(void) {
  const char* forced_bcast = getenv("MINIMPI_COLL_BCAST");
  const char* forced_allreduce = getenv("MINIMPI_COLL_ALLREDUCE");
  if (forced_bcast == NULL || forced_allreduce == NULL) {
    fprintf(stderr, "set MINIMPI_COLL_BCAST and MINIMPI_COLL_ALLREDUCE\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm comm;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  Var algorithm = Open("coll_algorithm", MPI_T_PVAR_CLASS_STATE, &comm);
  Var calls = Open("coll_calls", MPI_T_PVAR_CLASS_COUNTER, &comm);
  Var node_calls =
      Open("coll_node_path_calls", MPI_T_PVAR_CLASS_COUNTER, &comm);
  EXPECT(algorithm.count == kKinds && calls.count == kKinds &&
             node_calls.count == kKinds,
         "%d, %d and %d elements, not one per collective kind (%d)",
         algorithm.count, calls.count, node_calls.count, kKinds);
  int states[kMaxElements];
  char name[64];
  CHECK(MPI_T_pvar_read(session, algorithm.handle, states));
  EnumName(algorithm.index, states[kBcast], name, sizeof name);
  EXPECT(strcmp(name, "none") == 0, "bcast's algorithm before any: %s", name);
  unsigned long long calls_before[kMaxElements], node_before[kMaxElements];
  ReadCounts(&calls, calls_before);
  ReadCounts(&node_calls, node_before);

  enum { kBcasts = 5, kAllreduces = 3, kInts = 64 };
  int data[kInts];
  for (int call = 0; call < kBcasts; ++call) {
    for (int i = 0; i < kInts; ++i) data[i] = rank == 0 ? call * 1000 + i : -1;
    CHECK(MPI_Bcast(data, kInts, MPI_INT, 0, comm));
    for (int i = 0; i < kInts; ++i) {
      EXPECT(data[i] == call * 1000 + i, "bcast %d item %d: %d", call, i,
             data[i]);
    }
  }
  MPI_Request request;
  for (int i = 0; i < kInts; ++i) data[i] = rank == 0 ? 7 * i : -1;
  CHECK(MPI_Ibcast(data, kInts, MPI_INT, 0, comm, &request));
  CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  for (int i = 0; i < kInts; ++i) EXPECT(data[i] == 7 * i, "ibcast item %d", i);
  for (int call = 0; call < kAllreduces; ++call) {
    int in[4], out[4];
    for (int i = 0; i < 4; ++i) in[i] = (rank + 1) * (call + i);
    CHECK(MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < 4; ++i) {
      EXPECT(out[i] == 3 * (call + i), "allreduce %d item %d: %d", call, i,
             out[i]);
    }
  }

  unsigned long long calls_after[kMaxElements], node_after[kMaxElements];
  ReadCounts(&calls, calls_after);
  ReadCounts(&node_calls, node_after);
  CHECK(MPI_T_pvar_read(session, algorithm.handle, states));
  EnumName(algorithm.index, states[kBcast], name, sizeof name);
  EXPECT(strcmp(name, forced_bcast) == 0, "bcast ran %s, not %s", name,
         forced_bcast);
  EnumName(algorithm.index, states[kAllreduce], name, sizeof name);
  EXPECT(strcmp(name, forced_allreduce) == 0, "allreduce ran %s, not %s", name,
         forced_allreduce);
  for (int kind = 0; kind < kKinds; ++kind) {
    const unsigned long long expect_calls = kind == kBcast       ? kBcasts + 1
                                            : kind == kAllreduce ? kAllreduces
                                                                 : 0;
    const unsigned long long expect_node =
        kind == kAllreduce && strcmp(forced_allreduce, "shm") == 0 ? kAllreduces
                                                                   : 0;
    EXPECT(calls_after[kind] - calls_before[kind] == expect_calls,
           "kind %d: %llu calls, not %llu", kind,
           calls_after[kind] - calls_before[kind], expect_calls);
    EXPECT(node_after[kind] - node_before[kind] == expect_node,
           "kind %d: %llu node-path calls, not %llu", kind,
           node_after[kind] - node_before[kind], expect_node);
  }
  Close(&algorithm);
  Close(&calls);
  Close(&node_calls);
  CHECK(MPI_Comm_free(&comm));
}

enum { kPut, kGet, kAccumulate, kGetAccumulate, kFetchAndOp, kCas, kOps = 6 };

static void CheckWindow(void) {
  enum { kInts = 64, kPuts = 7, kGets = 5 };
  int* memory;
  CHECK(MPI_Alloc_mem(kInts * sizeof(int), MPI_INFO_NULL, &memory));
  for (int i = 0; i < kInts; ++i) memory[i] = rank * 1000 + i;
  MPI_Win win;
  CHECK(MPI_Win_create(memory, kInts * sizeof(int), sizeof(int), MPI_INFO_NULL,
                       MPI_COMM_WORLD, &win));
  Var operations = Open("rma_operations", MPI_T_PVAR_CLASS_COUNTER, &win);
  Var lock_waits = Open("rma_lock_waits", MPI_T_PVAR_CLASS_COUNTER, &win);
  Var lock_time = Open("rma_lock_wait_time", MPI_T_PVAR_CLASS_TIMER, &win);
  EXPECT(operations.count == kOps, "rma_operations has %d elements",
         operations.count);
  unsigned long long before[kMaxElements], after[kMaxElements];
  ReadCounts(&operations, before);

  int puts[kPuts], gets[kGets];
  CHECK(MPI_Win_fence(0, win));
  if (rank == 0) {
    for (int i = 0; i < kPuts; ++i) {
      puts[i] = 5000 + i;
      CHECK(MPI_Put(&puts[i], 1, MPI_INT, 1, i, 1, MPI_INT, win));
    }
    for (int i = 0; i < kGets; ++i) {
      CHECK(MPI_Get(&gets[i], 1, MPI_INT, 1, 32 + i, 1, MPI_INT, win));
    }
  }
  CHECK(MPI_Win_fence(0, win));
  int one = 1, old_accumulate = -1, old_fetch = -1, old_swap = -1;
  int compare = 1000 + 50, swap_in = 77;
  if (rank == 0) {
    CHECK(MPI_Accumulate(&one, 1, MPI_INT, 1, 40, 1, MPI_INT, MPI_SUM, win));
    CHECK(MPI_Get_accumulate(&one, 1, MPI_INT, &old_accumulate, 1, MPI_INT, 1,
                             41, 1, MPI_INT, MPI_SUM, win));
    CHECK(MPI_Fetch_and_op(&one, &old_fetch, MPI_INT, 1, 42, MPI_SUM, win));
    CHECK(MPI_Compare_and_swap(&swap_in, &compare, &old_swap, MPI_INT, 1, 50,
                               win));
  }
  CHECK(MPI_Win_fence(0, win));
  ReadCounts(&operations, after);
  if (rank == 0) {
    for (int i = 0; i < kGets; ++i) {
      EXPECT(gets[i] == 1000 + 32 + i, "get %d: %d", i, gets[i]);
    }
    EXPECT(old_accumulate == 1041 && old_fetch == 1042 && old_swap == 1050,
           "fetched %d, %d, %d", old_accumulate, old_fetch, old_swap);
  } else {
    for (int i = 0; i < kPuts; ++i) {
      EXPECT(memory[i] == 5000 + i, "put %d: %d", i, memory[i]);
    }
    EXPECT(memory[40] == 1041 && memory[41] == 1042 && memory[42] == 1043 &&
               memory[50] == 77,
           "accumulated %d %d %d, swapped %d", memory[40], memory[41],
           memory[42], memory[50]);
  }
  const unsigned long long expected[kOps] = {kPuts, kGets, 1, 1, 1, 1};
  for (int kind = 0; kind < kOps; ++kind) {
    const unsigned long long expect = rank == 0 ? expected[kind] : 0;
    EXPECT(after[kind] - before[kind] == expect,
           "operation kind %d moved by %llu, not %llu", kind,
           after[kind] - before[kind], expect);
  }

  /* Rank 1 holds its own window's lock while rank 0 asks for it: rank 0's
   * request waits in rank 1's queue (the target's progress thread takes it
   * in while rank 1 sleeps), and its grant says so. */
  unsigned long long waits_before, waits_after;
  ReadCounts(&lock_waits, &waits_before);
  double time_before, time_after;
  CHECK(MPI_T_pvar_read(session, lock_time.handle, &time_before));
  if (rank == 1) CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
  CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) {
    CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
    int value = 4242;
    CHECK(MPI_Put(&value, 1, MPI_INT, 1, 60, 1, MPI_INT, win));
    CHECK(MPI_Win_unlock(1, win));
  } else {
    SleepMs(200);
    CHECK(MPI_Win_unlock(1, win));
  }
  CHECK(MPI_Barrier(MPI_COMM_WORLD));
  ReadCounts(&lock_waits, &waits_after);
  CHECK(MPI_T_pvar_read(session, lock_time.handle, &time_after));
  const unsigned long long expect_waits = rank == 0 ? 1 : 0;
  EXPECT(waits_after - waits_before == expect_waits,
         "lock waits moved by %llu, not %llu", waits_after - waits_before,
         expect_waits);
  if (rank == 0) {
    EXPECT(time_after - time_before > 0.05,
           "waited %.6f s for a lock held 0.2 s", time_after - time_before);
  } else {
    EXPECT(memory[60] == 4242, "put under the lock: %d", memory[60]);
  }
  Close(&operations);
  Close(&lock_waits);
  Close(&lock_time);
  CHECK(MPI_Win_free(&win));
  CHECK(MPI_Free_mem(memory));
}

/* What the waiter events' callbacks saw. */
static volatile int slept_events, woke_events;
static volatile int wrong_vci;
static volatile unsigned long long woke_microseconds;
static int num_vcis;

static void OnSlept(MPI_T_event_instance instance,
                    MPI_T_event_registration registration,
                    MPI_T_cb_safety safety, void* user_data) {
  (void)registration, (void)safety, (void)user_data;
  int vci = -1;
  if (MPI_T_event_read(instance, 0, &vci) != MPI_SUCCESS || vci < 0 ||
      vci >= num_vcis) {
    wrong_vci = 1;
  }
  ++slept_events;
}

static void OnWoke(MPI_T_event_instance instance,
                   MPI_T_event_registration registration,
                   MPI_T_cb_safety safety, void* user_data) {
  (void)registration, (void)safety, (void)user_data;
  int vci = -1;
  unsigned long long microseconds = 0;
  if (MPI_T_event_read(instance, 0, &vci) != MPI_SUCCESS || vci < 0 ||
      vci >= num_vcis ||
      MPI_T_event_read(instance, 1, &microseconds) != MPI_SUCCESS) {
    wrong_vci = 1;
  }
  woke_microseconds += microseconds;
  ++woke_events;
}

static MPI_T_event_registration Listen(const char* name,
                                       MPI_T_event_cb_function* callback) {
  int index;
  CHECK(MPI_T_event_get_index(name, &index));
  MPI_T_event_registration registration;
  CHECK(MPI_T_event_handle_alloc(index, NULL, MPI_INFO_NULL, &registration));
  /* Safe anywhere: delivered at once, from inside the wait. */
  CHECK(MPI_T_event_register_callback(registration,
                                      MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE,
                                      MPI_INFO_NULL, NULL, callback));
  return registration;
}

static void CheckSleep(void) {
  Var sleeps = Open("vci_waiter_sleeps", MPI_T_PVAR_CLASS_COUNTER, NULL);
  Var wakeups = Open("vci_waiter_wakeups", MPI_T_PVAR_CLASS_COUNTER, NULL);
  Var asleep = Open("vci_waiter_sleep_time", MPI_T_PVAR_CLASS_TIMER, NULL);
  num_vcis = sleeps.count;
  MPI_T_event_registration slept = Listen("waiter_slept", OnSlept);
  MPI_T_event_registration woke = Listen("waiter_woke", OnWoke);
  CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const unsigned long long sleeps_before = Sum(&sleeps);
  const unsigned long long wakeups_before = Sum(&wakeups);
  const double asleep_before = SumSeconds(&asleep);
  slept_events = woke_events = 0;
  woke_microseconds = 0;
  unsigned char message[100];
  if (rank == 0) {
    SleepMs(50);
    for (int b = 0; b < 100; ++b) message[b] = Pattern(9, b);
    CHECK(MPI_Send(message, 100, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
  } else {
    CHECK(MPI_Recv(message, 100, MPI_BYTE, 0, 9, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE));
    for (int b = 0; b < 100; ++b) {
      EXPECT(message[b] == Pattern(9, b), "late message byte %d", b);
    }
  }
  const int slept_seen = slept_events, woke_seen = woke_events;
  const unsigned long long microseconds_seen = woke_microseconds;
  const unsigned long long sleeps_delta = Sum(&sleeps) - sleeps_before;
  const unsigned long long wakeups_delta = Sum(&wakeups) - wakeups_before;
  const double asleep_delta = SumSeconds(&asleep) - asleep_before;
  if (rank == 1) {
    EXPECT(sleeps_delta >= 1, "waited 50 ms without sleeping");
    EXPECT(asleep_delta > 0.01 && asleep_delta < 10,
           "slept %.6f s waiting 50 ms", asleep_delta);
  }
  EXPECT(wakeups_delta <= sleeps_delta, "%llu wake-ups of %llu sleeps",
         wakeups_delta, sleeps_delta);
  EXPECT((unsigned long long)slept_seen == sleeps_delta &&
             (unsigned long long)woke_seen == sleeps_delta,
         "%d waiter_slept and %d waiter_woke events for %llu sleeps",
         slept_seen, woke_seen, sleeps_delta);
  EXPECT(!wrong_vci, "an event named no VCI of this process");
  /* Each event's microseconds are its sleep's nanoseconds cut down. */
  const double event_seconds = microseconds_seen * 1e-6;
  EXPECT(event_seconds <= asleep_delta + 1e-9 &&
             event_seconds >= asleep_delta - woke_seen * 1e-6 - 1e-9,
         "events add up to %.6f s, the timer to %.6f s", event_seconds,
         asleep_delta);
  CHECK(MPI_T_event_handle_free(slept, NULL, NULL));
  CHECK(MPI_T_event_handle_free(woke, NULL, NULL));
  Close(&sleeps);
  Close(&wakeups);
  Close(&asleep);
}

/* Round 0: rank 1 polls partition 0 alone until it arrives, 30 ms late:
 * a wait in all but name, so it naps. Round 1: it polls both partitions
 * in turn until either arrives: it wants each at once, so it never naps. */
static void CheckPollNaps(void) {
  enum { kPartitions = 2, kBytes = 64 };
  unsigned char data[kPartitions * kBytes];
  Var sleeps = Open("vci_waiter_sleeps", MPI_T_PVAR_CLASS_COUNTER, NULL);
  MPI_Request request;
  if (rank == 0) {
    CHECK(MPI_Psend_init(data, kPartitions, kBytes, MPI_BYTE, 1, 12,
                         MPI_COMM_WORLD, MPI_INFO_NULL, &request));
  } else {
    CHECK(MPI_Precv_init(data, kPartitions, kBytes, MPI_BYTE, 0, 12,
                         MPI_COMM_WORLD, MPI_INFO_NULL, &request));
  }
  for (int round = 0; round < 2; ++round) {
    CHECK(MPI_Start(&request));
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
      SleepMs(30);
      for (int b = 0; b < kPartitions * kBytes; ++b) {
        data[b] = Pattern(20 + round, b);
      }
      for (int p = 0; p < kPartitions; ++p) CHECK(MPI_Pready(p, request));
    } else {
      const unsigned long long before = Sum(&sleeps);
      int arrived = 0;
      for (int polls = 0; !arrived; ++polls) {
        const int partition = round == 0 ? 0 : polls % kPartitions;
        CHECK(MPI_Parrived(request, partition, &arrived));
      }
      const unsigned long long naps = Sum(&sleeps) - before;
      if (round == 0) {
        EXPECT(naps >= 1, "polled one partition 30 ms without a nap");
      } else {
        EXPECT(naps == 0, "%llu naps polling two partitions in turn", naps);
      }
    }
    CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    if (rank == 1) {
      for (int b = 0; b < kPartitions * kBytes; ++b) {
        EXPECT(data[b] == Pattern(20 + round, b), "round %d byte %d", round, b);
      }
    }
  }
  CHECK(MPI_Request_free(&request));
  Close(&sleeps);
}

int main(int argc, char** argv) {
  int provided;
  CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "mpit_traffic needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  CHECK(MPI_T_pvar_session_create(&session));
  if (argc > 1 && strcmp(argv[1], "naps") == 0) {
    CheckPollNaps();
  } else {
    /* The link between the two ranks: shm unless the job was told to use
     * another transport (argv[1]: tcp, ib). */
    CheckTraffic(argc > 1 ? argv[1] : "shm", 0, 1, 20, 200);
    CheckTraffic("self", 0, 0, 12, 150);
    CheckTraffic("self", 1, 1, 3, 10);
    CheckCollectives();
    CheckWindow();
    CheckSleep();
  }
  CHECK(MPI_T_pvar_session_free(&session));
  int all_failures;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) printf("mpit_traffic: all checks pass\n");
  MPI_Finalize();
  MPI_T_finalize();
  return all_failures == 0 ? 0 : 1;
}
