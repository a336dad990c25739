/* Derived datatypes through point-to-point communication, every byte checked.
 *
 * Each rank sends to the next rank in a ring and receives from the previous
 * one (itself when alone). Every datatype is built twice: as an MPI type, and
 * as a reference typemap written in this file (a list of (displacement,
 * size) entries plus bounds, expanded from the constructor arguments by the
 * standard's definitions, MPI-4.1 sections 5.1.2-5.1.7). A message is
 * checked against the reference: the sender's buffer is a known pattern;
 * the receiver expands what the sender's typemap packs and places it
 * through its own typemap into a copy of its buffer as it was before the
 * receive; the whole buffer must then equal that copy, so guard bytes around
 * the data, holes between its pieces and bytes past a truncation are all
 * checked to be untouched.
 *
 * Types: vector/subarray halos of a 3-d array, nested vectors of padded
 * structs, negative displacements and lower bounds, resized extents larger
 * and smaller than the data (interleaved items), zero-size parts, indexed
 * blocks out of order, darray, dup, large-count (_c) constructors, and a
 * struct of absolute addresses sent from MPI_BOTTOM. Each travels as itself
 * and between it and a different type of equal signature (a vector on one
 * side, contiguous data on the other), small (eager) and large (rendezvous),
 * through Send/Recv, Isend/Irecv, Ssend, persistent requests, Sendrecv,
 * Sendrecv_replace, Mprobe/Mrecv and Improbe/Imrecv. Then: truncation
 * (MPI_ERR_TRUNCATE, the data that fit, the right count), MPI_Get_count and
 * MPI_Get_elements on partial data, and freeing a type while an Isend that
 * uses it is pending.
 *
 * Usage: datatypes            all of the above
 *        datatypes irregular_rendezvous
 *                             the same exchanges of a type of 600 irregular
 *                             blocks (see build_irregular_catalog)
 *        datatypes fatal_CASE one erroneous call under the default error
 *                             handler (the job must die; see fatal_case). */
#include "test_util.h"

/* ---- Reference typemaps ------------------------------------------------ */

typedef struct {
  int64_t disp;     /* bytes from the buffer pointer */
  int64_t size;     /* bytes of the basic element */
  int64_t align;    /* its alignment (a struct's extent is padded to it) */
  int64_t elements; /* basic elements it counts for (2 for a pair type) */
} Entry;

typedef struct {
  Entry* entries;
  int64_t n, cap;
  int64_t lb, ub;
  int marked; /* explicit bounds (resized, subarray, darray) */
} Map;

typedef struct {
  MPI_Datatype type;
  Map map;
} Type;

/* What copies of old types contribute to a new type's bounds while it is
 * being built (MPI-4.1 5.1.6): explicit markers decide when any copy has
 * them, the copies' own bounds otherwise. */
typedef struct {
  int marked, has_data;
  int64_t marked_lb, marked_ub, data_lb, data_ub, align;
} Bounds;

static void map_push(Map* m, Entry e) {
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 16;
    m->entries = (Entry*)realloc(m->entries, (size_t)m->cap * sizeof(Entry));
    CHECK(m->entries != NULL, "out of memory");
  }
  m->entries[m->n++] = e;
}

static int64_t map_extent(const Map* m) { return m->ub - m->lb; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static Bounds bounds_start(void) {
  Bounds b = {0, 0, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 1};
  return b;
}

/* Appends one copy of `old` shifted by `shift` bytes. */
static void append_copy(Map* m, Bounds* b, const Map* old, int64_t shift) {
  for (int64_t i = 0; i < old->n; ++i) {
    Entry e = old->entries[i];
    e.disp += shift;
    map_push(m, e);
    b->align = max64(b->align, e.align);
  }
  if (old->n == 0 && !old->marked) return; /* an empty typemap: nothing */
  if (old->marked) {
    b->marked = 1;
    b->marked_lb = min64(b->marked_lb, old->lb + shift);
    b->marked_ub = max64(b->marked_ub, old->ub + shift);
  } else {
    b->has_data = 1;
    b->data_lb = min64(b->data_lb, old->lb + shift);
    b->data_ub = max64(b->data_ub, old->ub + shift);
  }
}

static void bounds_finish(Map* m, const Bounds* b, int is_struct) {
  if (b->marked) {
    m->marked = 1;
    m->lb = b->marked_lb;
    m->ub = b->marked_ub;
  } else if (b->has_data) {
    m->lb = b->data_lb;
    m->ub = b->data_ub;
    if (is_struct) {
      const int64_t rest = (m->ub - m->lb) % b->align;
      if (rest != 0) m->ub += b->align - rest;
    }
  } else {
    m->lb = m->ub = 0;
  }
}

static Map map_basic(int64_t size, int64_t align, int64_t extent,
                     int64_t elements) {
  Map m = {0};
  Entry e = {0, size, align, elements};
  map_push(&m, e);
  m.lb = 0;
  m.ub = extent;
  return m;
}

static void map_free(Map* m) {
  free(m->entries);
  m->entries = NULL;
  m->n = m->cap = 0;
}

static int64_t map_size(const Map* m) {
  int64_t bytes = 0;
  for (int64_t i = 0; i < m->n; ++i) bytes += m->entries[i].size;
  return bytes;
}

static int64_t map_elements(const Map* m) {
  int64_t elements = 0;
  for (int64_t i = 0; i < m->n; ++i) elements += m->entries[i].elements;
  return elements;
}

/* ---- Types: each constructor builds the MPI type and its reference ---- */

static Type t_predefined(MPI_Datatype type) {
  Type t;
  t.type = type;
  if (type == MPI_DOUBLE)
    t.map = map_basic(8, 8, 8, 1);
  else if (type == MPI_INT)
    t.map = map_basic(4, 4, 4, 1);
  else if (type == MPI_FLOAT)
    t.map = map_basic(4, 4, 4, 1);
  else if (type == MPI_SHORT)
    t.map = map_basic(2, 2, 2, 1);
  else if (type == MPI_CHAR)
    t.map = map_basic(1, 1, 1, 1);
  else if (type == MPI_LONG_LONG)
    t.map = map_basic(8, 8, 8, 1);
  else {
    /* MPI_DOUBLE_INT: {double; int;} is two entries of a 16-byte item. */
    CHECK(type == MPI_DOUBLE_INT, "no reference for this predefined type");
    t.map.entries = NULL;
    t.map.n = t.map.cap = 0;
    t.map.marked = 0;
    Entry value = {0, 8, 8, 1}, index = {8, 4, 4, 1};
    map_push(&t.map, value);
    map_push(&t.map, index);
    t.map.lb = 0;
    t.map.ub = 16;
  }
  return t;
}

static Type t_contiguous(int count, const Type* old) {
  Type t;
  memset(&t, 0, sizeof t);
  MPI_CHECK(MPI_Type_contiguous(count, old->type, &t.type));
  Bounds b = bounds_start();
  for (int k = 0; k < count; ++k)
    append_copy(&t.map, &b, &old->map, k * map_extent(&old->map));
  bounds_finish(&t.map, &b, 0);
  return t;
}

/* stride in items, or in bytes when `bytes`; `large` uses the _c form. */
static Type t_vector(int count, int blocklength, int64_t stride, int bytes,
                     int large, const Type* old) {
  Type t;
  memset(&t, 0, sizeof t);
  if (bytes && large)
    MPI_CHECK(MPI_Type_create_hvector_c(count, blocklength, stride, old->type,
                                        &t.type));
  else if (bytes)
    MPI_CHECK(MPI_Type_create_hvector(count, blocklength, stride, old->type,
                                      &t.type));
  else if (large)
    MPI_CHECK(
        MPI_Type_vector_c(count, blocklength, stride, old->type, &t.type));
  else
    MPI_CHECK(
        MPI_Type_vector(count, blocklength, (int)stride, old->type, &t.type));
  const int64_t extent = map_extent(&old->map);
  const int64_t stride_bytes = bytes ? stride : stride * extent;
  Bounds b = bounds_start();
  for (int i = 0; i < count; ++i)
    for (int k = 0; k < blocklength; ++k)
      append_copy(&t.map, &b, &old->map, i * stride_bytes + k * extent);
  bounds_finish(&t.map, &b, 0);
  return t;
}

static Type t_indexed(int n, const int* blocklengths, const int* displacements,
                      const Type* old) {
  Type t;
  memset(&t, 0, sizeof t);
  MPI_CHECK(
      MPI_Type_indexed(n, blocklengths, displacements, old->type, &t.type));
  const int64_t extent = map_extent(&old->map);
  Bounds b = bounds_start();
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < blocklengths[i]; ++k)
      append_copy(&t.map, &b, &old->map,
                  ((int64_t)displacements[i] + k) * extent);
  bounds_finish(&t.map, &b, 0);
  return t;
}

