/* Every blocking collective checked against a serial reference computed in
 * the test.
 *
 * Each rank's input is a pure function of (rank, index) (and of the
 * destination for Alltoall), so every rank can compute what every other rank
 * contributed and fold it in rank order itself.  Results are compared byte
 * for byte (field by field for MPI_DOUBLE_INT, whose padding is not data),
 * and guard bytes after every receive buffer must stay untouched.  Values
 * are chosen so every reduction is exact in any order: floating values are
 * small multiples of 1/2, products stay tiny, sums never overflow.
 *
 *   usage: collectives [GROUP...]   (default: all groups)
 *   GROUP: barrier bcast reduce allreduce gather gatherv scatter scatterv
 *          allgather allgatherv alltoall alltoallv reduce_scatter
 *          reduce_scatter_block scan exscan reduce_local
 * A forced-algorithm run (MINIMPI_COLL_<NAME>=<alg>) names only the groups
 * that algorithm serves, to keep the suite fast. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "test_util.h"

enum { kGuardBytes = 64, kGuardByte = 0xA5 };
static const int kCounts[] = {0, 1, 37, 20000};
enum { kNumCounts = sizeof kCounts / sizeof kCounts[0], kLargeCount = 20000 };

static int g_rank, g_size;
/* Debian's MPICH 4.0.2, on which these tests are cross-checked, has bugs
 * the test would otherwise report: MPI_MIN and MPI_MAX on
 * MPI_UNSIGNED_CHAR compare as signed (MIN(0, 191) is 191); an in-place
 * MPI_Reduce with a large count at a root other than 0 crashes; so does an
 * in-place MPI_Reduce_scatter with large irregular counts at 8 ranks
 * (overlapping memcpy).  Those cases are skipped under MPICH only. */
static int g_mpich;
static int g_verbose; /* COLLECTIVES_VERBOSE=1 logs each reduction call */
static MPI_Comm g_comm;

/* ---- buffers with guard bytes ------------------------------------------ */

/* `bytes` of payload followed by kGuardBytes of a known byte. */
static unsigned char* guarded_alloc(size_t bytes) {
  unsigned char* p = (unsigned char*)test_malloc(bytes + kGuardBytes);
  memset(p, 0x5A, bytes);
  memset(p + bytes, kGuardByte, kGuardBytes);
  return p;
}

static void check_guard(const unsigned char* p, size_t bytes, const char* what, int count) {
  for (size_t i = 0; i < kGuardBytes; ++i)
    CHECK(p[bytes + i] == kGuardByte, "%s count %d: guard byte %zu after the %zu-byte buffer overwritten (0x%02x)",
          what, count, i, bytes, p[bytes + i]);
}

/* ---- element values ------------------------------------------------------ */

/* The value rank `source` puts at index `i` of a block meant for `dest`. */
static int movement_value(int source, int dest, long i) {
  return (int)((source * 7919L + dest * 104729L + i * 31L) % 1000003L) - 500000;
}

static void check_ints(const int* got, const int* expected, long count, const char* what, int param) {
  for (long i = 0; i < count; ++i)
    CHECK(got[i] == expected[i], "%s (count %d): element %ld is %d, expected %d", what, param, i, got[i],
          expected[i]);
}

/* ---- reduction types and operations -------------------------------------- */

typedef enum {
  kSignedChar, kUnsignedChar, kShort, kUnsignedShort, kInt, kUnsigned, kLong, kUnsignedLong,
  kLongLong, kByte, kFloat, kDouble, k2Int, kDoubleInt
} Kind;

typedef struct {
  const char* name;
  Kind kind;
  size_t size; /* extent of one element */
} TypeInfo;

static MPI_Datatype mpi_type_of(Kind kind) {
  switch (kind) {
    case kSignedChar: return MPI_SIGNED_CHAR;
    case kUnsignedChar: return MPI_UNSIGNED_CHAR;
    case kShort: return MPI_SHORT;
    case kUnsignedShort: return MPI_UNSIGNED_SHORT;
    case kInt: return MPI_INT;
    case kUnsigned: return MPI_UNSIGNED;
    case kLong: return MPI_LONG;
    case kUnsignedLong: return MPI_UNSIGNED_LONG;
    case kLongLong: return MPI_LONG_LONG;
    case kByte: return MPI_BYTE;
    case kFloat: return MPI_FLOAT;
    case kDouble: return MPI_DOUBLE;
    case k2Int: return MPI_2INT;
    case kDoubleInt: return MPI_DOUBLE_INT;
  }
  return MPI_DATATYPE_NULL;
}

typedef struct { int value, index; } IntIndex;
typedef struct { double value; int index; } DoubleIndex;

static const TypeInfo kTypes[] = {
    {"MPI_SIGNED_CHAR", kSignedChar, sizeof(signed char)},
    {"MPI_UNSIGNED_CHAR", kUnsignedChar, sizeof(unsigned char)},
    {"MPI_SHORT", kShort, sizeof(short)},
    {"MPI_UNSIGNED_SHORT", kUnsignedShort, sizeof(unsigned short)},
    {"MPI_INT", kInt, sizeof(int)},
    {"MPI_UNSIGNED", kUnsigned, sizeof(unsigned)},
    {"MPI_LONG", kLong, sizeof(long)},
    {"MPI_UNSIGNED_LONG", kUnsignedLong, sizeof(unsigned long)},
    {"MPI_LONG_LONG", kLongLong, sizeof(long long)},
    {"MPI_BYTE", kByte, 1},
    {"MPI_FLOAT", kFloat, sizeof(float)},
    {"MPI_DOUBLE", kDouble, sizeof(double)},
    {"MPI_2INT", k2Int, sizeof(IntIndex)},
    {"MPI_DOUBLE_INT", kDoubleInt, sizeof(DoubleIndex)},
};
enum { kNumTypes = sizeof kTypes / sizeof kTypes[0] };

