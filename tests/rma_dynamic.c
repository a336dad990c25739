/* Dynamic windows (MPI-4.1 section 12.2.4): MPI_Win_create_dynamic,
 * MPI_Win_attach/MPI_Win_detach of malloc'd memory, target displacements
 * that are absolute addresses (MPI_Get_address, exchanged with
 * MPI_Allgather), every attached region checked byte for byte against a
 * serial model each rank computes for every rank.
 *
 *  - attributes of a dynamic window: MPI_WIN_CREATE_FLAVOR
 *    (MPI_WIN_FLAVOR_DYNAMIC), MPI_WIN_SIZE 0, MPI_WIN_DISP_UNIT 1;
 *  - two regions attached on every rank (the second of a size that
 *    differs per rank); puts from every rank to every rank into the first
 *    in fence epochs, gets of the second; puts into the second under
 *    MPI_Win_lock (exclusive and shared by turns), gets under
 *    MPI_Win_lock_all;
 *  - the second region detached (its memory keeps its content), a third
 *    attached and exchanged, and puts/gets into the first and third under
 *    MPI_Win_lock_all;
 *  - an accumulate (MPI_SUM) into the first region from every rank. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include "rma_util.h"

static int g_rank, g_size;

enum { kSlotA = 256, kSlotC = 64 };

typedef struct {
  unsigned char* memory; /* this rank's */
  size_t bytes;          /* this rank's */
  MPI_Aint* address;     /* every rank's, from MPI_Get_address */
  size_t* sizes;         /* every rank's */
  unsigned char* model;  /* every rank's, sizes[r] bytes at offset[r] */
  size_t* offset;
} Region;

static void region_init(Region* region, size_t bytes, int test) {
  region->bytes = bytes;
  region->memory = (unsigned char*)test_malloc(bytes);
  region->address = (MPI_Aint*)test_malloc(sizeof(MPI_Aint) * g_size);
  region->sizes = (size_t*)test_malloc(sizeof(size_t) * g_size);
  region->offset = (size_t*)test_malloc(sizeof(size_t) * (g_size + 1));
  unsigned long long mine = bytes, *all = (unsigned long long*)test_malloc(sizeof(unsigned long long) * g_size);
  MPI_CHECK(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD));
  region->offset[0] = 0;
  for (int r = 0; r < g_size; ++r) {
    region->sizes[r] = (size_t)all[r];
    region->offset[r + 1] = region->offset[r] + region->sizes[r];
  }
  free(all);
  region->model = (unsigned char*)test_malloc(region->offset[g_size]);
  for (int r = 0; r < g_size; ++r) rma_fill(region->model + region->offset[r], region->sizes[r], test, 9999, r, 0);
  memcpy(region->memory, region->model + region->offset[g_rank], bytes);
}

/* Attaches the region and exchanges its address. */
static void region_attach(Region* region, MPI_Win win) {
  MPI_Aint mine;
  MPI_CHECK(MPI_Win_attach(win, region->memory, (MPI_Aint)region->bytes));
  MPI_CHECK(MPI_Get_address(region->memory, &mine));
  MPI_CHECK(MPI_Allgather(&mine, 1, MPI_AINT, region->address, 1, MPI_AINT, MPI_COMM_WORLD));
}

static void region_free(Region* region) {
  free(region->memory);
  free(region->address);
  free(region->sizes);
  free(region->model);
  free(region->offset);
}

static unsigned char* model_of(Region* region, int r) { return region->model + region->offset[r]; }

static void check_region(Region* region, const char* what, int round) {
  RMA_CHECK_BYTES(region->memory, model_of(region, g_rank), region->bytes, "%s, round %d", what, round);
}

/* Puts from every rank into every rank's slot `o` of `region` (slot
 * bytes each), a stretch at a place from (test, o, t, round). */
static void put_place(int test, int o, int t, int round, size_t slot, size_t* first, size_t* count) {
  uint64_t h = rma_hash((uint64_t)test, (uint64_t)o, (uint64_t)t, (uint64_t)round);
  *first = (size_t)(h % (slot / 2));
  *count = 1 + (size_t)((h >> 20) % (slot - *first));
}

static void issue_puts(Region* region, MPI_Win win, int test, int round, size_t slot, unsigned char* send) {
  for (int k = 0; k < g_size; ++k) {
    const int t = (g_rank + k + round) % g_size;
    size_t first, count;
    put_place(test, g_rank, t, round, slot, &first, &count);
    unsigned char* data = send + (size_t)t * slot;
    rma_fill(data, count, test, g_rank, t, round);
    MPI_CHECK(MPI_Put(data, (int)count, MPI_BYTE, t, region->address[t] + (MPI_Aint)(g_rank * slot + first),
                      (int)count, MPI_BYTE, win));
  }
}

static void model_puts(Region* region, int test, int round, size_t slot) {
  for (int t = 0; t < g_size; ++t) {
    for (int o = 0; o < g_size; ++o) {
      size_t first, count;
      put_place(test, o, t, round, slot, &first, &count);
      rma_fill(model_of(region, t) + o * slot + first, count, test, o, t, round);
    }
  }
}

/* Gets every rank's whole region (under whatever epoch is open) into
 * `fetched`; check_gets compares once the epoch has completed them. */
static void issue_gets(Region* region, MPI_Win win, unsigned char* fetched) {
  for (int t = 0; t < g_size; ++t)
    MPI_CHECK(MPI_Get(fetched + region->offset[t], (int)region->sizes[t], MPI_BYTE, t, region->address[t],
                      (int)region->sizes[t], MPI_BYTE, win));
}