static Type t_hindexed(int n, const int* blocklengths,
                       const MPI_Aint* displacements, const Type* old) {
  Type t;
  memset(&t, 0, sizeof t);
  MPI_CHECK(MPI_Type_create_hindexed(n, blocklengths, displacements, old->type,
                                     &t.type));
  const int64_t extent = map_extent(&old->map);
  Bounds b = bounds_start();
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < blocklengths[i]; ++k)
      append_copy(&t.map, &b, &old->map, displacements[i] + k * extent);
  bounds_finish(&t.map, &b, 0);
  return t;
}

static Type t_indexed_block(int n, int blocklength, const int* displacements,
                            const Type* old) {
  Type t;
  memset(&t, 0, sizeof t);
  MPI_CHECK(MPI_Type_create_indexed_block(n, blocklength, displacements,
                                          old->type, &t.type));
  const int64_t extent = map_extent(&old->map);
  Bounds b = bounds_start();
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < blocklength; ++k)
      append_copy(&t.map, &b, &old->map,
                  ((int64_t)displacements[i] + k) * extent);
  bounds_finish(&t.map, &b, 0);
  return t;
}

static Type t_hindexed_block_c(int n, int blocklength,
                               const MPI_Count* displacements,
                               const Type* old) {
  Type t;
  memset(&t, 0, sizeof t);
  MPI_CHECK(MPI_Type_create_hindexed_block_c(n, blocklength, displacements,
                                             old->type, &t.type));
  const int64_t extent = map_extent(&old->map);
  Bounds b = bounds_start();
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < blocklength; ++k)
      append_copy(&t.map, &b, &old->map, displacements[i] + k * extent);
  bounds_finish(&t.map, &b, 0);
  return t;
}

static Type t_struct(int n, const int* blocklengths,
                     const MPI_Aint* displacements, const Type* olds) {
  Type t;
  memset(&t, 0, sizeof t);
  MPI_Datatype types[16];
  CHECK(n <= 16, "struct too wide for the test");
  for (int i = 0; i < n; ++i) types[i] = olds[i].type;
  MPI_CHECK(
      MPI_Type_create_struct(n, blocklengths, displacements, types, &t.type));
  Bounds b = bounds_start();
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < blocklengths[i]; ++k)
      append_copy(&t.map, &b, &olds[i].map,
                  displacements[i] + k * map_extent(&olds[i].map));
  bounds_finish(&t.map, &b, 1);
  return t;
}

static Type t_resized(const Type* old, MPI_Aint lb, MPI_Aint extent) {
  Type t;
  memset(&t, 0, sizeof t);
  MPI_CHECK(MPI_Type_create_resized(old->type, lb, extent, &t.type));
  Bounds b = bounds_start();
  append_copy(&t.map, &b, &old->map, 0);
  t.map.marked = 1;
  t.map.lb = lb;
  t.map.ub = lb + extent;
  return t;
}

static Type t_dup(const Type* old) {
  Type t;
  memset(&t, 0, sizeof t);
  MPI_CHECK(MPI_Type_dup(old->type, &t.type));
  Bounds b = bounds_start();
  append_copy(&t.map, &b, &old->map, 0);
  t.map.marked = old->map.marked;
  t.map.lb = old->map.lb;
  t.map.ub = old->map.ub;
  return t;
}

/* Linear index of an element of an ndims-array, by the array's order. */
static int64_t linear_index(int ndims, const int* sizes, const int* index,
                            int order) {
  int64_t linear = 0;
  if (order == MPI_ORDER_C) {
    for (int d = 0; d < ndims; ++d) linear = linear * sizes[d] + index[d];
  } else {
    for (int d = ndims - 1; d >= 0; --d) linear = linear * sizes[d] + index[d];
  }
  return linear;
}

/* Appends the elements a selection owns, visiting them in array order (the
 * fastest dimension innermost): element i of dimension d is taken when
 * owns(d, i). */
typedef int (*Owns)(const void* context, int dim, int index);