typedef enum {
  kSum, kProd, kMin, kMax, kLand, kLor, kLxor, kBand, kBor, kBxor, kMinloc, kMaxloc,
  kAffineCompose, /* user, non-commutative */
  kSumPlusOne     /* user, commutative */
} OpCode;

static const char* const kOpNames[] = {"MPI_SUM", "MPI_PROD", "MPI_MIN", "MPI_MAX", "MPI_LAND", "MPI_LOR",
                                       "MPI_LXOR", "MPI_BAND", "MPI_BOR", "MPI_BXOR", "MPI_MINLOC",
                                       "MPI_MAXLOC", "user affine compose (non-commutative)",
                                       "user x+y+1 (commutative)"};
static MPI_Op g_affine_op, g_sum_plus_one_op;

static MPI_Op mpi_op_of(OpCode op) {
  switch (op) {
    case kSum: return MPI_SUM;
    case kProd: return MPI_PROD;
    case kMin: return MPI_MIN;
    case kMax: return MPI_MAX;
    case kLand: return MPI_LAND;
    case kLor: return MPI_LOR;
    case kLxor: return MPI_LXOR;
    case kBand: return MPI_BAND;
    case kBor: return MPI_BOR;
    case kBxor: return MPI_BXOR;
    case kMinloc: return MPI_MINLOC;
    case kMaxloc: return MPI_MAXLOC;
    case kAffineCompose: return g_affine_op;
    case kSumPlusOne: return g_sum_plus_one_op;
  }
  return MPI_OP_NULL;
}

/* The affine map t -> a*t + b (mod 251) packed as a*256 + b.  Composition is
 * associative but not commutative, so a library that reduces out of rank
 * order gets a different answer. */
enum { kAffinePrime = 251 };
static int affine_compose(int first, int second) {
  int a1 = first >> 8, b1 = first & 255, a2 = second >> 8, b2 = second & 255;
  int a = (a2 * a1) % kAffinePrime, b = (a2 * b1 + b2) % kAffinePrime;
  return a * 256 + b;
}
static void affine_compose_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* earlier = (const int*)in;
  int* later = (int*)inout;
  for (int i = 0; i < *len; ++i) later[i] = affine_compose(earlier[i], later[i]);
}
/* x + y + 1: the result counts how many times the op was applied, so an op
 * applied to an identity element or twice to one input shows. */
static void sum_plus_one_op(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const long long* a = (const long long*)in;
  long long* b = (long long*)inout;
  for (int i = 0; i < *len; ++i) b[i] = a[i] + b[i] + 1;
}

/* One scalar of any kind; pair kinds use value + index. */
typedef struct {
  long long i; /* integer kinds, and the index of pair kinds */
  double d;    /* floating kinds, and the value of pair kinds */
} Scalar;

static int is_floating(Kind k) { return k == kFloat || k == kDouble; }
static int is_unsigned(Kind k) {
  return k == kUnsignedChar || k == kUnsignedShort || k == kUnsigned || k == kUnsignedLong || k == kByte;
}
static int is_one_byte(Kind k) { return k == kSignedChar || k == kUnsignedChar || k == kByte; }

static unsigned long long mix(long long rank, long long index, unsigned long long salt) {
  unsigned long long x = (unsigned long long)rank * 0x9E3779B97F4A7C15ull ^ (unsigned long long)index * 0xBF58476D1CE4E5B9ull ^ salt;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return x;
}

/* Rank `rank`'s input at element `index` for `op` on `kind`, in the type's
 * range and chosen so the op gives an exact, interesting result. */
static Scalar input_value(OpCode op, Kind kind, int rank, long index, int size) {
  Scalar s = {0, 0.0};
  long long base = (rank * 7919LL + index * 31LL) % 1009 - 500; /* -500..508 */
  switch (op) {
    case kSum:
      if (is_floating(kind)) s.d = (double)base * 0.5;
      else if (is_one_byte(kind)) s.i = is_unsigned(kind) ? (base + 500) % 25 : base % 13;
      else s.i = is_unsigned(kind) ? base + 500 : base;
      break;
    case kProd: {
      /* At most 9 factors from these stay exact and in range of a short. */
      static const long long ints[] = {1, 2, -1, 1, -2, 1, 2};
      static const double reals[] = {0.5, 1.0, 2.0, -1.0, 1.5, -2.0, 1.0};
      int pick = (int)((rank * 3 + index) % 7);
      if (is_floating(kind)) s.d = reals[pick];
      else s.i = is_unsigned(kind) ? (ints[pick] < 0 ? 1 : ints[pick]) + (pick == 4) : ints[pick];
      break;
    }
    case kMin:
    case kMax:
      if (is_floating(kind)) s.d = (double)base * 0.25;
      else if (is_one_byte(kind)) s.i = is_unsigned(kind) ? (base + 500) % 256 : base % 128;
      else s.i = is_unsigned(kind) ? base + 500 : base * 1000;
      break;
    case kLand: /* false only where index % (size+1) == rank: some all-true */
      s.i = (index % (size + 1) == rank) ? 0 : (base & 0x3f) + 1;
      break;
    case kLor: /* true only there: some all-false */
      s.i = (index % (size + 1) == rank) ? (base & 0x3f) + 2 : 0;
      break;
    case kLxor:
      s.i = ((rank * 7 + index * 3) % 5 < 2) ? (base & 0x3f) + 1 : 0;
      break;
    case kBand: /* dense bits so the AND of 9 is not all zero */
      s.i = (long long)(mix(rank, index, 1) | mix(rank, index, 2) | mix(rank, index, 3));
      break;
    case kBor: /* sparse bits so the OR of 9 is not all ones */
      s.i = (long long)(mix(rank, index, 4) & mix(rank, index, 5) & mix(rank, index, 6));
      break;
    case kBxor:
      s.i = (long long)mix(rank, index, 7);
      break;
    case kMinloc:
    case kMaxloc: /* few distinct values, so ties are common */
      s.d = (double)((rank * 3 + index) % 4) - 1.5;
      if (kind == k2Int) s.d = (double)((rank * 3 + index) % 4) - 1;
      s.i = (rank * 5 + index) % 7;
      break;
    case kAffineCompose:
      s.i = ((int)((rank * 13 + index * 7) % 250) + 1) * 256 + (int)((rank * 29 + index * 3) % 251);
      break;
    case kSumPlusOne:
      s.i = base * 1000003LL;
      break;
  }
  return s;
}

