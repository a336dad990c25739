/* Communicators made from an endpoints communicator
 * (MPIX_Comm_create_endpoints), each handle driven by its own thread:
 *
 *   dup          MPI_Comm_dup of every handle (collective over the
 *                endpoints communicator): same rank and size, CONGRUENT
 *                with the handle, IDENT with itself; the handle, its dup
 *                and a dup of the dup carry messages with the same tag and
 *                peers at once, received by ANY_SOURCE/ANY_TAG receives
 *                posted newest communicator first: each gets its own
 *   split        color rank % 2 with key -rank (new ranks in reverse
 *                order), color = process (the handles of one process, key
 *                -index), MPI_UNDEFINED for every third rank, equal keys
 *                (CONGRUENT with the handle); membership checked by passing
 *                ranks around each new communicator, and an Allreduce
 *   errhandlers  per handle: rank % 3 == 0 sets MPI_ERRORS_RETURN, 1 a user
 *                handler (called with its own handle), 2 keeps the fatal
 *                default; every handle of the process sees its own
 *                handler; an invalid destination returns MPI_ERR_RANK
 *                where it should; dups inherit their handle's handler
 *   nested       endpoints of endpoints: every thread calls
 *                MPIX_Comm_create_endpoints on its own handle at once for
 *                m = 1 + rank % 2 handles (--nested-counts), with an info
 *                object; the grandchild's size and ordering (parent rank,
 *                then index) checked by an exchange of identities; then one
 *                thread drives its m handles with nonblocking calls
 *                (Iallreduce, a ring of Isend/Irecv, Iallgather), then one
 *                thread per grandchild handle does the same with blocking
 *                calls and frees its handle
 *   free         the odd ranks free their handles while the even ones
 *                exchange messages on their dups, then the even ones free
 *                theirs; the dups still work (a ring over all) and are
 *                freed
 *   create errors  MPIX_Comm_create_endpoints under MPI_ERRORS_RETURN:
 *                my_num_ep < 0 and a NULL array give MPI_ERR_ARG,
 *                MPI_COMM_NULL and an intercommunicator MPI_ERR_COMM, on
 *                MPI_COMM_WORLD and (the argument errors) on handles; then
 *                valid calls still work
 *
 * --fatal: after checking that MPI_ERRORS_RETURN on rank 0's handle makes
 * an invalid destination return MPI_ERR_RANK, rank 1 (the fatal default)
 * sends to rank `size`: the job must die with minimpi's one-line message.
 *
 * Usage: endpoints_comms [--endpoints K | --counts A,B,... | --varying]
 *                        [--nested-counts A,B,...] [--quick] [--fatal]
 *                        [--watchdog SECONDS] */
#define _POSIX_C_SOURCE 200809L

/* Each handle's dup, made in the dup phase, used when freeing. */
#define ENDPOINT_EXTRA_FIELDS MPI_Comm keep;

#include "endpoints_util.h"

#ifndef MINIMPI_HAS_ENDPOINTS
/* Skipped; but a --fatal run is a case that must fail, so it exits 1 (the
 * cross-check against other MPIs only judges exit statuses). */
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int fatal = 0;
  for (int i = 1; i < argc; ++i) fatal |= strcmp(argv[i], "--fatal") == 0;
  if (test_world_rank() == 0)
    printf("endpoints_comms: skipped: the MPI library has no MPIX_Comm_create_endpoints%s\n",
           fatal ? " (--fatal: exits 1, as the case expects)" : "");
  MPI_Finalize();
  return fatal ? 1 : 0;
}
#else

static int g_nested[kMaxCounts], g_num_nested;  /* --nested-counts */

/* Grandchild handles endpoints rank r asks for. */
static int nested_of(int ep_rank) {
  return g_num_nested ? g_nested[ep_rank % g_num_nested] : 1 + ep_rank % 2;
}

static void check_compare(MPI_Comm a, MPI_Comm b, int expected, int rank, const char* what) {
  int result = -1;
  MPI_CHECK(MPI_Comm_compare(a, b, &result));
  CHECK(result == expected, "endpoints rank %d: Comm_compare(%s) = %d, expected %d (IDENT %d "
        "CONGRUENT %d SIMILAR %d UNEQUAL %d)", rank, what, result, expected, MPI_IDENT,
        MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL);
}

/* ---- shared checks -------------------------------------------------------------- */

/* `comm` must have members[i] (endpoints ranks) as its rank i, this
 * thread being endpoints rank `ep_rank`: checked by rank and size, by
 * passing endpoints ranks once around it, and by an Allreduce. */