static void append_array(Map* m, Bounds* b, const Map* old, int ndims,
                         const int* sizes, int order, Owns owns,
                         const void* context) {
  int index[8] = {0};
  int64_t total = 1;
  for (int d = 0; d < ndims; ++d) total *= sizes[d];
  /* Odometer over all elements in array order, fastest dimension last. */
  for (int64_t step = 0; step < total; ++step) {
    int64_t rest = step;
    for (int k = ndims - 1; k >= 0; --k) {
      const int d = order == MPI_ORDER_C ? k : ndims - 1 - k;
      index[d] = (int)(rest % sizes[d]);
      rest /= sizes[d];
    }
    int owned = 1;
    for (int d = 0; d < ndims && owned; ++d) owned = owns(context, d, index[d]);
    if (owned)
      append_copy(m, b, old,
                  linear_index(ndims, sizes, index, order) * map_extent(old));
  }
}

typedef struct {
  const int *subsizes, *starts;
} SubarrayContext;

static int subarray_owns(const void* context, int dim, int index) {
  const SubarrayContext* c = (const SubarrayContext*)context;
  return index >= c->starts[dim] && index < c->starts[dim] + c->subsizes[dim];
}

static Type t_subarray(int ndims, const int* sizes, const int* subsizes,
                       const int* starts, int order, const Type* old) {
  Type t;
  memset(&t, 0, sizeof t);
  MPI_CHECK(MPI_Type_create_subarray(ndims, sizes, subsizes, starts, order,
                                     old->type, &t.type));
  SubarrayContext context = {subsizes, starts};
  Bounds b = bounds_start();
  append_array(&t.map, &b, &old->map, ndims, sizes, order, subarray_owns,
               &context);
  int64_t total = 1;
  for (int d = 0; d < ndims; ++d) total *= sizes[d];
  t.map.marked = 1;
  t.map.lb = 0;
  t.map.ub = total * map_extent(&old->map);
  return t;
}

/* Darray ownership: element i of dimension d belongs to grid coordinate
 * (i / block) mod psize, blocks dealt round robin (MPI-4.1 5.1.4). */
typedef struct {
  int coords[8], blocks[8], psizes[8];
} DarrayContext;

static int darray_owns(const void* context, int dim, int index) {
  const DarrayContext* c = (const DarrayContext*)context;
  return (index / c->blocks[dim]) % c->psizes[dim] == c->coords[dim];
}

static Type t_darray(int size, int rank, int ndims, const int* gsizes,
                     const int* distribs, const int* dargs, const int* psizes,
                     int order, const Type* old) {
  Type t;
  memset(&t, 0, sizeof t);
  MPI_CHECK(MPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs,
                                   psizes, order, old->type, &t.type));
  DarrayContext context;
  int rest = rank, below = size;
  for (int d = 0; d < ndims; ++d) { /* grid coordinates, row-major */
    below /= psizes[d];
    context.coords[d] = rest / below;
    rest %= below;
    context.psizes[d] = psizes[d];
    if (distribs[d] == MPI_DISTRIBUTE_NONE) {
      context.blocks[d] = gsizes[d];
    } else if (distribs[d] == MPI_DISTRIBUTE_BLOCK) {
      context.blocks[d] = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG
                              ? (gsizes[d] + psizes[d] - 1) / psizes[d]
                              : dargs[d];
    } else {
      context.blocks[d] = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[d];
    }
  }
  Bounds b = bounds_start();
  append_array(&t.map, &b, &old->map, ndims, gsizes, order, darray_owns,
               &context);
  int64_t total = 1;
  for (int d = 0; d < ndims; ++d) total *= gsizes[d];
  t.map.marked = 1;
  t.map.lb = 0;
  t.map.ub = total * map_extent(&old->map);
  return t;
}

static void type_commit(Type* t) { MPI_CHECK(MPI_Type_commit(&t->type)); }

static void type_free(Type* t) {
  /* The _c form: the int form refuses types built by _c constructors. */
  int combiner = 0;
  MPI_Count ni, na, nc, nd;
  MPI_CHECK(MPI_Type_get_envelope_c(t->type, &ni, &na, &nc, &nd, &combiner));
  if (combiner != MPI_COMBINER_NAMED) MPI_CHECK(MPI_Type_free(&t->type));
  map_free(&t->map);
}

/* The type's own queries against the reference. */
static void check_type(const Type* t, const char* name) {
  int size = -1;
  MPI_Aint lb = 0, extent = 0;
  MPI_CHECK(MPI_Type_size(t->type, &size));
  MPI_CHECK(MPI_Type_get_extent(t->type, &lb, &extent));
  CHECK(size == map_size(&t->map), "%s: MPI_Type_size %d, reference %lld", name,
        size, (long long)map_size(&t->map));
  CHECK(lb == t->map.lb && extent == map_extent(&t->map),
        "%s: lb %lld extent %lld, reference lb %lld extent %lld", name,
        (long long)lb, (long long)extent, (long long)t->map.lb,
        (long long)map_extent(&t->map));
}

/* ---- Buffers and the reference packer ---------------------------------- */

enum { kGuard = 64 };

/* Memory for `count` items of a typemap: every byte it touches plus guard
 * bytes on both sides. origin is the buffer pointer passed to MPI. */
typedef struct {
  unsigned char* memory;
  unsigned char* origin;
  size_t bytes;
} Buffer;

static Buffer buffer_for(const Map* m, int64_t count) {
  int64_t low = 0, high = 0;
  const int64_t extent = map_extent(m);
  for (int64_t i = 0; i < m->n; ++i) {
    const Entry* e = &m->entries[i];
    for (int64_t item = 0; item < count; item += (count > 1 ? count - 1 : 1)) {
      low = min64(low, item * extent + e->disp);
      high = max64(high, item * extent + e->disp + e->size);
    }
  }
  Buffer b;
  b.bytes = (size_t)(high - low + 2 * kGuard);
  b.memory = (unsigned char*)test_malloc(b.bytes);
  b.origin = b.memory + kGuard - low;
  return b;
}

/* The packed bytes of `count` items, as MPI defines them: item by item,
 * entry by entry in typemap order. */
