/* Collectives with derived datatypes, against a reference that uses only
 * predefined types.
 *
 * Each test type is built with MPI constructors and, independently, described
 * here by the explicit byte blocks of one item (its typemap, flattened by
 * hand) and its extent. The test packs and unpacks with that description
 * itself. For every collective, a call with derived types on buffers full of
 * guard bytes is compared with the same collective run on the packed data
 * with MPI_BYTE (data movement) or the predefined base type (reductions):
 * every byte of the typemap must hold the reference's result and every
 * other byte of the buffer must still be a guard byte. Sends with a derived
 * type are received with a predefined type of the same signature and the
 * other way round, and in-place forms are covered. User-defined operations
 * on a struct type see items of that type.
 *
 * Usage: collectives_datatypes */
#include "test_util.h"

enum { kMaxBlocks = 8, kGuard = 0xEE, kCount = 3 };

/* One item of a test type: byte blocks at offsets (typemap order). */
typedef struct {
  const char* name;
  MPI_Datatype type;
  MPI_Datatype base; /* predefined base for reductions, or NULL */
  int base_per_item;
  int blocks;
  MPI_Aint offset[kMaxBlocks];
  int length[kMaxBlocks];
  MPI_Aint extent;
  MPI_Aint low; /* lowest byte of item 0 (may be negative) */
  int size;     /* packed bytes per item */
} TestType;

static int rank_, size_;

static void finish_type(TestType* t) {
  t->size = 0;
  t->low = t->offset[0];
  for (int i = 0; i < t->blocks; ++i) {
    t->size += t->length[i];
    if (t->offset[i] < t->low) t->low = t->offset[i];
  }
  MPI_CHECK(MPI_Type_commit(&t->type));
  int size;
  MPI_Aint lb, extent;
  MPI_CHECK(MPI_Type_size(t->type, &size));
  MPI_CHECK(MPI_Type_get_extent(t->type, &lb, &extent));
  CHECK(size == t->size && extent == t->extent,
        "%s: MPI says size %d extent %ld, the test expects %d and %ld", t->name,
        size, (long)extent, t->size, (long)t->extent);
}

/* Bytes a buffer of `count` items needs, and where item 0 starts in it. */
static size_t span(const TestType* t, int count, MPI_Aint* origin) {
  *origin = t->low < 0 ? -t->low : 0;
  MPI_Aint high = 0;
  for (int i = 0; i < t->blocks; ++i) {
    MPI_Aint end = t->offset[i] + t->length[i];
    if (end > high) high = end;
  }
  return (size_t)(*origin + (count > 0 ? (count - 1) * t->extent : 0) + high +
                  16);
}

static void pack(const TestType* t, const unsigned char* base, int count,
                 unsigned char* out) {
  for (int item = 0; item < count; ++item) {
    for (int b = 0; b < t->blocks; ++b) {
      memcpy(out, base + item * t->extent + t->offset[b], t->length[b]);
      out += t->length[b];
    }
  }
}

static void unpack(const TestType* t, const unsigned char* in, int count,
                   unsigned char* base) {
  for (int item = 0; item < count; ++item) {
    for (int b = 0; b < t->blocks; ++b) {
      memcpy(base + item * t->extent + t->offset[b], in, t->length[b]);
      in += t->length[b];
    }
  }
}

/* A guarded buffer for `count` items; `data` points at item 0. */
typedef struct {
  unsigned char* memory;
  unsigned char* data;
  size_t bytes;
} Buffer;

static Buffer new_buffer(const TestType* t, int count) {
  Buffer b;
  MPI_Aint origin;
  b.bytes = span(t, count, &origin);
  b.memory = (unsigned char*)test_malloc(b.bytes);
  memset(b.memory, kGuard, b.bytes);
  b.data = b.memory + origin;
  return b;
}

/* Fills the typemap bytes of `count` items from packed values. */
static void fill(const TestType* t, Buffer* b, int count, int seed) {
  size_t packed_bytes = (size_t)count * t->size;
  unsigned char* packed = (unsigned char*)test_malloc(packed_bytes);
  test_fill(packed, packed_bytes, seed, 7);
  unpack(t, packed, count, b->data);
  free(packed);
}

