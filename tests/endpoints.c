/* Point-to-point over an endpoints communicator (MPIX_Comm_create_endpoints,
 * the MPI endpoints proposal), one thread per handle, all at once.
 *
 * Every process asks for K handles of one communicator over
 * MPI_COMM_WORLD (--endpoints K), or for a count of its own (--counts
 * LIST: process p asks for LIST[p % length], 0 included, so the ordering
 * rule is checked with unequal counts and processes without handles).
 * Handle i of process p must be rank sum_{q<p} n_q + i of a communicator
 * of sum_q n_q ranks.  Each handle is then driven by its own thread as if
 * it were a process of its own, through these phases (each ends with a
 * barrier on MPI_COMM_WORLD between the main threads):
 *
 *   ranks        rank, size, test_inter, compare, MPI_COMM_WORLD's rank
 *                from every thread; every rank tells every rank which
 *                process and handle it is (the ordering rule, checked by
 *                the receivers)
 *   all-pairs    every rank sends to every rank, itself and the other
 *                handles of its process included: 0 B to 1 MiB (eager,
 *                rendezvous and large), by Isend, Send and Issend, each
 *                byte checked against a pattern of (sender, receiver, tag,
 *                index), guard bytes after each message untouched
 *   wildcards    ANY_SOURCE/ANY_TAG receives posted before the sends and
 *                made after them, ANY_TAG per source (tags in send order),
 *                ANY_SOURCE per tag: every message exactly once, with its
 *                source, tag, count and bytes
 *   probes       Probe, Iprobe, Mprobe/Mrecv, Improbe/Imrecv, a probe that
 *                must find nothing (no message of another handle)
 *   ordering     many messages with one tag from a right neighbour and
 *                from oneself, eager and rendezvous sizes mixed, received
 *                by ANY_SOURCE receives: each sender's in send order
 *   persistent   Send_init, Ssend_init, Recv_init (one ANY_SOURCE) to both
 *                neighbours and to oneself, Startall over several rounds
 *   partitioned  Psend_init/Precv_init between rank pairs (2k, 2k+1) (an
 *                odd last rank to itself), different partition counts on
 *                the two sides, MPI_Pready/_range/_list from the thread
 *                that owns the handle, MPI_Parrived polling
 *   shared       two threads on each handle at once (one ring each way)
 *   free         MPI_Comm_free of every handle from its own thread
 *
 * Usage: endpoints [--endpoints K | --counts A,B,... | --varying] [--quick]
 *                  [--watchdog SECONDS]
 * --varying is --counts 2,0,1.  --quick (for many ranks on few cores)
 * sends the sizes above 8 KiB only to the right neighbour and to oneself,
 * and fewer messages and rounds. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>

#include "endpoints_util.h"

#ifndef MINIMPI_HAS_ENDPOINTS
TEST_SKIPPED_MAIN("endpoints", "the MPI library has no MPIX_Comm_create_endpoints")
#else

/* ---- byte checks ----------------------------------------------------------- */

/* The pattern key of a message to `dest` with `tag` (the pattern also
 * depends on the sender, test_pattern_byte's source). */
static int key_of(int dest, int tag) {
  return (int)((unsigned)dest * 1000003u + (unsigned)tag);
}

/* Bytes [from, to) of a message from `source` with pattern key `key`. */
static void check_bytes(const unsigned char* p, size_t from, size_t to, int source, int key,
                        const char* what) {
  for (size_t i = from; i < to; ++i)
    CHECK(p[i] == test_pattern_byte(source, key, i),
          "%s: byte %zu of %zu is 0x%02x, expected 0x%02x (from rank %d)", what, i, to, p[i],
          test_pattern_byte(source, key, i), source);
}

/* ---- ranks and the ordering rule -------------------------------------------- */

