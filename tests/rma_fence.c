/* One-sided communication in fence epochs (MPI-4.1 chapter 12), every
 * window checked byte for byte against a serial model that every rank
 * computes for every rank: each operation's place, length and data are a
 * pure function of (origin, target, round), puts of one epoch go to
 * disjoint places, and accumulates are combined with exact arithmetic
 * (small integers and halves for MPI_DOUBLE), so the model is the same in
 * any order of arrival.
 *
 *  - windows: MPI_Win_create (disp_unit 1, rank size-1 exposing zero
 *    bytes; disp_unit 4) and MPI_Win_allocate (disp_unit 8), and a
 *    zero-size MPI_Win_allocate on MPI_COMM_SELF; attributes
 *    MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR,
 *    MPI_WIN_MODEL; MPI_Win_get_group (MPI_IDENT to the communicator's);
 *    MPI_Win_set_name/MPI_Win_get_name;
 *  - MPI_Put and MPI_Get from every rank to every rank (itself included),
 *    places and lengths in disp_unit elements, several rounds, fences with
 *    MPI_MODE_NOPRECEDE, MPI_MODE_NOSTORE, MPI_MODE_NOPUT and
 *    MPI_MODE_NOSUCCEED where they hold;
 *  - sizes 1 byte to 1 MiB (one put and one get per rank and size);
 *  - MPI_Accumulate: MPI_SUM, MPI_MAX and MPI_REPLACE on int, double and
 *    long long, MPI_BXOR on int and long long, and MPI_SUM with a vector
 *    of ints on both sides (different strides);
 *  - MPI_Get_accumulate (MPI_SUM, MPI_REPLACE, MPI_NO_OP), MPI_Fetch_and_op
 *    (MPI_SUM, MPI_NO_OP) and MPI_Compare_and_swap from every rank on one
 *    place of every rank: the fetched values must form one chain (each
 *    origin adds its own bit, so every fetched value names the origins
 *    that came before), and exactly one compare-and-swap wins;
 *  - derived datatypes: a vector origin into a contiguous target, a
 *    contiguous origin into an indexed target, a vector into a vector of
 *    other strides, an MPI_Type_create_resized type on either side, an
 *    hvector target; MPI_Get into a vector origin (the gaps must stay
 *    untouched) and from vector and resized targets; some types are freed
 *    right after the call that uses them, before the fence completes it.
 * (The request-based calls MPI_Rput etc. are allowed only in passive
 * target epochs: see rma_passive.c.) */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>

#include "test_util.h"

#include "rma_util.h"

enum { kInitial = 9999 }; /* the "origin" of a window's initial content */

/* Windows from MPI_Win_allocate are given sizes that are multiples of 64:
 * Debian's MPICH 4.0.2 (ch4) returns a baseptr 4 or 8 bytes past the
 * window's real base (MPI_WIN_BASE, where the RMA data lands) on ranks
 * above 0 when a size is not a multiple of 16; the test is right, but
 * cross-checking on MPICH needs the sizes it gets right. */
static size_t round_up64(size_t bytes) { return (bytes + 63) / 64 * 64; }
static int g_rank, g_size;

/* Checks the predefined attributes, the group and the name of `win`. */
static void check_window(MPI_Win win, MPI_Comm comm, void* base, MPI_Aint size, int disp_unit,
                         int flavor, const char* name) {
  void* got_base = NULL;
  MPI_Aint* got_size = NULL;
  int flag = 0;
  MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &got_base, &flag));
  CHECK(flag, "%s: MPI_WIN_BASE not set", name);
  /* A zero-size window's base may be anything (MPI allows NULL). */
  if (size > 0) CHECK(got_base == base, "%s: MPI_WIN_BASE %p, expected %p", name, got_base, base);
  MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &got_size, &flag));
  CHECK(flag && got_size != NULL && *got_size == size, "%s: MPI_WIN_SIZE %ld, expected %ld", name,
        got_size ? (long)*got_size : -1L, (long)size);
  int got_unit = int_attr(win, MPI_WIN_DISP_UNIT, "MPI_WIN_DISP_UNIT");
  CHECK(got_unit == disp_unit, "%s: MPI_WIN_DISP_UNIT %d, expected %d", name, got_unit, disp_unit);
  int got_flavor = int_attr(win, MPI_WIN_CREATE_FLAVOR, "MPI_WIN_CREATE_FLAVOR");
  CHECK(got_flavor == flavor, "%s: MPI_WIN_CREATE_FLAVOR %d, expected %d", name, got_flavor, flavor);
  int model = int_attr(win, MPI_WIN_MODEL, "MPI_WIN_MODEL");
  CHECK(model == MPI_WIN_UNIFIED || model == MPI_WIN_SEPARATE,
        "%s: MPI_WIN_MODEL %d is neither MPI_WIN_UNIFIED nor MPI_WIN_SEPARATE", name, model);

  MPI_Group win_group, comm_group;
  int result = -1;
  MPI_CHECK(MPI_Win_get_group(win, &win_group));
  MPI_CHECK(MPI_Comm_group(comm, &comm_group));
  MPI_CHECK(MPI_Group_compare(win_group, comm_group, &result));
  CHECK(result == MPI_IDENT, "%s: MPI_Win_get_group compares %d to the communicator's group", name,
        result);
  MPI_CHECK(MPI_Group_free(&win_group));
  MPI_CHECK(MPI_Group_free(&comm_group));

  char set[MPI_MAX_OBJECT_NAME], got[MPI_MAX_OBJECT_NAME];
  int len = -1;
  snprintf(set, sizeof set, "rma_fence %s on rank %d", name, g_rank);
  MPI_CHECK(MPI_Win_set_name(win, set));
  MPI_CHECK(MPI_Win_get_name(win, got, &len));
  CHECK(strcmp(got, set) == 0 && len == (int)strlen(set),
        "%s: MPI_Win_get_name gave '%s' (length %d), expected '%s'", name, got, len, set);
  /* Renaming replaces the name. */
  MPI_CHECK(MPI_Win_set_name(win, "x"));
  MPI_CHECK(MPI_Win_get_name(win, got, &len));
  CHECK(strcmp(got, "x") == 0 && len == 1, "%s: renamed window is called '%s'", name, got);
}