/* The typemap bytes of `count` items equal `expected` (packed) and every
 * other byte of the buffer is still a guard byte. */
static void expect(const TestType* t, const Buffer* b, int count,
                   const unsigned char* expected, const char* what) {
  unsigned char* shadow = (unsigned char*)test_malloc(b->bytes);
  memset(shadow, kGuard, b->bytes);
  unpack(t, expected, count, shadow + (b->data - b->memory));
  for (size_t i = 0; i < b->bytes; ++i) {
    CHECK(b->memory[i] == shadow[i],
          "%s with %s: byte %ld of the buffer is 0x%02x, expected 0x%02x "
          "(item 0 at byte %ld)",
          what, t->name, (long)i, b->memory[i], shadow[i],
          (long)(b->data - b->memory));
  }
  free(shadow);
}

/* --- The test types --------------------------------------------------------
 */

static TestType vector_of_ints(void) {
  /* 3 blocks of 2 ints, stride 5 ints: gaps between blocks. */
  TestType t = {"vector(3,2,5,int)", MPI_DATATYPE_NULL, MPI_INT, 6, 3,
                {0, 20, 40},         {8, 8, 8},         48};
  MPI_CHECK(MPI_Type_vector(3, 2, 5, MPI_INT, &t.type));
  finish_type(&t);
  return t;
}

static TestType interleaved_doubles(void) {
  /* 2 doubles 24 bytes apart, resized to a 16-byte extent: items
   * interleave without overlapping. */
  TestType t = {"resized(vector(2,1,3,double),0,16)",
                MPI_DATATYPE_NULL,
                MPI_DOUBLE,
                2,
                2,
                {0, 24},
                {8, 8},
                16};
  MPI_Datatype vector;
  MPI_CHECK(MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &vector));
  MPI_CHECK(MPI_Type_create_resized(vector, 0, 16, &t.type));
  MPI_CHECK(MPI_Type_free(&vector));
  finish_type(&t);
  return t;
}

static TestType dense_doubles(void) {
  TestType t = {"contiguous(4,double)",
                MPI_DATATYPE_NULL,
                MPI_DOUBLE,
                4,
                1,
                {0},
                {32},
                32};
  MPI_CHECK(MPI_Type_contiguous(4, MPI_DOUBLE, &t.type));
  finish_type(&t);
  return t;
}

static TestType negative_floats(void) {
  /* indexed: 1 float at -1 floats, 2 floats at +2: lb -4, extent 20. */
  TestType t = {"indexed({1,2},{-1,2},float)",
                MPI_DATATYPE_NULL,
                MPI_FLOAT,
                3,
                2,
                {-4, 8},
                {4, 8},
                20};
  const int lengths[2] = {1, 2}, displacements[2] = {-1, 2};
  MPI_CHECK(MPI_Type_indexed(2, lengths, displacements, MPI_FLOAT, &t.type));
  finish_type(&t);
  return t;
}

static TestType pairs(void) {
  /* Two MPI_DOUBLE_INT pairs: 12 bytes of data each, 16 apart. */
  TestType t = {"contiguous(2,MPI_DOUBLE_INT)",
                MPI_DATATYPE_NULL,
                MPI_DOUBLE_INT,
                2,
                2,
                {0, 16},
                {12, 12},
                32};
  MPI_CHECK(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &t.type));
  finish_type(&t);
  return t;
}

typedef struct {
  int a;
  double b;
  char c[3];
} Record;

static TestType records(void) {
  /* {int; double; char[3]}: mixed types, padded to 24 bytes like C. */
  TestType t = {"struct{int,double,char[3]}",
                MPI_DATATYPE_NULL,
                NULL,
                0,
                3,
                {offsetof(Record, a), offsetof(Record, b), offsetof(Record, c)},
                {4, 8, 3},
                sizeof(Record)};
  const int lengths[3] = {1, 1, 3};
  const MPI_Aint displacements[3] = {offsetof(Record, a), offsetof(Record, b),
                                     offsetof(Record, c)};
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_CHECK(MPI_Type_create_struct(3, lengths, displacements, types, &t.type));
  finish_type(&t);
  return t;
}