static unsigned char* reference_pack(const Map* m, const unsigned char* origin,
                                     int64_t count, int64_t* packed_bytes) {
  const int64_t extent = map_extent(m);
  *packed_bytes = count * map_size(m);
  unsigned char* packed = (unsigned char*)test_malloc((size_t)*packed_bytes);
  int64_t p = 0;
  for (int64_t item = 0; item < count; ++item)
    for (int64_t i = 0; i < m->n; ++i) {
      const Entry* e = &m->entries[i];
      memcpy(packed + p, origin + item * extent + e->disp, (size_t)e->size);
      p += e->size;
    }
  return packed;
}

/* Writes the first `bytes` packed bytes into the typemap of `count` items. */
static void reference_unpack(const Map* m, unsigned char* origin, int64_t count,
                             const unsigned char* packed, int64_t bytes) {
  const int64_t extent = map_extent(m);
  int64_t p = 0;
  for (int64_t item = 0; item < count && p < bytes; ++item)
    for (int64_t i = 0; i < m->n && p < bytes; ++i) {
      const Entry* e = &m->entries[i];
      const int64_t n = min64(e->size, bytes - p);
      memcpy(origin + item * extent + e->disp, packed + p, (size_t)n);
      p += n;
    }
}

static void fill_pattern(Buffer* b, int rank, int tag) {
  test_fill(b->memory, b->bytes, rank, tag);
}

/* Receive buffers start as another pattern, so a byte wrongly written is
 * caught whatever it holds. */
static void fill_guard(Buffer* b, int tag) {
  test_fill(b->memory, b->bytes, -7, tag);
}

static void compare(const Buffer* got, const unsigned char* expected,
                    const char* what, int tag) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got->bytes; ++i)
    if (got->memory[i] != expected[i] && bad++ == 0) first = i;
  CHECK(bad == 0,
        "%s (tag %d): %zu of %zu bytes differ; first at buffer offset %lld: "
        "got 0x%02x, "
        "expected 0x%02x",
        what, tag, bad, got->bytes,
        (long long)((int64_t)first - (got->origin - got->memory)),
        got->memory[first], expected[first]);
}

/* ---- The exchanges ------------------------------------------------------ */

static int g_rank, g_size, g_next, g_prev;

typedef enum {
  kIsendRecv,
  kIrecvSend,
  kIrecvSsend,
  kPersistent,
  kSendrecv,
  kSendrecvReplace,
  kMprobeMrecv,
  kImprobeImrecv,
  kModes
} Mode;

static const char* const kModeNames[kModes] = {
    "Isend+Recv", "Irecv+Send",       "Irecv+Ssend",  "Send_init/Recv_init",
    "Sendrecv",   "Sendrecv_replace", "Mprobe+Mrecv", "Improbe+Imrecv"};

/* One ring exchange: every rank sends `scount` items of `send` to the next
 * rank and receives `rcount` items of `recv` from the previous, then checks
 * its whole receive buffer against the reference. `replace` modes use the
 * send type and count on both sides. */
static void exchange(const char* name, const Type* send, int scount,
                     const Type* recv, int rcount, Mode mode, int tag) {
  char what[256];
  snprintf(what, sizeof what, "%s, %s, %d -> %d items", name, kModeNames[mode],
           scount, rcount);
  Buffer sbuf = buffer_for(&send->map, scount);
  Buffer rbuf = buffer_for(&recv->map, rcount);
  fill_pattern(&sbuf, g_rank, tag);
  fill_guard(&rbuf, tag);

  /* The expected receive buffer: what the previous rank packs (its send
   * buffer is the same pattern, from its rank), placed through our typemap. */
  Buffer peer = buffer_for(&send->map, scount);
  fill_pattern(&peer, g_prev, tag);
  int64_t packed_bytes = 0;
  unsigned char* packed =
      reference_pack(&send->map, peer.origin, scount, &packed_bytes);
  const int64_t capacity = rcount * map_size(&recv->map);
  CHECK(packed_bytes <= capacity, "%s: test bug: the message does not fit",
        what);
  unsigned char* expected = (unsigned char*)test_malloc(rbuf.bytes);
  memcpy(expected, rbuf.memory, rbuf.bytes);
  reference_unpack(&recv->map, expected + (rbuf.origin - rbuf.memory), rcount,
                   packed, packed_bytes);

  MPI_Status status;
  MPI_Request requests[2];
  switch (mode) {
    case kIsendRecv:
      MPI_CHECK(MPI_Isend(sbuf.origin, scount, send->type, g_next, tag,
                          MPI_COMM_WORLD, &requests[0]));
      MPI_CHECK(MPI_Recv(rbuf.origin, rcount, recv->type, g_prev, tag,
                         MPI_COMM_WORLD, &status));
      MPI_CHECK(MPI_Wait(&requests[0], MPI_STATUS_IGNORE));
      break;
    case kIrecvSend:
    case kIrecvSsend:
      MPI_CHECK(MPI_Irecv(rbuf.origin, rcount, recv->type, g_prev, tag,
                          MPI_COMM_WORLD, &requests[0]));
      if (mode == kIrecvSend)
        MPI_CHECK(MPI_Send(sbuf.origin, scount, send->type, g_next, tag,
                           MPI_COMM_WORLD));
      else
        MPI_CHECK(MPI_Ssend(sbuf.origin, scount, send->type, g_next, tag,
                            MPI_COMM_WORLD));
      MPI_CHECK(MPI_Wait(&requests[0], &status));
      break;
    case kPersistent: {
      MPI_CHECK(MPI_Recv_init(rbuf.origin, rcount, recv->type, g_prev, tag,
                              MPI_COMM_WORLD, &requests[0]));
      MPI_CHECK(MPI_Send_init(sbuf.origin, scount, send->type, g_next, tag,
                              MPI_COMM_WORLD, &requests[1]));
      /* Two rounds through the same requests; the first round's receive is
       * checked before the second reuses the buffer. */
      for (int round = 0; round < 2; ++round) {
        MPI_Status statuses[2];
        MPI_CHECK(MPI_Startall(2, requests));
        MPI_CHECK(MPI_Waitall(2, requests, statuses));
        status = statuses[0];
        compare(&rbuf, expected, what, tag);
        fill_guard(&rbuf, tag);
        if (round == 0) MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      }
      memcpy(rbuf.memory, expected, rbuf.bytes); /* checked already */
      MPI_CHECK(MPI_Request_free(&requests[0]));
      MPI_CHECK(MPI_Request_free(&requests[1]));
      break;
    }
    case kSendrecv:
      MPI_CHECK(MPI_Sendrecv(sbuf.origin, scount, send->type, g_next, tag,
                             rbuf.origin, rcount, recv->type, g_prev, tag,
                             MPI_COMM_WORLD, &status));
      break;
    case kSendrecvReplace: {
      /* One buffer, one type: it starts as our pattern and must end as our
       * pattern with the typemap's bytes replaced by the previous rank's. */
      Buffer both = buffer_for(&send->map, scount);
      fill_pattern(&both, g_rank, tag);
      unsigned char* replaced = (unsigned char*)test_malloc(both.bytes);
      memcpy(replaced, both.memory, both.bytes);
      reference_unpack(&send->map, replaced + (both.origin - both.memory),
                       scount, packed, packed_bytes);
      MPI_CHECK(MPI_Sendrecv_replace(both.origin, scount, send->type, g_next,
                                     tag, g_prev, tag, MPI_COMM_WORLD,
                                     &status));
      compare(&both, replaced, what, tag);
      free(replaced);
      free(both.memory);
      memcpy(rbuf.memory, expected, rbuf.bytes); /* nothing received there */
      CHECK_STATUS(status, g_prev, tag, send->type, scount, what);
      break;
    }
    case kMprobeMrecv:
    case kImprobeImrecv: {
      MPI_CHECK(MPI_Isend(sbuf.origin, scount, send->type, g_next, tag,
                          MPI_COMM_WORLD, &requests[0]));
      MPI_Message message;
      if (mode == kMprobeMrecv) {
        MPI_CHECK(MPI_Mprobe(g_prev, tag, MPI_COMM_WORLD, &message, &status));
        /* The probe's status counts the message in any type's elements. */
        int count = -1;
        MPI_CHECK(MPI_Get_count(&status, recv->type, &count));
        CHECK(count == (int)(packed_bytes / map_size(&recv->map)) ||
                  packed_bytes % map_size(&recv->map) != 0,
              "%s: Mprobe count %d", what, count);
        MPI_CHECK(
            MPI_Mrecv(rbuf.origin, rcount, recv->type, &message, &status));
      } else {
        int flag = 0;
        while (!flag)
          MPI_CHECK(MPI_Improbe(g_prev, tag, MPI_COMM_WORLD, &flag, &message,
                                &status));
        MPI_CHECK(MPI_Imrecv(rbuf.origin, rcount, recv->type, &message,
                             &requests[1]));
        MPI_CHECK(MPI_Wait(&requests[1], &status));
      }
      MPI_CHECK(MPI_Wait(&requests[0], MPI_STATUS_IGNORE));
      break;
    }
    case kModes:
      break;
  }
  compare(&rbuf, expected, what, tag);
  if (mode != kSendrecvReplace) {
    /* A full message: the count is whole items of the receive type when
     * the packed bytes are, and the elements are always exact. */
    const int64_t item = map_size(&recv->map);
    const int expected_count =
        item == 0 ? 0
                  : (packed_bytes % item == 0 ? (int)(packed_bytes / item)
                                              : MPI_UNDEFINED);
    CHECK_STATUS(status, g_prev, tag, recv->type, expected_count, what);
    int elements = -1;
    MPI_CHECK(MPI_Get_elements(&status, recv->type, &elements));
    CHECK(elements == scount * map_elements(&send->map),
          "%s: MPI_Get_elements %d, expected %lld", what, elements,
          (long long)(scount * map_elements(&send->map)));
  }
  free(expected);
  free(packed);
  free(peer.memory);
  free(sbuf.memory);
  free(rbuf.memory);
}