static void check_membership(MPI_Comm comm, const int* members, int member_count, int ep_rank,
                             const char* what) {
  int rank = -1, size = -1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  CHECK(size == member_count, "%s at endpoints rank %d: size %d, expected %d", what, ep_rank,
        size, member_count);
  CHECK(rank >= 0 && rank < size && members[rank] == ep_rank,
        "%s: endpoints rank %d has rank %d, expected endpoints rank %d there", what, ep_rank,
        rank, rank >= 0 && rank < size ? members[rank] : -1);
  int from_left = -1;
  MPI_Status status;
  const int left = (rank + size - 1) % size;
  MPI_CHECK(MPI_Sendrecv(&ep_rank, 1, MPI_INT, (rank + 1) % size, 3, &from_left, 1, MPI_INT,
                         MPI_ANY_SOURCE, 3, comm, &status));
  CHECK(from_left == members[left] && status.MPI_SOURCE == left,
        "%s: rank %d got endpoints rank %d from rank %d, expected %d from %d", what, rank,
        from_left, status.MPI_SOURCE, members[left], left);
  long sum = 0, expected = 0;
  long mine = ep_rank;
  for (int i = 0; i < member_count; ++i) expected += members[i];
  MPI_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm));
  CHECK(sum == expected, "%s at endpoints rank %d: Allreduce of the members' endpoints ranks "
        "gave %ld, expected %ld", what, ep_rank, sum, expected);
}

/* A ring over `comm`: `rounds` messages to the right, from the left, with
 * tag `tag`, eager and rendezvous sizes, every byte checked. */
static void ring(MPI_Comm comm, int tag, int rounds, const char* what) {
  int rank = -1, size = -1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  unsigned char* out = (unsigned char*)test_malloc(20000);
  unsigned char* in = (unsigned char*)test_malloc(20000 + kGuard);
  for (int round = 0; round < rounds; ++round) {
    const int bytes = round % 3 == 1 ? 12000 + round : 10 * round;
    test_fill(out, (size_t)bytes, rank, tag * 1000 + round);
    memset(in, kPoison, 20000 + kGuard);
    MPI_Status status;
    MPI_CHECK(MPI_Sendrecv(out, bytes, MPI_BYTE, right, tag, in, 20000, MPI_BYTE, left, tag,
                           comm, &status));
    char text[128];
    snprintf(text, sizeof text, "%s: ring round %d at rank %d", what, round, rank);
    CHECK_STATUS(status, left, tag, MPI_BYTE, bytes, text);
    CHECK_PATTERN(in, bytes, left, tag * 1000 + round, text);
    check_guard(in, (size_t)bytes, text);
  }
  free(out);
  free(in);
}

/* ---- ranks ------------------------------------------------------------------------- */

static void phase_ranks(Endpoint* ep, int helper) {
  (void)helper;
  check_rank(ep);
  check_compare(ep->comm, ep->comm, MPI_IDENT, ep->rank, "handle vs itself");
}

/* ---- dup ----------------------------------------------------------------------------- */

enum { kIsoRounds = 10, kIsoMax = 9000 };

static int iso_bytes(int c, int round) { return (c * kIsoRounds + round) % 5 == 4 ? kIsoMax : 512; }