/* `earlier` op `later`, where `earlier` comes from the lower ranks. */
static Scalar combine(OpCode op, Kind kind, Scalar earlier, Scalar later) {
  Scalar r = later;
  int fl = is_floating(kind);
  switch (op) {
    case kSum: if (fl) r.d = earlier.d + later.d; else r.i = earlier.i + later.i; break;
    case kProd: if (fl) r.d = earlier.d * later.d; else r.i = earlier.i * later.i; break;
    case kMin:
      if (fl) r.d = earlier.d < later.d ? earlier.d : later.d;
      else r.i = earlier.i < later.i ? earlier.i : later.i;
      break;
    case kMax:
      if (fl) r.d = earlier.d > later.d ? earlier.d : later.d;
      else r.i = earlier.i > later.i ? earlier.i : later.i;
      break;
    case kLand: r.i = (earlier.i != 0) && (later.i != 0); break;
    case kLor: r.i = (earlier.i != 0) || (later.i != 0); break;
    case kLxor: r.i = (earlier.i != 0) != (later.i != 0); break;
    case kBand: r.i = earlier.i & later.i; break;
    case kBor: r.i = earlier.i | later.i; break;
    case kBxor: r.i = earlier.i ^ later.i; break;
    case kMinloc:
    case kMaxloc: {
      int better = op == kMinloc ? earlier.d < later.d : earlier.d > later.d;
      if (better || (earlier.d == later.d && earlier.i < later.i)) r = earlier;
      break;
    }
    case kAffineCompose: r.i = affine_compose((int)earlier.i, (int)later.i); break;
    case kSumPlusOne: r.i = earlier.i + later.i + 1; break;
  }
  return r;
}

/* Stores with the C conversion to the element type (unsigned wraps, as the
 * library's arithmetic on that type does). */
static void store(Kind kind, void* buffer, long index, Scalar s) {
  switch (kind) {
    case kSignedChar: ((signed char*)buffer)[index] = (signed char)s.i; break;
    case kUnsignedChar: ((unsigned char*)buffer)[index] = (unsigned char)s.i; break;
    case kByte: ((unsigned char*)buffer)[index] = (unsigned char)s.i; break;
    case kShort: ((short*)buffer)[index] = (short)s.i; break;
    case kUnsignedShort: ((unsigned short*)buffer)[index] = (unsigned short)s.i; break;
    case kInt: ((int*)buffer)[index] = (int)s.i; break;
    case kUnsigned: ((unsigned*)buffer)[index] = (unsigned)s.i; break;
    case kLong: ((long*)buffer)[index] = (long)s.i; break;
    case kUnsignedLong: ((unsigned long*)buffer)[index] = (unsigned long)s.i; break;
    case kLongLong: ((long long*)buffer)[index] = s.i; break;
    case kFloat: ((float*)buffer)[index] = (float)s.d; break;
    case kDouble: ((double*)buffer)[index] = s.d; break;
    case k2Int: {
      IntIndex v = {(int)s.d, (int)s.i};
      ((IntIndex*)buffer)[index] = v;
      break;
    }
    case kDoubleInt: {
      DoubleIndex* v = &((DoubleIndex*)buffer)[index];
      v->value = s.d;
      v->index = (int)s.i;
      break;
    }
  }
}

/* Reads back a stored value, so reference and inputs see the type's range
 * (e.g. bitwise ops on the truncated bits). */
static Scalar load(Kind kind, const void* buffer, long index) {
  Scalar s = {0, 0.0};
  switch (kind) {
    case kSignedChar: s.i = ((const signed char*)buffer)[index]; break;
    case kUnsignedChar: case kByte: s.i = ((const unsigned char*)buffer)[index]; break;
    case kShort: s.i = ((const short*)buffer)[index]; break;
    case kUnsignedShort: s.i = ((const unsigned short*)buffer)[index]; break;
    case kInt: s.i = ((const int*)buffer)[index]; break;
    case kUnsigned: s.i = ((const unsigned*)buffer)[index]; break;
    case kLong: s.i = ((const long*)buffer)[index]; break;
    case kUnsignedLong: s.i = (long long)((const unsigned long*)buffer)[index]; break;
    case kLongLong: s.i = ((const long long*)buffer)[index]; break;
    case kFloat: s.d = ((const float*)buffer)[index]; break;
    case kDouble: s.d = ((const double*)buffer)[index]; break;
    case k2Int: s.d = ((const IntIndex*)buffer)[index].value; s.i = ((const IntIndex*)buffer)[index].index; break;
    case kDoubleInt: s.d = ((const DoubleIndex*)buffer)[index].value; s.i = ((const DoubleIndex*)buffer)[index].index; break;
  }
  return s;
}

static Scalar typed_input(OpCode op, Kind kind, int rank, long index) {
  /* Round trip through the element type so the reference sees exactly the
   * bits the library sees. */
  unsigned char tmp[sizeof(DoubleIndex)];
  store(kind, tmp, 0, input_value(op, kind, rank, index, g_size));
  return load(kind, tmp, 0);
}