/* Items of `t` that make at least `bytes` bytes (at least one). */
static int items_for(const Type* t, int64_t bytes) {
  const int64_t size = map_size(&t->map);
  return size == 0 ? 1 : (int)((bytes + size - 1) / size);
}

/* ---- The catalog -------------------------------------------------------- */

enum { kNX = 6, kNY = 5, kNZ = 7 };

typedef struct {
  const char* name;
  Type type;
  Type twin;      /* a different type of the same signature per item */
  int twin_items; /* twin items per item of type */
} Pair;

enum { kMaxPairs = 32 };
static Pair g_pairs[kMaxPairs];
static int g_num_pairs;

static Map map_clone(const Map* m) {
  Map copy = *m;
  copy.entries = (Entry*)test_malloc((size_t)(m->n ? m->n : 1) * sizeof(Entry));
  if (m->n > 0) memcpy(copy.entries, m->entries, (size_t)m->n * sizeof(Entry));
  copy.cap = m->n;
  return copy;
}

/* The pair owns `type` and `twin`; a predefined twin is shared between
 * pairs, so it gets a reference map of its own. */
static void add_pair(const char* name, Type type, Type twin, int twin_items) {
  CHECK(g_num_pairs < kMaxPairs, "too many catalog entries");
  twin.map = map_clone(&twin.map);
  type_commit(&type);
  type_commit(&twin);
  check_type(&type, name);
  check_type(&twin, name);
  CHECK(map_size(&type.map) == twin_items * map_size(&twin.map),
        "%s: test bug: twin of another size", name);
  Pair p = {name, type, twin, twin_items};
  g_pairs[g_num_pairs++] = p;
}