static void phase_dup(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size;
  MPI_CHECK(MPI_Comm_dup(ep->comm, &ep->keep));
  int rank = -1, size = -1;
  MPI_CHECK(MPI_Comm_rank(ep->keep, &rank));
  MPI_CHECK(MPI_Comm_size(ep->keep, &size));
  CHECK(rank == r && size == n, "endpoints rank %d: its dup says rank %d of %d, expected %d of "
        "%d", r, rank, size, r, n);
  check_compare(ep->keep, ep->comm, MPI_CONGRUENT, r, "dup vs handle");
  check_compare(ep->comm, ep->keep, MPI_CONGRUENT, r, "handle vs dup");
  check_compare(ep->keep, ep->keep, MPI_IDENT, r, "dup vs itself");
  MPI_Comm dup2;
  MPI_CHECK(MPI_Comm_dup(ep->keep, &dup2));
  check_compare(dup2, ep->keep, MPI_CONGRUENT, r, "dup of dup vs dup");
  check_compare(dup2, ep->comm, MPI_CONGRUENT, r, "dup of dup vs handle");

  /* Same tag, same peers on three communicators; receives with wildcards
   * posted newest communicator first, sends oldest first. */
  MPI_Comm comms[3] = {ep->comm, ep->keep, dup2};
  const int right = (r + 1) % n, left = (r + n - 1) % n, tag = 5;
  unsigned char* out[3][kIsoRounds];
  unsigned char* in[3][kIsoRounds];
  MPI_Request sends[3 * kIsoRounds], recvs[3 * kIsoRounds];
  MPI_Status statuses[3 * kIsoRounds];
  for (int c = 2; c >= 0; --c)
    for (int round = 0; round < kIsoRounds; ++round) {
      in[c][round] = (unsigned char*)test_malloc(kIsoMax + kGuard);
      memset(in[c][round], kPoison, kIsoMax + kGuard);
      MPI_CHECK(MPI_Irecv(in[c][round], kIsoMax + kGuard, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                          comms[c], &recvs[c * kIsoRounds + round]));
    }
  for (int round = 0; round < kIsoRounds; ++round)
    for (int c = 0; c < 3; ++c) {
      const int bytes = iso_bytes(c, round);
      out[c][round] = (unsigned char*)test_malloc((size_t)bytes);
      test_fill(out[c][round], (size_t)bytes, r, c * 1000 + round);
      MPI_CHECK(MPI_Isend(out[c][round], bytes, MPI_BYTE, right, tag, comms[c],
                          &sends[c * kIsoRounds + round]));
    }
  MPI_CHECK(MPI_Waitall(3 * kIsoRounds, recvs, statuses));
  MPI_CHECK(MPI_Waitall(3 * kIsoRounds, sends, MPI_STATUSES_IGNORE));
  for (int c = 0; c < 3; ++c)
    for (int round = 0; round < kIsoRounds; ++round) {
      char what[96];
      snprintf(what, sizeof what, "isolation at rank %d: communicator %d message %d", r, c,
               round);
      const int bytes = iso_bytes(c, round);
      CHECK_STATUS(statuses[c * kIsoRounds + round], left, tag, MPI_BYTE, bytes, what);
      CHECK_PATTERN(in[c][round], bytes, left, c * 1000 + round, what);
      check_guard(in[c][round], (size_t)bytes, what);
      free(in[c][round]);
      free(out[c][round]);
    }
  ring(dup2, 6, g_quick ? 3 : 9, "dup of dup");
  MPI_CHECK(MPI_Comm_free(&dup2));
  CHECK(dup2 == MPI_COMM_NULL, "MPI_Comm_free did not null the handle");
}

/* ---- split ---------------------------------------------------------------------------- */

static void phase_split(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size;
  int* members = (int*)test_malloc(sizeof(int) * (size_t)n);
  int count = 0;
  MPI_Comm split;

  /* Parity, key -rank: reverse order. */
  MPI_CHECK(MPI_Comm_split(ep->comm, r % 2, -r, &split));
  for (int q = n - 1; q >= 0; --q)
    if (q % 2 == r % 2) members[count++] = q;
  check_membership(split, members, count, r, "split by parity, key -rank");
  ring(split, 7, g_quick ? 3 : 9, "split by parity");
  MPI_CHECK(MPI_Comm_free(&split));

  /* By process, key -index: this process's handles, reversed. */
  MPI_CHECK(MPI_Comm_split(ep->comm, g_rank, -ep->index, &split));
  count = 0;
  for (int i = g_num_ep - 1; i >= 0; --i) members[count++] = first_rank_of(g_rank) + i;
  check_membership(split, members, count, r, "split by process, key -index");
  MPI_CHECK(MPI_Comm_free(&split));

  /* Every third rank left out; equal keys keep the old order. */
  MPI_CHECK(MPI_Comm_split(ep->comm, r % 3 == 2 ? MPI_UNDEFINED : r % 3, 0, &split));
  if (r % 3 == 2) {
    CHECK(split == MPI_COMM_NULL, "endpoints rank %d: MPI_UNDEFINED color did not give "
          "MPI_COMM_NULL", r);
  } else {
    count = 0;
    for (int q = 0; q < n; ++q)
      if (q % 3 == r % 3) members[count++] = q;
    check_membership(split, members, count, r, "split by rank % 3, equal keys");
    MPI_CHECK(MPI_Comm_free(&split));
  }

  /* One color, equal keys: the same group in the same order. */
  MPI_CHECK(MPI_Comm_split(ep->comm, 7, 0, &split));
  for (int q = 0; q < n; ++q) members[q] = q;
  check_membership(split, members, n, r, "split with one color and equal keys");
  check_compare(split, ep->comm, MPI_CONGRUENT, r, "one-color split vs handle");
  MPI_CHECK(MPI_Comm_free(&split));
  CHECK(split == MPI_COMM_NULL, "MPI_Comm_free did not null the handle");
  free(members);
}

/* ---- error handlers ------------------------------------------------------------------ */

