/* Every collective over an endpoints communicator (MPIX_Comm_create_endpoints),
 * each rank a handle driven by its own thread, the threads of a process
 * calling each collective on their own handles at the same time.
 *
 * Each rank's input is a pure function of (rank, index, salt) (and of the
 * destination for the all-to-alls), so every rank computes what every
 * other rank contributed and folds it in rank order itself: every element
 * of every result is compared with that serial reference, and guard
 * elements after each receive buffer (and the gaps between the blocks of
 * the v-variants) must stay untouched.  Values keep every reduction exact
 * in any order (doubles are small multiples of 1/2); the user operation
 * (composition of affine maps x -> a*x + b modulo 2^32) is not
 * commutative, so it also checks that reductions, scans and
 * Reduce_scatter fold in rank order.
 *
 * Per round: Barrier (the handles of this process must all have entered
 * it before any leaves), Bcast from every root and one large one,
 * Reduce/Allreduce (MPI_SUM and MPI_MAX on int and double, the user op;
 * counts 1, 37, 1000), Gather(v), Scatter(v), Allgather(v), Alltoall(v,w),
 * Reduce_scatter(_block), Scan, Exscan; then the nonblocking form of each,
 * all started before any is completed (one Ibcast per root), completed by
 * MPI_Waitall or one by one by MPI_Waitany.  Roots, counts and operations
 * change from round to round.
 *
 * Usage: endpoints_collectives [--endpoints K | --counts A,B,... | --varying]
 *                              [--rounds N] [--quick] [--watchdog SECONDS]
 * (--counts: process p asks for A,B,...[p % length] handles, 0 included;
 * --varying is --counts 2,0,1; --quick: 2 rounds and smaller messages.) */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>

#include "endpoints_util.h"

#ifndef MINIMPI_HAS_ENDPOINTS
TEST_SKIPPED_MAIN("endpoints_collectives", "the MPI library has no MPIX_Comm_create_endpoints")
#else

static int g_rounds = 4; /* --rounds N */

/* ---- values -------------------------------------------------------------- */

/* Element i of source's contribution (salt: which collective call). */
static int ival(int source, long i, int salt) {
  return (int)((source * 7919L + i * 31L + salt * 104729L) % 100003L) - 50000;
}

static double dval(int source, long i, int salt) {
  return (double)((source * 13L + i * 7L + salt * 3L) % 201L - 100) * 0.5;
}

/* The value `source` sends to `dest` at index i in the all-to-alls. */
static int movement(int source, int dest, long i, int salt) {
  return (int)((source * 7919L + dest * 104729L + i * 31L + salt * 15485863L) % 1000003L) -
         500000;
}

/* ---- reductions ---------------------------------------------------------- */

typedef enum { kIntSum, kIntMax, kDoubleSum, kDoubleMax, kAffine, kNumOps } OpCase;
static const char* const kOpNames[kNumOps] = {"MPI_SUM on MPI_INT", "MPI_MAX on MPI_INT",
                                              "MPI_SUM on MPI_DOUBLE", "MPI_MAX on MPI_DOUBLE",
                                              "user op (affine maps, not commutative)"};

/* x -> a*x + b modulo 2^32 (a odd); (u then v) = (u.a*v.a, v.a*u.b + v.b). */
typedef struct {
  uint32_t a, b;
} Affine;

static MPI_Datatype g_affine_type;
static MPI_Op g_affine_op;

static Affine affine_compose(Affine earlier, Affine later) {
  Affine result = {earlier.a * later.a, later.a * earlier.b + later.b};
  return result;
}

/* MPI: inoutvec[i] = invec[i] op inoutvec[i], invec from the lower ranks. */
static void affine_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const Affine* a = (const Affine*)in;
  Affine* b = (Affine*)inout;
  for (int i = 0; i < *len; ++i) b[i] = affine_compose(a[i], b[i]);
}

static size_t op_size(OpCase c) {
  return c == kIntSum || c == kIntMax ? sizeof(int) : c == kAffine ? sizeof(Affine)
                                                                   : sizeof(double);
}

static MPI_Datatype op_type(OpCase c) {
  return c == kIntSum || c == kIntMax ? MPI_INT : c == kAffine ? g_affine_type : MPI_DOUBLE;
}

static MPI_Op op_op(OpCase c) {
  return c == kIntSum || c == kDoubleSum ? MPI_SUM : c == kAffine ? g_affine_op : MPI_MAX;
}

/* Element i of `source`'s input, written to `out`. */
static void op_element(OpCase c, void* out, long i, int source, int salt) {
  if (c == kIntSum || c == kIntMax) {
    const int v = ival(source, i, salt);
    memcpy(out, &v, sizeof v);
  } else if (c == kAffine) {
    const uint64_t m = test_mix64((uint64_t)source * 0x9e3779b97f4a7c15ull + (uint64_t)i * 977u +
                                  (uint64_t)salt);
    const Affine v = {(uint32_t)m | 1u, (uint32_t)(m >> 32)};
    memcpy(out, &v, sizeof v);
  } else {
    const double v = dval(source, i, salt);
    memcpy(out, &v, sizeof v);
  }
}