/* --- Data movement ----------------------------------------------------------
 */

/* Runs `collective` with derived types and checks the receive buffer
 * against the same collective on packed bytes. The same macro shape for
 * every collective keeps each call readable next to its reference. */
static void check_bcast(const TestType* t, int nonblocking) {
  const int n = kCount;
  for (int root = 0; root < size_; ++root) {
    Buffer b = new_buffer(t, n);
    unsigned char* reference = (unsigned char*)test_malloc(n * t->size);
    if (rank_ == root) fill(t, &b, n, 100 + root);
    if (rank_ == root) pack(t, b.data, n, reference);
    MPI_CHECK(
        MPI_Bcast(reference, n * t->size, MPI_BYTE, root, MPI_COMM_WORLD));
    if (nonblocking) {
      MPI_Request request;
      MPI_CHECK(MPI_Ibcast(b.data, n, t->type, root, MPI_COMM_WORLD, &request));
      MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    } else {
      MPI_CHECK(MPI_Bcast(b.data, n, t->type, root, MPI_COMM_WORLD));
    }
    expect(t, &b, n, reference, nonblocking ? "Ibcast" : "Bcast");
    free(b.memory);
    free(reference);
  }
}

/* Gather with the derived type on the senders and the root; then gathered
 * into bytes at the root (mixed types), and in place. */
static void check_gather(const TestType* t) {
  const int n = kCount;
  const int root = size_ - 1;
  Buffer send = new_buffer(t, n);
  fill(t, &send, n, 200 + rank_);
  unsigned char* mine = (unsigned char*)test_malloc(n * t->size);
  pack(t, send.data, n, mine);
  unsigned char* all = (unsigned char*)test_malloc((size_t)size_ * n * t->size);
  MPI_CHECK(MPI_Allgather(mine, n * t->size, MPI_BYTE, all, n * t->size,
                          MPI_BYTE, MPI_COMM_WORLD));

  Buffer receive = new_buffer(t, n * size_);
  MPI_CHECK(MPI_Gather(send.data, n, t->type, receive.data, n, t->type, root,
                       MPI_COMM_WORLD));
  if (rank_ == root) expect(t, &receive, n * size_, all, "Gather");

  /* Derived on the senders, bytes at the root. */
  unsigned char* bytes =
      (unsigned char*)test_malloc((size_t)size_ * n * t->size);
  MPI_CHECK(MPI_Gather(send.data, n, t->type, bytes, n * t->size, MPI_BYTE,
                       root, MPI_COMM_WORLD));
  if (rank_ == root) {
    CHECK(memcmp(bytes, all, (size_t)size_ * n * t->size) == 0,
          "Gather of %s into bytes differs", t->name);
  }

  /* In place at the root: its own block is already in the receive buffer. */
  free(receive.memory);
  receive = new_buffer(t, n * size_);
  if (rank_ == root) {
    unpack(t, mine, n, receive.data + (MPI_Aint)root * n * t->extent);
    MPI_CHECK(MPI_Gather(MPI_IN_PLACE, n, t->type, receive.data, n, t->type,
                         root, MPI_COMM_WORLD));
    expect(t, &receive, n * size_, all, "Gather in place");
  } else {
    MPI_CHECK(MPI_Gather(send.data, n, t->type, NULL, 0, MPI_INT, root,
                         MPI_COMM_WORLD));
  }

  /* Gatherv: rank r sends r+1 items; the root places them with gaps. */
  const int mine_v = rank_ % n + 1;
  int* counts = (int*)test_malloc(size_ * sizeof(int));
  int* displacements = (int*)test_malloc(size_ * sizeof(int));
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    counts[r] = r % n + 1;
    displacements[r] = total + 1; /* one item of gap before each block */
    total += counts[r] + 1;
  }
  Buffer receive_v = new_buffer(t, total);
  MPI_CHECK(MPI_Gatherv(send.data, mine_v, t->type, receive_v.data, counts,
                        displacements, t->type, root, MPI_COMM_WORLD));
  if (rank_ == root) {
    /* Expected: each rank's first counts[r] items at its displacement. */
    Buffer expected = new_buffer(t, total);
    for (int r = 0; r < size_; ++r) {
      unpack(t, all + (size_t)r * n * t->size, counts[r],
             expected.data + (MPI_Aint)displacements[r] * t->extent);
    }
    CHECK(memcmp(expected.memory, receive_v.memory, expected.bytes) == 0,
          "Gatherv of %s differs (or wrote between the blocks)", t->name);
    free(expected.memory);
  }
  free(receive_v.memory);
  free(counts);
  free(displacements);
  free(send.memory);
  free(receive.memory);
  free(mine);
  free(all);
  free(bytes);
}