typedef struct {
  OpCode op;
  const TypeInfo* type;
  int key; /* also run at count 0 and the large count, with every root */
} Combo;

enum { kMaxCombos = 160 };
static Combo g_combos[kMaxCombos];
static int g_num_combos;

static const TypeInfo* type_named(Kind kind) {
  for (int i = 0; i < kNumTypes; ++i)
    if (kTypes[i].kind == kind) return &kTypes[i];
  return NULL;
}

static void add_combo(OpCode op, Kind kind, int key) {
  if (g_mpich && (op == kMin || op == kMax) && kind == kUnsignedChar) return;
  CHECK(g_num_combos < kMaxCombos, "too many combos");
  g_combos[g_num_combos].op = op;
  g_combos[g_num_combos].type = type_named(kind);
  g_combos[g_num_combos].key = key;
  ++g_num_combos;
}

/* The standard's table: which op applies to which type group. */
static void build_combos(void) {
  static const Kind integers[] = {kSignedChar, kUnsignedChar, kShort, kUnsignedShort, kInt,
                                  kUnsigned, kLong, kUnsignedLong, kLongLong};
  enum { kNumIntegers = sizeof integers / sizeof integers[0] };
  for (OpCode op = kSum; op <= kBxor; ++op) {
    for (int t = 0; t < kNumIntegers; ++t) {
      /* PROD of 1-byte values is in range too, but one-byte PROD adds
       * little; keep the matrix small. */
      if (op == kProd && is_one_byte(integers[t])) continue;
      add_combo(op, integers[t], integers[t] == kInt && (op == kSum || op == kBxor || op == kLand));
    }
    if (op <= kMax) {
      add_combo(op, kFloat, op == kMax);
      add_combo(op, kDouble, op == kSum || op == kProd);
    }
    if (op >= kBand) add_combo(op, kByte, 0);
  }
  add_combo(kMinloc, k2Int, 0);
  add_combo(kMaxloc, k2Int, 1);
  add_combo(kMinloc, kDoubleInt, 1);
  add_combo(kMaxloc, kDoubleInt, 0);
  add_combo(kAffineCompose, kInt, 1);
  add_combo(kSumPlusOne, kLongLong, 1);
}

static const char* combo_name(const Combo* c, char* out, size_t n) {
  snprintf(out, n, "%s on %s", kOpNames[c->op], c->type->name);
  return out;
}

/* input of `rank` for elements [first, first+count) of the global vector */
static void fill_input(const Combo* c, int rank, long first, long count, void* buffer) {
  for (long i = 0; i < count; ++i) store(c->type->kind, buffer, i, input_value(c->op, c->type->kind, rank, first + i, g_size));
}

/* Fold of ranks [low, high] in rank order, elements [first, first+count). */
static void fill_reference(const Combo* c, int low, int high, long first, long count, void* buffer) {
  Kind k = c->type->kind;
  for (long i = 0; i < count; ++i) {
    Scalar acc = typed_input(c->op, k, low, first + i);
    for (int r = low + 1; r <= high; ++r) acc = combine(c->op, k, acc, typed_input(c->op, k, r, first + i));
    store(k, buffer, i, acc);
  }
}

static void compare_result(const Combo* c, const void* got, const void* expected, long count,
                           const char* what, int param) {
  char name[128];
  Kind k = c->type->kind;
  for (long i = 0; i < count; ++i) {
    int same;
    if (k == kDoubleInt) {
      Scalar a = load(k, got, i), b = load(k, expected, i);
      same = a.d == b.d && a.i == b.i;
    } else {
      same = memcmp((const char*)got + i * c->type->size, (const char*)expected + i * c->type->size,
                    c->type->size) == 0;
    }
    if (!same) {
      Scalar a = load(k, got, i), b = load(k, expected, i);
      test_fail(__FILE__, __LINE__,
                "%s, %s, count %d, %d ranks: element %ld is (%lld, %g), expected (%lld, %g)", what,
                combo_name(c, name, sizeof name), param, g_size, i, a.i, a.d, b.i, b.d);
    }
  }
}

/* ---- reductions ------------------------------------------------------------ */

typedef enum { kReduce, kAllreduce, kReduceScatter, kReduceScatterBlock, kScan, kExscan } Reduction;
static const char* const kReductionNames[] = {"MPI_Reduce", "MPI_Allreduce", "MPI_Reduce_scatter",
                                              "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan"};

/* Irregular segment sizes, zeros included (every third rank). */
static int segment_count(int rank, int count) {
  if (count == 0 || (rank + 1) % 3 == 0) return 0;
  return count + (rank * 13) % 7;
}