static MPI_Errhandler g_user_handler;
static _Thread_local int t_handler_calls;
static _Thread_local MPI_Comm t_handler_comm;
static _Thread_local int t_handler_code;

static void record_error(MPI_Comm* comm, int* code, ...) {
  ++t_handler_calls;
  t_handler_comm = *comm;
  t_handler_code = *code;
}

/* The handler each handle should have: rank % 3 == 0 ERRORS_RETURN, 1 the
 * user handler, 2 the fatal default. */
static MPI_Errhandler handler_for(int ep_rank) {
  return ep_rank % 3 == 0 ? MPI_ERRORS_RETURN
                          : ep_rank % 3 == 1 ? g_user_handler : MPI_ERRORS_ARE_FATAL;
}

static void expect_handler(MPI_Comm comm, MPI_Errhandler expected, int ep_rank,
                           const char* what) {
  MPI_Errhandler got = MPI_ERRHANDLER_NULL;
  MPI_CHECK(MPI_Comm_get_errhandler(comm, &got));
  CHECK(got == expected, "%s: MPI_Comm_get_errhandler on the handle of endpoints rank %d gave "
        "a different handler (%s expected)", what, ep_rank,
        expected == MPI_ERRORS_RETURN ? "MPI_ERRORS_RETURN"
        : expected == MPI_ERRORS_ARE_FATAL ? "MPI_ERRORS_ARE_FATAL" : "the user handler");
  MPI_CHECK(MPI_Errhandler_free(&got));
}

/* An invalid destination on `comm`, whose handler is handler_for(ep_rank)
 * (not the fatal one). */
static void bad_send(MPI_Comm comm, int ep_rank, int size, const char* what) {
  int value = 1;
  const int calls_before = t_handler_calls;
  const int rc = MPI_Send(&value, 1, MPI_INT, size, 0, comm);
  CHECK(test_error_class(rc) == MPI_ERR_RANK, "%s at endpoints rank %d: MPI_Send to rank %d of "
        "%d returned class %d, expected MPI_ERR_RANK (%d)", what, ep_rank, size, size,
        test_error_class(rc), MPI_ERR_RANK);
  if (ep_rank % 3 == 1) {
    CHECK(t_handler_calls == calls_before + 1, "%s at endpoints rank %d: the user handler was "
          "called %d times, expected once", what, ep_rank, t_handler_calls - calls_before);
    CHECK(t_handler_comm == comm, "%s at endpoints rank %d: the user handler was called with "
          "another communicator handle than the one in error", what, ep_rank);
    CHECK(test_error_class(t_handler_code) == MPI_ERR_RANK, "%s at endpoints rank %d: the user "
          "handler got an error of class %d, expected MPI_ERR_RANK", what, ep_rank,
          test_error_class(t_handler_code));
  } else {
    CHECK(t_handler_calls == calls_before, "%s at endpoints rank %d: the user handler (of "
          "another handle) was called", what, ep_rank);
  }
}

static void phase_errhandlers(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size;
  if (r % 3 != 2) MPI_CHECK(MPI_Comm_set_errhandler(ep->comm, handler_for(r)));
  /* Every handle has set its own before anyone looks at the others. */
  MPI_CHECK(MPI_Barrier(ep->comm));
  for (int i = 0; i < g_num_ep; ++i)
    expect_handler(g_ep[i].comm, handler_for(first_rank_of(g_rank) + i),
                   first_rank_of(g_rank) + i, "handlers per handle");
  if (r % 3 != 2) {
    bad_send(ep->comm, r, n, "handle");
    if (r % 3 == 0) {
      int value = 0;
      CHECK_ERROR_CLASS(MPI_Send(&value, 1, MPI_INT, -5, 0, ep->comm), MPI_ERR_RANK);
      CHECK_ERROR_CLASS(MPI_Recv(&value, 1, MPI_INT, n + 2, 0, ep->comm, MPI_STATUS_IGNORE),
                   MPI_ERR_RANK);
      CHECK_ERROR_CLASS(MPI_Send(&value, 1, MPI_INT, 0, -3, ep->comm), MPI_ERR_TAG);
    }
  }
  /* A dup inherits its handle's handler. */
  MPI_Comm dup;
  MPI_CHECK(MPI_Comm_dup(ep->comm, &dup));
  expect_handler(dup, handler_for(r), r, "dup of a handle");
  if (r % 3 != 2) bad_send(dup, r, n, "dup");
  /* Traffic still flows on both. */
  ring(dup, 8, 2, "dup after errors");
  ring(ep->comm, 9, 2, "handle after errors");
  MPI_CHECK(MPI_Comm_free(&dup));
  MPI_CHECK(MPI_Barrier(ep->comm));
  MPI_CHECK(MPI_Comm_set_errhandler(ep->comm, MPI_ERRORS_ARE_FATAL));
}