static void check_scatter_and_alltoall(const TestType* t, int nonblocking) {
  const int n = kCount;
  const int root = 0;
  /* Scatter: the root's buffer holds every rank's items. */
  Buffer send = new_buffer(t, n * size_);
  fill(t, &send, n * size_, 300);
  unsigned char* packed_all =
      (unsigned char*)test_malloc((size_t)size_ * n * t->size);
  pack(t, send.data, n * size_, packed_all);
  Buffer receive = new_buffer(t, n);
  MPI_Request request;
  if (nonblocking) {
    MPI_CHECK(MPI_Iscatter(send.data, n, t->type, receive.data, n, t->type,
                           root, MPI_COMM_WORLD, &request));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  } else {
    MPI_CHECK(MPI_Scatter(send.data, n, t->type, receive.data, n, t->type, root,
                          MPI_COMM_WORLD));
  }
  expect(t, &receive, n, packed_all + (size_t)rank_ * n * t->size,
         nonblocking ? "Iscatter" : "Scatter");

  /* Alltoall: item block r of rank s goes to rank r. Every rank fills its
   * send buffer from the same seeds so the reference is computable. */
  Buffer to_send = new_buffer(t, n * size_);
  fill(t, &to_send, n * size_, 400 + rank_);
  unsigned char* packed_send =
      (unsigned char*)test_malloc((size_t)size_ * n * t->size);
  pack(t, to_send.data, n * size_, packed_send);
  unsigned char* expected =
      (unsigned char*)test_malloc((size_t)size_ * n * t->size);
  MPI_CHECK(MPI_Alltoall(packed_send, n * t->size, MPI_BYTE, expected,
                         n * t->size, MPI_BYTE, MPI_COMM_WORLD));
  Buffer received = new_buffer(t, n * size_);
  if (nonblocking) {
    MPI_CHECK(MPI_Ialltoall(to_send.data, n, t->type, received.data, n, t->type,
                            MPI_COMM_WORLD, &request));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  } else {
    MPI_CHECK(MPI_Alltoall(to_send.data, n, t->type, received.data, n, t->type,
                           MPI_COMM_WORLD));
  }
  expect(t, &received, n * size_, expected,
         nonblocking ? "Ialltoall" : "Alltoall");

  /* In place: the receive buffer starts as the send buffer. */
  Buffer in_place = new_buffer(t, n * size_);
  unpack(t, packed_send, n * size_, in_place.data);
  MPI_CHECK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, in_place.data, n,
                         t->type, MPI_COMM_WORLD));
  expect(t, &in_place, n * size_, expected, "Alltoall in place");

  /* Alltoallw with this type on the send side and bytes on the receive side
   * (byte displacements). */
  int* counts = (int*)test_malloc(size_ * sizeof(int));
  int* displacements = (int*)test_malloc(size_ * sizeof(int));
  int* byte_counts = (int*)test_malloc(size_ * sizeof(int));
  int* byte_displacements = (int*)test_malloc(size_ * sizeof(int));
  MPI_Datatype* types =
      (MPI_Datatype*)test_malloc(size_ * sizeof(MPI_Datatype));
  MPI_Datatype* byte_types =
      (MPI_Datatype*)test_malloc(size_ * sizeof(MPI_Datatype));
  for (int r = 0; r < size_; ++r) {
    counts[r] = n;
    displacements[r] = (int)(r * n * t->extent);
    byte_counts[r] = n * t->size;
    byte_displacements[r] = r * n * t->size;
    types[r] = t->type;
    byte_types[r] = MPI_BYTE;
  }
  unsigned char* w_bytes =
      (unsigned char*)test_malloc((size_t)size_ * n * t->size);
  MPI_CHECK(MPI_Alltoallw(to_send.data, counts, displacements, types, w_bytes,
                          byte_counts, byte_displacements, byte_types,
                          MPI_COMM_WORLD));
  CHECK(memcmp(w_bytes, expected, (size_t)size_ * n * t->size) == 0,
        "Alltoallw of %s into bytes differs", t->name);
  /* And back the other way: bytes out, this type in. */
  Buffer w_received = new_buffer(t, n * size_);
  unsigned char* w_expected =
      (unsigned char*)test_malloc((size_t)size_ * n * t->size);
  MPI_CHECK(MPI_Alltoall(expected, n * t->size, MPI_BYTE, w_expected,
                         n * t->size, MPI_BYTE, MPI_COMM_WORLD));
  MPI_CHECK(MPI_Alltoallw(expected, byte_counts, byte_displacements, byte_types,
                          w_received.data, counts, displacements, types,
                          MPI_COMM_WORLD));
  expect(t, &w_received, n * size_, w_expected, "Alltoallw");

  free(counts);
  free(displacements);
  free(byte_counts);
  free(byte_displacements);
  free(types);
  free(byte_types);
  free(w_bytes);
  free(w_received.memory);
  free(w_expected);
  free(send.memory);
  free(receive.memory);
  free(packed_all);
  free(to_send.memory);
  free(packed_send);
  free(expected);
  free(received.memory);
  free(in_place.memory);
}