/* ---- 1. puts and gets in disp_unit elements, every rank to every rank -- */

enum { kSlot = 768 }; /* bytes of each target's window reserved per origin */

typedef struct {
  const char* name;
  int disp_unit;
  int allocate; /* MPI_Win_allocate rather than MPI_Win_create */
  int zero_rank; /* the rank exposing zero bytes, or -1 */
} WinSpec;

static MPI_Datatype unit_type(int disp_unit) {
  return disp_unit == 1 ? MPI_BYTE : disp_unit == 4 ? MPI_INT : MPI_LONG_LONG;
}

/* Where origin `o`'s put to `t` in `round` goes, in elements from the
 * start of o's slot, and how many elements. */
static void put_place(int test, int o, int t, int round, int unit, int* first, int* count) {
  const int units = kSlot / unit;
  uint64_t h = rma_hash((uint64_t)test, (uint64_t)o, (uint64_t)t, (uint64_t)round);
  *first = (int)(h % (uint64_t)(units / 2));
  *count = 1 + (int)((h >> 20) % (uint64_t)(units - *first));
}

static void puts_and_gets(const WinSpec* spec, int test) {
  const int unit = spec->disp_unit;
  const MPI_Datatype type = unit_type(unit);
  const size_t full = (size_t)g_size * kSlot;
  const size_t mine = g_rank == spec->zero_rank ? 0 : full;
  unsigned char* base = NULL;
  unsigned char* user_memory = NULL;
  MPI_Win win;
  if (spec->allocate) {
    MPI_CHECK(MPI_Win_allocate((MPI_Aint)mine, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  } else {
    user_memory = (unsigned char*)test_malloc(mine);
    base = user_memory;
    MPI_CHECK(MPI_Win_create(base, (MPI_Aint)mine, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  }
  check_window(win, MPI_COMM_WORLD, base, (MPI_Aint)mine, unit,
               spec->allocate ? MPI_WIN_FLAVOR_ALLOCATE : MPI_WIN_FLAVOR_CREATE, spec->name);

  /* model[t]: what rank t's window must hold. */
  unsigned char* model = (unsigned char*)test_malloc((size_t)g_size * full);
  for (int t = 0; t < g_size; ++t) rma_fill(model + (size_t)t * full, full, test, kInitial, t, 0);
  if (mine > 0) memcpy(base, model + (size_t)g_rank * full, mine);

  unsigned char* send = (unsigned char*)test_malloc((size_t)g_size * kSlot);
  unsigned char* fetched = (unsigned char*)test_malloc((size_t)g_size * full);
  const int rounds = 3;
  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  for (int round = 0; round < rounds; ++round) {
    /* Puts, to the targets in an order that changes with the round. */
    for (int k = 0; k < g_size; ++k) {
      const int t = (g_rank + k + round) % g_size;
      if (t == spec->zero_rank) continue;
      int first, count;
      put_place(test, g_rank, t, round, unit, &first, &count);
      unsigned char* data = send + (size_t)t * kSlot;
      rma_fill(data, (size_t)count * unit, test, g_rank, t, round);
      MPI_CHECK(MPI_Put(data, count, type, t, (MPI_Aint)(g_rank * (kSlot / unit) + first), count,
                        type, win));
    }
    /* No local stores since the last fence, and no puts in the next epoch. */
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
    for (int t = 0; t < g_size; ++t) {
      if (t == spec->zero_rank) continue;
      for (int o = 0; o < g_size; ++o) {
        int first, count;
        put_place(test, o, t, round, unit, &first, &count);
        rma_fill(model + (size_t)t * full + (size_t)o * kSlot + (size_t)first * unit,
                 (size_t)count * unit, test, o, t, round);
      }
    }
    if (mine > 0)
      RMA_CHECK_BYTES(base, model + (size_t)g_rank * full, mine, "%s round %d: window after puts",
                      spec->name, round);

    /* Gets of a stretch of every window (across the origins' slots). */
    size_t get_first[64], get_count[64];
    for (int t = 0; t < g_size && t < 64; ++t) {
      if (t == spec->zero_rank) continue;
      const size_t units = full / unit;
      uint64_t h = rma_hash((uint64_t)test + 50, (uint64_t)g_rank, (uint64_t)t, (uint64_t)round);
      get_first[t] = (size_t)(h % units);
      get_count[t] = 1 + (size_t)((h >> 24) % (units - get_first[t]));
      MPI_CHECK(MPI_Get(fetched + (size_t)t * full, (int)get_count[t], type, t,
                        (MPI_Aint)get_first[t], (int)get_count[t], type, win));
    }
    MPI_CHECK(MPI_Win_fence(round == rounds - 1 ? MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED : MPI_MODE_NOSTORE,
                            win));
    for (int t = 0; t < g_size && t < 64; ++t) {
      if (t == spec->zero_rank) continue;
      RMA_CHECK_BYTES(fetched + (size_t)t * full, model + (size_t)t * full + get_first[t] * unit,
                      get_count[t] * unit, "%s round %d: MPI_Get of %zu elements at %zu from rank %d",
                      spec->name, round, get_count[t], get_first[t], t);
    }
  }
  MPI_CHECK(MPI_Win_free(&win));
  CHECK(win == MPI_WIN_NULL, "%s: MPI_Win_free left the handle", spec->name);
  free(user_memory);
  free(model);
  free(send);
  free(fetched);
}

/* A window of zero bytes on every rank of MPI_COMM_SELF: attributes, and
 * an empty epoch. */
static void zero_size_self(void) {
  void* base = NULL;
  MPI_Win win;
  MPI_CHECK(MPI_Win_allocate(0, 1, MPI_INFO_NULL, MPI_COMM_SELF, &base, &win));
  check_window(win, MPI_COMM_SELF, base, 0, 1, MPI_WIN_FLAVOR_ALLOCATE, "zero-size self window");
  MPI_CHECK(MPI_Win_fence(0, win));
  MPI_CHECK(MPI_Win_fence(0, win));
  MPI_CHECK(MPI_Win_free(&win));
}

/* ---- 2. one put and one get per rank and size, 1 byte to 1 MiB -------- */

enum { kBigWindow = (1 << 20) + 64 };

static void message_sizes(void) {
  static const int kSizes[] = {1, 3, 64, 1000, 8197, 65543, 262145, 1 << 20};
  const int nsizes = (int)(sizeof kSizes / sizeof kSizes[0]);
  const int test = 20;
  unsigned char* base = NULL;
  MPI_Win win;
  MPI_CHECK(MPI_Win_allocate(kBigWindow, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  unsigned char* model = (unsigned char*)test_malloc((size_t)g_size * kBigWindow);
  for (int t = 0; t < g_size; ++t)
    rma_fill(model + (size_t)t * kBigWindow, kBigWindow, test, kInitial, t, 0);
  memcpy(base, model + (size_t)g_rank * kBigWindow, kBigWindow);
  unsigned char* send = (unsigned char*)test_malloc(1 << 20);
  unsigned char* fetched = (unsigned char*)test_malloc(1 << 20);

  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  for (int k = 0; k < nsizes; ++k) {
    const int bytes = kSizes[k];
    /* Rank o puts to o+1+k: each target hears from one origin per size. */
    const int t = (g_rank + 1 + k) % g_size;
    const int at = (int)(rma_hash(test, (uint64_t)g_rank, (uint64_t)t, (uint64_t)k) % 64);
    rma_fill(send, (size_t)bytes, test, g_rank, t, k);
    MPI_CHECK(MPI_Put(send, bytes, MPI_BYTE, t, at, bytes, MPI_BYTE, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
    for (int o = 0; o < g_size; ++o) {
      const int to = (o + 1 + k) % g_size;
      const int o_at = (int)(rma_hash(test, (uint64_t)o, (uint64_t)to, (uint64_t)k) % 64);
      rma_fill(model + (size_t)to * kBigWindow + o_at, (size_t)bytes, test, o, to, k);
    }
    RMA_CHECK_BYTES(base, model + (size_t)g_rank * kBigWindow, kBigWindow,
                    "window after a %d-byte put", bytes);

    /* Get `bytes` from another rank's window at another place. */
    const int from = (g_rank + g_size - 1 - k % g_size + g_size) % g_size;
    const int get_at = (int)(rma_hash(test + 1, (uint64_t)g_rank, (uint64_t)from, (uint64_t)k) % 64);
    memset(fetched, 0, (size_t)bytes);
    MPI_CHECK(MPI_Get(fetched, bytes, MPI_BYTE, from, get_at, bytes, MPI_BYTE, win));
    MPI_CHECK(MPI_Win_fence(k == nsizes - 1 ? MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED : MPI_MODE_NOSTORE,
                            win));
    RMA_CHECK_BYTES(fetched, model + (size_t)from * kBigWindow + get_at, (size_t)bytes,
                    "%d-byte MPI_Get at %d from rank %d", bytes, get_at, from);
  }
  MPI_CHECK(MPI_Win_free(&win));
  free(model);
  free(send);
  free(fetched);
}

/* ---- 3. accumulates ----------------------------------------------------- */

enum { kAccN = 38, kRepN = 5, kMaxRanks = 64, kVecT = 16, kVecO = 30 };

/* One window's layout: one op per array (concurrent accumulates to one
 * place must use the same op), one MPI_REPLACE row per origin. */
typedef struct {
  int isum[kAccN], imax[kAccN], ixor[kAccN];
  long long lsum[kAccN], lmax[kAccN], lxor[kAccN];
  double dsum[kAccN], dmax[kAccN];
  int ivec[kVecT];
  int irep[kMaxRanks][kRepN];
  long long lrep[kMaxRanks][kRepN];
  double drep[kMaxRanks][kRepN];
} AccWindow;

/* The vector accumulate: origin vector(6 blocks of 2, stride 5) of
 * ints, target vector(4 blocks of 3, stride 4): element k of the type
 * signature sits at these offsets (in ints) on either side. */
static int vec_origin_offset(int k) { return (k / 2) * 5 + k % 2; }
static int vec_target_offset(int k) { return (k / 3) * 4 + k % 3; }

static int small_int(uint64_t h) { return (int)(h % 2001) - 1000; }

/* What origin `o` contributes to target `t` in `round` (kInitial: the
 * initial content), in the window's own layout; for the vector
 * accumulate, `vec` gets the origin buffer (kVecO ints). */
static void acc_values(AccWindow* a, int* vec, int o, int t, int round) {
  memset(a, 0, sizeof *a);
  for (int i = 0; i < kAccN; ++i) {
    uint64_t r = (uint64_t)round * 16;
    a->isum[i] = small_int(rma_hash((uint64_t)o, (uint64_t)t, r + 0, (uint64_t)i));
    a->imax[i] = small_int(rma_hash((uint64_t)o, (uint64_t)t, r + 1, (uint64_t)i));
    a->ixor[i] = (int)(uint32_t)rma_hash((uint64_t)o, (uint64_t)t, r + 2, (uint64_t)i);
    a->lsum[i] = (long long)(rma_hash((uint64_t)o, (uint64_t)t, r + 3, (uint64_t)i) % (1ull << 40)) -
                 (1ll << 39);
    a->lmax[i] = (long long)(rma_hash((uint64_t)o, (uint64_t)t, r + 4, (uint64_t)i) % (1ull << 40)) -
                 (1ll << 39);
    a->lxor[i] = (long long)rma_hash((uint64_t)o, (uint64_t)t, r + 5, (uint64_t)i);
    a->dsum[i] = 0.5 * small_int(rma_hash((uint64_t)o, (uint64_t)t, r + 6, (uint64_t)i));
    a->dmax[i] = 0.25 * small_int(rma_hash((uint64_t)o, (uint64_t)t, r + 7, (uint64_t)i));
  }
  for (int i = 0; i < kVecT; ++i)
    a->ivec[i] = small_int(rma_hash((uint64_t)o, (uint64_t)t, (uint64_t)round * 16 + 8, (uint64_t)i));
  for (int row = 0; row < kMaxRanks; ++row) {
    if (o != kInitial && row != o) continue; /* origins write their own row only */
    for (int i = 0; i < kRepN; ++i) {
      uint64_t h = rma_hash((uint64_t)o, (uint64_t)t, (uint64_t)round * 16 + 9, (uint64_t)(row * kRepN + i));
      a->irep[row][i] = (int)(uint32_t)h;
      a->lrep[row][i] = (long long)h;
      a->drep[row][i] = 0.125 * small_int(h);
    }
  }
  if (vec != NULL) {
    for (int i = 0; i < kVecO; ++i)
      vec[i] = small_int(rma_hash((uint64_t)o, (uint64_t)t, (uint64_t)round * 16 + 10, (uint64_t)i));
  }
}

#define MAX_OF(a, b) ((a) > (b) ? (a) : (b))

/* model (+)= origin o's contributions `c` (and vector buffer `vec`). */
static void acc_apply(AccWindow* m, const AccWindow* c, const int* vec, int o) {
  for (int i = 0; i < kAccN; ++i) {
    m->isum[i] += c->isum[i];
    m->imax[i] = MAX_OF(m->imax[i], c->imax[i]);
    m->ixor[i] ^= c->ixor[i];
    m->lsum[i] += c->lsum[i];
    m->lmax[i] = MAX_OF(m->lmax[i], c->lmax[i]);
    m->lxor[i] ^= c->lxor[i];
    m->dsum[i] += c->dsum[i];
    m->dmax[i] = MAX_OF(m->dmax[i], c->dmax[i]);
  }
  for (int k = 0; k < 12; ++k) m->ivec[vec_target_offset(k)] += vec[vec_origin_offset(k)];
  memcpy(m->irep[o], c->irep[o], sizeof m->irep[o]);
  memcpy(m->lrep[o], c->lrep[o], sizeof m->lrep[o]);
  memcpy(m->drep[o], c->drep[o], sizeof m->drep[o]);
}

#define ACC_FIELD(src, field, count, type, op, target)                                     \
  MPI_CHECK(MPI_Accumulate((src)->field, (count), (type), (target),                        \
                           (MPI_Aint)offsetof(AccWindow, field), (count), (type), (op), win))

static void accumulates(void) {
  if (g_size > kMaxRanks) return;
  AccWindow* base = NULL;
  MPI_Win win;
  const MPI_Aint bytes = (MPI_Aint)round_up64(sizeof(AccWindow));
  MPI_CHECK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  check_window(win, MPI_COMM_WORLD, base, bytes, 1, MPI_WIN_FLAVOR_ALLOCATE, "accumulate window");
  AccWindow* model = (AccWindow*)test_malloc((size_t)g_size * sizeof(AccWindow));
  AccWindow* sources = (AccWindow*)test_malloc((size_t)g_size * sizeof(AccWindow));
  AccWindow* fetched = (AccWindow*)test_malloc((size_t)g_size * sizeof(AccWindow));
  AccWindow contribution;
  int vecs[kMaxRanks][kVecO];
  for (int t = 0; t < g_size; ++t) acc_values(&model[t], NULL, kInitial, t, 0);
  memcpy(base, &model[g_rank], sizeof(AccWindow));

  MPI_Datatype origin_vec, target_vec;
  MPI_CHECK(MPI_Type_vector(6, 2, 5, MPI_INT, &origin_vec));
  MPI_CHECK(MPI_Type_vector(4, 3, 4, MPI_INT, &target_vec));
  MPI_CHECK(MPI_Type_commit(&origin_vec));
  MPI_CHECK(MPI_Type_commit(&target_vec));

  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  const int rounds = 2;
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < g_size; ++k) {
      /* Every target once, upwards in round 0 and downwards in round 1. */
      const int t = round == 0 ? (g_rank + k) % g_size : (g_rank + g_size - k) % g_size;
      AccWindow* src = &sources[t];
      acc_values(src, vecs[t], g_rank, t, round);
      if (round == 0) {
        ACC_FIELD(src, isum, kAccN, MPI_INT, MPI_SUM, t);
      } else { /* two calls, to the same place */
        ACC_FIELD(src, isum, 20, MPI_INT, MPI_SUM, t);
        MPI_CHECK(MPI_Accumulate(src->isum + 20, kAccN - 20, MPI_INT, t,
                                 (MPI_Aint)(offsetof(AccWindow, isum) + 20 * sizeof(int)), kAccN - 20,
                                 MPI_INT, MPI_SUM, win));
      }
      ACC_FIELD(src, imax, kAccN, MPI_INT, MPI_MAX, t);
      ACC_FIELD(src, ixor, kAccN, MPI_INT, MPI_BXOR, t);
      ACC_FIELD(src, lsum, kAccN, MPI_LONG_LONG, MPI_SUM, t);
      ACC_FIELD(src, lmax, kAccN, MPI_LONG_LONG, MPI_MAX, t);
      ACC_FIELD(src, lxor, kAccN, MPI_LONG_LONG, MPI_BXOR, t);
      ACC_FIELD(src, dsum, kAccN, MPI_DOUBLE, MPI_SUM, t);
      ACC_FIELD(src, dmax, kAccN, MPI_DOUBLE, MPI_MAX, t);
      ACC_FIELD(src, irep[g_rank], kRepN, MPI_INT, MPI_REPLACE, t);
      ACC_FIELD(src, lrep[g_rank], kRepN, MPI_LONG_LONG, MPI_REPLACE, t);
      ACC_FIELD(src, drep[g_rank], kRepN, MPI_DOUBLE, MPI_REPLACE, t);
      MPI_CHECK(MPI_Accumulate(vecs[t], 1, origin_vec, t, (MPI_Aint)offsetof(AccWindow, ivec), 1,
                               target_vec, MPI_SUM, win));
    }
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
    for (int t = 0; t < g_size; ++t) {
      for (int o = 0; o < g_size; ++o) {
        int vec[kVecO];
        acc_values(&contribution, vec, o, t, round);
        acc_apply(&model[t], &contribution, vec, o);
      }
    }
    RMA_CHECK_BYTES(base, &model[g_rank], sizeof(AccWindow), "accumulate window after round %d", round);
    /* And each window as MPI_Get sees it. */
    for (int t = 0; t < g_size; ++t)
      MPI_CHECK(MPI_Get(&fetched[t], (int)sizeof(AccWindow), MPI_BYTE, t, 0, (int)sizeof(AccWindow),
                        MPI_BYTE, win));
    MPI_CHECK(MPI_Win_fence(round == rounds - 1 ? MPI_MODE_NOSUCCEED : 0, win));
    for (int t = 0; t < g_size; ++t)
      RMA_CHECK_BYTES(&fetched[t], &model[t], sizeof(AccWindow),
                      "accumulate window of rank %d fetched after round %d", t, round);
  }
  MPI_CHECK(MPI_Type_free(&origin_vec));
  MPI_CHECK(MPI_Type_free(&target_vec));
  MPI_CHECK(MPI_Win_free(&win));
  free(model);
  free(sources);
  free(fetched);
}

/* ---- 4. fetching atomics ------------------------------------------------ */

enum {
  kGaccCounter = 0, /* MPI_Get_accumulate(MPI_SUM) of the origin's bit */
  kFopCounter = 1,  /* MPI_Fetch_and_op(MPI_SUM) of the origin's bit */
  kCasWord = 2,     /* MPI_Compare_and_swap from the initial value */
  kSwapRows = 3,    /* one per origin: MPI_Get_accumulate(MPI_REPLACE) */
  kConstant = kSwapRows + kMaxRanks, /* 8 words only read (MPI_NO_OP) */
  kFetchWords = kConstant + 8
};

static long long fetch_initial(int t, int index) {
  if (index == kGaccCounter || index == kFopCounter) return 1000000LL * (t + 1) + index;
  if (index == kCasWord) return -1 - t;
  return (long long)rma_hash(77, (uint64_t)t, (uint64_t)index, 0);
}
static long long swap_value(int o, int t) { return (long long)rma_hash(78, (uint64_t)o, (uint64_t)t, 1); }
static long long cas_value(int o) { return 5000 + o; }

/* The values that `size` origins fetched from one counter, each adding
 * its bit (1 << origin) to `initial`: they must form one chain (the
 * k-th origin to arrive sees exactly the bits of the k before it). */
static void check_chain(const long long* fetched, int size, long long initial, const char* what,
                        int target) {
  int order[kMaxRanks];
  int seen[kMaxRanks];
  for (int o = 0; o < size; ++o) {
    long long bits = fetched[o] - initial;
    CHECK(bits >= 0 && bits < (1LL << size) && !(bits & (1LL << o)),
          "%s on rank %d: origin %d fetched %lld, not the initial %lld plus other origins' bits", what,
          target, o, fetched[o], initial);
    seen[o] = 0;
    for (int b = 0; b < size; ++b) seen[o] += (int)((bits >> b) & 1);
  }
  for (int k = 0; k < size; ++k) order[k] = -1;
  for (int o = 0; o < size; ++o) {
    CHECK(order[seen[o]] == -1,
          "%s on rank %d: origins %d and %d both saw %d others first (not atomic)", what, target,
          order[seen[o]], o, seen[o]);
    order[seen[o]] = o;
  }
  long long expect = initial;
  for (int k = 0; k < size; ++k) {
    CHECK(fetched[order[k]] == expect, "%s on rank %d: origin %d fetched %lld, expected %lld", what,
          target, order[k], fetched[order[k]], expect);
    expect += 1LL << order[k];
  }
}

static void fetching_atomics(void) {
  if (g_size > 30) return;
  long long* base = NULL;
  MPI_Win win;
  MPI_CHECK(MPI_Win_allocate((MPI_Aint)round_up64(kFetchWords * 8), 8, MPI_INFO_NULL, MPI_COMM_WORLD,
                             &base, &win));
  for (int i = 0; i < kFetchWords; ++i) base[i] = fetch_initial(g_rank, i);

  enum { kGacc, kFop, kCas, kSwap, kFopNoOp, kResults };
  long long* results = (long long*)test_malloc(sizeof(long long) * g_size * kResults);
  long long* all = (long long*)test_malloc(sizeof(long long) * g_size * g_size * kResults);
  long long* read = (long long*)test_malloc(sizeof(long long) * g_size * 8);
  const long long bit = 1LL << g_rank;
  long long swaps[kMaxRanks], cas_compare[kMaxRanks];
  const long long mine = cas_value(g_rank);

  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  for (int k = 0; k < g_size; ++k) {
    const int t = (g_rank + k) % g_size;
    long long* r = results + t * kResults;
    swaps[t] = swap_value(g_rank, t);
    cas_compare[t] = fetch_initial(t, kCasWord);
    MPI_CHECK(MPI_Get_accumulate(&bit, 1, MPI_LONG_LONG, &r[kGacc], 1, MPI_LONG_LONG, t, kGaccCounter, 1,
                                 MPI_LONG_LONG, MPI_SUM, win));
    MPI_CHECK(MPI_Fetch_and_op(&bit, &r[kFop], MPI_LONG_LONG, t, kFopCounter, MPI_SUM, win));
    MPI_CHECK(MPI_Compare_and_swap(&mine, &cas_compare[t], &r[kCas], MPI_LONG_LONG, t, kCasWord, win));
    MPI_CHECK(MPI_Get_accumulate(&swaps[t], 1, MPI_LONG_LONG, &r[kSwap], 1, MPI_LONG_LONG, t,
                                 kSwapRows + g_rank, 1, MPI_LONG_LONG, MPI_REPLACE, win));
    /* MPI_NO_OP ignores the origin buffer. */
    MPI_CHECK(MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, read + t * 8, 8, MPI_LONG_LONG, t, kConstant, 8,
                                 MPI_LONG_LONG, MPI_NO_OP, win));
    MPI_CHECK(MPI_Fetch_and_op(NULL, &r[kFopNoOp], MPI_LONG_LONG, t, kConstant + 3, MPI_NO_OP, win));
  }
  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE, win));
  MPI_CHECK(MPI_Allgather(results, g_size * kResults, MPI_LONG_LONG, all, g_size * kResults,
                          MPI_LONG_LONG, MPI_COMM_WORLD));

  long long* model = (long long*)test_malloc(sizeof(long long) * g_size * kFetchWords);
  long long chain[kMaxRanks];
  for (int t = 0; t < g_size; ++t) {
    long long* m = model + t * kFetchWords;
    for (int i = 0; i < kFetchWords; ++i) m[i] = fetch_initial(t, i);
    for (int o = 0; o < g_size; ++o) chain[o] = all[(o * g_size + t) * kResults + kGacc];
    check_chain(chain, g_size, fetch_initial(t, kGaccCounter), "MPI_Get_accumulate(MPI_SUM)", t);
    for (int o = 0; o < g_size; ++o) chain[o] = all[(o * g_size + t) * kResults + kFop];
    check_chain(chain, g_size, fetch_initial(t, kFopCounter), "MPI_Fetch_and_op(MPI_SUM)", t);
    m[kGaccCounter] += (1LL << g_size) - 1;
    m[kFopCounter] += (1LL << g_size) - 1;
    int winner = -1;
    for (int o = 0; o < g_size; ++o) {
      if (all[(o * g_size + t) * kResults + kCas] == fetch_initial(t, kCasWord)) {
        CHECK(winner == -1, "MPI_Compare_and_swap on rank %d: origins %d and %d both won", t, winner, o);
        winner = o;
      }
    }
    CHECK(winner >= 0, "MPI_Compare_and_swap on rank %d: no origin saw the initial value", t);
    for (int o = 0; o < g_size; ++o) {
      long long got = all[(o * g_size + t) * kResults + kCas];
      CHECK(o == winner || got == cas_value(winner),
            "MPI_Compare_and_swap on rank %d: origin %d fetched %lld, expected the winner %d's %lld", t,
            o, got, winner, cas_value(winner));
      got = all[(o * g_size + t) * kResults + kSwap];
      CHECK(got == fetch_initial(t, kSwapRows + o),
            "MPI_Get_accumulate(MPI_REPLACE) on rank %d: origin %d fetched %lld, expected %lld", t, o,
            got, fetch_initial(t, kSwapRows + o));
      m[kSwapRows + o] = swap_value(o, t);
      got = all[(o * g_size + t) * kResults + kFopNoOp];
      CHECK(got == fetch_initial(t, kConstant + 3),
            "MPI_Fetch_and_op(MPI_NO_OP) on rank %d: origin %d fetched %lld, expected %lld", t, o, got,
            fetch_initial(t, kConstant + 3));
    }
    m[kCasWord] = cas_value(winner);
    RMA_CHECK_BYTES(read + t * 8, m + kConstant, 8 * sizeof(long long),
                    "MPI_Get_accumulate(MPI_NO_OP) of 8 words from rank %d", t);
  }
  RMA_CHECK_BYTES(base, model + g_rank * kFetchWords, kFetchWords * sizeof(long long),
                  "window after the fetching atomics");

  /* The whole window of every rank, read with MPI_NO_OP this time. */
  long long* whole = (long long*)test_malloc(sizeof(long long) * g_size * kFetchWords);
  for (int t = 0; t < g_size; ++t)
    MPI_CHECK(MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, whole + t * kFetchWords, kFetchWords,
                                 MPI_LONG_LONG, t, 0, kFetchWords, MPI_LONG_LONG, MPI_NO_OP, win));
  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  RMA_CHECK_BYTES(whole, model, (size_t)g_size * kFetchWords * sizeof(long long),
                  "every window read with MPI_Get_accumulate(MPI_NO_OP)");
  MPI_CHECK(MPI_Win_free(&win));
  free(results);
  free(all);
  free(read);
  free(model);
  free(whole);
}

/* ---- 5. derived datatypes on either side -------------------------------- */

enum { kRegion = 96, kGuard = -777 }; /* ints per origin in each window */

/* The target places (ints from the origin's region) that element k of
 * each operation's type signature lands on, and the origin buffer
 * offsets it comes from; n elements. */
typedef struct {
  int n;
  int origin[32];
  int target[32];
} Flat;

enum { kOpVecToContig, kOpContigToIndexed, kOpVecToVec, kOpContigToResized, kOpResizedToContig,
       kOpContigToHvector, kNumTypeOps };

static const int kIndexedLens[] = {2, 4, 1, 4};
static const int kIndexedDispls[] = {0, 4, 11, 14};

static Flat flat_of(int op) {
  Flat f;
  f.n = 0;
  switch (op) {
    case kOpVecToContig: /* vector(5, 3, 7) -> 15 contiguous at 0 */
      for (int k = 0; k < 15; ++k, ++f.n) f.origin[k] = (k / 3) * 7 + k % 3, f.target[k] = k;
      break;
    case kOpContigToIndexed: /* 11 contiguous -> indexed at 16 */
      for (int b = 0; b < 4; ++b)
        for (int j = 0; j < kIndexedLens[b]; ++j, ++f.n)
          f.origin[f.n] = f.n, f.target[f.n] = 16 + kIndexedDispls[b] + j;
      break;
    case kOpVecToVec: /* vector(4, 2, 3) -> vector(2, 4, 6) at 36 */
      for (int k = 0; k < 8; ++k, ++f.n) f.origin[k] = (k / 2) * 3 + k % 2, f.target[k] = 36 + (k / 4) * 6 + k % 4;
      break;
    case kOpContigToResized: /* 6 contiguous -> 6 ints of extent 12 at 48 */
      for (int k = 0; k < 6; ++k, ++f.n) f.origin[k] = k, f.target[k] = 48 + 3 * k;
      break;
    case kOpResizedToContig: /* 5 ints of extent 8 -> 5 contiguous at 66 */
      for (int k = 0; k < 5; ++k, ++f.n) f.origin[k] = 2 * k, f.target[k] = 66 + k;
      break;
    case kOpContigToHvector: /* 6 contiguous -> hvector(3, 2, 20 bytes) at 72 */
      for (int k = 0; k < 6; ++k, ++f.n) f.origin[k] = k, f.target[k] = 72 + (k / 2) * 5 + k % 2;
      break;
  }
  return f;
}

static int type_value(int o, int t, int round, int op, int k) {
  return (int)(rma_hash((uint64_t)o, (uint64_t)t, (uint64_t)(round * 16 + op), (uint64_t)k + 1000) >> 33);
}

static void derived_datatypes(void) {
  const int test = 50;
  const size_t ints = (size_t)g_size * kRegion;
  int* base = (int*)test_malloc(ints * sizeof(int));
  int* model = (int*)test_malloc((size_t)g_size * ints * sizeof(int));
  for (int t = 0; t < g_size; ++t) rma_fill(model + (size_t)t * ints, ints * sizeof(int), test, kInitial, t, 0);
  memcpy(base, model + (size_t)g_rank * ints, ints * sizeof(int));
  MPI_Win win;
  MPI_CHECK(MPI_Win_create(base, (MPI_Aint)(ints * sizeof(int)), (int)sizeof(int), MPI_INFO_NULL,
                           MPI_COMM_WORLD, &win));

  MPI_Datatype vec537, vec423, vec246, indexed, resized12, resized8, hvec;
  MPI_CHECK(MPI_Type_vector(5, 3, 7, MPI_INT, &vec537));
  MPI_CHECK(MPI_Type_vector(4, 2, 3, MPI_INT, &vec423));
  MPI_CHECK(MPI_Type_vector(2, 4, 6, MPI_INT, &vec246));
  MPI_CHECK(MPI_Type_indexed(4, kIndexedLens, kIndexedDispls, MPI_INT, &indexed));
  MPI_CHECK(MPI_Type_create_resized(MPI_INT, 0, 12, &resized12));
  MPI_CHECK(MPI_Type_create_resized(MPI_INT, 0, 8, &resized8));
  MPI_CHECK(MPI_Type_create_hvector(3, 2, 20, MPI_INT, &hvec));
  MPI_Datatype* all_types[] = {&vec537, &vec423, &vec246, &indexed, &resized12, &resized8, &hvec};
  for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; ++i) MPI_CHECK(MPI_Type_commit(all_types[i]));

  /* origin buffers: [target][op][32], kept until the fence */
  int* send = (int*)test_malloc((size_t)g_size * kNumTypeOps * 40 * sizeof(int));
  int* got = (int*)test_malloc((size_t)g_size * 3 * 40 * sizeof(int));
  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  const int rounds = 2;
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < g_size; ++k) {
      const int t = (g_rank + g_size - k) % g_size;
      const MPI_Aint region = (MPI_Aint)g_rank * kRegion;
      for (int op = 0; op < kNumTypeOps; ++op) {
        int* buf = send + ((size_t)t * kNumTypeOps + op) * 40;
        Flat f = flat_of(op);
        for (int i = 0; i < 40; ++i) buf[i] = kGuard;
        for (int e = 0; e < f.n; ++e) buf[f.origin[e]] = type_value(g_rank, t, round, op, e);
      }
      int* b = send + (size_t)t * kNumTypeOps * 40;
      MPI_CHECK(MPI_Put(b + 0 * 40, 1, vec537, t, region + 0, 15, MPI_INT, win));
      MPI_CHECK(MPI_Put(b + 1 * 40, 11, MPI_INT, t, region + 16, 1, indexed, win));
      MPI_CHECK(MPI_Put(b + 2 * 40, 1, vec423, t, region + 36, 1, vec246, win));
      MPI_CHECK(MPI_Put(b + 3 * 40, 6, MPI_INT, t, region + 48, 6, resized12, win));
      MPI_CHECK(MPI_Put(b + 4 * 40, 5, resized8, t, region + 66, 5, MPI_INT, win));
      MPI_CHECK(MPI_Put(b + 5 * 40, 6, MPI_INT, t, region + 72, 1, hvec, win));
    }
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOPUT, win));
    for (int t = 0; t < g_size; ++t) {
      for (int o = 0; o < g_size; ++o) {
        for (int op = 0; op < kNumTypeOps; ++op) {
          Flat f = flat_of(op);
          for (int e = 0; e < f.n; ++e)
            model[(size_t)t * ints + (size_t)o * kRegion + f.target[e]] = type_value(o, t, round, op, e);
        }
      }
    }
    RMA_CHECK_BYTES(base, model + (size_t)g_rank * ints, ints * sizeof(int),
                    "window after derived-datatype puts, round %d", round);

    /* Gets: from each target, from the region of another origin. */
    for (int t = 0; t < g_size; ++t) {
      const MPI_Aint region = (MPI_Aint)((g_rank + round + t) % g_size) * kRegion;
      int* g = got + (size_t)t * 3 * 40;
      for (int i = 0; i < 3 * 40; ++i) g[i] = kGuard;
      MPI_CHECK(MPI_Get(g, 15, MPI_INT, t, region + 0, 1, vec537, win)); /* vector target */
      MPI_CHECK(MPI_Get(g + 40, 1, vec423, t, region + 40, 8, MPI_INT, win)); /* vector origin */
      MPI_CHECK(MPI_Get(g + 80, 6, MPI_INT, t, region + 48, 6, resized12, win)); /* resized target */
    }
    if (round == rounds - 1) { /* freed before the fence completes the gets */
      for (size_t i = 0; i < sizeof all_types / sizeof all_types[0]; ++i) MPI_CHECK(MPI_Type_free(all_types[i]));
    }
    MPI_CHECK(MPI_Win_fence(round == rounds - 1 ? MPI_MODE_NOSUCCEED : 0, win));
    for (int t = 0; t < g_size; ++t) {
      const size_t region = (size_t)((g_rank + round + t) % g_size) * kRegion;
      const int* m = model + (size_t)t * ints + region;
      int expect[3 * 40];
      for (int i = 0; i < 3 * 40; ++i) expect[i] = kGuard;
      for (int k = 0; k < 15; ++k) expect[k] = m[(k / 3) * 7 + k % 3];
      for (int k = 0; k < 8; ++k) expect[40 + (k / 2) * 3 + k % 2] = m[40 + k];
      for (int k = 0; k < 6; ++k) expect[80 + k] = m[48 + 3 * k];
      RMA_CHECK_BYTES(got + (size_t)t * 3 * 40, expect, sizeof expect,
                      "derived-datatype gets from rank %d, round %d (guards included)", t, round);
    }
  }
  MPI_CHECK(MPI_Win_free(&win));
  free(base);
  free(model);
  free(send);
  free(got);
}