/* ---- endpoints of endpoints ----------------------------------------------------------- */

typedef struct {
  MPI_Comm comm;
  int parent_rank, index, expected_rank, expected_size;
} Grandchild;

/* Identities {world rank, endpoints rank, index} of every grandchild rank
 * must follow the ordering rule over the endpoints ranks. */
static void check_identities(const int* got, int size, const char* what) {
  int g = 0;
  for (int q = 0; q < g_ep_size; ++q)
    for (int j = 0; j < nested_of(q); ++j, ++g) {
      int index = -1;
      const int owner = owner_of(q, &index);
      CHECK(got[3 * g] == owner && got[3 * g + 1] == q && got[3 * g + 2] == j,
            "%s: grandchild rank %d says it is handle %d of endpoints rank %d (process %d); "
            "the ordering rule says handle %d of endpoints rank %d (process %d)",
            what, g, got[3 * g + 2], got[3 * g + 1], got[3 * g], j, q, owner);
    }
  CHECK(g == size, "%s: %d grandchild ranks, expected %d", what, size, g);
}

static void* grandchild_thread(void* pointer) {
  Grandchild* child = (Grandchild*)pointer;
  int rank = -1, size = -1;
  MPI_CHECK(MPI_Comm_rank(child->comm, &rank));
  MPI_CHECK(MPI_Comm_size(child->comm, &size));
  CHECK(rank == child->expected_rank && size == child->expected_size,
        "handle %d of endpoints rank %d: grandchild rank %d of %d, expected %d of %d",
        child->index, child->parent_rank, rank, size, child->expected_rank,
        child->expected_size);
  long mine = rank, sum = -1;
  MPI_CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, child->comm));
  CHECK(sum == (long)size * (size - 1) / 2, "grandchild rank %d: Allreduce gave %ld, expected "
        "%ld", rank, sum, (long)size * (size - 1) / 2);
  ring(child->comm, 10, g_quick ? 3 : 9, "grandchild, thread per handle");
  int* got = (int*)test_malloc(sizeof(int) * 3 * (size_t)size);
  const int identity[3] = {g_rank, child->parent_rank, child->index};
  MPI_CHECK(MPI_Allgather(identity, 3, MPI_INT, got, 3, MPI_INT, child->comm));
  check_identities(got, size, "grandchild Allgather, thread per handle");
  free(got);
  MPI_CHECK(MPI_Barrier(child->comm));
  MPI_CHECK(MPI_Comm_free(&child->comm));
  CHECK(child->comm == MPI_COMM_NULL, "MPI_Comm_free did not null the grandchild handle");
  return NULL;
}