static void op_input(OpCase c, void* buf, long i, int source, int salt) {
  op_element(c, (char*)buf + (size_t)i * op_size(c), i, source, salt);
}

static void op_fold(OpCase c, void* acc, const void* x) {
  if (c == kIntSum || c == kIntMax) {
    int a, b;
    memcpy(&a, acc, sizeof a);
    memcpy(&b, x, sizeof b);
    a = c == kIntSum ? a + b : (a > b ? a : b);
    memcpy(acc, &a, sizeof a);
  } else if (c == kAffine) {
    Affine a, b;
    memcpy(&a, acc, sizeof a);
    memcpy(&b, x, sizeof b);
    a = affine_compose(a, b);
    memcpy(acc, &a, sizeof a);
  } else {
    double a, b;
    memcpy(&a, acc, sizeof a);
    memcpy(&b, x, sizeof b);
    a = c == kDoubleSum ? a + b : (a > b ? a : b);
    memcpy(acc, &a, sizeof a);
  }
}

static void op_format(OpCase c, const void* x, char* text, size_t length) {
  if (c == kIntSum || c == kIntMax) {
    int v;
    memcpy(&v, x, sizeof v);
    snprintf(text, length, "%d", v);
  } else if (c == kAffine) {
    Affine v;
    memcpy(&v, x, sizeof v);
    snprintf(text, length, "(a %u, b %u)", (unsigned)v.a, (unsigned)v.b);
  } else {
    double v;
    memcpy(&v, x, sizeof v);
    snprintf(text, length, "%.17g", v);
  }
}

/* Checks `count` elements of `got` against the fold, in rank order, of
 * sources [lo, hi) at elements [offset, offset + count). */
static void check_reduction(OpCase c, const void* got, long count, long offset, int lo, int hi,
                            int salt, const char* what) {
  const size_t size = op_size(c);
  unsigned char acc[16], x[16];
  for (long i = 0; i < count; ++i) {
    op_element(c, acc, offset + i, lo, salt);
    for (int q = lo + 1; q < hi; ++q) {
      op_element(c, x, offset + i, q, salt);
      op_fold(c, acc, x);
    }
    if (memcmp((const unsigned char*)got + size * (size_t)i, acc, size) != 0) {
      char got_text[64], want_text[64];
      op_format(c, (const unsigned char*)got + size * (size_t)i, got_text, sizeof got_text);
      op_format(c, acc, want_text, sizeof want_text);
      test_fail(__FILE__, __LINE__, "%s (%s, count %ld): element %ld is %s, expected %s (ranks "
                "%d..%d folded)", what, kOpNames[c], count, i, got_text, want_text, lo, hi - 1);
    }
  }
}

/* ---- buffers ------------------------------------------------------------- */

/* `bytes` of poison followed by kGuard more. */
static void* poisoned(size_t bytes) {
  unsigned char* p = (unsigned char*)test_malloc(bytes + kGuard);
  memset(p, kPoison, bytes + kGuard);
  return p;
}

static void check_untouched(const void* buffer, size_t from, size_t to, const char* what) {
  const unsigned char* p = (const unsigned char*)buffer;
  for (size_t i = from; i < to; ++i)
    CHECK(p[i] == kPoison, "%s: byte %zu of the receive buffer, outside every block (a gap "
          "or the guard after the end), was overwritten (0x%02x)", what, i, p[i]);
}

static void check_ints(const int* got, long count, const char* what, int (*expected)(long, const void*),
                       const void* context) {
  for (long i = 0; i < count; ++i)
    CHECK(got[i] == expected(i, context), "%s: element %ld is %d, expected %d", what, i, got[i],
          expected(i, context));
}

/* ---- jobs: one collective call and its check --------------------------- */

typedef struct Job Job;
typedef void (*CheckFn)(const Endpoint* ep, Job* job);

struct Job {
  char name[96];
  CheckFn check;
  MPI_Request request;
  int root, count, salt, round;
  OpCase op;
  void* send;
  void* recv;
  size_t recv_bytes; /* where the guard starts */
  int* scounts;
  int* sdispls;
  int* rcounts;
  int* rdispls;
  MPI_Datatype* stypes;
  MPI_Datatype* rtypes;
};

enum { kMaxJobs = kMaxHandles * 64 + 64 };

typedef struct {
  Endpoint* ep;
  int round, nonblocking, next_salt;
  Job* jobs[kMaxJobs];
  int num_jobs;
} Ctx;