static void phase_ranks(Endpoint* ep, int helper) {
  (void)helper;
  check_rank(ep);
  const int rank = ep->rank, size = ep->size;
  int world_rank = -1, world_size = -1, inter = -1, result = -1;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
  CHECK(world_rank == g_rank && world_size == g_size,
        "endpoints rank %d: MPI_COMM_WORLD rank %d of %d from its thread, expected %d of %d",
        rank, world_rank, world_size, g_rank, g_size);
  MPI_CHECK(MPI_Comm_test_inter(ep->comm, &inter));
  CHECK(inter == 0, "endpoints rank %d: MPI_Comm_test_inter says %d", rank, inter);
  MPI_CHECK(MPI_Comm_compare(ep->comm, ep->comm, &result));
  CHECK(result == MPI_IDENT, "endpoints rank %d: a handle compared with itself gave %d, not "
        "MPI_IDENT (%d)", rank, result, MPI_IDENT);
  /* Another handle of the same communicator: the proposal does not say
   * whether that is IDENT or CONGRUENT, but the group and its order are
   * the same, so nothing else. */
  if (g_num_ep > 1) {
    const Endpoint* other = &g_ep[(ep->index + 1) % g_num_ep];
    MPI_CHECK(MPI_Comm_compare(ep->comm, other->comm, &result));
    CHECK(result == MPI_IDENT || result == MPI_CONGRUENT,
          "endpoints rank %d: compared with handle %d of its process gave %d, expected IDENT "
          "(%d) or CONGRUENT (%d)", rank, other->index, result, MPI_IDENT, MPI_CONGRUENT);
  }
  if (g_ep_size != g_size) {
    MPI_CHECK(MPI_Comm_compare(ep->comm, MPI_COMM_WORLD, &result));
    CHECK(result == MPI_UNEQUAL, "endpoints rank %d: compared with MPI_COMM_WORLD (%d vs %d "
          "ranks) gave %d, expected MPI_UNEQUAL (%d)", rank, size, g_size, result, MPI_UNEQUAL);
  }

  /* Who is who: every rank tells every rank its process and handle. */
  const int mine[3] = {g_rank, ep->index, rank};
  int* got = (int*)test_malloc(sizeof(int) * 3 * (size_t)size);
  MPI_Request* requests = (MPI_Request*)test_malloc(sizeof(MPI_Request) * 2 * (size_t)size);
  MPI_Status* statuses = (MPI_Status*)test_malloc(sizeof(MPI_Status) * 2 * (size_t)size);
  for (int q = 0; q < size; ++q) {
    got[3 * q] = got[3 * q + 1] = got[3 * q + 2] = -7;
    MPI_CHECK(MPI_Irecv(&got[3 * q], 3, MPI_INT, q, 1, ep->comm, &requests[q]));
  }
  for (int j = 0; j < size; ++j)
    MPI_CHECK(MPI_Isend(mine, 3, MPI_INT, (rank + j) % size, 1, ep->comm, &requests[size + j]));
  MPI_CHECK(MPI_Waitall(2 * size, requests, statuses));
  for (int q = 0; q < size; ++q) {
    int index = -1;
    const int owner = owner_of(q, &index);
    char what[96];
    snprintf(what, sizeof what, "endpoints rank %d: identity of rank %d", rank, q);
    CHECK_STATUS(statuses[q], q, 1, MPI_INT, 3, what);
    CHECK(got[3 * q] == owner && got[3 * q + 1] == index && got[3 * q + 2] == q,
          "%s: it says it is handle %d of process %d with rank %d; the ordering rule says "
          "handle %d of process %d", what, got[3 * q + 1], got[3 * q], got[3 * q + 2], index,
          owner);
  }
  free(got);
  free(requests);
  free(statuses);
}

/* ---- all pairs -------------------------------------------------------------- */

static const int kSizes[] = {0, 8, 1000, 8192, 8193, 70000, 1 << 20};
enum { kNumSizes = sizeof kSizes / sizeof kSizes[0] };

/* Whether a message of `bytes` goes from `source` to `dest` (all pairs,
 * except the large sizes under --quick: to the right neighbour and self). */
static int pair_carries(int source, int dest, int size, int bytes) {
  if (!g_quick || bytes <= 8193) return 1;
  return (dest - source + size) % size <= 1;
}

static void phase_all_pairs(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size;
  unsigned char** in = (unsigned char**)test_malloc(sizeof(unsigned char*) * (size_t)n);
  unsigned char** out = (unsigned char**)test_malloc(sizeof(unsigned char*) * (size_t)n);
  MPI_Request* recvs = (MPI_Request*)test_malloc(sizeof(MPI_Request) * (size_t)n);
  MPI_Request* sends = (MPI_Request*)test_malloc(sizeof(MPI_Request) * (size_t)n);
  MPI_Status* statuses = (MPI_Status*)test_malloc(sizeof(MPI_Status) * (size_t)n);
  for (int s = 0; s < kNumSizes; ++s) {
    const int bytes = kSizes[s], tag = 100 + s, how = s % 3; /* Isend, Send, Issend */
    /* Receives first, by rank from the left (so not in send order). */
    for (int j = 0; j < n; ++j) {
      const int q = (r - j + n) % n;
      in[q] = NULL;
      recvs[q] = MPI_REQUEST_NULL;
      if (!pair_carries(q, r, n, bytes)) continue;
      in[q] = (unsigned char*)test_malloc((size_t)bytes + kGuard);
      memset(in[q], kPoison, (size_t)bytes + kGuard);
      MPI_CHECK(MPI_Irecv(in[q], bytes + kGuard, MPI_BYTE, q, tag, ep->comm, &recvs[q]));
    }
    for (int j = 0; j < n; ++j) {
      const int d = (r + j) % n;
      out[d] = NULL;
      sends[d] = MPI_REQUEST_NULL;
      if (!pair_carries(r, d, n, bytes)) continue;
      out[d] = (unsigned char*)test_malloc((size_t)bytes);
      test_fill(out[d], (size_t)bytes, r, key_of(d, tag));
      if (how == 0) {
        MPI_CHECK(MPI_Isend(out[d], bytes, MPI_BYTE, d, tag, ep->comm, &sends[d]));
      } else if (how == 1) {
        /* Every rank posts all its receives before its first send: no
         * blocking send can wait forever. */
        MPI_CHECK(MPI_Send(out[d], bytes, MPI_BYTE, d, tag, ep->comm));
      } else {
        MPI_CHECK(MPI_Issend(out[d], bytes, MPI_BYTE, d, tag, ep->comm, &sends[d]));
      }
    }
    MPI_CHECK(MPI_Waitall(n, recvs, statuses));
    for (int q = 0; q < n; ++q) {
      if (in[q] == NULL) continue;
      char what[96];
      snprintf(what, sizeof what, "all-pairs %d B from rank %d to rank %d", bytes, q, r);
      CHECK_STATUS(statuses[q], q, tag, MPI_BYTE, bytes, what);
      CHECK_PATTERN(in[q], bytes, q, key_of(r, tag), what);
      check_guard(in[q], (size_t)bytes, what);
      free(in[q]);
    }
    MPI_CHECK(MPI_Waitall(n, sends, MPI_STATUSES_IGNORE));
    for (int d = 0; d < n; ++d) free(out[d]);
  }
  free(in);
  free(out);
  free(recvs);
  free(sends);
  free(statuses);
}