static void phase_nested(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, m = nested_of(r);
  int first = 0, total = 0;
  for (int q = 0; q < ep->size; ++q) {
    if (q < r) first += nested_of(q);
    total += nested_of(q);
  }
  MPI_Comm sub[kMaxHandles + 1];
  for (int j = 0; j <= kMaxHandles; ++j) sub[j] = MPI_COMM_NULL;
  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));
  MPI_CHECK(MPI_Info_set(info, "minimpi_test_hint", "ignored"));
  MPI_CHECK(MPIX_Comm_create_endpoints(ep->comm, m, info, m > 0 ? sub : NULL));
  MPI_CHECK(MPI_Info_free(&info));
  CHECK(sub[m] == MPI_COMM_NULL, "endpoints rank %d: MPIX_Comm_create_endpoints wrote past the "
        "%d handles asked for", r, m);

  /* One thread drives its m handles: every call nonblocking, all started
   * before any is waited for. */
  long* sums = (long*)test_malloc(sizeof(long) * (size_t)(m + 1));
  long* mine = (long*)test_malloc(sizeof(long) * (size_t)(m + 1));
  int* ids = (int*)test_malloc(sizeof(int) * 3 * (size_t)(m + 1));
  int* got = (int*)test_malloc(sizeof(int) * 3 * (size_t)total * (size_t)(m + 1));
  MPI_Request* requests = (MPI_Request*)test_malloc(sizeof(MPI_Request) * 3 * (size_t)(m + 1));
  for (int j = 0; j < m; ++j) {
    int rank = -1, size = -1;
    MPI_CHECK(MPI_Comm_rank(sub[j], &rank));
    MPI_CHECK(MPI_Comm_size(sub[j], &size));
    CHECK(rank == first + j && size == total, "handle %d of endpoints rank %d: grandchild rank "
          "%d of %d, expected %d of %d", j, r, rank, size, first + j, total);
    mine[j] = rank;
    MPI_CHECK(MPI_Iallreduce(&mine[j], &sums[j], 1, MPI_LONG, MPI_SUM, sub[j], &requests[j]));
  }
  MPI_CHECK(MPI_Waitall(m, requests, MPI_STATUSES_IGNORE));
  for (int j = 0; j < m; ++j)
    CHECK(sums[j] == (long)total * (total - 1) / 2, "grandchild rank %d: Iallreduce gave %ld, "
          "expected %ld", first + j, sums[j], (long)total * (total - 1) / 2);
  /* A ring by Irecv/Isend on each handle. */
  unsigned char* out = (unsigned char*)test_malloc(9000 * (size_t)(m + 1));
  unsigned char* in = (unsigned char*)test_malloc((9000 + kGuard) * (size_t)(m + 1));
  memset(in, kPoison, (9000 + kGuard) * (size_t)(m + 1));
  for (int j = 0; j < m; ++j) {
    const int g = first + j, left = (g + total - 1) % total, right = (g + 1) % total;
    const int bytes = g % 2 ? 9000 : 100 + g;
    MPI_CHECK(MPI_Irecv(in + (9000 + kGuard) * (size_t)j, 9000 + kGuard, MPI_BYTE, left, 11,
                        sub[j], &requests[2 * j]));
    test_fill(out + 9000 * (size_t)j, (size_t)bytes, g, 11);
    MPI_CHECK(MPI_Isend(out + 9000 * (size_t)j, bytes, MPI_BYTE, right, 11, sub[j],
                        &requests[2 * j + 1]));
  }
  MPI_Status* statuses = (MPI_Status*)test_malloc(sizeof(MPI_Status) * 2 * (size_t)(m + 1));
  MPI_CHECK(MPI_Waitall(2 * m, requests, statuses));
  for (int j = 0; j < m; ++j) {
    const int g = first + j, left = (g + total - 1) % total;
    const int bytes = left % 2 ? 9000 : 100 + left;
    char what[96];
    snprintf(what, sizeof what, "grandchild ring (one thread, nonblocking) at rank %d", g);
    CHECK_STATUS(statuses[2 * j], left, 11, MPI_BYTE, bytes, what);
    CHECK_PATTERN(in + (9000 + kGuard) * (size_t)j, bytes, left, 11, what);
    check_guard(in + (9000 + kGuard) * (size_t)j, (size_t)bytes, what);
  }
  for (int j = 0; j < m; ++j) {
    ids[3 * j] = g_rank;
    ids[3 * j + 1] = r;
    ids[3 * j + 2] = j;
    MPI_CHECK(MPI_Iallgather(&ids[3 * j], 3, MPI_INT, got + 3 * (size_t)total * (size_t)j, 3,
                             MPI_INT, sub[j], &requests[j]));
  }
  MPI_CHECK(MPI_Waitall(m, requests, MPI_STATUSES_IGNORE));
  for (int j = 0; j < m; ++j)
    check_identities(got + 3 * (size_t)total * (size_t)j, total,
                     "grandchild Iallgather, one thread");
  free(sums);
  free(mine);
  free(ids);
  free(got);
  free(requests);
  free(statuses);
  free(out);
  free(in);

  /* Then one thread per grandchild handle, blocking calls, and free. */
  pthread_t threads[kMaxHandles];
  Grandchild children[kMaxHandles];
  for (int j = 0; j < m; ++j) {
    children[j].comm = sub[j];
    children[j].parent_rank = r;
    children[j].index = j;
    children[j].expected_rank = first + j;
    children[j].expected_size = total;
    CHECK(pthread_create(&threads[j], NULL, grandchild_thread, &children[j]) == 0,
          "pthread_create failed");
  }
  for (int j = 0; j < m; ++j) pthread_join(threads[j], NULL);
  /* The parent handle still works. */
  ring(ep->comm, 12, 2, "handle after its grandchildren");
}

/* ---- freeing half the handles ------------------------------------------------------------ */