static void check_allgather(const TestType* t) {
  const int n = kCount;
  Buffer send = new_buffer(t, n);
  fill(t, &send, n, 500 + rank_);
  unsigned char* mine = (unsigned char*)test_malloc(n * t->size);
  pack(t, send.data, n, mine);
  unsigned char* all = (unsigned char*)test_malloc((size_t)size_ * n * t->size);
  MPI_CHECK(MPI_Allgather(mine, n * t->size, MPI_BYTE, all, n * t->size,
                          MPI_BYTE, MPI_COMM_WORLD));
  Buffer receive = new_buffer(t, n * size_);
  MPI_CHECK(MPI_Allgather(send.data, n, t->type, receive.data, n, t->type,
                          MPI_COMM_WORLD));
  expect(t, &receive, n * size_, all, "Allgather");
  Buffer in_place = new_buffer(t, n * size_);
  unpack(t, mine, n, in_place.data + (MPI_Aint)rank_ * n * t->extent);
  MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, in_place.data, n,
                          t->type, MPI_COMM_WORLD));
  expect(t, &in_place, n * size_, all, "Allgather in place");
  free(send.memory);
  free(receive.memory);
  free(in_place.memory);
  free(mine);
  free(all);
}

/* --- Reductions --------------------------------------------------------------
 */

/* Element-wise reduction of a packed array of base items with `op`, for
 * the reference: run on the packed data with the predefined base type. */
