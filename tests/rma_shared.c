/* Shared memory windows (MPI-4.1 section 12.2.3) on the ranks of each
 * node (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED): every segment
 * checked byte for byte against the pattern each rank can compute.
 *
 *  - MPI_Win_allocate_shared with a different size and disp_unit on every
 *    rank (4 on even node ranks, 8 on odd ones) and size 0 on node rank 0
 *    (when the node has more than one rank); attributes MPI_WIN_BASE,
 *    MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR
 *    (MPI_WIN_FLAVOR_SHARED);
 *  - MPI_Win_shared_query for every rank: size and disp_unit as that rank
 *    gave them, its own segment at the baseptr MPI_Win_allocate_shared
 *    returned, segments contiguous in rank order (the default), and
 *    MPI_PROC_NULL giving the lowest rank with a non-zero size;
 *  - direct loads and stores into one's own and the neighbours' segments,
 *    made visible by MPI_Win_sync + MPI_Barrier + MPI_Win_sync inside a
 *    MPI_Win_lock_all epoch (the unified model's pattern), and MPI_Put
 *    into a neighbour's segment (flushed) read back by its owner's loads;
 *  - the info key alloc_shared_noncontig=true: accepted, segments queried
 *    (contiguity not required) and used the same way. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include "rma_util.h"

static int g_rank, g_size; /* in the node's communicator */
static MPI_Comm g_node;

static MPI_Aint segment_bytes(int r) {
  if (r == 0 && g_size > 1) return 0;
  return 128 * (r + 1);
}
static int segment_unit(int r) { return r % 2 ? 8 : 4; }

/* Byte i of what rank `o` stores into rank `t`'s segment in `part`. */
static unsigned char shared_byte(int part, int o, int t, size_t i) { return rma_byte(part, o, t, 0, i); }

static void check_segments(MPI_Win win, unsigned char* mine, int contiguous, const char* what) {
  unsigned char** bases = (unsigned char**)test_malloc(sizeof(unsigned char*) * g_size);
  MPI_Aint* sizes = (MPI_Aint*)test_malloc(sizeof(MPI_Aint) * g_size);
  for (int r = 0; r < g_size; ++r) {
    MPI_Aint size = -1;
    int unit = -1;
    void* base = NULL;
    MPI_CHECK(MPI_Win_shared_query(win, r, &size, &unit, &base));
    /* Contiguous segments must have the sizes asked for (else "contiguous"
     * would not place them); otherwise MPI promises at least the size
     * asked for, and Open MPI 4.1 rounds noncontiguous ones up to a page. */
    CHECK(contiguous ? size == segment_bytes(r) : size >= segment_bytes(r),
          "%s: MPI_Win_shared_query(rank %d) size %ld, expected %s%ld", what, r, (long)size,
          contiguous ? "" : "at least ", (long)segment_bytes(r));
    sizes[r] = size;
    CHECK(unit == segment_unit(r), "%s: MPI_Win_shared_query(rank %d) disp_unit %d, expected %d", what, r, unit,
          segment_unit(r));
    CHECK(size == 0 || base != NULL, "%s: MPI_Win_shared_query(rank %d) gave a NULL base", what, r);
    bases[r] = (unsigned char*)base;
  }
  if (segment_bytes(g_rank) > 0)
    CHECK(bases[g_rank] == mine, "%s: MPI_Win_shared_query of this rank gave %p, allocation returned %p", what,
          (void*)bases[g_rank], (void*)mine);
  if (contiguous) {
    int previous = -1;
    for (int r = 0; r < g_size; ++r) {
      if (segment_bytes(r) == 0) continue;
      if (previous >= 0)
        CHECK(bases[r] == bases[previous] + segment_bytes(previous),
              "%s: segment of rank %d at %p, not right after rank %d's (%p + %ld): not contiguous", what, r,
              (void*)bases[r], previous, (void*)bases[previous], (long)segment_bytes(previous));
      previous = r;
    }
  }
  /* MPI_PROC_NULL: the lowest rank with a non-zero size. */
  int lowest = -1;
  for (int r = 0; r < g_size && lowest < 0; ++r)
    if (segment_bytes(r) > 0) lowest = r;
  MPI_Aint size = -1;
  int unit = -1;
  void* base = NULL;
  MPI_CHECK(MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &base));
  CHECK(size == sizes[lowest] && unit == segment_unit(lowest) && base == bases[lowest],
        "%s: MPI_Win_shared_query(MPI_PROC_NULL) gave size %ld disp_unit %d base %p, expected rank %d's "
        "(%ld, %d, %p)",
        what, (long)size, unit, base, lowest, (long)sizes[lowest], segment_unit(lowest), (void*)bases[lowest]);
  free(bases);
  free(sizes);
}

