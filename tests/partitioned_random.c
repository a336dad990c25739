/* Randomized partitioned communication against a reference, under every
 * aggregator: both ranks draw the same random trials (send and receive
 * partition counts whose totals agree, an aggregator, sometimes a fixed
 * transport partition count, strided or contiguous buffers on either side,
 * the order in which threads mark partitions ready, and a held-back subset).
 *
 * Each round the sender's threads mark the early partitions ready; the
 * receiver polls MPI_Parrived and, the moment a partition reports arrived,
 * checks every byte of it against the reference pattern (so a flag that is
 * true too early fails); no receive partition fed by a held-back send
 * partition may report arrived. It then tells the sender to mark the rest, and checks the whole buffer (holes of strided
 * types included) after MPI_Wait. The library aborts if any bytes arrive
 * twice in a round, so "exactly once" is checked too.
 *
 * Usage: partitioned_random [trials] [seed] [verbose]    (2 ranks) */
#define _GNU_SOURCE  /* pthread barriers under -std=c11 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#if MPI_VERSION >= 4

#define kThreads 4
#define kHole (-7)

static const char* const kAggregators[] = {"none",  "size",  "table",
                                           "ploggp", "timer", "adaptive"};

static uint64_t rng_state;
static uint64_t Next(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int64_t Below(int64_t n) { return (int64_t)(Next() % (uint64_t)n); }

static int Pattern(int trial, int round, int64_t element) {
  return (int)((element * 2654435761u) ^ (uint64_t)(trial * 131 + round * 7));
}

static void Fail(const char* what, int trial, int round, int64_t where,
                 int expected, int got) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr,
          "partitioned_random: rank %d trial %d round %d: %s at element "
          "%lld: expected %d, got %d\n",
          rank, trial, round, what, (long long)where, expected, got);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

struct Trial {
  int index;
  int64_t send_partitions, receive_partitions, total;
  int strided_send, strided_receive;
  const char* aggregator;
  int forced;  /* transport partitions, 0: the aggregator's choice */
  int rounds;
  int64_t* order;  /* the order partitions are marked ready */
  char* held;      /* per send partition: marked only after "go" */
};

struct Sender {
  struct Trial* trial;
  MPI_Request request;
  pthread_barrier_t* barrier;
  int thread;
  int rounds;
};

/* Each thread marks every kThreads-th entry of the order: the early ones
 * between the first two barriers, the held ones after the third. */
static void* SenderThread(void* argument) {
  struct Sender* s = (struct Sender*)argument;
  struct Trial* t = s->trial;
  for (int round = 0; round < s->rounds; ++round) {
    pthread_barrier_wait(s->barrier); /* started */
    for (int64_t i = s->thread; i < t->send_partitions; i += kThreads) {
      const int64_t p = t->order[i];
      if (!t->held[p]) MPI_Pready((int)p, s->request);
    }
    pthread_barrier_wait(s->barrier); /* early ones marked */
    pthread_barrier_wait(s->barrier); /* "go" received */
    for (int64_t i = s->thread; i < t->send_partitions; i += kThreads) {
      const int64_t p = t->order[i];
      if (t->held[p]) MPI_Pready((int)p, s->request);
    }
    pthread_barrier_wait(s->barrier); /* all marked */
  }
  return NULL;
}