static void check_reductions(const TestType* t, MPI_Op op) {
  if (t->base == NULL) return;
  const int n = kCount;
  const int items = n * t->base_per_item;
  Buffer send = new_buffer(t, n);
  /* Values that survive every op exactly: small integers for the ints,
   * pairs with ties for MINLOC. */
  unsigned char* packed = (unsigned char*)test_malloc(n * t->size);
  int base_size;
  MPI_Type_size(t->base, &base_size);
  MPI_Aint base_lb, base_extent;
  MPI_Type_get_extent(t->base, &base_lb, &base_extent);
  unsigned char* base_array =
      (unsigned char*)test_malloc((size_t)items * base_extent);
  memset(base_array, 0, (size_t)items * base_extent);
  for (int i = 0; i < items; ++i) {
    const int value = (rank_ * 7 + i * 3) % 11 - 5;
    unsigned char* item = base_array + i * base_extent;
    if (t->base == MPI_INT) {
      *(int*)item = value;
    } else if (t->base == MPI_FLOAT) {
      *(float*)item = (float)value;
    } else if (t->base == MPI_DOUBLE) {
      *(double*)item = value;
    } else { /* MPI_DOUBLE_INT */
      *(double*)item = value % 3;
      *(int*)(item + 8) = rank_ * 100 + i;
    }
  }
  /* The base array packed is the derived type's packed form. */
  for (int i = 0; i < items; ++i) {
    memcpy(packed + (size_t)i * base_size, base_array + i * base_extent,
           base_size);
  }
  unpack(t, packed, n, send.data);

  unsigned char* reference =
      (unsigned char*)test_malloc((size_t)items * base_extent);
  unsigned char* reference_packed = (unsigned char*)test_malloc(n * t->size);
  MPI_CHECK(
      MPI_Allreduce(base_array, reference, items, t->base, op, MPI_COMM_WORLD));
  for (int i = 0; i < items; ++i) {
    memcpy(reference_packed + (size_t)i * base_size,
           reference + i * base_extent, base_size);
  }
  Buffer receive = new_buffer(t, n);
  MPI_CHECK(
      MPI_Allreduce(send.data, receive.data, n, t->type, op, MPI_COMM_WORLD));
  expect(t, &receive, n, reference_packed, "Allreduce");

  Buffer in_place = new_buffer(t, n);
  unpack(t, packed, n, in_place.data);
  MPI_Request request;
  MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, in_place.data, n, t->type, op,
                           MPI_COMM_WORLD, &request));
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  expect(t, &in_place, n, reference_packed, "Iallreduce in place");

  const int root = size_ / 2;
  Buffer at_root = new_buffer(t, n);
  MPI_CHECK(MPI_Reduce(send.data, at_root.data, n, t->type, op, root,
                       MPI_COMM_WORLD));
  if (rank_ == root) expect(t, &at_root, n, reference_packed, "Reduce");

  /* Scan against a scan of the base array. */
  MPI_CHECK(
      MPI_Scan(base_array, reference, items, t->base, op, MPI_COMM_WORLD));
  for (int i = 0; i < items; ++i) {
    memcpy(reference_packed + (size_t)i * base_size,
           reference + i * base_extent, base_size);
  }
  Buffer scanned = new_buffer(t, n);
  MPI_CHECK(MPI_Scan(send.data, scanned.data, n, t->type, op, MPI_COMM_WORLD));
  expect(t, &scanned, n, reference_packed, "Scan");

  /* Reduce_scatter_block: each rank gets its share of n items per rank. */
  Buffer big = new_buffer(t, n * size_);
  unsigned char* big_base =
      (unsigned char*)test_malloc((size_t)items * size_ * base_extent);
  for (int r = 0; r < size_; ++r) {
    memcpy(big_base + (size_t)r * items * base_extent, base_array,
           (size_t)items * base_extent);
  }
  unsigned char* big_packed =
      (unsigned char*)test_malloc((size_t)size_ * n * t->size);
  for (int i = 0; i < items * size_; ++i) {
    memcpy(big_packed + (size_t)i * base_size, big_base + i * base_extent,
           base_size);
  }
  unpack(t, big_packed, n * size_, big.data);
  MPI_CHECK(MPI_Reduce_scatter_block(big_base, reference, items, t->base, op,
                                     MPI_COMM_WORLD));
  for (int i = 0; i < items; ++i) {
    memcpy(reference_packed + (size_t)i * base_size,
           reference + i * base_extent, base_size);
  }
  Buffer share = new_buffer(t, n);
  MPI_CHECK(MPI_Reduce_scatter_block(big.data, share.data, n, t->type, op,
                                     MPI_COMM_WORLD));
  expect(t, &share, n, reference_packed, "Reduce_scatter_block");

  free(send.memory);
  free(receive.memory);
  free(in_place.memory);
  free(at_root.memory);
  free(scanned.memory);
  free(big.memory);
  free(share.memory);
  free(packed);
  free(base_array);
  free(reference);
  free(reference_packed);
  free(big_base);
  free(big_packed);
}