static void run_reduction(Reduction which, const Combo* c, int count, int root, int in_place) {
  if (g_mpich && in_place && count > 1000 && ((which == kReduce && root != 0) || which == kReduceScatter)) return;
  MPI_Datatype type = mpi_type_of(c->type->kind);
  MPI_Op op = mpi_op_of(c->op);
  size_t esize = c->type->size;
  long total = count, my_first = 0, my_count = count;
  int* counts = NULL;
  if (which == kReduceScatterBlock) {
    total = (long)count * g_size;
    my_first = (long)count * g_rank;
  } else if (which == kReduceScatter) {
    counts = (int*)test_malloc(sizeof(int) * (size_t)g_size);
    total = 0;
    for (int r = 0; r < g_size; ++r) {
      counts[r] = segment_count(r, count);
      if (r < g_rank) my_first += counts[r];
      total += counts[r];
    }
    my_count = counts[g_rank];
  }
  /* Receive buffer size: what this rank gets back (all of it in place). */
  int is_root = which != kReduce || g_rank == root;
  in_place = in_place && is_root; /* MPI_Reduce allows MPI_IN_PLACE at the root only */
  long recv_elems = (which == kReduceScatter || which == kReduceScatterBlock) ? (in_place ? total : my_count)
                                                                              : (is_root ? total : 0);
  unsigned char* send = guarded_alloc((size_t)total * esize);
  unsigned char* recv = guarded_alloc((size_t)recv_elems * esize);
  unsigned char* expected = guarded_alloc((size_t)(my_count > total ? my_count : total) * esize);
  const void* sendbuf = send;
  if (in_place) {
    fill_input(c, g_rank, 0, total, recv);
    sendbuf = MPI_IN_PLACE;
  } else {
    fill_input(c, g_rank, 0, total, send);
  }
  if (g_verbose) {
    char name[128];
    fprintf(stderr, "[rank %d] %s %s count %d root %d in_place %d\n", g_rank, kReductionNames[which],
            combo_name(c, name, sizeof name), count, root, in_place);
  }
  void* recvbuf = recv;
  if (which == kReduce && !is_root) recvbuf = NULL; /* significant only at root */
  switch (which) {
    case kReduce: MPI_CHECK(MPI_Reduce(sendbuf, recvbuf, count, type, op, root, g_comm)); break;
    case kAllreduce: MPI_CHECK(MPI_Allreduce(sendbuf, recvbuf, count, type, op, g_comm)); break;
    case kReduceScatter: MPI_CHECK(MPI_Reduce_scatter(sendbuf, recvbuf, counts, type, op, g_comm)); break;
    case kReduceScatterBlock: MPI_CHECK(MPI_Reduce_scatter_block(sendbuf, recvbuf, count, type, op, g_comm)); break;
    case kScan: MPI_CHECK(MPI_Scan(sendbuf, recvbuf, count, type, op, g_comm)); break;
    case kExscan: MPI_CHECK(MPI_Exscan(sendbuf, recvbuf, count, type, op, g_comm)); break;
  }
  char what[96];
  snprintf(what, sizeof what, "%s%s root %d", kReductionNames[which], in_place ? " (in place)" : "", root);
  if (is_root && !(which == kExscan && g_rank == 0)) {
    int high = (which == kScan) ? g_rank : (which == kExscan ? g_rank - 1 : g_size - 1);
    fill_reference(c, 0, high, my_first, my_count, expected);
    compare_result(c, recv, expected, my_count, what, count);
  }
  /* The send buffer is input only. */
  if (!in_place) {
    fill_input(c, g_rank, 0, total, expected);
    CHECK(memcmp(send, expected, (size_t)total * esize) == 0, "%s count %d: send buffer modified", what, count);
  }
  check_guard(recv, (size_t)recv_elems * esize, what, count);
  check_guard(send, (size_t)total * esize, what, count);
  free(send);
  free(recv);
  free(expected);
  free(counts);
}

static void test_reduction(Reduction which) {
  for (int ci = 0; ci < g_num_combos; ++ci) {
    const Combo* c = &g_combos[ci];
    for (int k = 0; k < kNumCounts; ++k) {
      int count = kCounts[k];
      int small = count == 1 || count == 37;
      if (!small && !c->key) continue;
      /* Scatter the cheap cases over roots and in-place; key combos get every
       * root and both modes. */
      if (c->key && which == kReduce) {
        for (int root = 0; root < g_size; ++root)
          for (int in_place = 0; in_place <= 1; ++in_place) run_reduction(which, c, count, root, in_place);
      } else if (c->key) {
        run_reduction(which, c, count, 0, 0);
        run_reduction(which, c, count, 0, 1);
      } else {
        int root = (ci + k) % g_size;
        run_reduction(which, c, count, root, (ci + k) % 2);
      }
    }
  }
}

/* MPI_Reduce_local: inout = in op inout.  Chaining it from the last "rank"
 * down to the first is the rank-order fold. */
static void test_reduce_local(void) {
  for (int ci = 0; ci < g_num_combos; ++ci) {
    const Combo* c = &g_combos[ci];
    for (int k = 0; k < kNumCounts; ++k) {
      int count = kCounts[k];
      size_t bytes = (size_t)count * c->type->size;
      unsigned char* in = guarded_alloc(bytes);
      unsigned char* inout = guarded_alloc(bytes);
      unsigned char* expected = guarded_alloc(bytes);
      int virtual_ranks = g_size > 3 ? g_size : 3;
      int saved = g_size;
      g_size = virtual_ranks; /* inputs of the LAND/LOR patterns depend on size */
      fill_input(c, virtual_ranks - 1, 0, count, inout);
      for (int r = virtual_ranks - 2; r >= 0; --r) {
        fill_input(c, r, 0, count, in);
        MPI_CHECK(MPI_Reduce_local(in, inout, count, mpi_type_of(c->type->kind), mpi_op_of(c->op)));
      }
      fill_reference(c, 0, virtual_ranks - 1, 0, count, expected);
      g_size = saved;
      compare_result(c, inout, expected, count, "MPI_Reduce_local", count);
      check_guard(inout, bytes, "MPI_Reduce_local", count);
      free(in);
      free(inout);
      free(expected);
    }
  }
}

/* ---- data movement --------------------------------------------------------- */