static int64_t Gcd(int64_t a, int64_t b) {
  while (b != 0) {
    const int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

static void DrawTrial(struct Trial* t, int index) {
  t->index = index;
  const int big = Below(10) == 0;
  t->send_partitions = big ? 2000 + Below(3000) : 1 + Below(48);
  t->receive_partitions = 1 + Below(48);
  const int64_t lcm = t->send_partitions / Gcd(t->send_partitions,
                                               t->receive_partitions) *
                      t->receive_partitions;
  int64_t factor = 1 + Below(big ? 2 : 6);
  if (Below(8) == 0) factor = 0; /* no data at all */
  t->total = lcm * factor;
  t->strided_send = Below(3) == 0;
  t->strided_receive = Below(3) == 0;
  t->aggregator = kAggregators[Below(6)];
  t->forced = Below(5) == 0 ? (int)(1 + Below(t->send_partitions)) : 0;
  t->rounds = 2 + (int)Below(3);
  t->order = malloc(sizeof(int64_t) * (size_t)t->send_partitions);
  t->held = calloc((size_t)t->send_partitions, 1);
  for (int64_t i = 0; i < t->send_partitions; ++i) t->order[i] = i;
  for (int64_t i = t->send_partitions - 1; i > 0; --i) {
    const int64_t j = Below(i + 1);
    const int64_t swap = t->order[i];
    t->order[i] = t->order[j];
    t->order[j] = swap;
  }
  /* Hold back a few partitions (at least one). */
  const int64_t holds = 1 + Below(t->send_partitions < 4 ? 1 : 3);
  for (int64_t h = 0; h < holds; ++h) t->held[Below(t->send_partitions)] = 1;
}

/* Element e of the buffer lives at index e, or 2e for a strided type. */
static int64_t Slot(int strided, int64_t e) { return strided ? 2 * e : e; }

static MPI_Datatype StridedInt(void) {
  MPI_Datatype strided;
  MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &strided);
  MPI_Type_commit(&strided);
  return strided;
}

static void RunSender(struct Trial* t) {
  const int64_t slots = Slot(t->strided_send, t->total) + 2;
  int* buffer = malloc(sizeof(int) * (size_t)slots);
  MPI_Datatype type = t->strided_send ? StridedInt() : MPI_INT;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "minimpi_part_aggr", t->aggregator);
  if (t->forced > 0) {
    char value[32];
    snprintf(value, sizeof(value), "%d", t->forced);
    MPI_Info_set(info, "minimpi_part_transport_partitions", value);
  }
  MPI_Request request;
  MPI_Psend_init(buffer, (int)t->send_partitions,
                 t->total / t->send_partitions, type, 1, 42, MPI_COMM_WORLD,
                 info, &request);
  MPI_Info_free(&info);

  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, kThreads + 1);
  struct Sender senders[kThreads];
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    senders[i] = (struct Sender){t, request, &barrier, i, t->rounds};
    pthread_create(&threads[i], NULL, SenderThread, &senders[i]);
  }
  for (int round = 0; round < t->rounds; ++round) {
    for (int64_t e = 0; e < t->total; ++e) {
      buffer[Slot(t->strided_send, e)] = Pattern(t->index, round, e);
    }
    MPI_Start(&request);
    pthread_barrier_wait(&barrier);
    pthread_barrier_wait(&barrier);
    int go;
    MPI_Recv(&go, 1, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    pthread_barrier_wait(&barrier);
    pthread_barrier_wait(&barrier);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&barrier);
  MPI_Request_free(&request);
  if (t->strided_send) MPI_Type_free(&type);
  free(buffer);
}

/* Whether receive partition r is fed by a held-back send partition. */
static int FedByHeld(const struct Trial* t, int64_t r) {
  if (t->total == 0) return 1; /* every partition waits for all */
  const int64_t each_r = t->total / t->receive_partitions;
  const int64_t each_s = t->total / t->send_partitions;
  for (int64_t p = r * each_r / each_s; p <= ((r + 1) * each_r - 1) / each_s;
       ++p) {
    if (t->held[p]) return 1;
  }
  return 0;
}

static void CheckPartition(const struct Trial* t, const int* buffer,
                           int round, int64_t r) {
  const int64_t each = t->total / t->receive_partitions;
  for (int64_t e = r * each; e < (r + 1) * each; ++e) {
    const int got = buffer[Slot(t->strided_receive, e)];
    const int expected = Pattern(t->index, round, e);
    if (got != expected) {
      Fail("MPI_Parrived true before the data was there", t->index, round, e,
           expected, got);
    }
  }
}