/* The large-count forms (MPI-4) of the window calls: the same checks
 * through MPI_Win_allocate_c, MPI_Put_c, MPI_Get_c, MPI_Accumulate_c and
 * MPI_Get_accumulate_c. */
static void large_count_forms(void) {
  enum { kLongs = 256 };
  long long* base = NULL;
  MPI_Win win;
  MPI_CHECK(MPI_Win_allocate_c(kLongs * (MPI_Aint)sizeof(long long),
                               (MPI_Aint)sizeof(long long), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &base, &win));
  for (int i = 0; i < kLongs; ++i) base[i] = 0;
  long long send[kLongs], got[kLongs], old[kLongs];
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  for (int i = 0; i < kLongs; ++i) send[i] = 1000LL * g_rank + i;
  MPI_CHECK(MPI_Win_fence(0, win));
  MPI_CHECK(MPI_Put_c(send, kLongs / 2, MPI_LONG_LONG, right, 0, kLongs / 2,
                      MPI_LONG_LONG, win));
  MPI_CHECK(MPI_Accumulate_c(send, kLongs / 2, MPI_LONG_LONG, right,
                             kLongs / 2, kLongs / 2, MPI_LONG_LONG, MPI_SUM,
                             win));
  MPI_CHECK(MPI_Win_fence(0, win));
  for (int i = 0; i < kLongs / 2; ++i) {
    CHECK(base[i] == 1000LL * left + i, "MPI_Put_c: word %d is %lld", i, base[i]);
    CHECK(base[kLongs / 2 + i] == 1000LL * left + i,
          "MPI_Accumulate_c: word %d is %lld", kLongs / 2 + i, base[kLongs / 2 + i]);
  }
  MPI_CHECK(MPI_Get_c(got, kLongs, MPI_LONG_LONG, left, 0, kLongs,
                      MPI_LONG_LONG, win));
  MPI_CHECK(MPI_Win_fence(0, win));
  const int left2 = (left + g_size - 1) % g_size;
  for (int i = 0; i < kLongs; ++i) {
    CHECK(got[i] == 1000LL * left2 + i % (kLongs / 2), "MPI_Get_c: word %d is %lld", i, got[i]);
  }
  MPI_CHECK(MPI_Get_accumulate_c(send, 1, MPI_LONG_LONG, old, 1, MPI_LONG_LONG,
                                 right, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  CHECK(old[0] == 1000LL * g_rank, "MPI_Get_accumulate_c fetched %lld", old[0]);
  CHECK(base[0] == 2000LL * left, "after MPI_Get_accumulate_c word 0 is %lld", base[0]);
  MPI_CHECK(MPI_Win_free(&win));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);

  const WinSpec specs[] = {
      {"create disp_unit 1", 1, 0, g_size > 1 ? g_size - 1 : -1},
      {"create disp_unit 4", 4, 0, -1},
      {"allocate disp_unit 8", 8, 1, -1},
  };
  for (int i = 0; i < 3; ++i) puts_and_gets(&specs[i], 10 + i);
  zero_size_self();
  message_sizes();
  accumulates();
  fetching_atomics();
  derived_datatypes();
  large_count_forms();

  MPI_Barrier(MPI_COMM_WORLD);
  test_report_pass("rma_fence", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