static Job* new_job(Ctx* c, const char* name, CheckFn check) {
  Job* job = (Job*)test_malloc(sizeof(Job));
  memset(job, 0, sizeof *job);
  snprintf(job->name, sizeof job->name, "%s%s at rank %d round %d", c->nonblocking ? "I" : "",
           name, c->ep->rank, c->round);
  job->check = check;
  job->request = MPI_REQUEST_NULL;
  job->salt = c->next_salt++;
  job->round = c->round;
  return job;
}

static int* int_array(int n) { return (int*)test_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)); }

static void free_job(Job* job) {
  free(job->send);
  free(job->recv);
  free(job->scounts);
  free(job->sdispls);
  free(job->rcounts);
  free(job->rdispls);
  free(job->stypes);
  free(job->rtypes);
  free(job);
}

/* Blocking: the call has returned, check now.  Nonblocking: later. */
static void submit(Ctx* c, Job* job) {
  if (!c->nonblocking) {
    job->check(c->ep, job);
    free_job(job);
    return;
  }
  CHECK(c->num_jobs < kMaxJobs, "too many outstanding collectives");
  c->jobs[c->num_jobs++] = job;
}

#define COLL(c, job, blocking_call, nonblocking_call) \
  do {                                                \
    if ((c)->nonblocking) {                           \
      MPI_CHECK(nonblocking_call);                    \
    } else {                                          \
      MPI_CHECK(blocking_call);                       \
    }                                                 \
  } while (0)

/* ---- barrier --------------------------------------------------------------- */

static void check_nothing(const Endpoint* ep, Job* job) {
  (void)ep;
  (void)job;
}

static atomic_int g_barrier_entries; /* by this process's handles */

static void do_barrier(Ctx* c, int* barriers_done) {
  if (c->nonblocking) {
    Job* job = new_job(c, "barrier", check_nothing);
    MPI_CHECK(MPI_Ibarrier(c->ep->comm, &job->request));
    c->jobs[c->num_jobs++] = job;
    return;
  }
  atomic_fetch_add(&g_barrier_entries, 1);
  MPI_CHECK(MPI_Barrier(c->ep->comm));
  ++*barriers_done;
  const int entries = atomic_load(&g_barrier_entries);
  CHECK(entries >= g_num_ep * *barriers_done,
        "Barrier at rank %d round %d: left barrier %d when this process's %d handles had "
        "entered only %d times in all (expected at least %d)", c->ep->rank, c->round,
        *barriers_done, g_num_ep, entries, g_num_ep * *barriers_done);
}

/* ---- bcast ------------------------------------------------------------------- */

static int bcast_value(long i, const void* context) {
  const Job* job = (const Job*)context;
  return ival(job->root, i, job->salt);
}

static void check_bcast(const Endpoint* ep, Job* job) {
  (void)ep;
  check_ints((const int*)job->recv, job->count, job->name, bcast_value, job);
  check_untouched(job->recv, job->recv_bytes, job->recv_bytes + kGuard, job->name);
}

static void do_bcast(Ctx* c, int root, int count) {
  Job* job = new_job(c, "Bcast", check_bcast);
  snprintf(job->name + strlen(job->name), sizeof job->name - strlen(job->name),
           " root %d count %d", root, count);
  job->root = root;
  job->count = count;
  job->recv_bytes = sizeof(int) * (size_t)count;
  job->recv = poisoned(job->recv_bytes);
  if (c->ep->rank == root)
    for (long i = 0; i < count; ++i) ((int*)job->recv)[i] = ival(root, i, job->salt);
  COLL(c, job, MPI_Bcast(job->recv, count, MPI_INT, root, c->ep->comm),
       MPI_Ibcast(job->recv, count, MPI_INT, root, c->ep->comm, &job->request));
  submit(c, job);
}

/* ---- reduce, allreduce, scan, exscan -------------------------------------------- */

typedef enum { kReduce, kAllreduce, kScan, kExscan } ReduceKind;

static void check_reduce_like(const Endpoint* ep, Job* job) {
  const ReduceKind kind = (ReduceKind)job->scounts[0];
  const int r = ep->rank, n = ep->size;
  int lo = 0, hi = n;
  if (kind == kReduce && r != job->root) return; /* recvbuf not significant */
  if (kind == kScan) hi = r + 1;
  if (kind == kExscan) hi = r;
  if (hi > lo) check_reduction(job->op, job->recv, job->count, 0, lo, hi, job->salt, job->name);
  check_untouched(job->recv, job->recv_bytes, job->recv_bytes + kGuard, job->name);
}