static void test_barrier(void) {
  /* One rank arrives late; nobody may leave before it arrived.  All ranks of
   * a test run on one node, so CLOCK_MONOTONIC is one clock for all. */
  int late_ranks[3] = {0, g_size / 2, g_size - 1};
  for (int t = 0; t < 3; ++t) {
    int late = late_ranks[t];
    double arrival = 0.0;
    struct timespec ts;
    if (g_rank == late) {
      struct timespec nap = {0, 30 * 1000 * 1000};
      nanosleep(&nap, NULL);
      clock_gettime(CLOCK_MONOTONIC, &ts);
      arrival = ts.tv_sec + ts.tv_nsec * 1e-9;
    }
    MPI_CHECK(MPI_Barrier(g_comm));
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double left = ts.tv_sec + ts.tv_nsec * 1e-9;
    MPI_CHECK(MPI_Bcast(&arrival, 1, MPI_DOUBLE, late, g_comm));
    CHECK(left >= arrival, "MPI_Barrier: left %.6f s before rank %d arrived", arrival - left, late);
  }
  for (int i = 0; i < 20; ++i) MPI_CHECK(MPI_Barrier(g_comm));
}

static void test_bcast(void) {
  for (int k = 0; k < kNumCounts; ++k) {
    int count = kCounts[k];
    for (int root = 0; root < g_size; ++root) {
      int* buffer = (int*)guarded_alloc(sizeof(int) * (size_t)count);
      int* expected = (int*)test_malloc(sizeof(int) * (size_t)count);
      for (int i = 0; i < count; ++i) expected[i] = movement_value(root, 0, i);
      if (g_rank == root) memcpy(buffer, expected, sizeof(int) * (size_t)count);
      MPI_CHECK(MPI_Bcast(buffer, count, MPI_INT, root, g_comm));
      check_ints(buffer, expected, count, "MPI_Bcast", count);
      check_guard((unsigned char*)buffer, sizeof(int) * (size_t)count, "MPI_Bcast", count);
      free(buffer);
      free(expected);
    }
  }
  /* An odd byte count past the large-message thresholds. */
  const int bytes = 262147;
  for (int root = 0; root < g_size; root += (g_size > 3 ? g_size - 1 : 1)) {
    unsigned char* buffer = guarded_alloc((size_t)bytes);
    if (g_rank == root) test_fill(buffer, (size_t)bytes, root, 99);
    MPI_CHECK(MPI_Bcast(buffer, bytes, MPI_BYTE, root, g_comm));
    CHECK_PATTERN(buffer, bytes, root, 99, "MPI_Bcast of 262147 bytes");
    check_guard(buffer, (size_t)bytes, "MPI_Bcast bytes", bytes);
    free(buffer);
  }
}

static void test_gather_scatter(int scatter) {
  const char* name = scatter ? "MPI_Scatter" : "MPI_Gather";
  for (int k = 0; k < kNumCounts; ++k) {
    int count = kCounts[k];
    for (int root = 0; root < g_size; ++root) {
      for (int in_place = 0; in_place <= 1; ++in_place) {
        int is_root = g_rank == root;
        size_t block = sizeof(int) * (size_t)count, all = block * (size_t)g_size;
        int* big = (int*)guarded_alloc(is_root ? all : 0);  /* root's whole vector */
        int* mine = (int*)guarded_alloc(block);
        char what[64];
        snprintf(what, sizeof what, "%s%s root %d", name, in_place && is_root ? " (in place)" : "", root);
        if (!scatter) {
          for (int i = 0; i < count; ++i) mine[i] = movement_value(g_rank, root, i);
          if (is_root && in_place) memcpy(big + (size_t)count * root, mine, block);
          MPI_CHECK(MPI_Gather(is_root && in_place ? MPI_IN_PLACE : mine, count, MPI_INT, is_root ? big : NULL,
                               count, MPI_INT, root, g_comm));
          if (is_root) {
            for (int r = 0; r < g_size; ++r)
              for (int i = 0; i < count; ++i)
                CHECK(big[(size_t)r * count + i] == movement_value(r, root, i),
                      "%s count %d: block of rank %d element %d is %d", what, count, r, i, big[(size_t)r * count + i]);
          }
        } else {
          if (is_root)
            for (int r = 0; r < g_size; ++r)
              for (int i = 0; i < count; ++i) big[(size_t)r * count + i] = movement_value(root, r, i);
          MPI_CHECK(MPI_Scatter(is_root ? big : NULL, count, MPI_INT, is_root && in_place ? MPI_IN_PLACE : mine,
                                count, MPI_INT, root, g_comm));
          if (!(is_root && in_place))
            for (int i = 0; i < count; ++i)
              CHECK(mine[i] == movement_value(root, g_rank, i), "%s count %d: element %d is %d, expected %d", what,
                    count, i, mine[i], movement_value(root, g_rank, i));
          if (is_root)  /* the root's send vector is input only */
            for (int r = 0; r < g_size; ++r)
              for (int i = 0; i < count; ++i)
                CHECK(big[(size_t)r * count + i] == movement_value(root, r, i), "%s: send buffer modified", what);
        }
        check_guard((unsigned char*)big, is_root ? all : 0, what, count);
        check_guard((unsigned char*)mine, block, what, count);
        free(big);
        free(mine);
      }
    }
  }
}

/* Irregular counts and displacements for the v-variants: blocks laid out in
 * reverse rank order with gaps of 3 elements, so displacements decrease. */
enum { kGap = 3 };
static void v_layout(int count, int* counts, int* displs, long* total) {
  long at = 0;
  for (int r = g_size - 1; r >= 0; --r) {
    counts[r] = segment_count(r, count);
    displs[r] = (int)at;
    at += counts[r] + kGap;
  }
  *total = at;
}