/* ---- wildcards -------------------------------------------------------------- */

enum { kWild = 4 };

/* Size of message `j` from `source` to `dest`: small, empty, just past the
 * 8 KiB eager limit, and rendezvous. */
static int wild_bytes(int source, int dest, int j) {
  switch (j) {
    case 0: return (source * 13 + dest * 7) % 600;
    case 1: return 0;
    case 2: return 9000 + source % 50;
    default: return g_quick ? 3000 + dest % 1000 : 70000 + 3 * (source % 1000);
  }
}

/* The largest of them: every wildcard receive posts this much. */
static int wild_max(void) { return g_quick ? 9050 : 73000; }

typedef enum { kPostedFirst, kAnyAfter, kAnyTagPerSource, kAnySourcePerTag } WildMode;

/* Checks one received wildcard message; `next` (or NULL) holds the next
 * message index expected from each source, when they must come in order. */
static void check_wild(const Endpoint* ep, const MPI_Status* status, const unsigned char* buf,
                       int base, unsigned char* seen, int* next, const char* mode) {
  const int r = ep->rank, n = ep->size, source = status->MPI_SOURCE, j = status->MPI_TAG - base;
  CHECK(source >= 0 && source < n && j >= 0 && j < kWild,
        "wildcards (%s) at rank %d: status source %d tag %d, expected a source below %d and a "
        "tag in [%d, %d)", mode, r, source, status->MPI_TAG, n, base, base + kWild);
  CHECK(!seen[source * kWild + j], "wildcards (%s) at rank %d: message %d from rank %d "
        "received twice", mode, r, j, source);
  seen[source * kWild + j] = 1;
  if (next != NULL) {
    CHECK(next[source] == j, "wildcards (%s) at rank %d: message %d from rank %d arrived "
          "where message %d was due (overtaking)", mode, r, j, source, next[source]);
    ++next[source];
  }
  char what[96];
  snprintf(what, sizeof what, "wildcards (%s): message %d from rank %d to rank %d", mode, j,
           source, r);
  const int bytes = wild_bytes(source, r, j);
  CHECK_STATUS(*status, source, base + j, MPI_BYTE, bytes, what);
  CHECK_PATTERN(buf, bytes, source, key_of(r, base + j), what);
  check_guard(buf, (size_t)bytes, what);
}