static void check_gets(Region* region, const unsigned char* fetched, const char* what) {
  for (int t = 0; t < g_size; ++t)
    RMA_CHECK_BYTES(fetched + region->offset[t], model_of(region, t), region->sizes[t], "%s of rank %d", what, t);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);

  MPI_Win win;
  MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  {
    MPI_Aint* size = NULL;
    int flag = 0;
    CHECK(int_attr(win, MPI_WIN_CREATE_FLAVOR, "MPI_WIN_CREATE_FLAVOR") == MPI_WIN_FLAVOR_DYNAMIC,
          "MPI_WIN_CREATE_FLAVOR is not MPI_WIN_FLAVOR_DYNAMIC");
    MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
    CHECK(flag && *size == 0, "MPI_WIN_SIZE of a dynamic window is %ld, expected 0", (long)*size);
    CHECK(int_attr(win, MPI_WIN_DISP_UNIT, "MPI_WIN_DISP_UNIT") == 1, "MPI_WIN_DISP_UNIT of a dynamic window not 1");
  }

  Region a, b, c;
  region_init(&a, (size_t)g_size * kSlotA, 1);
  region_init(&b, 1000 + 24 * (size_t)g_rank, 2);
  region_attach(&a, win);
  region_attach(&b, win);
  unsigned char* send = (unsigned char*)test_malloc((size_t)g_size * kSlotA + 1000);
  unsigned char* fetched = (unsigned char*)test_malloc(b.offset[g_size] + a.offset[g_size]);

  /* Fence epochs: puts into A; then (no puts in that epoch, so A can be
   * checked) gets of A and B. */
  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  for (int round = 0; round < 3; ++round) {
    issue_puts(&a, win, 10, round, kSlotA, send);
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPUT, win));
    model_puts(&a, 10, round, kSlotA);
    check_region(&a, "region A after fence puts", round);
    issue_gets(&a, win, fetched);
    issue_gets(&b, win, fetched + a.offset[g_size]);
    MPI_CHECK(MPI_Win_fence(round == 2 ? MPI_MODE_NOSUCCEED : 0, win));
    check_gets(&a, fetched, "MPI_Get in a fence epoch of region A");
    check_gets(&b, fetched + a.offset[g_size], "MPI_Get in a fence epoch of region B");
  }

  /* Lock epochs: puts into B (slots of 1000 / size bytes), then gets of
   * A and B under lock_all. */
  const size_t slot_b = 1000 / (size_t)g_size;
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < g_size; ++k) {
      const int t = (g_rank + k) % g_size;
      size_t first, count;
      put_place(20, g_rank, t, round, slot_b, &first, &count);
      rma_fill(send, count, 20, g_rank, t, round);
      MPI_CHECK(MPI_Win_lock((t + round) % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, t, 0, win));
      MPI_CHECK(MPI_Put(send, (int)count, MPI_BYTE, t, b.address[t] + (MPI_Aint)(g_rank * slot_b + first), (int)count,
                        MPI_BYTE, win));
      MPI_CHECK(MPI_Win_unlock(t, win));
    }
    model_puts(&b, 20, round, slot_b);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_rank, 0, win));
    check_region(&b, "region B after lock/put/unlock", round);
    MPI_CHECK(MPI_Win_unlock(g_rank, win));
    MPI_CHECK(MPI_Win_lock_all(0, win));
    issue_gets(&a, win, fetched);
    issue_gets(&b, win, fetched + a.offset[g_size]);
    MPI_CHECK(MPI_Win_flush_all(win));
    check_gets(&a, fetched, "MPI_Get under lock_all of region A");
    check_gets(&b, fetched + a.offset[g_size], "MPI_Get under lock_all of region B");
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* no gets during the next puts */
  }

  /* Detach B (nobody accesses it any more), attach C. */
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_CHECK(MPI_Win_detach(win, b.memory));
  check_region(&b, "region B after MPI_Win_detach", 0);
  region_init(&c, (size_t)g_size * kSlotC, 3);
  region_attach(&c, win);
  const long long add[4] = {1, 2, 3, 4 + g_rank};
  MPI_CHECK(MPI_Win_lock_all(0, win));
  for (int round = 0; round < 2; ++round) {
    issue_puts(&c, win, 30, round, kSlotC, send);
    MPI_CHECK(MPI_Win_flush_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    model_puts(&c, 30, round, kSlotC);
    issue_gets(&c, win, fetched);
    MPI_CHECK(MPI_Win_flush_all(win));
    check_gets(&c, fetched, "MPI_Get under lock_all of region C");
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  }
  /* Accumulate into the first 32 bytes of A on every rank (4 long longs;
   * each rank's slot 0 of A starts at the region's start). */
  for (int t = 0; t < g_size; ++t)
    MPI_CHECK(MPI_Accumulate(add, 4, MPI_LONG_LONG, t, a.address[t], 4, MPI_LONG_LONG, MPI_SUM, win));
  MPI_CHECK(MPI_Win_unlock_all(win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  for (int t = 0; t < g_size; ++t) {
    long long words[4];
    memcpy(words, model_of(&a, t), sizeof words);
    for (int o = 0; o < g_size; ++o)
      for (int i = 0; i < 4; ++i) words[i] += i < 3 ? i + 1 : 4 + o;
    memcpy(model_of(&a, t), words, sizeof words);
  }
  MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_rank, 0, win));
  check_region(&a, "region A after accumulates", 0);
  check_region(&c, "region C after lock_all puts", 0);
  MPI_CHECK(MPI_Win_unlock(g_rank, win));

  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_CHECK(MPI_Win_detach(win, a.memory));
  MPI_CHECK(MPI_Win_detach(win, c.memory));
  MPI_CHECK(MPI_Win_free(&win));
  region_free(&a);
  region_free(&b);
  region_free(&c);
  free(send);
  free(fetched);
  test_report_pass("rma_dynamic", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