static void do_reduce_like(Ctx* c, ReduceKind kind, OpCase op, int count, int root) {
  static const char* const kNames[] = {"Reduce", "Allreduce", "Scan", "Exscan"};
  Job* job = new_job(c, kNames[kind], check_reduce_like);
  if (kind == kReduce)
    snprintf(job->name + strlen(job->name), sizeof job->name - strlen(job->name), " root %d",
             root);
  job->op = op;
  job->count = count;
  job->root = root;
  job->scounts = int_array(1);
  job->scounts[0] = (int)kind;
  const size_t bytes = op_size(op) * (size_t)count;
  job->send = test_malloc(bytes);
  for (long i = 0; i < count; ++i) op_input(op, job->send, i, c->ep->rank, job->salt);
  job->recv_bytes = bytes;
  job->recv = poisoned(bytes);
  MPI_Comm comm = c->ep->comm;
  MPI_Datatype type = op_type(op);
  MPI_Op mpi_op = op_op(op);
  switch (kind) {
    case kReduce:
      COLL(c, job, MPI_Reduce(job->send, job->recv, count, type, mpi_op, root, comm),
           MPI_Ireduce(job->send, job->recv, count, type, mpi_op, root, comm, &job->request));
      break;
    case kAllreduce:
      COLL(c, job, MPI_Allreduce(job->send, job->recv, count, type, mpi_op, comm),
           MPI_Iallreduce(job->send, job->recv, count, type, mpi_op, comm, &job->request));
      break;
    case kScan:
      COLL(c, job, MPI_Scan(job->send, job->recv, count, type, mpi_op, comm),
           MPI_Iscan(job->send, job->recv, count, type, mpi_op, comm, &job->request));
      break;
    case kExscan:
      COLL(c, job, MPI_Exscan(job->send, job->recv, count, type, mpi_op, comm),
           MPI_Iexscan(job->send, job->recv, count, type, mpi_op, comm, &job->request));
      break;
  }
  submit(c, job);
}

/* ---- reduce_scatter(_block) -------------------------------------------------- */

static void check_reduce_scatter(const Endpoint* ep, Job* job) {
  const int r = ep->rank, n = ep->size;
  long offset = 0;
  for (int q = 0; q < r; ++q) offset += job->rcounts[q];
  check_reduction(job->op, job->recv, job->rcounts[r], offset, 0, n, job->salt, job->name);
  check_untouched(job->recv, job->recv_bytes, job->recv_bytes + kGuard, job->name);
}

/* block > 0: Reduce_scatter_block of `block` elements; otherwise
 * Reduce_scatter with counts (q + round) % 3. */
static void do_reduce_scatter(Ctx* c, OpCase op, int block) {
  Job* job = new_job(c, block > 0 ? "Reduce_scatter_block" : "Reduce_scatter",
                     check_reduce_scatter);
  const int n = c->ep->size, r = c->ep->rank;
  job->op = op;
  job->rcounts = int_array(n);
  long total = 0;
  for (int q = 0; q < n; ++q) {
    job->rcounts[q] = block > 0 ? block : (q + c->round) % 3;
    total += job->rcounts[q];
  }
  job->send = test_malloc(op_size(op) * (size_t)(total > 0 ? total : 1));
  for (long i = 0; i < total; ++i) op_input(op, job->send, i, r, job->salt);
  job->recv_bytes = op_size(op) * (size_t)job->rcounts[r];
  job->recv = poisoned(job->recv_bytes);
  if (block > 0) {
    COLL(c, job,
         MPI_Reduce_scatter_block(job->send, job->recv, block, op_type(op), op_op(op),
                                  c->ep->comm),
         MPI_Ireduce_scatter_block(job->send, job->recv, block, op_type(op), op_op(op),
                                   c->ep->comm, &job->request));
  } else {
    COLL(c, job,
         MPI_Reduce_scatter(job->send, job->recv, job->rcounts, op_type(op), op_op(op),
                            c->ep->comm),
         MPI_Ireduce_scatter(job->send, job->recv, job->rcounts, op_type(op), op_op(op),
                             c->ep->comm, &job->request));
  }
  submit(c, job);
}

/* ---- gather, allgather (and v) ------------------------------------------------- */

/* Block q of the result: rcounts[q] elements at rdispls[q], each
 * ival(q, i, salt); everything else poison. */
static void check_blocks(const Endpoint* ep, const Job* job, const int* buf, size_t total_ints) {
  const int n = ep->size;
  unsigned char* covered = (unsigned char*)test_malloc(total_ints + 1);
  memset(covered, 0, total_ints + 1);
  for (int q = 0; q < n; ++q)
    for (int i = 0; i < job->rcounts[q]; ++i) {
      const size_t at = (size_t)job->rdispls[q] + (size_t)i;
      CHECK(buf[at] == ival(q, i, job->salt), "%s: element %d of rank %d's block (at %zu) is "
            "%d, expected %d", job->name, i, q, at, buf[at], ival(q, i, job->salt));
      covered[at] = 1;
    }
  for (size_t at = 0; at < total_ints; ++at)
    if (!covered[at]) check_untouched(buf, at * sizeof(int), (at + 1) * sizeof(int), job->name);
  check_untouched(buf, total_ints * sizeof(int), total_ints * sizeof(int) + kGuard, job->name);
  free(covered);
}