static void test_gatherv_scatterv(int scatter) {
  const char* name = scatter ? "MPI_Scatterv" : "MPI_Gatherv";
  int* counts = (int*)test_malloc(sizeof(int) * (size_t)g_size);
  int* displs = (int*)test_malloc(sizeof(int) * (size_t)g_size);
  for (int k = 0; k < kNumCounts; ++k) {
    int count = kCounts[k];
    long total = 0;
    v_layout(count, counts, displs, &total);
    int my_count = counts[g_rank];
    for (int root = 0; root < g_size; ++root) {
      for (int in_place = 0; in_place <= 1; ++in_place) {
        int is_root = g_rank == root;
        int* big = (int*)guarded_alloc(is_root ? sizeof(int) * (size_t)total : 0);
        int* mine = (int*)guarded_alloc(sizeof(int) * (size_t)my_count);
        char what[64];
        snprintf(what, sizeof what, "%s%s root %d", name, in_place && is_root ? " (in place)" : "", root);
        /* Gap elements hold a marker that must survive. */
        if (is_root) for (long i = 0; i < total; ++i) big[i] = -77777777;
        if (!scatter) {
          for (int i = 0; i < my_count; ++i) mine[i] = movement_value(g_rank, root, i);
          if (is_root && in_place) memcpy(big + displs[root], mine, sizeof(int) * (size_t)my_count);
          MPI_CHECK(MPI_Gatherv(is_root && in_place ? MPI_IN_PLACE : mine, my_count, MPI_INT,
                                is_root ? big : NULL, counts, displs, MPI_INT, root, g_comm));
          if (is_root) {
            long at = 0;
            for (int r = g_size - 1; r >= 0; --r) {
              for (int i = 0; i < counts[r]; ++i)
                CHECK(big[displs[r] + i] == movement_value(r, root, i), "%s count %d: rank %d element %d is %d", what,
                      count, r, i, big[displs[r] + i]);
              at = displs[r] + counts[r];
              for (int g = 0; g < kGap; ++g)
                CHECK(big[at + g] == -77777777, "%s count %d: gap after rank %d's block written", what, count, r);
            }
          }
        } else {
          if (is_root)
            for (int r = 0; r < g_size; ++r)
              for (int i = 0; i < counts[r]; ++i) big[displs[r] + i] = movement_value(root, r, i);
          MPI_CHECK(MPI_Scatterv(is_root ? big : NULL, counts, displs, MPI_INT,
                                 is_root && in_place ? MPI_IN_PLACE : mine, my_count, MPI_INT, root, g_comm));
          if (!(is_root && in_place))
            for (int i = 0; i < my_count; ++i)
              CHECK(mine[i] == movement_value(root, g_rank, i), "%s count %d: element %d is %d, expected %d", what,
                    count, i, mine[i], movement_value(root, g_rank, i));
        }
        check_guard((unsigned char*)big, is_root ? sizeof(int) * (size_t)total : 0, what, count);
        check_guard((unsigned char*)mine, sizeof(int) * (size_t)my_count, what, count);
        free(big);
        free(mine);
      }
    }
  }
  free(counts);
  free(displs);
}

static void test_allgather(int vector) {
  const char* name = vector ? "MPI_Allgatherv" : "MPI_Allgather";
  int* counts = (int*)test_malloc(sizeof(int) * (size_t)g_size);
  int* displs = (int*)test_malloc(sizeof(int) * (size_t)g_size);
  for (int k = 0; k < kNumCounts; ++k) {
    int count = kCounts[k];
    long total = 0;
    if (vector) {
      v_layout(count, counts, displs, &total);
    } else {
      for (int r = 0; r < g_size; ++r) counts[r] = count, displs[r] = r * count;
      total = (long)count * g_size;
    }
    for (int in_place = 0; in_place <= 1; ++in_place) {
      int* all = (int*)guarded_alloc(sizeof(int) * (size_t)total);
      int* mine = (int*)guarded_alloc(sizeof(int) * (size_t)counts[g_rank]);
      for (long i = 0; i < total; ++i) all[i] = -77777777;
      for (int i = 0; i < counts[g_rank]; ++i) mine[i] = movement_value(g_rank, 0, i);
      if (in_place) memcpy(all + displs[g_rank], mine, sizeof(int) * (size_t)counts[g_rank]);
      const void* sendbuf = in_place ? MPI_IN_PLACE : (const void*)mine;
      if (vector)
        MPI_CHECK(MPI_Allgatherv(sendbuf, counts[g_rank], MPI_INT, all, counts, displs, MPI_INT, g_comm));
      else
        MPI_CHECK(MPI_Allgather(sendbuf, count, MPI_INT, all, count, MPI_INT, g_comm));
      char what[64];
      snprintf(what, sizeof what, "%s%s", name, in_place ? " (in place)" : "");
      for (int r = 0; r < g_size; ++r)
        for (int i = 0; i < counts[r]; ++i)
          CHECK(all[displs[r] + i] == movement_value(r, 0, i), "%s count %d: rank %d element %d is %d, expected %d",
                what, count, r, i, all[displs[r] + i], movement_value(r, 0, i));
      if (vector)
        for (int r = 0; r < g_size; ++r)
          for (int g = 0; g < kGap; ++g)
            CHECK(all[displs[r] + counts[r] + g] == -77777777, "%s count %d: gap after rank %d written", what, count, r);
      check_guard((unsigned char*)all, sizeof(int) * (size_t)total, what, count);
      free(all);
      free(mine);
    }
  }
  free(counts);
  free(displs);
}

/* Symmetric pair counts (in-place Alltoallv needs them), zeros included. */
static int pair_count(int a, int b, int count) {
  if (count == 0 || (a + b) % 3 == 0) return 0;
  return count + (a * b + a + b) % 4;
}