static void wildcards(Endpoint* ep, WildMode mode) {
  static const char* const kModeNames[] = {"ANY_SOURCE/ANY_TAG posted first",
                                           "ANY_SOURCE/ANY_TAG after the sends",
                                           "ANY_TAG per source", "ANY_SOURCE per tag"};
  const char* name = kModeNames[mode];
  const int r = ep->rank, n = ep->size, total = n * kWild, base = 200 + 10 * (int)mode;
  unsigned char** out = (unsigned char**)test_malloc(sizeof(unsigned char*) * (size_t)total);
  unsigned char** in = (unsigned char**)test_malloc(sizeof(unsigned char*) * (size_t)total);
  MPI_Request* sends = (MPI_Request*)test_malloc(sizeof(MPI_Request) * (size_t)total);
  MPI_Request* recvs = (MPI_Request*)test_malloc(sizeof(MPI_Request) * (size_t)total);
  MPI_Status* statuses = (MPI_Status*)test_malloc(sizeof(MPI_Status) * (size_t)total);
  unsigned char* seen = (unsigned char*)test_malloc((size_t)total);
  int* next = (int*)test_malloc(sizeof(int) * (size_t)n);
  memset(seen, 0, (size_t)total);
  for (int q = 0; q < n; ++q) next[q] = 0;
  for (int i = 0; i < total; ++i) {
    in[i] = (unsigned char*)test_malloc((size_t)wild_max() + kGuard);
    memset(in[i], kPoison, (size_t)wild_max() + kGuard);
  }
  if (mode == kPostedFirst)
    for (int i = 0; i < total; ++i)
      MPI_CHECK(MPI_Irecv(in[i], wild_max() + kGuard, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                          ep->comm, &recvs[i]));
  /* Message j to every rank, then message j + 1: in order per pair. */
  for (int j = 0; j < kWild; ++j)
    for (int k = 0; k < n; ++k) {
      const int d = (r + 1 + k) % n, i = j * n + k, bytes = wild_bytes(r, d, j);
      out[i] = (unsigned char*)test_malloc((size_t)bytes);
      test_fill(out[i], (size_t)bytes, r, key_of(d, base + j));
      MPI_CHECK(MPI_Isend(out[i], bytes, MPI_BYTE, d, base + j, ep->comm, &sends[i]));
    }
  if (mode == kPostedFirst) {
    MPI_CHECK(MPI_Waitall(total, recvs, statuses));
    /* Matched in posting order: each source's messages in send order. */
    for (int i = 0; i < total; ++i) check_wild(ep, &statuses[i], in[i], base, seen, next, name);
  } else if (mode == kAnyAfter) {
    for (int i = 0; i < total; ++i) {
      MPI_CHECK(MPI_Recv(in[i], wild_max() + kGuard, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                         ep->comm, &statuses[i]));
      check_wild(ep, &statuses[i], in[i], base, seen, next, name);
    }
  } else if (mode == kAnyTagPerSource) {
    int i = 0;
    for (int k = 0; k < n; ++k) {
      const int q = (r - 1 - k + 2 * n) % n;
      for (int j = 0; j < kWild; ++j, ++i) {
        MPI_CHECK(MPI_Recv(in[i], wild_max() + kGuard, MPI_BYTE, q, MPI_ANY_TAG, ep->comm,
                           &statuses[i]));
        CHECK(statuses[i].MPI_SOURCE == q && statuses[i].MPI_TAG == base + j,
              "wildcards (%s) at rank %d: receive %d from rank %d got source %d tag %d, "
              "expected tag %d (send order)", name, r, j, q, statuses[i].MPI_SOURCE,
              statuses[i].MPI_TAG, base + j);
        check_wild(ep, &statuses[i], in[i], base, seen, next, name);
      }
    }
  } else {
    int i = 0;
    for (int j = kWild - 1; j >= 0; --j) {
      for (int k = 0; k < n; ++k, ++i) {
        MPI_CHECK(MPI_Recv(in[i], wild_max() + kGuard, MPI_BYTE, MPI_ANY_SOURCE, base + j,
                           ep->comm, &statuses[i]));
        CHECK(statuses[i].MPI_TAG == base + j,
              "wildcards (%s) at rank %d: receive for tag %d got tag %d", name, r, base + j,
              statuses[i].MPI_TAG);
        check_wild(ep, &statuses[i], in[i], base, seen, NULL, name);
      }
    }
  }
  for (int i = 0; i < total; ++i)
    CHECK(seen[i], "wildcards (%s) at rank %d: message %d from rank %d never arrived", name, r,
          i % kWild, i / kWild);
  /* Nothing else is addressed to this rank. */
  int flag = 1;
  MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ep->comm, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag, "wildcards (%s) at rank %d: a message left over after all were received", name,
        r);
  MPI_CHECK(MPI_Waitall(total, sends, MPI_STATUSES_IGNORE));
  for (int i = 0; i < total; ++i) {
    free(out[i]);
    free(in[i]);
  }
  free(out);
  free(in);
  free(sends);
  free(recvs);
  free(statuses);
  free(seen);
  free(next);
}

static void phase_wild_posted(Endpoint* ep, int helper) { (void)helper; wildcards(ep, kPostedFirst); }
static void phase_wild_after(Endpoint* ep, int helper) { (void)helper; wildcards(ep, kAnyAfter); }
static void phase_wild_source(Endpoint* ep, int helper) { (void)helper; wildcards(ep, kAnyTagPerSource); }
static void phase_wild_tag(Endpoint* ep, int helper) { (void)helper; wildcards(ep, kAnySourcePerTag); }

/* ---- probes ------------------------------------------------------------------- */

/* Messages to the right neighbour (tags 20..23) and to oneself (30..33). */
static int probe_bytes(int tag) {
  switch (tag) {
    case 20: return 0;
    case 21: return 777;
    case 22: return 70000;
    case 23: return 8192;
    case 30: return 5;
    case 31: return 200000;
    case 32: return 0;
    default: return 1000;
  }
}

static unsigned char* receive_checked(Endpoint* ep, int source, int tag, MPI_Status* status,
                                      const char* how) {
  const int bytes = probe_bytes(tag);
  char what[128];
  snprintf(what, sizeof what, "probes (%s) at rank %d: tag %d from rank %d", how, ep->rank, tag,
           source);
  CHECK_STATUS(*status, source, tag, MPI_BYTE, bytes, what);
  unsigned char* buf = (unsigned char*)test_malloc((size_t)bytes + kGuard);
  memset(buf, kPoison, (size_t)bytes + kGuard);
  return buf;
}

static void check_received(const Endpoint* ep, unsigned char* buf, const MPI_Status* status,
                           int source, int tag, const char* how) {
  const int bytes = probe_bytes(tag);
  char what[128];
  snprintf(what, sizeof what, "probes (%s) at rank %d: tag %d from rank %d", how, ep->rank, tag,
           source);
  CHECK_STATUS(*status, source, tag, MPI_BYTE, bytes, what);
  CHECK_PATTERN(buf, bytes, source, key_of(ep->rank, tag), what);
  check_guard(buf, (size_t)bytes, what);
  free(buf);
}