static void phase_free_half(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size, evens = (n + 1) / 2;
  if (r % 2 == 1) {
    MPI_CHECK(MPI_Comm_free(&ep->comm));
    CHECK(ep->comm == MPI_COMM_NULL, "MPI_Comm_free did not null the handle");
  } else {
    /* A ring over the even ranks only, on the dups, while the odd ones
     * free their handles (and maybe wait there for the even ones). */
    const int e = r / 2, to = 2 * ((e + 1) % evens), from = 2 * ((e + evens - 1) % evens);
    const int rounds = g_quick ? 4 : 12;
    unsigned char* out = (unsigned char*)test_malloc(20000);
    unsigned char* in = (unsigned char*)test_malloc(20000 + kGuard);
    for (int round = 0; round < rounds; ++round) {
      const int bytes = round % 2 ? 15000 : 300;
      test_fill(out, (size_t)bytes, r, 13000 + round);
      memset(in, kPoison, 20000 + kGuard);
      MPI_Status status;
      MPI_CHECK(MPI_Sendrecv(out, bytes, MPI_BYTE, to, 13, in, 20000, MPI_BYTE, MPI_ANY_SOURCE,
                             13, ep->keep, &status));
      char what[96];
      snprintf(what, sizeof what, "even ring while odd ranks free, round %d at rank %d", round,
               r);
      CHECK_STATUS(status, from, 13, MPI_BYTE, bytes, what);
      CHECK_PATTERN(in, bytes, from, 13000 + round, what);
      check_guard(in, (size_t)bytes, what);
    }
    free(out);
    free(in);
    MPI_CHECK(MPI_Comm_free(&ep->comm));
    CHECK(ep->comm == MPI_COMM_NULL, "MPI_Comm_free did not null the handle");
  }
  /* Every handle is freed: the dups still work. */
  int rank = -1, size = -1;
  MPI_CHECK(MPI_Comm_rank(ep->keep, &rank));
  MPI_CHECK(MPI_Comm_size(ep->keep, &size));
  CHECK(rank == r && size == n, "endpoints rank %d: its dup says rank %d of %d after the handles "
        "were freed", r, rank, size);
  ring(ep->keep, 14, g_quick ? 3 : 9, "dup after every handle was freed");
  MPI_CHECK(MPI_Comm_free(&ep->keep));
  CHECK(ep->keep == MPI_COMM_NULL, "MPI_Comm_free did not null the dup");
}

/* ---- MPIX_Comm_create_endpoints errors ----------------------------------------------------- */