static void check_gather(const Endpoint* ep, Job* job) {
  const int is_all = job->root < 0;
  if (!is_all && ep->rank != job->root) return;
  check_blocks(ep, job, (const int*)job->recv, job->recv_bytes / sizeof(int));
}

/* root < 0: the all- variant.  vary: counts (q * 3 + round) % 5 at
 * reversed displacements with gaps; otherwise `fixed` each, in order. */
static void do_gather(Ctx* c, int root, int vary, int fixed) {
  const char* name = root < 0 ? (vary ? "Allgatherv" : "Allgather") : (vary ? "Gatherv" : "Gather");
  Job* job = new_job(c, name, check_gather);
  if (root >= 0)
    snprintf(job->name + strlen(job->name), sizeof job->name - strlen(job->name), " root %d",
             root);
  const int n = c->ep->size, r = c->ep->rank;
  job->root = root;
  job->rcounts = int_array(n);
  job->rdispls = int_array(n);
  long total = 0;
  for (int q = n - 1; q >= 0; --q) {
    job->rcounts[q] = vary ? (q * 3 + c->round) % 5 : fixed;
    job->rdispls[q] = vary ? (int)total : q * fixed;
    total += job->rcounts[q] + (vary ? 2 : 0);
  }
  if (!vary) total = (long)n * fixed;
  const int mine = job->rcounts[r];
  job->send = test_malloc(sizeof(int) * (size_t)(mine > 0 ? mine : 1));
  for (int i = 0; i < mine; ++i) ((int*)job->send)[i] = ival(r, i, job->salt);
  job->recv_bytes = sizeof(int) * (size_t)total;
  job->recv = poisoned(job->recv_bytes);
  MPI_Comm comm = c->ep->comm;
  if (root < 0 && vary) {
    COLL(c, job, MPI_Allgatherv(job->send, mine, MPI_INT, job->recv, job->rcounts, job->rdispls,
                                MPI_INT, comm),
         MPI_Iallgatherv(job->send, mine, MPI_INT, job->recv, job->rcounts, job->rdispls,
                         MPI_INT, comm, &job->request));
  } else if (root < 0) {
    COLL(c, job, MPI_Allgather(job->send, fixed, MPI_INT, job->recv, fixed, MPI_INT, comm),
         MPI_Iallgather(job->send, fixed, MPI_INT, job->recv, fixed, MPI_INT, comm,
                        &job->request));
  } else if (vary) {
    COLL(c, job, MPI_Gatherv(job->send, mine, MPI_INT, job->recv, job->rcounts, job->rdispls,
                             MPI_INT, root, comm),
         MPI_Igatherv(job->send, mine, MPI_INT, job->recv, job->rcounts, job->rdispls, MPI_INT,
                      root, comm, &job->request));
  } else {
    COLL(c, job, MPI_Gather(job->send, fixed, MPI_INT, job->recv, fixed, MPI_INT, root, comm),
         MPI_Igather(job->send, fixed, MPI_INT, job->recv, fixed, MPI_INT, root, comm,
                     &job->request));
  }
  submit(c, job);
}

/* ---- scatter (and v) -------------------------------------------------------------- */

static void check_scatter(const Endpoint* ep, Job* job) {
  const int r = ep->rank;
  const int* got = (const int*)job->recv;
  for (int i = 0; i < job->rcounts[r]; ++i) {
    const int expected = ival(job->root, (long)job->rdispls[r] + i, job->salt);
    CHECK(got[i] == expected, "%s: element %d is %d, expected %d", job->name, i, got[i],
          expected);
  }
  check_untouched(job->recv, job->recv_bytes, job->recv_bytes + kGuard, job->name);
}