static void phase_probes(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size, right = (r + 1) % n, left = (r + n - 1) % n;
  static const int kTags[8] = {20, 21, 22, 23, 30, 31, 32, 33};
  unsigned char* out[8];
  MPI_Request sends[8];
  for (int i = 0; i < 8; ++i) {
    const int dest = kTags[i] < 30 ? right : r, bytes = probe_bytes(kTags[i]);
    out[i] = (unsigned char*)test_malloc((size_t)bytes);
    test_fill(out[i], (size_t)bytes, r, key_of(dest, kTags[i]));
    MPI_CHECK(MPI_Isend(out[i], bytes, MPI_BYTE, dest, kTags[i], ep->comm, &sends[i]));
  }
  MPI_Status status, status2;
  unsigned char* buf;
  int flag = 0;

  /* Tag 20 (empty): MPI_Probe by tag with ANY_SOURCE, then MPI_Recv. */
  MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, 20, ep->comm, &status));
  buf = receive_checked(ep, left, 20, &status, "Probe ANY_SOURCE");
  MPI_CHECK(MPI_Recv(buf, kGuard, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, ep->comm,
                     &status2));
  check_received(ep, buf, &status2, left, 20, "Recv after Probe");

  /* Tag 21: MPI_Iprobe by source with ANY_TAG finds the next one in order. */
  do {
    MPI_CHECK(MPI_Iprobe(left, MPI_ANY_TAG, ep->comm, &flag, &status));
    if (!flag) sched_yield();
  } while (!flag);
  buf = receive_checked(ep, left, 21, &status, "Iprobe ANY_TAG");
  MPI_CHECK(MPI_Recv(buf, probe_bytes(21) + kGuard, MPI_BYTE, left, 21, ep->comm, &status2));
  check_received(ep, buf, &status2, left, 21, "Recv after Iprobe");

  /* Tag 22 (rendezvous): MPI_Mprobe, then MPI_Mrecv of exactly its count. */
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_CHECK(MPI_Mprobe(left, 22, ep->comm, &message, &status));
  CHECK(message != MPI_MESSAGE_NULL, "probes at rank %d: MPI_Mprobe gave MPI_MESSAGE_NULL", r);
  buf = receive_checked(ep, left, 22, &status, "Mprobe");
  int count = -1;
  MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &count));
  MPI_CHECK(MPI_Mrecv(buf, count, MPI_BYTE, &message, &status2));
  CHECK(message == MPI_MESSAGE_NULL, "probes at rank %d: MPI_Mrecv left the message handle", r);
  check_received(ep, buf, &status2, left, 22, "Mrecv");

  /* Tag 23 (8 KiB): MPI_Improbe with ANY_SOURCE, then MPI_Imrecv. */
  flag = 0;
  do {
    MPI_CHECK(MPI_Improbe(MPI_ANY_SOURCE, 23, ep->comm, &flag, &message, &status));
    if (!flag) sched_yield();
  } while (!flag);
  buf = receive_checked(ep, left, 23, &status, "Improbe");
  MPI_Request request;
  MPI_CHECK(MPI_Imrecv(buf, probe_bytes(23) + kGuard, MPI_BYTE, &message, &request));
  MPI_CHECK(MPI_Wait(&request, &status2));
  check_received(ep, buf, &status2, left, 23, "Imrecv");

  /* From oneself: the last one first by its tag, then the rest in send
   * order by ANY_TAG probes and ANY_SOURCE/ANY_TAG receives. */
  MPI_CHECK(MPI_Probe(r, 33, ep->comm, &status));
  buf = receive_checked(ep, r, 33, &status, "Probe of the last message to self");
  MPI_CHECK(MPI_Recv(buf, probe_bytes(33) + kGuard, MPI_BYTE, r, 33, ep->comm, &status2));
  check_received(ep, buf, &status2, r, 33, "Recv from self");
  for (int tag = 30; tag <= 32; ++tag) {
    flag = 0;
    do {
      MPI_CHECK(MPI_Iprobe(r, MPI_ANY_TAG, ep->comm, &flag, &status));
      if (!flag) sched_yield();
    } while (!flag);
    buf = receive_checked(ep, r, tag, &status, "Iprobe ANY_TAG from self");
    MPI_CHECK(MPI_Recv(buf, probe_bytes(tag) + kGuard, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                       ep->comm, &status2));
    check_received(ep, buf, &status2, r, tag, "ANY_SOURCE/ANY_TAG from self");
  }
  /* Every message to this rank is received: a probe finds nothing (no
   * message to another handle of this process, say). */
  MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ep->comm, &flag, &status));
  CHECK(!flag, "probes at rank %d: MPI_Iprobe found a message from rank %d tag %d after all "
        "were received", r, status.MPI_SOURCE, status.MPI_TAG);
  MPI_CHECK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, ep->comm, &flag, &message, &status));
  CHECK(!flag, "probes at rank %d: MPI_Improbe found a message after all were received", r);
  MPI_CHECK(MPI_Waitall(8, sends, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 8; ++i) free(out[i]);
}

/* ---- ordering ------------------------------------------------------------------ */

/* Message `seq` of a stream: 4 bytes of sequence number and a pattern;
 * every 16th is past the eager limit. */
static int order_bytes(int seq) { return seq % 16 == 15 ? 9000 + seq : 4 + (seq * 37) % 500; }

enum { kOrderTag = 400, kOrderMax = 9000 + 4 * 200 };