static void build_catalog(void) {
  Type dbl = t_predefined(MPI_DOUBLE), in = t_predefined(MPI_INT),
       flt = t_predefined(MPI_FLOAT), shrt = t_predefined(MPI_SHORT),
       chr = t_predefined(MPI_CHAR), dint = t_predefined(MPI_DOUBLE_INT),
       llong = t_predefined(MPI_LONG_LONG);

  /* Halo faces of a 3-d array of doubles, [x][y][z] in C order: the z face
   * is one double every kNZ, the y face kNZ doubles every kNY * kNZ, the x
   * face contiguous; and the z face again as a subarray. */
  add_pair("halo z face (vector)", t_vector(kNX * kNY, 1, kNZ, 0, 0, &dbl), dbl,
           kNX * kNY);
  add_pair("halo y face (vector of blocks)",
           t_vector(kNX, kNZ, kNY * kNZ, 0, 0, &dbl), dbl, kNX * kNZ);
  add_pair("halo x face (contiguous)", t_contiguous(kNY * kNZ, &dbl), dbl,
           kNY * kNZ);
  {
    const int sizes[3] = {kNX, kNY, kNZ}, subsizes[3] = {kNX, kNY, 1},
              starts[3] = {0, 0, kNZ - 1};
    add_pair("halo z face (subarray)",
             t_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, &dbl),
             t_vector(kNX * kNY, 1, 2, 0, 0, &dbl), 1);
  }
  /* A padded struct {int; double[2]; char;} (extent 32) in a strided
   * vector, against the same signature packed tight {int; double[2]; char}
   * at 0, 4, 20 (extent 24). */
  {
    const Type members[3] = {in, dbl, chr};
    const int bl[3] = {1, 2, 1};
    const MPI_Aint padded_disp[3] = {0, 8, 24}, tight_disp[3] = {0, 4, 20};
    Type padded = t_struct(3, bl, padded_disp, members);
    Type tight = t_struct(3, bl, tight_disp, members);
    add_pair("vector of padded structs", t_vector(3, 2, 4, 0, 0, &padded),
             t_contiguous(6, &tight), 1);
    type_free(&padded);
    type_free(&tight);
  }
  /* Negative displacements: the lower bound is below the buffer pointer. */
  {
    const int bl[3] = {2, 1, 3};
    const MPI_Aint disp[3] = {-40, 0, 24};
    add_pair("hindexed, negative displacements", t_hindexed(3, bl, disp, &in),
             in, 6);
  }
  /* Resized: a negative lb and an extent larger than the data; and an
   * extent smaller than the data, so consecutive items interleave. */
  {
    Type three_shorts = t_contiguous(3, &shrt);
    add_pair("resized, lb -8, extent 16 > data",
             t_resized(&three_shorts, -8, 16), shrt, 3);
    type_free(&three_shorts);
    Type two_ints = t_vector(2, 1, 3, 0, 0, &in); /* ints at 0 and 12 */
    add_pair("resized, extent 8 < data (interleaved)",
             t_resized(&two_ints, 0, 8), in, 2);
    type_free(&two_ints);
  }
  /* Zero-size parts: an empty struct member and empty indexed blocks. */
  {
    const Type members[3] = {in, dbl, flt};
    const int bl[3] = {1, 0, 2};
    const MPI_Aint disp[3] = {0, 100, 8};
    const int ibl[4] = {0, 2, 0, 1}, idisp[4] = {7, 3, -5, 0};
    Type sparse = t_struct(3, bl, disp, members);
    const Type tight_members[2] = {in, flt};
    const int tight_bl[2] = {1, 2};
    const MPI_Aint tight_disp[2] = {0, 4};
    Type tight = t_struct(2, tight_bl, tight_disp, tight_members);
    add_pair("struct with an empty member", t_indexed(4, ibl, idisp, &sparse),
             t_contiguous(3, &tight), 1);
    type_free(&sparse);
    type_free(&tight);
  }
  /* Indexed blocks out of order, and a _c hindexed block of pairs. */
  {
    const int disp[4] = {0, 5, 3, 9};
    add_pair("indexed_block out of order", t_indexed_block(4, 2, disp, &flt),
             flt, 8);
  }
  {
    const MPI_Count disp[3] = {32, -48, 0};
    add_pair("hindexed_block_c of MPI_DOUBLE_INT",
             t_hindexed_block_c(3, 1, disp, &dint),
             t_vector(3, 1, 2, 0, 1, &dint), 1);
  }
  /* Subarray in Fortran order, a darray, a dup, an hvector_c. */
  {
    const int sizes[2] = {5, 4}, subsizes[2] = {3, 2}, starts[2] = {1, 1};
    add_pair("subarray, Fortran order",
             t_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, &llong),
             llong, 6);
  }
  {
    const int gsizes[2] = {7, 5},
              distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    const int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {2, 2};
    Type darray =
        t_darray(4, 1, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, &dbl);
    const int owned = (int)darray.map.n;
    add_pair("darray block x cyclic(2), rank 1 of 4", darray, dbl, owned);
  }
  {
    Type vector = t_vector(4, 3, 5, 0, 0, &in);
    add_pair("dup of a vector", t_dup(&vector), t_contiguous(3, &in), 4);
    type_free(&vector);
  }
  add_pair("hvector_c, negative stride", t_vector(5, 2, -24, 1, 1, &shrt), shrt,
           10);
}

/* ---- Scenarios ------------------------------------------------------------
 */

static int g_tag = 100;

static void run_exchanges(void) {
  for (int p = 0; p < g_num_pairs; ++p) {
    const Pair* pair = &g_pairs[p];
    /* Small: one to three items (eager). Large: about 200 KB (rendezvous
     * by default; every protocol when the eager limit is lowered). */
    const int small = 1 + p % 3;
    const int large = items_for(&pair->type, 200000);
    const int counts[2] = {small, large};
    for (int c = 0; c < 2; ++c) {
      const int n = counts[c];
      for (int mode = 0; mode < kModes; ++mode) {
        /* The type to itself; type to twin; twin to type (replace modes
         * use one type on both sides). */
        exchange(pair->name, &pair->type, n, &pair->type, n, (Mode)mode,
                 g_tag++);
        if (mode == kSendrecvReplace) {
          exchange(pair->name, &pair->twin, n * pair->twin_items, &pair->twin,
                   n * pair->twin_items, (Mode)mode, g_tag++);
          continue;
        }
        exchange(pair->name, &pair->type, n, &pair->twin, n * pair->twin_items,
                 (Mode)mode, g_tag++);
        exchange(pair->name, &pair->twin, n * pair->twin_items, &pair->type, n,
                 (Mode)mode, g_tag++);
      }
    }
  }
}

/* More data than the receive buffer holds: MPI_ERR_TRUNCATE, the part that
 * fits delivered through the receive typemap, nothing else touched, and the
 * status counting what was delivered. */