/* The root's buffer holds ival(root, position): block q at rdispls[q]. */
static void do_scatter(Ctx* c, int root, int vary, int fixed) {
  Job* job = new_job(c, vary ? "Scatterv" : "Scatter", check_scatter);
  snprintf(job->name + strlen(job->name), sizeof job->name - strlen(job->name), " root %d",
           root);
  const int n = c->ep->size, r = c->ep->rank;
  job->root = root;
  job->rcounts = int_array(n);
  job->rdispls = int_array(n);
  long total = 0;
  for (int q = n - 1; q >= 0; --q) {
    job->rcounts[q] = vary ? (q + 2 * c->round) % 4 : fixed;
    job->rdispls[q] = vary ? (int)total : q * fixed;
    total += job->rcounts[q] + (vary ? 1 : 0);
  }
  if (!vary) total = (long)n * fixed;
  job->send = test_malloc(sizeof(int) * (size_t)(total > 0 ? total : 1));
  for (long i = 0; i < total; ++i) ((int*)job->send)[i] = ival(root, i, job->salt);
  const int mine = job->rcounts[r];
  job->recv_bytes = sizeof(int) * (size_t)mine;
  job->recv = poisoned(job->recv_bytes);
  MPI_Comm comm = c->ep->comm;
  if (vary) {
    COLL(c, job, MPI_Scatterv(job->send, job->rcounts, job->rdispls, MPI_INT, job->recv, mine,
                              MPI_INT, root, comm),
         MPI_Iscatterv(job->send, job->rcounts, job->rdispls, MPI_INT, job->recv, mine, MPI_INT,
                       root, comm, &job->request));
  } else {
    COLL(c, job, MPI_Scatter(job->send, fixed, MPI_INT, job->recv, fixed, MPI_INT, root, comm),
         MPI_Iscatter(job->send, fixed, MPI_INT, job->recv, fixed, MPI_INT, root, comm,
                      &job->request));
  }
  submit(c, job);
}

/* ---- alltoall, alltoallv, alltoallw ---------------------------------------------- */

typedef enum { kAlltoall, kAlltoallv, kAlltoallw } AlltoallKind;

static int a2a_count(int source, int dest, int round, AlltoallKind kind) {
  return kind == kAlltoall ? 4 : (source + 2 * dest + round) % 4;
}

/* Alltoallw: ints between ranks of equal parity, doubles otherwise. */
static int a2a_double(int source, int dest, AlltoallKind kind) {
  return kind == kAlltoallw && (source + dest) % 2 == 1;
}

static void check_alltoall(const Endpoint* ep, Job* job) {
  const int r = ep->rank, n = ep->size;
  const AlltoallKind kind = (AlltoallKind)job->count;
  const unsigned char* base = (const unsigned char*)job->recv;
  unsigned char* covered = (unsigned char*)test_malloc(job->recv_bytes + 1);
  memset(covered, 0, job->recv_bytes + 1);
  for (int q = 0; q < n; ++q) {
    const int count = a2a_count(q, r, job->round, kind);
    /* Byte displacement of q's block. */
    const size_t at = kind == kAlltoallw ? (size_t)job->rdispls[q]
                                         : sizeof(int) * (size_t)job->rdispls[q];
    for (int i = 0; i < count; ++i) {
      const int expected = movement(q, r, i, job->salt);
      if (a2a_double(q, r, kind)) {
        double got;
        memcpy(&got, base + at + sizeof(double) * (size_t)i, sizeof got);
        CHECK(got == expected * 0.5, "%s: element %d from rank %d is %.17g, expected %.17g",
              job->name, i, q, got, expected * 0.5);
        memset(covered + at + sizeof(double) * (size_t)i, 1, sizeof(double));
      } else {
        int got;
        memcpy(&got, base + at + sizeof(int) * (size_t)i, sizeof got);
        CHECK(got == expected, "%s: element %d from rank %d is %d, expected %d", job->name, i,
              q, got, expected);
        memset(covered + at + sizeof(int) * (size_t)i, 1, sizeof(int));
      }
    }
  }
  for (size_t b = 0; b < job->recv_bytes; ++b)
    if (!covered[b]) check_untouched(base, b, b + 1, job->name);
  check_untouched(base, job->recv_bytes, job->recv_bytes + kGuard, job->name);
  free(covered);
}