/* Stores and puts as the file comment says; each part in its own quarter
 * of a segment: [0, S/2) the owner's stores, [S/2, 3S/4) the left
 * neighbour's stores, [3S/4, S) the left neighbour's MPI_Put. */
static void loads_and_stores(MPI_Win win, const char* what) {
  unsigned char** bases = (unsigned char**)test_malloc(sizeof(unsigned char*) * g_size);
  for (int r = 0; r < g_size; ++r) {
    MPI_Aint size;
    int unit;
    MPI_CHECK(MPI_Win_shared_query(win, r, &size, &unit, &bases[r]));
  }
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  const size_t mine = (size_t)segment_bytes(g_rank), theirs = (size_t)segment_bytes(right);
  MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  for (size_t i = 0; i < mine / 2; ++i) bases[g_rank][i] = shared_byte(1, g_rank, g_rank, i);
  for (size_t i = 0; i < theirs / 4; ++i) bases[right][theirs / 2 + i] = shared_byte(2, g_rank, right, i);
  unsigned char* put = (unsigned char*)test_malloc(theirs / 4 + 1);
  for (size_t i = 0; i < theirs / 4; ++i) put[i] = shared_byte(3, g_rank, right, i);
  const int unit = segment_unit(right);
  if (theirs > 0)
    MPI_CHECK(MPI_Put(put, (int)(theirs / 4), MPI_BYTE, right, (MPI_Aint)(3 * theirs / 4 / unit), (int)(theirs / 4),
                      MPI_BYTE, win));
  MPI_CHECK(MPI_Win_flush_all(win));
  MPI_CHECK(MPI_Win_sync(win));
  MPI_CHECK(MPI_Barrier(g_node));
  MPI_CHECK(MPI_Win_sync(win));
  for (int r = 0; r < g_size; ++r) {
    const size_t bytes = (size_t)segment_bytes(r);
    const int l = (r + g_size - 1) % g_size;
    unsigned char* expect = (unsigned char*)test_malloc(bytes);
    for (size_t i = 0; i < bytes / 2; ++i) expect[i] = shared_byte(1, r, r, i);
    for (size_t i = 0; i < bytes / 4; ++i) expect[bytes / 2 + i] = shared_byte(2, l, r, i);
    for (size_t i = 0; i < bytes / 4; ++i) expect[3 * bytes / 4 + i] = shared_byte(3, l, r, i);
    RMA_CHECK_BYTES(bases[r], expect, bytes, "%s: rank %d's segment read with loads by rank %d", what, r, g_rank);
    free(expect);
  }
  (void)left;
  MPI_CHECK(MPI_Barrier(g_node)); /* all loads done before anyone frees */
  MPI_CHECK(MPI_Win_unlock_all(win));
  free(put);
  free(bases);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &g_node));
  MPI_Comm_rank(g_node, &g_rank);
  MPI_Comm_size(g_node, &g_size);

  /* Contiguous (the default). */
  unsigned char* mine = NULL;
  MPI_Win win;
  MPI_CHECK(MPI_Win_allocate_shared(segment_bytes(g_rank), segment_unit(g_rank), MPI_INFO_NULL, g_node, &mine, &win));
  {
    void* base = NULL;
    MPI_Aint* size = NULL;
    int flag = 0;
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && (segment_bytes(g_rank) == 0 || base == mine), "MPI_WIN_BASE %p, expected %p", base, (void*)mine);
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag && *size == segment_bytes(g_rank), "MPI_WIN_SIZE %ld, expected %ld", (long)*size,
          (long)segment_bytes(g_rank));
    CHECK(int_attr(win, MPI_WIN_DISP_UNIT, "MPI_WIN_DISP_UNIT") == segment_unit(g_rank), "MPI_WIN_DISP_UNIT wrong");
    CHECK(int_attr(win, MPI_WIN_CREATE_FLAVOR, "MPI_WIN_CREATE_FLAVOR") == MPI_WIN_FLAVOR_SHARED,
          "MPI_WIN_CREATE_FLAVOR is not MPI_WIN_FLAVOR_SHARED");
  }
  check_segments(win, mine, 1, "contiguous window");
  loads_and_stores(win, "contiguous window");
  MPI_CHECK(MPI_Win_free(&win));

  /* alloc_shared_noncontig. */
  MPI_Info info;
  MPI_CHECK(MPI_Info_create(&info));
  MPI_CHECK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
  MPI_CHECK(MPI_Win_allocate_shared(segment_bytes(g_rank), segment_unit(g_rank), info, g_node, &mine, &win));
  MPI_CHECK(MPI_Info_free(&info));
  check_segments(win, mine, 0, "alloc_shared_noncontig window");
  loads_and_stores(win, "alloc_shared_noncontig window");
  MPI_CHECK(MPI_Win_free(&win));

  MPI_CHECK(MPI_Comm_free(&g_node));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("rma_shared", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