static void truncation(void) {
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  for (int p = 0; p < g_num_pairs; ++p) {
    const Pair* pair = &g_pairs[p];
    if (map_size(&pair->type.map) == 0) continue;
    const int sizes[2] = {3, items_for(&pair->type, 150000)};
    for (int s = 0; s < 2; ++s) {
      const int rcount = sizes[s], scount = rcount + 2;
      const int tag = g_tag++;
      const Type* t = &pair->type;
      Buffer sbuf = buffer_for(&t->map, scount),
             rbuf = buffer_for(&t->map, rcount);
      Buffer peer = buffer_for(&t->map, scount);
      fill_pattern(&sbuf, g_rank, tag);
      fill_pattern(&peer, g_prev, tag);
      fill_guard(&rbuf, tag);
      int64_t packed_bytes;
      unsigned char* packed =
          reference_pack(&t->map, peer.origin, scount, &packed_bytes);
      const int64_t capacity = rcount * map_size(&t->map);
      unsigned char* expected = (unsigned char*)test_malloc(rbuf.bytes);
      memcpy(expected, rbuf.memory, rbuf.bytes);
      reference_unpack(&t->map, expected + (rbuf.origin - rbuf.memory), rcount,
                       packed, capacity);
      MPI_Request request;
      MPI_Status status;
      MPI_CHECK(MPI_Isend(sbuf.origin, scount, t->type, g_next, tag,
                          MPI_COMM_WORLD, &request));
      const int rc = MPI_Recv(rbuf.origin, rcount, t->type, g_prev, tag,
                              MPI_COMM_WORLD, &status);
      int error_class = -1;
      MPI_Error_class(rc, &error_class);
      CHECK(error_class == MPI_ERR_TRUNCATE,
            "%s: %d items into %d: error class %d, expected %d", pair->name,
            scount, rcount, error_class, MPI_ERR_TRUNCATE);
      MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
      compare(&rbuf, expected, "truncated receive", tag);
      char what[200];
      snprintf(what, sizeof what, "%s truncated to %d items", pair->name,
               rcount);
      CHECK_STATUS(status, g_prev, tag, t->type, rcount, what);
      free(expected);
      free(packed);
      free(peer.memory);
      free(sbuf.memory);
      free(rbuf.memory);
    }
  }
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Messages that end inside an item of the receive type: MPI_Get_count is
 * MPI_UNDEFINED, MPI_Get_elements counts the basic elements that came, and
 * is MPI_UNDEFINED too when the data ends inside a basic element. */
static void partial_counts(void) {
  const int tag = g_tag++;
  Type dbl = t_predefined(MPI_DOUBLE), chr = t_predefined(MPI_CHAR);
  const Type members[2] = {dbl, chr};
  const int bl[2] = {1, 1};
  const MPI_Aint disp[2] = {0, 8};
  Type dc = t_struct(2, bl, disp, members); /* {double; char}, extent 16 */
  type_commit(&dc);
  /* (double, char, double): one item and a half of dc. */
  const int sbl[3] = {1, 1, 1};
  const MPI_Aint sdisp[3] = {0, 8, 16};
  const Type smembers[3] = {dbl, chr, dbl};
  Type three = t_struct(3, sbl, sdisp, smembers);
  type_commit(&three);
  Type pair_of_doubles = t_contiguous(2, &dbl);
  type_commit(&pair_of_doubles);
  double values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  double received[16];
  struct {
    const char* what;
    const void* data;
    int count;
    MPI_Datatype send_type;
    MPI_Datatype recv_type;
    int recv_count, expected_count, expected_elements;
  } cases[] = {
      {"(double, char, double) into {double; char}", values, 1, three.type,
       dc.type, 4, MPI_UNDEFINED, 3},
      {"5 doubles into pairs of doubles", values, 5, MPI_DOUBLE,
       pair_of_doubles.type, 4, MPI_UNDEFINED, 5},
      {"4 doubles into pairs of doubles", values, 4, MPI_DOUBLE,
       pair_of_doubles.type, 4, 2, 4},
      {"12 bytes into pairs of doubles", values, 12, MPI_BYTE,
       pair_of_doubles.type, 4, MPI_UNDEFINED, MPI_UNDEFINED},
      {"nothing into pairs of doubles", values, 0, MPI_DOUBLE,
       pair_of_doubles.type, 4, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    MPI_Request request;
    MPI_Status status;
    MPI_CHECK(MPI_Isend(cases[i].data, cases[i].count, cases[i].send_type,
                        g_next, tag, MPI_COMM_WORLD, &request));
    MPI_CHECK(MPI_Recv(received, cases[i].recv_count, cases[i].recv_type,
                       g_prev, tag, MPI_COMM_WORLD, &status));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    int count = -2, elements = -2;
    MPI_Count elements_x = -2, count_c = -2;
    MPI_CHECK(MPI_Get_count(&status, cases[i].recv_type, &count));
    MPI_CHECK(MPI_Get_elements(&status, cases[i].recv_type, &elements));
    MPI_CHECK(MPI_Get_elements_x(&status, cases[i].recv_type, &elements_x));
    MPI_CHECK(MPI_Get_count_c(&status, cases[i].recv_type, &count_c));
    CHECK(count == cases[i].expected_count && count_c == count,
          "%s: MPI_Get_count %d (_c %lld), expected %d", cases[i].what, count,
          (long long)count_c, cases[i].expected_count);
    CHECK(elements == cases[i].expected_elements && elements_x == elements,
          "%s: MPI_Get_elements %d (_x %lld), expected %d", cases[i].what,
          elements, (long long)elements_x, cases[i].expected_elements);
  }
  type_free(&dc);
  type_free(&three);
  type_free(&pair_of_doubles);
}

/* A type freed while an Isend that uses it is still pending (a rendezvous,
 * waiting for the receiver): the send completes with the right data. */
static void free_while_pending(void) {
  const int tag = g_tag++;
  Type in = t_predefined(MPI_INT);
  Type strided = t_vector(50000, 1, 3, 0, 0, &in);
  type_commit(&strided);
  Map map = strided.map; /* the reference outlives the MPI type */
  strided.map.entries = NULL;
  Buffer sbuf = buffer_for(&map, 1), peer = buffer_for(&map, 1);
  fill_pattern(&sbuf, g_rank, tag);
  fill_pattern(&peer, g_prev, tag);
  int64_t packed_bytes;
  unsigned char* packed = reference_pack(&map, peer.origin, 1, &packed_bytes);
  MPI_Request request;
  MPI_CHECK(MPI_Isend(sbuf.origin, 1, strided.type, g_next, tag, MPI_COMM_WORLD,
                      &request));
  MPI_CHECK(MPI_Type_free(&strided.type));
  CHECK(strided.type == MPI_DATATYPE_NULL, "MPI_Type_free left the handle");
  /* Let the receivers post late, so the send is surely still pending. */
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  int* received = (int*)test_malloc(50000 * sizeof(int));
  MPI_Status status;
  MPI_CHECK(
      MPI_Recv(received, 50000, MPI_INT, g_prev, tag, MPI_COMM_WORLD, &status));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(memcmp(received, packed, (size_t)packed_bytes) == 0,
        "data of an Isend whose type was freed while pending differs");
  CHECK_STATUS(status, g_prev, tag, MPI_INT, 50000, "Isend with a freed type");
  free(received);
  free(packed);
  free(sbuf.memory);
  free(peer.memory);
  map_free(&map);
}

/* A struct of absolute addresses, sent from and received into MPI_BOTTOM. */
static void absolute_addresses(void) {
  const int tag = g_tag++;
  static int a[3];
  static double b;
  static short c[5];
  static int ra[3];
  static double rb;
  static short rc[5];
  for (int i = 0; i < 3; ++i) a[i] = g_rank * 100 + i;
  b = g_rank + 0.25;
  for (int i = 0; i < 5; ++i) c[i] = (short)(-g_rank - i);
  const int bl[3] = {3, 1, 5};
  MPI_Aint send_addresses[3], recv_addresses[3];
  MPI_CHECK(MPI_Get_address(a, &send_addresses[0]));
  MPI_CHECK(MPI_Get_address(&b, &send_addresses[1]));
  MPI_CHECK(MPI_Get_address(c, &send_addresses[2]));
  /* The receive side in another order of memory: c's place first. */
  MPI_CHECK(MPI_Get_address(ra, &recv_addresses[0]));
  MPI_CHECK(MPI_Get_address(&rb, &recv_addresses[1]));
  MPI_CHECK(MPI_Get_address(rc, &recv_addresses[2]));
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
  MPI_Datatype send_type, recv_type;
  MPI_CHECK(MPI_Type_create_struct(3, bl, send_addresses, types, &send_type));
  MPI_CHECK(MPI_Type_create_struct(3, bl, recv_addresses, types, &recv_type));
  MPI_CHECK(MPI_Type_commit(&send_type));
  MPI_CHECK(MPI_Type_commit(&recv_type));
  MPI_Request request;
  MPI_Status status;
  MPI_CHECK(MPI_Isend(MPI_BOTTOM, 1, send_type, g_next, tag, MPI_COMM_WORLD,
                      &request));
  MPI_CHECK(
      MPI_Recv(MPI_BOTTOM, 1, recv_type, g_prev, tag, MPI_COMM_WORLD, &status));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  for (int i = 0; i < 3; ++i)
    CHECK(ra[i] == g_prev * 100 + i, "MPI_BOTTOM: int %d is %d", i, ra[i]);
  CHECK(rb == g_prev + 0.25, "MPI_BOTTOM: double is %g", rb);
  for (int i = 0; i < 5; ++i)
    CHECK(rc[i] == (short)(-g_prev - i), "MPI_BOTTOM: short %d is %d", i,
          rc[i]);
  CHECK_STATUS(status, g_prev, tag, recv_type, 1, "MPI_BOTTOM struct");
  MPI_CHECK(MPI_Type_free(&send_type));
  MPI_CHECK(MPI_Type_free(&recv_type));
}

/* ---- Erroneous calls under the default handler (tests.bzl expects the job
 * to die with one line naming the call, the rank and the problem) -------- */

static void fatal_case(const char* name) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int data[4] = {0, 0, 0, 0};
  int rc = MPI_SUCCESS;
  if (g_rank == g_size - 1) {
    if (strcmp(name, "fatal_vector_count") == 0) {
      rc = MPI_Type_vector(-1, 1, 1, MPI_INT, &type);
    } else if (strcmp(name, "fatal_free_predefined") == 0) {
      type = MPI_INT;
      rc = MPI_Type_free(&type);
    } else if (strcmp(name, "fatal_uncommitted_send") == 0) {
      MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &type));
      MPI_CHECK(MPI_Type_set_name(type, "pair"));
      rc = MPI_Send(data, 1, type, 0, 0, MPI_COMM_WORLD);
    } else if (strcmp(name, "fatal_darray_order") == 0) {
      const int gsizes[1] = {8}, distribs[1] = {MPI_DISTRIBUTE_BLOCK},
                dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[1] = {1};
      rc = MPI_Type_create_darray(1, 0, 1, gsizes, distribs, dargs, psizes, 77,
                                  MPI_INT, &type);
    } else {
      test_fail(__FILE__, __LINE__, "unknown case %s", name);
    }
    fprintf(stderr,
            "FAIL [rank %d]: %s returned %d instead of aborting the job\n",
            g_rank, name, rc);
    fflush(stderr);
    for (int r = 0; r < g_size; ++r)
      if (r != g_rank) MPI_Send(NULL, 0, MPI_BYTE, r, 1, MPI_COMM_WORLD);
  } else {
    /* Released only if the erroneous call returned. */
    MPI_Recv(NULL, 0, MPI_BYTE, g_size - 1, 1, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
}

/* A type too irregular for p2p to describe in one message (more than
 * (MINIMPI_EAGER_MAX - 32) / 32 runs): the sender packs a staging copy for
 * the rendezvous, and a contiguous receive of at least
 * MINIMPI_RNDV_SPLIT_MIN bytes splits it (the sender writes the second half
 * from that copy). Run with "datatypes irregular_rendezvous". */
static void build_irregular_catalog(void) {
  Type dbl = t_predefined(MPI_DOUBLE);
  enum { kBlocks = 600 };
  static MPI_Count displacements[kBlocks];
  int64_t at = 0;
  for (int i = 0; i < kBlocks; ++i) {
    displacements[i] = at;
    at += 8 * (2 + i % 7); /* gaps of 1 to 7 doubles: no two runs merge */
  }
  Type irregular = t_hindexed_block_c(kBlocks, 1, displacements, &dbl);
  add_pair("hindexed_block of 600 irregular blocks", irregular, dbl, kBlocks);
  map_free(&dbl.map);
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  g_next = (g_rank + 1) % g_size;
  g_prev = (g_rank + g_size - 1) % g_size;
  const int irregular =
      argc > 1 && strcmp(argv[1], "irregular_rendezvous") == 0;
  if (argc > 1 && !irregular) {
    fatal_case(argv[1]);
    return 0;
  }
  if (irregular) {
    build_irregular_catalog();
  } else {
    build_catalog();
  }
  run_exchanges();
  truncation();
  if (!irregular) {
    partial_counts();
    free_while_pending();
    absolute_addresses();
  }
  for (int p = 0; p < g_num_pairs; ++p) {
    type_free(&g_pairs[p].type);
    type_free(&g_pairs[p].twin);
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("datatypes", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