static void do_alltoall(Ctx* c, AlltoallKind kind) {
  static const char* const kNames[] = {"Alltoall", "Alltoallv", "Alltoallw"};
  Job* job = new_job(c, kNames[kind], check_alltoall);
  const int n = c->ep->size, r = c->ep->rank;
  job->count = (int)kind;
  job->scounts = int_array(n);
  job->sdispls = int_array(n);
  job->rcounts = int_array(n);
  job->rdispls = int_array(n);
  job->stypes = (MPI_Datatype*)test_malloc(sizeof(MPI_Datatype) * (size_t)n);
  job->rtypes = (MPI_Datatype*)test_malloc(sizeof(MPI_Datatype) * (size_t)n);
  /* Send side: blocks in destination order (bytes for w, elements else). */
  size_t send_at = 0;
  for (int d = 0; d < n; ++d) {
    job->scounts[d] = a2a_count(r, d, c->round, kind);
    job->stypes[d] = a2a_double(r, d, kind) ? MPI_DOUBLE : MPI_INT;
    const size_t element = a2a_double(r, d, kind) ? sizeof(double) : sizeof(int);
    if (kind == kAlltoallw) {
      send_at = (send_at + 7) / 8 * 8;
      job->sdispls[d] = (int)send_at;
      send_at += element * (size_t)job->scounts[d];
    } else {
      job->sdispls[d] = (int)(send_at / sizeof(int));
      send_at += sizeof(int) * (size_t)job->scounts[d];
    }
  }
  job->send = test_malloc(send_at + 8);
  for (int d = 0; d < n; ++d) {
    unsigned char* block = (unsigned char*)job->send +
                           (kind == kAlltoallw ? (size_t)job->sdispls[d]
                                               : sizeof(int) * (size_t)job->sdispls[d]);
    for (int i = 0; i < job->scounts[d]; ++i) {
      const int value = movement(r, d, i, job->salt);
      if (a2a_double(r, d, kind)) {
        const double v = value * 0.5;
        memcpy(block + sizeof(double) * (size_t)i, &v, sizeof v);
      } else {
        memcpy(block + sizeof(int) * (size_t)i, &value, sizeof value);
      }
    }
  }
  /* Receive side: blocks in reverse source order with a gap after each
   * (except for plain Alltoall). */
  size_t recv_at = 0;
  for (int q = n - 1; q >= 0; --q) {
    job->rcounts[q] = a2a_count(q, r, c->round, kind);
    job->rtypes[q] = a2a_double(q, r, kind) ? MPI_DOUBLE : MPI_INT;
    const size_t element = a2a_double(q, r, kind) ? sizeof(double) : sizeof(int);
    if (kind == kAlltoall) {
      job->rdispls[q] = q * 4;
    } else if (kind == kAlltoallv) {
      job->rdispls[q] = (int)(recv_at / sizeof(int));
      recv_at += sizeof(int) * ((size_t)job->rcounts[q] + 1);
    } else {
      job->rdispls[q] = (int)recv_at;
      recv_at += element * (size_t)job->rcounts[q] + 8;
    }
  }
  if (kind == kAlltoall) recv_at = sizeof(int) * 4 * (size_t)n;
  job->recv_bytes = recv_at;
  job->recv = poisoned(recv_at);
  MPI_Comm comm = c->ep->comm;
  if (kind == kAlltoall) {
    COLL(c, job, MPI_Alltoall(job->send, 4, MPI_INT, job->recv, 4, MPI_INT, comm),
         MPI_Ialltoall(job->send, 4, MPI_INT, job->recv, 4, MPI_INT, comm, &job->request));
  } else if (kind == kAlltoallv) {
    COLL(c, job, MPI_Alltoallv(job->send, job->scounts, job->sdispls, MPI_INT, job->recv,
                               job->rcounts, job->rdispls, MPI_INT, comm),
         MPI_Ialltoallv(job->send, job->scounts, job->sdispls, MPI_INT, job->recv, job->rcounts,
                        job->rdispls, MPI_INT, comm, &job->request));
  } else {
    COLL(c, job, MPI_Alltoallw(job->send, job->scounts, job->sdispls, job->stypes, job->recv,
                               job->rcounts, job->rdispls, job->rtypes, comm),
         MPI_Ialltoallw(job->send, job->scounts, job->sdispls, job->stypes, job->recv,
                        job->rcounts, job->rdispls, job->rtypes, comm, &job->request));
  }
  submit(c, job);
}

/* ---- one round ---------------------------------------------------------------------- */

static void all_collectives(Ctx* c, int* barriers_done) {
  const int n = c->ep->size, round = c->round;
  static const int kReduceCounts[] = {1, 37, 1000};
  do_barrier(c, barriers_done);
  for (int root = 0; root < n; ++root) do_bcast(c, root, 37);
  do_bcast(c, round % n, g_quick ? 5000 : 20000);
  for (int op = 0; op < kNumOps; ++op) {
    do_reduce_like(c, kReduce, (OpCase)op, kReduceCounts[(op + round) % 3],
                   (round + 3 * op) % n);
    do_reduce_like(c, kAllreduce, (OpCase)op, kReduceCounts[(op + round + 1) % 3], -1);
  }
  do_gather(c, (round * 5 + 1) % n, 0, 5);
  do_gather(c, (round * 5 + 2) % n, 1, 0);
  do_scatter(c, (round * 5 + 3) % n, 0, 5);
  do_scatter(c, (round * 5 + 4) % n, 1, 0);
  do_gather(c, -1, 0, 3);
  do_gather(c, -1, 1, 0);
  do_alltoall(c, kAlltoall);
  do_alltoall(c, kAlltoallv);
  do_alltoall(c, kAlltoallw);
  do_reduce_scatter(c, round % 2 ? kAffine : kIntSum, 0);
  do_reduce_scatter(c, kDoubleMax, 3);
  do_reduce_like(c, kScan, round % 2 ? kAffine : kIntSum, 7, -1);
  do_reduce_like(c, kScan, kDoubleSum, 3, -1);
  do_reduce_like(c, kExscan, round % 2 ? kDoubleMax : kIntSum, 5, -1);
  do_reduce_like(c, kExscan, kAffine, 2, -1);
  do_barrier(c, barriers_done);
}