static void test_alltoall(int vector) {
  const char* name = vector ? "MPI_Alltoallv" : "MPI_Alltoall";
  int n = g_size;
  int *scounts = (int*)test_malloc(sizeof(int) * n), *sdispls = (int*)test_malloc(sizeof(int) * n);
  int *rcounts = (int*)test_malloc(sizeof(int) * n), *rdispls = (int*)test_malloc(sizeof(int) * n);
  for (int k = 0; k < kNumCounts; ++k) {
    int count = kCounts[k];
    /* Large Alltoall at 9 ranks moves 81 blocks; count/4 keeps it quick. */
    if (count == kLargeCount) count = kLargeCount / 4 + 1;
    long stotal = 0, rtotal = 0;
    /* send blocks in reverse order with gaps, receive blocks rotated by n/2 */
    for (int j = n - 1; j >= 0; --j) {
      scounts[j] = vector ? pair_count(g_rank, j, count) : count;
      sdispls[j] = vector ? (int)stotal : j * count;
      stotal += scounts[j] + (vector ? kGap : 0);
    }
    for (int step = 0; step < n; ++step) {
      int j = (step + n / 2) % n;
      rcounts[j] = vector ? pair_count(j, g_rank, count) : count;
      rdispls[j] = vector ? (int)rtotal : j * count;
      rtotal += rcounts[j] + (vector ? kGap : 0);
    }
    for (int in_place = 0; in_place <= 1; ++in_place) {
      int* send = (int*)guarded_alloc(sizeof(int) * (size_t)stotal);
      int* recv = (int*)guarded_alloc(sizeof(int) * (size_t)rtotal);
      for (long i = 0; i < rtotal; ++i) recv[i] = -77777777;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < scounts[j]; ++i) send[sdispls[j] + i] = movement_value(g_rank, j, i);
      if (in_place) /* in place, the data to send sits where replies land */
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < rcounts[j]; ++i) recv[rdispls[j] + i] = movement_value(g_rank, j, i);
      const void* sendbuf = in_place ? MPI_IN_PLACE : (const void*)send;
      if (vector)
        MPI_CHECK(MPI_Alltoallv(sendbuf, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT, g_comm));
      else
        MPI_CHECK(MPI_Alltoall(sendbuf, count, MPI_INT, recv, count, MPI_INT, g_comm));
      char what[64];
      snprintf(what, sizeof what, "%s%s", name, in_place ? " (in place)" : "");
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < rcounts[j]; ++i)
          CHECK(recv[rdispls[j] + i] == movement_value(j, g_rank, i),
                "%s count %d: block from rank %d element %d is %d, expected %d", what, count, j, i,
                recv[rdispls[j] + i], movement_value(j, g_rank, i));
        if (vector)
          for (int g = 0; g < kGap; ++g)
            CHECK(recv[rdispls[j] + rcounts[j] + g] == -77777777, "%s count %d: gap after block from %d written",
                  what, count, j);
      }
      check_guard((unsigned char*)recv, sizeof(int) * (size_t)rtotal, what, count);
      check_guard((unsigned char*)send, sizeof(int) * (size_t)stotal, what, count);
      free(send);
      free(recv);
    }
  }
  free(scounts);
  free(sdispls);
  free(rcounts);
  free(rdispls);
}

/* ---- driver ------------------------------------------------------------------ */

static const char* const kGroups[] = {"barrier", "bcast", "reduce", "allreduce", "gather", "gatherv",
                                      "scatter", "scatterv", "allgather", "allgatherv", "alltoall",
                                      "alltoallv", "reduce_scatter", "reduce_scatter_block", "scan",
                                      "exscan", "reduce_local"};
enum { kNumGroups = sizeof kGroups / sizeof kGroups[0] };

static void run_group(int g) {
  switch (g) {
    case 0: test_barrier(); break;
    case 1: test_bcast(); break;
    case 2: test_reduction(kReduce); break;
    case 3: test_reduction(kAllreduce); break;
    case 4: test_gather_scatter(0); break;
    case 5: test_gatherv_scatterv(0); break;
    case 6: test_gather_scatter(1); break;
    case 7: test_gatherv_scatterv(1); break;
    case 8: test_allgather(0); break;
    case 9: test_allgather(1); break;
    case 10: test_alltoall(0); break;
    case 11: test_alltoall(1); break;
    case 12: test_reduction(kReduceScatter); break;
    case 13: test_reduction(kReduceScatterBlock); break;
    case 14: test_reduction(kScan); break;
    case 15: test_reduction(kExscan); break;
    case 16: test_reduce_local(); break;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  g_comm = MPI_COMM_WORLD;
  MPI_Comm_rank(g_comm, &g_rank);
  MPI_Comm_size(g_comm, &g_size);
  MPI_CHECK(MPI_Op_create(affine_compose_op, 0, &g_affine_op));
  MPI_CHECK(MPI_Op_create(sum_plus_one_op, 1, &g_sum_plus_one_op));
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int library_length = 0;
  MPI_CHECK(MPI_Get_library_version(library, &library_length));
  g_mpich = strstr(library, "MPICH") != NULL;
  g_verbose = getenv("COLLECTIVES_VERBOSE") != NULL;
  build_combos();
  int selected[kNumGroups] = {0};
  int any = 0;
  for (int a = 1; a < argc; ++a) {
    int found = 0;
    for (int g = 0; g < kNumGroups; ++g)
      if (strcmp(argv[a], kGroups[g]) == 0) selected[g] = found = any = 1;
    CHECK(found, "unknown collective group '%s'", argv[a]);
  }
  for (int g = 0; g < kNumGroups; ++g) {
    if (any && !selected[g]) continue;
    run_group(g);
    /* A stray message from one group must not be taken by the next. */
    MPI_CHECK(MPI_Barrier(g_comm));
  }
  MPI_CHECK(MPI_Op_free(&g_affine_op));
  MPI_CHECK(MPI_Op_free(&g_sum_plus_one_op));
  CHECK(g_affine_op == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
  test_report_pass("collectives", g_comm);
  MPI_Finalize();
  return 0;
}