/* A user operation on records: adds the ints and doubles, keeps the larger
 * chars; it must see items of the struct type, in that type's layout. */
static MPI_Datatype record_type;
static int user_calls;
static void add_records(void* in, void* inout, int* len, MPI_Datatype* type) {
  ++user_calls;
  CHECK(*type == record_type, "the user operation got another datatype");
  const Record* a = (const Record*)in;
  Record* b = (Record*)inout;
  for (int i = 0; i < *len; ++i) {
    b[i].a += a[i].a;
    b[i].b += a[i].b;
    for (int j = 0; j < 3; ++j) {
      if (a[i].c[j] > b[i].c[j]) b[i].c[j] = a[i].c[j];
    }
  }
}

static void check_user_op_on_records(const TestType* t) {
  const int n = kCount;
  record_type = t->type;
  MPI_Op op;
  MPI_CHECK(MPI_Op_create(add_records, 1, &op));
  Buffer send = new_buffer(t, n);
  Record expected[kCount];
  for (int i = 0; i < n; ++i) {
    Record r;
    memset(&r, kGuard, sizeof r);
    r.a = rank_ + i;
    r.b = 0.5 * rank_ + i;
    r.c[0] = (char)(rank_ + i);
    r.c[1] = (char)(10 - rank_);
    r.c[2] = (char)i;
    memcpy(send.data + i * t->extent, &r, sizeof r);
    expected[i].a = 0;
    expected[i].b = 0;
    for (int s = 0; s < size_; ++s) {
      expected[i].a += s + i;
      expected[i].b += 0.5 * s + i;
    }
    expected[i].c[0] = (char)(size_ - 1 + i);
    expected[i].c[1] = 10;
    expected[i].c[2] = (char)i;
  }
  unsigned char packed_expected[kCount * 15];
  pack(t, (const unsigned char*)expected, n, packed_expected);
  Buffer receive = new_buffer(t, n);
  user_calls = 0;
  MPI_CHECK(
      MPI_Allreduce(send.data, receive.data, n, t->type, op, MPI_COMM_WORLD));
  expect(t, &receive, n, packed_expected, "Allreduce with a user op");
  /* Some ranks may only pass data on (a folded rank of recursive
   * doubling), but someone must have applied the operation. */
  int calls = user_calls;
  MPI_CHECK(
      MPI_Allreduce(MPI_IN_PLACE, &calls, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(size_ == 1 || calls > 0, "the user operation was never called");
  MPI_CHECK(MPI_Op_free(&op));
  free(send.memory);
  free(receive.memory);
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  TestType types[6];
  types[0] = vector_of_ints();
  types[1] = interleaved_doubles();
  types[2] = dense_doubles();
  types[3] = negative_floats();
  types[4] = pairs();
  types[5] = records();
  for (int i = 0; i < 6; ++i) {
    const TestType* t = &types[i];
    check_bcast(t, 0);
    check_bcast(t, 1);
    check_gather(t);
    check_scatter_and_alltoall(t, 0);
    check_scatter_and_alltoall(t, 1);
    check_allgather(t);
    if (t->base == MPI_DOUBLE_INT) {
      check_reductions(t, MPI_MINLOC);
      check_reductions(t, MPI_MAXLOC);
    } else if (t->base != NULL) {
      check_reductions(t, MPI_SUM);
      check_reductions(t, MPI_MAX);
    }
  }
  check_user_op_on_records(&types[5]);
  for (int i = 0; i < 6; ++i) MPI_CHECK(MPI_Type_free(&types[i].type));
  test_report_pass("collectives_datatypes", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