static void complete_all(Ctx* c) {
  MPI_Request* requests = (MPI_Request*)test_malloc(sizeof(MPI_Request) * (size_t)c->num_jobs);
  for (int i = 0; i < c->num_jobs; ++i) {
    requests[i] = c->jobs[i]->request;
  }
  if (c->round % 2 == 0) {
    MPI_CHECK(MPI_Waitall(c->num_jobs, requests, MPI_STATUSES_IGNORE));
    for (int i = 0; i < c->num_jobs; ++i) {
      CHECK(requests[i] == MPI_REQUEST_NULL, "%s: MPI_Waitall left the request",
            c->jobs[i]->name);
      c->jobs[i]->check(c->ep, c->jobs[i]);
    }
  } else {
    /* One by one as they complete, each checked at once. */
    for (int done = 0; done < c->num_jobs; ++done) {
      int index = -1;
      MPI_CHECK(MPI_Waitany(c->num_jobs, requests, &index, MPI_STATUS_IGNORE));
      CHECK(index >= 0 && index < c->num_jobs && requests[index] == MPI_REQUEST_NULL,
            "MPI_Waitany at rank %d returned index %d of %d", c->ep->rank, index, c->num_jobs);
      c->jobs[index]->check(c->ep, c->jobs[index]);
    }
    int index = 7;
    MPI_CHECK(MPI_Waitany(c->num_jobs, requests, &index, MPI_STATUS_IGNORE));
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany with no active request gave index %d", index);
  }
  for (int i = 0; i < c->num_jobs; ++i) free_job(c->jobs[i]);
  c->num_jobs = 0;
  free(requests);
}

static int g_round;                      /* the round collectives_thread runs */
static int g_barriers_done[kMaxHandles]; /* per handle, across rounds */

/* One round on one handle, from its own thread. */
static void collectives_thread(Endpoint* ep, int helper) {
  (void)helper;
  if (g_round == 0) check_rank(ep);
  Ctx* c = (Ctx*)test_malloc(sizeof(Ctx));
  memset(c, 0, sizeof *c);
  c->ep = ep;
  c->round = g_round;
  c->next_salt = g_round * 1000;
  c->nonblocking = 0;
  all_collectives(c, &g_barriers_done[ep->index]);
  c->nonblocking = 1;
  all_collectives(c, &g_barriers_done[ep->index]);
  complete_all(c);
  free(c);
}

static void free_thread(Endpoint* ep, int helper) {
  (void)helper;
  MPI_CHECK(MPI_Comm_free(&ep->comm));
  CHECK(ep->comm == MPI_COMM_NULL, "MPI_Comm_free did not null the handle");
}

int main(int argc, char** argv) {
  endpoints_init(&argc, &argv, "endpoints_collectives",
                 "[--endpoints K | --counts A,B,... | --varying] [--rounds N] "
                 "[--quick] [--watchdog SECONDS]", "");
  int rounds_given = 0;
  for (int i = 1; i < argc; ++i) {
    if (common_option(argc, argv, &i)) continue;
    if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      g_rounds = atoi(argv[++i]);
      rounds_given = 1;
    } else {
      usage_exit(argv[0]);
    }
  }
  if (g_quick && !rounds_given) g_rounds = 2;
  CHECK(g_per_process >= 0 && g_per_process <= kMaxHandles && g_rounds >= 1 &&
            g_watchdog_s > 0,
        "bad options: %d endpoints per process (0..%d), %d rounds", g_per_process, kMaxHandles,
        g_rounds);
  endpoints_layout();

  MPI_CHECK(MPI_Type_contiguous(2, MPI_UNSIGNED, &g_affine_type));
  MPI_CHECK(MPI_Type_commit(&g_affine_type));
  MPI_CHECK(MPI_Op_create(affine_op, 0, &g_affine_op));

  MPI_Comm handles[kMaxHandles];
  endpoints_create(handles);
  if (g_rank == 0)
    printf("endpoints_collectives: %d endpoints over %d processes, %d rounds%s\n", g_ep_size,
           g_size, g_rounds, g_quick ? ", quick" : "");
  fflush(stdout);

  for (int round = 0; round < g_rounds; ++round) {
    char phase[64];
    snprintf(phase, sizeof phase, "round %d", round);
    watchdog(phase);
    g_round = round;
    on_every_handle(collectives_thread, 1);
    if (g_rank == 0) printf("endpoints_collectives: round %d ok\n", round);
    fflush(stdout);
  }
  watchdog("MPI_Comm_free");
  on_every_handle(free_thread, 1);
  alarm(0);
  MPI_CHECK(MPI_Op_free(&g_affine_op));
  MPI_CHECK(MPI_Type_free(&g_affine_type));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("endpoints_collectives", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}

#endif /* MINIMPI_HAS_ENDPOINTS */