static void RunReceiver(struct Trial* t) {
  const int64_t slots = Slot(t->strided_receive, t->total) + 2;
  int* buffer = malloc(sizeof(int) * (size_t)slots);
  char* seen = malloc((size_t)t->receive_partitions);
  MPI_Datatype type = t->strided_receive ? StridedInt() : MPI_INT;
  MPI_Request request;
  MPI_Precv_init(buffer, (int)t->receive_partitions,
                 t->total / t->receive_partitions, type, 0, 42,
                 MPI_COMM_WORLD, MPI_INFO_NULL, &request);
  for (int round = 0; round < t->rounds; ++round) {
    for (int64_t i = 0; i < slots; ++i) buffer[i] = kHole;
    memset(seen, 0, (size_t)t->receive_partitions);
    MPI_Start(&request);
    /* Partitions fed only by early send partitions may arrive now (an
     * aggregator may hold them back with a held-back neighbour in the same
     * transport partition, so poll for at most 20 ms); those fed by a
     * held-back one must not. */
    int64_t waiting = 0;
    for (int64_t r = 0; r < t->receive_partitions; ++r) {
      waiting += !FedByHeld(t, r);
    }
    const double deadline = MPI_Wtime() + 0.02;
    while (waiting > 0 && MPI_Wtime() < deadline) {
      for (int64_t r = 0; r < t->receive_partitions; ++r) {
        if (seen[r]) continue;
        int flag = 0;
        MPI_Parrived(request, (int)r, &flag);
        if (!flag) continue;
        if (FedByHeld(t, r)) {
          Fail("MPI_Parrived true for a held-back partition", t->index, round,
               r, 0, 1);
        }
        CheckPartition(t, buffer, round, r);
        seen[r] = 1;
        --waiting;
      }
    }
    const int go = 1;
    MPI_Send(&go, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
    int64_t left = 0;
    for (int64_t r = 0; r < t->receive_partitions; ++r) left += !seen[r];
    while (left > 0) {
      for (int64_t r = 0; r < t->receive_partitions; ++r) {
        if (seen[r]) continue;
        int flag = 0;
        MPI_Parrived(request, (int)r, &flag);
        if (flag) {
          CheckPartition(t, buffer, round, r);
          seen[r] = 1;
          --left;
        }
      }
    }
    MPI_Status status;
    MPI_Wait(&request, &status);
    for (int64_t i = 0; i < slots; ++i) {
      const int is_data = i < Slot(t->strided_receive, t->total) &&
                          (!t->strided_receive || i % 2 == 0);
      const int64_t e = t->strided_receive ? i / 2 : i;
      const int expected = is_data ? Pattern(t->index, round, e) : kHole;
      if (buffer[i] != expected) {
        Fail(is_data ? "wrong data" : "a hole was written", t->index, round,
             i, expected, buffer[i]);
      }
    }
  }
  MPI_Request_free(&request);
  if (t->strided_receive) MPI_Type_free(&type);
  free(seen);
  free(buffer);
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || provided != MPI_THREAD_MULTIPLE) {
    if (rank == 0) fprintf(stderr, "partitioned_random: needs 2 ranks and "
                                   "MPI_THREAD_MULTIPLE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int trials = argc > 1 ? atoi(argv[1]) : 60;
  rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 0x9e3779b97f4a7c15ull;
  const int verbose = argc > 3 && strcmp(argv[3], "verbose") == 0;
  int per_aggregator[6] = {0};
  for (int i = 0; i < trials; ++i) {
    struct Trial t;
    DrawTrial(&t, i);
    for (int a = 0; a < 6; ++a) {
      per_aggregator[a] += t.aggregator == kAggregators[a];
    }
    if (verbose && rank == 0) {
      printf("trial %d: %lld -> %lld partitions, %lld ints, %s%s%s, forced "
             "%d, %d rounds\n",
             i, (long long)t.send_partitions, (long long)t.receive_partitions,
             (long long)t.total, t.aggregator,
             t.strided_send ? ", strided send" : "",
             t.strided_receive ? ", strided receive" : "", t.forced,
             t.rounds);
      fflush(stdout);
    }
    if (rank == 0) {
      RunSender(&t);
    } else {
      RunReceiver(&t);
    }
    free(t.order);
    free(t.held);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("partitioned_random: %d trials passed (", trials);
    for (int a = 0; a < 6; ++a) {
      printf("%s%s %d", a ? ", " : "", kAggregators[a], per_aggregator[a]);
    }
    printf(")\n");
  }
  MPI_Finalize();
  return 0;
}
#else
TEST_SKIPPED_MAIN("partitioned_random",
                  "MPI_VERSION < 4 has no partitioned communication")
#endif /* MPI_VERSION >= 4 */