static void create_errors_on_world(void) {
  MPI_Comm out[4] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  CHECK_ERROR_CLASS(MPIX_Comm_create_endpoints(MPI_COMM_WORLD, -1, MPI_INFO_NULL, out), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPIX_Comm_create_endpoints(MPI_COMM_WORLD, -1000, MPI_INFO_NULL, out),
               MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPIX_Comm_create_endpoints(MPI_COMM_WORLD, 2, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPIX_Comm_create_endpoints(MPI_COMM_NULL, 1, MPI_INFO_NULL, out), MPI_ERR_COMM);
  for (int i = 0; i < 4; ++i)
    CHECK(out[i] == MPI_COMM_NULL, "a failed MPIX_Comm_create_endpoints wrote handle %d", i);
  if (g_size >= 2) {
    /* An intercommunicator between the lower and the upper half. */
    const int half = g_size / 2, lower = g_rank < half;
    MPI_Comm local, inter;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, lower, g_rank, &local));
    MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, lower ? half : 0, 77, &inter));
    MPI_CHECK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    CHECK_ERROR_CLASS(MPIX_Comm_create_endpoints(inter, 1, MPI_INFO_NULL, out), MPI_ERR_COMM);
    CHECK(out[0] == MPI_COMM_NULL, "a failed MPIX_Comm_create_endpoints wrote a handle");
    MPI_CHECK(MPI_Comm_free(&inter));
    MPI_CHECK(MPI_Comm_free(&local));
  }
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void phase_create_errors(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size;
  MPI_CHECK(MPI_Comm_set_errhandler(ep->comm, MPI_ERRORS_RETURN));
  MPI_Comm out[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
  CHECK_ERROR_CLASS(MPIX_Comm_create_endpoints(ep->comm, -1, MPI_INFO_NULL, out), MPI_ERR_ARG);
  CHECK_ERROR_CLASS(MPIX_Comm_create_endpoints(ep->comm, 1, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
  CHECK(out[0] == MPI_COMM_NULL && out[1] == MPI_COMM_NULL,
        "a failed MPIX_Comm_create_endpoints wrote a handle");
  /* The failed calls left nothing behind: a valid one, one handle each. */
  MPI_CHECK(MPIX_Comm_create_endpoints(ep->comm, 1, MPI_INFO_NULL, out));
  CHECK(out[1] == MPI_COMM_NULL, "MPIX_Comm_create_endpoints wrote past the one handle");
  int rank = -1, size = -1;
  MPI_CHECK(MPI_Comm_rank(out[0], &rank));
  MPI_CHECK(MPI_Comm_size(out[0], &size));
  CHECK(rank == r && size == n, "endpoints rank %d: one grandchild each gave rank %d of %d, "
        "expected %d of %d", r, rank, size, r, n);
  ring(out[0], 15, 2, "one grandchild each after failed calls");
  MPI_CHECK(MPI_Comm_free(&out[0]));
  MPI_CHECK(MPI_Comm_free(&ep->comm));
}

/* ---- --fatal ------------------------------------------------------------------------------- */

enum { kReleaseTag = 900 };

static void phase_fatal(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size;
  int value = 0;
  if (r == 0) {
    MPI_CHECK(MPI_Comm_set_errhandler(ep->comm, MPI_ERRORS_RETURN));
    CHECK_ERROR_CLASS(MPI_Send(&value, 1, MPI_INT, n, 0, ep->comm), MPI_ERR_RANK);
  }
  MPI_CHECK(MPI_Barrier(ep->comm));
  if (r == 1) {
    fprintf(stderr, "endpoints_comms: endpoints rank 1 (fatal default) sends to rank %d of %d; "
            "the job must end here\n", n, n);
    fflush(stderr);
    const int rc = MPI_Send(&value, 1, MPI_INT, n, 0, ep->comm);
    fprintf(stderr, "FAIL [rank %d]: MPI_Send to rank %d on a handle with the fatal default "
            "returned %d instead of ending the job\n", g_rank, n, rc);
    for (int q = 0; q < n; ++q)
      if (q != 1) MPI_Send(NULL, 0, MPI_BYTE, q, kReleaseTag, ep->comm);
  } else {
    /* Only comes if the bad call wrongly returns. */
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 1, kReleaseTag, ep->comm, MPI_STATUS_IGNORE));
  }
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char** argv) {
  endpoints_init(&argc, &argv, "endpoints_comms",
                 "[--endpoints K | --counts A,B,... | --varying] "
                 "[--nested-counts A,B,...] [--quick] [--fatal] [--watchdog SECONDS]", "phase ");
  int fatal = 0;
  for (int i = 1; i < argc; ++i) {
    if (common_option(argc, argv, &i)) continue;
    if (strcmp(argv[i], "--nested-counts") == 0 && i + 1 < argc) {
      g_num_nested = parse_counts(argv[++i], g_nested, argv[0]);
    } else if (strcmp(argv[i], "--fatal") == 0) {
      fatal = 1;
    } else {
      usage_exit(argv[0]);
    }
  }
  CHECK(g_per_process >= 0 && g_per_process <= kMaxHandles && g_watchdog_s > 0,
        "bad options: %d endpoints per process (0..%d)", g_per_process, kMaxHandles);
  endpoints_layout();
  int nested_total = 0;
  for (int q = 0; q < g_ep_size; ++q) nested_total += nested_of(q);
  CHECK(nested_total > 0, "--nested-counts asks for no grandchild handle at all");
  CHECK(!fatal || g_ep_size >= 2, "--fatal needs at least 2 endpoints");

  MPI_Comm handles[kMaxHandles];
  endpoints_create(handles);
  for (int i = 0; i < g_num_ep; ++i) g_ep[i].keep = MPI_COMM_NULL;
  if (g_rank == 0)
    printf("endpoints_comms: %d endpoints over %d processes%s\n", g_ep_size, g_size,
           g_quick ? ", quick" : "");
  fflush(stdout);
  run_phase("ranks", phase_ranks, 1);
  if (fatal) {
    run_phase("fatal", phase_fatal, 1);
    MPI_Finalize();
    return 0;
  }
  run_phase("dup", phase_dup, 1);
  run_phase("split", phase_split, 1);
  MPI_CHECK(MPI_Comm_create_errhandler(record_error, &g_user_handler));
  run_phase("error handlers", phase_errhandlers, 1);
  MPI_CHECK(MPI_Errhandler_free(&g_user_handler));
  run_phase("endpoints of endpoints", phase_nested, 1);
  run_phase("free half the handles", phase_free_half, 1);

  watchdog("MPIX_Comm_create_endpoints errors");
  create_errors_on_world();
  MPI_CHECK(MPIX_Comm_create_endpoints(MPI_COMM_WORLD, g_num_ep, MPI_INFO_NULL,
                                       g_num_ep > 0 ? handles : NULL));
  for (int i = 0; i < g_num_ep; ++i) g_ep[i].comm = handles[i];
  run_phase("MPIX_Comm_create_endpoints errors", phase_create_errors, 1);
  alarm(0);
  test_report_pass("endpoints_comms", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}

#endif /* MINIMPI_HAS_ENDPOINTS */