static void phase_ordering(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size, right = (r + 1) % n, left = (r + n - 1) % n;
  const int per_stream = g_quick ? 30 : 150, total = 2 * per_stream;
  /* Seqs [0, per_stream) go to the right neighbour, [per_stream, total)
   * to oneself, interleaved. */
  unsigned char** out = (unsigned char**)test_malloc(sizeof(unsigned char*) * (size_t)total);
  unsigned char** in = (unsigned char**)test_malloc(sizeof(unsigned char*) * (size_t)total);
  MPI_Request* sends = (MPI_Request*)test_malloc(sizeof(MPI_Request) * (size_t)total);
  MPI_Request* recvs = (MPI_Request*)test_malloc(sizeof(MPI_Request) * (size_t)per_stream);
  MPI_Status* statuses = (MPI_Status*)test_malloc(sizeof(MPI_Status) * (size_t)total);
  for (int i = 0; i < total; ++i) {
    in[i] = (unsigned char*)test_malloc(kOrderMax + kGuard);
    memset(in[i], kPoison, kOrderMax + kGuard);
  }
  /* Half the receives are posted before the sends, half made after. */
  for (int i = 0; i < per_stream; ++i)
    MPI_CHECK(MPI_Irecv(in[i], kOrderMax + kGuard, MPI_BYTE, MPI_ANY_SOURCE, kOrderTag,
                        ep->comm, &recvs[i]));
  for (int i = 0; i < total; ++i) {
    const int seq = i % 2 == 0 ? i / 2 : per_stream + i / 2, dest = seq < per_stream ? right : r;
    const int bytes = order_bytes(seq);
    out[i] = (unsigned char*)test_malloc((size_t)bytes);
    test_fill(out[i], (size_t)bytes, r, key_of(dest, 1000 + seq));
    memcpy(out[i], &seq, sizeof seq);
    MPI_CHECK(MPI_Isend(out[i], bytes, MPI_BYTE, dest, kOrderTag, ep->comm, &sends[i]));
  }
  for (int i = per_stream; i < total; ++i)
    MPI_CHECK(MPI_Recv(in[i], kOrderMax + kGuard, MPI_BYTE, MPI_ANY_SOURCE, kOrderTag, ep->comm,
                       &statuses[i]));
  MPI_CHECK(MPI_Waitall(per_stream, recvs, statuses));
  /* In posting order, each stream's sequence numbers must count up. */
  int next_from_left = 0, next_from_self = per_stream;
  for (int i = 0; i < total; ++i) {
    int seq = -1;
    memcpy(&seq, in[i], sizeof seq);
    const int from_self = seq >= per_stream;
    const int source = from_self ? r : left, expected = from_self ? next_from_self : next_from_left;
    CHECK(seq == expected, "ordering at rank %d: receive %d got sequence number %d (from rank "
          "%d), expected %d from rank %d next", r, i, seq, statuses[i].MPI_SOURCE, expected,
          source);
    if (from_self) {
      ++next_from_self;
    } else {
      ++next_from_left;
    }
    char what[96];
    snprintf(what, sizeof what, "ordering at rank %d: message %d from rank %d", r, seq, source);
    CHECK_STATUS(statuses[i], source, kOrderTag, MPI_BYTE, order_bytes(seq), what);
    check_bytes(in[i], sizeof seq, (size_t)order_bytes(seq), source, key_of(r, 1000 + seq), what);
    check_guard(in[i], (size_t)order_bytes(seq), what);
  }
  MPI_CHECK(MPI_Waitall(total, sends, MPI_STATUSES_IGNORE));
  for (int i = 0; i < total; ++i) {
    free(out[i]);
    free(in[i]);
  }
  free(out);
  free(in);
  free(sends);
  free(recvs);
  free(statuses);
}

/* ---- persistent requests ---------------------------------------------------------- */

enum { kLinks = 4 };

static void phase_persistent(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size, right = (r + 1) % n, left = (r + n - 1) % n;
  const int rounds = g_quick ? 4 : 15;
  /* Link k: a message to `to[k]`, one from `from[k]` (ANY_SOURCE for the
   * last, whose only sender is the left neighbour). */
  const int tags[kLinks] = {60, 61, 62, 63};
  const int bytes[kLinks] = {64, 70000, 8192, 300};
  const int to[kLinks] = {right, left, r, right};
  const int from[kLinks] = {left, right, r, left};
  unsigned char* out[kLinks];
  unsigned char* in[kLinks];
  MPI_Request requests[2 * kLinks]; /* receives, then sends */
  for (int k = 0; k < kLinks; ++k) {
    out[k] = (unsigned char*)test_malloc((size_t)bytes[k]);
    in[k] = (unsigned char*)test_malloc((size_t)bytes[k] + kGuard);
    MPI_CHECK(MPI_Recv_init(in[k], bytes[k] + kGuard, MPI_BYTE, k == 3 ? MPI_ANY_SOURCE : from[k],
                            tags[k], ep->comm, &requests[k]));
    if (k == 1) {
      MPI_CHECK(MPI_Ssend_init(out[k], bytes[k], MPI_BYTE, to[k], tags[k], ep->comm,
                               &requests[kLinks + k]));
    } else {
      MPI_CHECK(MPI_Send_init(out[k], bytes[k], MPI_BYTE, to[k], tags[k], ep->comm,
                              &requests[kLinks + k]));
    }
  }
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < kLinks; ++k) {
      test_fill(out[k], (size_t)bytes[k], r, key_of(to[k], tags[k] * 1000 + round));
      memset(in[k], kPoison, (size_t)bytes[k] + kGuard);
    }
    if (round % 2 == 0) {
      MPI_CHECK(MPI_Startall(2 * kLinks, requests));
    } else {
      MPI_CHECK(MPI_Startall(kLinks, requests + kLinks));
      for (int k = kLinks - 1; k >= 0; --k) MPI_CHECK(MPI_Start(&requests[k]));
    }
    MPI_Status statuses[2 * kLinks];
    MPI_CHECK(MPI_Waitall(2 * kLinks, requests, statuses));
    for (int k = 0; k < kLinks; ++k) {
      CHECK(requests[k] != MPI_REQUEST_NULL, "persistent at rank %d: MPI_Waitall freed a "
            "persistent request", r);
      char what[96];
      snprintf(what, sizeof what, "persistent at rank %d: link %d round %d from rank %d", r, k,
               round, from[k]);
      CHECK_STATUS(statuses[k], from[k], tags[k], MPI_BYTE, bytes[k], what);
      CHECK_PATTERN(in[k], bytes[k], from[k], key_of(r, tags[k] * 1000 + round), what);
      check_guard(in[k], (size_t)bytes[k], what);
    }
  }
  for (int k = 0; k < 2 * kLinks; ++k) {
    MPI_CHECK(MPI_Request_free(&requests[k]));
    CHECK(requests[k] == MPI_REQUEST_NULL, "MPI_Request_free did not null the handle");
  }
  for (int k = 0; k < kLinks; ++k) {
    free(out[k]);
    free(in[k]);
  }
}

/* ---- partitioned -------------------------------------------------------------------- */

#if MPI_VERSION >= 4
static int part_value(int source, int round, long j) {
  return (int)(uint32_t)test_mix64((uint64_t)(uint32_t)source * 0x9e3779b1ull +
                                   (uint64_t)round * 0x100000001b3ull + (uint64_t)j);
}

static void check_part_ints(const int* buf, long lo, long hi, int source, int round,
                            const char* what) {
  for (long j = lo; j < hi; ++j)
    CHECK(buf[j] == part_value(source, round, j),
          "%s round %d: int %ld is 0x%08x, expected 0x%08x (from rank %d)", what, round, j,
          (unsigned)buf[j], (unsigned)part_value(source, round, j), source);
}

static void shuffle(int* values, int n, TestRng* rng) {
  for (int i = n - 1; i > 0; --i) {
    const int k = test_rng_below(rng, i + 1), t = values[i];
    values[i] = values[k];
    values[k] = t;
  }
}

enum { kSendParts = 8, kRecvParts = 4 };

static void phase_partitioned(Endpoint* ep, int helper) {
  (void)helper;
  const int r = ep->rank, n = ep->size, peer = (r ^ 1) < n ? (r ^ 1) : r, tag = 700;
  const int rounds = g_quick ? 3 : 10;
  const long per_send = g_quick ? 250 : 2500, total = per_send * kSendParts;
  const long per_recv = total / kRecvParts;
  int* send_buf = (int*)test_malloc(sizeof(int) * (size_t)total);
  int* recv_buf = (int*)test_malloc(sizeof(int) * (size_t)total);
  MPI_Request requests[2]; /* receive, send */
  MPI_CHECK(MPI_Precv_init(recv_buf, kRecvParts, per_recv, MPI_INT, peer, tag, ep->comm,
                           MPI_INFO_NULL, &requests[0]));
  MPI_CHECK(MPI_Psend_init(send_buf, kSendParts, per_send, MPI_INT, peer, tag, ep->comm,
                           MPI_INFO_NULL, &requests[1]));
  char what[96];
  snprintf(what, sizeof what, "partitioned at rank %d (from rank %d)", r, peer);
  for (int round = 0; round < rounds; ++round) {
    TestRng rng = {test_mix64((uint64_t)r * 7919u + (uint64_t)round)};
    memset(recv_buf, kPoison, sizeof(int) * (size_t)total);
    if (round % 2 == 0) {
      MPI_CHECK(MPI_Startall(2, requests));
    } else {
      MPI_CHECK(MPI_Start(&requests[1]));
      MPI_CHECK(MPI_Start(&requests[0]));
    }
    int order[kSendParts];
    for (int p = 0; p < kSendParts; ++p) order[p] = p;
    shuffle(order, kSendParts, &rng);
    const int variant = round % 3;
    if (variant == 0) { /* one by one, in random order */
      for (int i = 0; i < kSendParts; ++i) {
        const int p = order[i];
        for (long j = p * per_send; j < (p + 1) * per_send; ++j)
          send_buf[j] = part_value(r, round, j);
        MPI_CHECK(MPI_Pready(p, requests[1]));
      }
    } else if (variant == 1) { /* pairs of partitions as ranges */
      for (int i = 0; i < kSendParts; ++i) {
        if (order[i] % 2) continue;
        const int lo = order[i], hi = order[i] + 1;
        for (long j = lo * per_send; j < (hi + 1) * per_send; ++j)
          send_buf[j] = part_value(r, round, j);
        MPI_CHECK(MPI_Pready_range(lo, hi, requests[1]));
      }
    } else { /* two lists */
      for (long j = 0; j < total; ++j) send_buf[j] = part_value(r, round, j);
      MPI_CHECK(MPI_Pready_list(kSendParts / 2, order, requests[1]));
      MPI_CHECK(MPI_Pready_list(kSendParts - kSendParts / 2, order + kSendParts / 2,
                                requests[1]));
    }
    /* Each receive partition checked as soon as it is reported. */
    int arrived[kRecvParts] = {0}, left = kRecvParts;
    while (left > 0) {
      for (int q = 0; q < kRecvParts; ++q) {
        if (arrived[q]) continue;
        int flag = 0;
        MPI_CHECK(MPI_Parrived(requests[0], q, &flag));
        if (!flag) continue;
        check_part_ints(recv_buf, q * per_recv, (q + 1) * per_recv, peer, round, what);
        arrived[q] = 1;
        --left;
      }
      if (left > 0) sched_yield();
    }
    MPI_Status status;
    MPI_CHECK(MPI_Wait(&requests[1], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Wait(&requests[0], &status));
    CHECK_STATUS(status, peer, tag, MPI_INT, (int)total, what);
    check_part_ints(recv_buf, 0, total, peer, round, what);
  }
  MPI_CHECK(MPI_Request_free(&requests[0]));
  MPI_CHECK(MPI_Request_free(&requests[1]));
  free(send_buf);
  free(recv_buf);
}
#endif

/* ---- two threads on one handle ---------------------------------------------------------- */

/* Helper 0 of every handle sends to the right and receives from the left
 * (tag 800); helper 1 the other way (tag 801); both with ANY_SOURCE. */
static void phase_shared(Endpoint* ep, int helper) {
  const int r = ep->rank, n = ep->size, rounds = g_quick ? 10 : 40;
  const int tag = 800 + helper, to = helper ? (r + n - 1) % n : (r + 1) % n;
  const int from = helper ? (r + 1) % n : (r + n - 1) % n;
  unsigned char* out = (unsigned char*)test_malloc(12000);
  unsigned char* in = (unsigned char*)test_malloc(12000 + kGuard);
  for (int round = 0; round < rounds; ++round) {
    const int bytes = round % 3 == 2 ? 9000 + round : 100 + round;
    test_fill(out, (size_t)bytes, r, key_of(to, tag * 1000 + round));
    memset(in, kPoison, 12000 + kGuard);
    MPI_Status status;
    MPI_CHECK(MPI_Sendrecv(out, bytes, MPI_BYTE, to, tag, in, 12000 + kGuard, MPI_BYTE,
                           MPI_ANY_SOURCE, tag, ep->comm, &status));
    char what[96];
    snprintf(what, sizeof what, "shared handle at rank %d, thread %d, round %d", r, helper,
             round);
    CHECK_STATUS(status, from, tag, MPI_BYTE, bytes, what);
    CHECK_PATTERN(in, bytes, from, key_of(r, tag * 1000 + round), what);
    check_guard(in, (size_t)bytes, what);
  }
  free(out);
  free(in);
}

/* ---- free -------------------------------------------------------------------------- */

static void phase_free(Endpoint* ep, int helper) {
  (void)helper;
  MPI_CHECK(MPI_Comm_free(&ep->comm));
  CHECK(ep->comm == MPI_COMM_NULL, "endpoints rank %d: MPI_Comm_free did not null the handle",
        ep->rank);
}

/* ---- main ---------------------------------------------------------------------------- */

int main(int argc, char** argv) {
  endpoints_init(&argc, &argv, "endpoints",
                 "[--endpoints K | --counts A,B,... | --varying] [--quick] "
                 "[--watchdog SECONDS]", "phase ");
  for (int i = 1; i < argc; ++i)
    if (!common_option(argc, argv, &i)) usage_exit(argv[0]);
  CHECK(g_per_process >= 0 && g_per_process <= kMaxHandles && g_watchdog_s > 0,
        "bad options: %d endpoints per process (0..%d)", g_per_process, kMaxHandles);
  endpoints_layout();

  /* One call per process; a process with no handles still takes part
   * (and passes no array). */
  MPI_Comm handles[kMaxHandles + 1];
  for (int i = 0; i <= kMaxHandles; ++i) handles[i] = MPI_COMM_NULL;
  endpoints_create(handles);
  CHECK(handles[g_num_ep] == MPI_COMM_NULL, "MPIX_Comm_create_endpoints wrote past the %d "
        "handles asked for", g_num_ep);
  for (int i = 0; i < g_num_ep; ++i) {
    CHECK(handles[i] != MPI_COMM_NULL, "handle %d of %d is MPI_COMM_NULL", i, g_num_ep);
    for (int k = 0; k < i; ++k)
      CHECK(handles[i] != handles[k], "handles %d and %d are the same handle", k, i);
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0)
    printf("endpoints: %d endpoints over %d processes (%d here)%s\n", g_ep_size, g_size,
           g_num_ep, g_quick ? ", quick" : "");

  run_phase("ranks", phase_ranks, 1);
  run_phase("all-pairs", phase_all_pairs, 1);
  run_phase("wildcards posted first", phase_wild_posted, 1);
  run_phase("wildcards after the sends", phase_wild_after, 1);
  run_phase("ANY_TAG per source", phase_wild_source, 1);
  run_phase("ANY_SOURCE per tag", phase_wild_tag, 1);
  run_phase("probes", phase_probes, 1);
  run_phase("ordering", phase_ordering, 1);
  run_phase("persistent", phase_persistent, 1);
#if MPI_VERSION >= 4
  run_phase("partitioned", phase_partitioned, 1);
#endif
  run_phase("two threads per handle", phase_shared, 2);
  run_phase("free", phase_free, 1);
  alarm(0);
  test_report_pass("endpoints", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}

#endif /* MINIMPI_HAS_ENDPOINTS */
