/* One-sided operations whose target is the calling rank, on every kind of
 * window (MPI_Win_create, MPI_Win_allocate, MPI_Win_allocate_shared,
 * MPI_Win_create_dynamic), in fence and lock_all epochs.
 *
 * minimpi completes them in the call, as MPICH does, and programs rely on
 * it: mpi4py's test_rma frees a compare-and-swap's result buffer before
 * the closing fence.  So each operation's buffers are checked and then
 * overwritten and freed right after the call returns, before the epoch
 * closes:
 *   MPI_Put, MPI_Accumulate (MPI_SUM, MPI_REPLACE): the origin buffer is
 *     scribbled on and freed; the window must hold the original data;
 *   MPI_Get, MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap:
 *     the result must be in place when the call returns;
 *   MPI_Rput, MPI_Rget_accumulate: the request is complete at once;
 *   a vector origin into a vector target (accumulate of ints with gaps,
 *     checked against a model), and a get of the same.
 * Other ranks accumulate into their own slot of every rank's window in the
 * same epochs (remote traffic beside the local), and a dynamic window's
 * access outside what this rank attached is refused with
 * MPI_ERR_RMA_RANGE at the closing synchronization. */
#include "test_util.h"

enum { kInts = 64 };

static int g_rank, g_size;

/* A heap copy of `count` ints starting at `first`, first+1, ... */
static int* fresh(int count, int first) {
  int* p = (int*)test_malloc((size_t)count * sizeof(int));
  for (int i = 0; i < count; ++i) p[i] = first + i;
  return p;
}

/* Scribbles on a buffer the call should no longer need, then frees it. */
static void spoil(int* p, int count) {
  for (int i = 0; i < count; ++i) p[i] = -7777;
  free(p);
}

/* Runs the self-targeted operations on `win`, whose memory here is
 * `base` (kInts + g_size ints: kInts for this rank's own use, then one
 * slot per rank for the others' accumulates); displacements are added to
 * `disp0` (0, or the attached address of a dynamic window; disp_unit is
 * sizeof(int) except for dynamic windows, where `scale` is sizeof(int)).
 * `epoch` is "fence" or "lock_all". */
static void run_self(MPI_Win win, int* base, MPI_Aint disp0, int scale,
                     const char* kind, const char* epoch) {
  const int fence = strcmp(epoch, "fence") == 0;
  const int me = g_rank;
#define D(i) (disp0 + (MPI_Aint)(i) * scale)
  for (int i = 0; i < kInts + g_size; ++i) base[i] = 0;
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (fence) {
    MPI_CHECK(MPI_Win_fence(0, win));
  } else {
    MPI_CHECK(MPI_Win_lock_all(0, win));
  }

  /* Put 0..7 at [0, 8), then spoil the origin. */
  int* origin = fresh(8, 100);
  MPI_CHECK(MPI_Put(origin, 8, MPI_INT, me, D(0), 8, MPI_INT, win));
  spoil(origin, 8);
  /* Accumulate SUM of 1000.. into [8, 16) (which holds 0). */
  origin = fresh(8, 1000);
  MPI_CHECK(MPI_Accumulate(origin, 8, MPI_INT, me, D(8), 8, MPI_INT, MPI_SUM,
                           win));
  spoil(origin, 8);
  /* Get [0, 8) right back: in place when the call returns. */
  int* result = fresh(8, -1);
  MPI_CHECK(MPI_Get(result, 8, MPI_INT, me, D(0), 8, MPI_INT, win));
  for (int i = 0; i < 8; ++i) {
    CHECK(result[i] == 100 + i, "%s/%s: MPI_Get [%d] = %d, expected %d", kind,
          epoch, i, result[i], 100 + i);
  }
  spoil(result, 8);
  /* Get_accumulate SUM of 1 into [8, 16): fetches 1000+i. */
  origin = fresh(8, 1);
  for (int i = 0; i < 8; ++i) origin[i] = 1;
  result = fresh(8, -1);
  MPI_CHECK(MPI_Get_accumulate(origin, 8, MPI_INT, result, 8, MPI_INT, me,
                               D(8), 8, MPI_INT, MPI_SUM, win));
  for (int i = 0; i < 8; ++i) {
    CHECK(result[i] == 1000 + i, "%s/%s: MPI_Get_accumulate [%d] = %d, "
          "expected %d", kind, epoch, i, result[i], 1000 + i);
  }
  spoil(origin, 8);
  spoil(result, 8);
  /* Fetch_and_op SUM 5 on [16] (0), then NO_OP reads 5. */
  int* one = fresh(1, 5);
  int* fetched = fresh(1, -1);
  MPI_CHECK(MPI_Fetch_and_op(one, fetched, MPI_INT, me, D(16), MPI_SUM, win));
  CHECK(*fetched == 0, "%s/%s: MPI_Fetch_and_op fetched %d, expected 0", kind,
        epoch, *fetched);
  MPI_CHECK(MPI_Fetch_and_op(NULL, fetched, MPI_INT, me, D(16), MPI_NO_OP,
                             win));
  CHECK(*fetched == 5, "%s/%s: MPI_Fetch_and_op(MPI_NO_OP) fetched %d, "
        "expected 5", kind, epoch, *fetched);
  spoil(one, 1);
  spoil(fetched, 1);
  /* Compare_and_swap on [17]: 0 -> 42 wins, 0 -> 43 loses; the result
   * buffer is freed before the epoch closes (mpi4py's pattern). */
  int* swap = fresh(1, 42);
  int* compare = fresh(1, 0);
  int* old = fresh(1, -1);
  MPI_CHECK(MPI_Compare_and_swap(swap, compare, old, MPI_INT, me, D(17), win));
  CHECK(*old == 0, "%s/%s: MPI_Compare_and_swap returned %d, expected 0",
        kind, epoch, *old);
  spoil(old, 1);
  old = fresh(1, -1);
  *swap = 43;
  MPI_CHECK(MPI_Compare_and_swap(swap, compare, old, MPI_INT, me, D(17), win));
  CHECK(*old == 42, "%s/%s: MPI_Compare_and_swap returned %d, expected 42",
        kind, epoch, *old);
  spoil(swap, 1);
  spoil(compare, 1);
  spoil(old, 1);
  /* A vector origin (every other int) into a vector target (every third
   * int) of [18, 42): SUM of 10+i onto 0. Then a vector get of it. */
  MPI_Datatype every2, every3;
  MPI_CHECK(MPI_Type_vector(8, 1, 2, MPI_INT, &every2));
  MPI_CHECK(MPI_Type_vector(8, 1, 3, MPI_INT, &every3));
  MPI_CHECK(MPI_Type_commit(&every2));
  MPI_CHECK(MPI_Type_commit(&every3));
  origin = fresh(16, 0);
  for (int i = 0; i < 8; ++i) origin[2 * i] = 10 + i;
  MPI_CHECK(MPI_Accumulate(origin, 1, every2, me, D(18), 1, every3, MPI_SUM,
                           win));
  spoil(origin, 16);
  result = fresh(16, -1);
  MPI_CHECK(MPI_Get(result, 1, every2, me, D(18), 1, every3, win));
  for (int i = 0; i < 16; ++i) {
    const int expected = i % 2 == 0 ? 10 + i / 2 : -1 + i;
    CHECK(result[i] == expected, "%s/%s: vector get [%d] = %d, expected %d",
          kind, epoch, i, result[i], expected);
  }
  spoil(result, 16);
  MPI_CHECK(MPI_Type_free(&every2));
  MPI_CHECK(MPI_Type_free(&every3));
  /* Request-based calls need a passive target epoch. */
  if (!fence) {
    MPI_Request request;
    int done = 0;
    origin = fresh(2, 500);
    MPI_CHECK(MPI_Rput(origin, 2, MPI_INT, me, D(42), 2, MPI_INT, win,
                       &request));
    MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    CHECK(done, "%s/%s: MPI_Rput to itself not complete at once", kind,
          epoch);
    spoil(origin, 2);
    origin = fresh(2, 1);
    result = fresh(2, -1);
    MPI_CHECK(MPI_Rget_accumulate(origin, 2, MPI_INT, result, 2, MPI_INT, me,
                                  D(42), 2, MPI_INT, MPI_SUM, win, &request));
    MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    CHECK(done && result[0] == 500 && result[1] == 501,
          "%s/%s: MPI_Rget_accumulate to itself: done %d, fetched %d %d",
          kind, epoch, done, result[0], result[1]);
    spoil(origin, 2);
    spoil(result, 2);
  }
  /* Remote traffic beside it: every rank adds its rank+1 to its own slot
   * of every other rank's window. */
  static int add; /* an origin buffer lives until the epoch closes */
  add = me + 1;
  for (int t = 0; t < g_size; ++t) {
    if (t == me) continue;
    MPI_Aint slot = (MPI_Aint)(kInts + me) * scale;
    if (disp0 != 0) {
      /* Dynamic: the target's attached address, exchanged below. */
      continue;
    }
    MPI_CHECK(MPI_Accumulate(&add, 1, MPI_INT, t, slot, 1, MPI_INT, MPI_SUM,
                             win));
    if (!fence) MPI_CHECK(MPI_Win_flush(t, win));
  }
  if (fence) {
    MPI_CHECK(MPI_Win_fence(0, win));
  } else {
    MPI_CHECK(MPI_Win_unlock_all(win));
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  /* The window after the epoch. */
  for (int i = 0; i < 8; ++i) {
    CHECK(base[i] == 100 + i, "%s/%s: put landed %d at [%d], expected %d",
          kind, epoch, base[i], i, 100 + i);
    CHECK(base[8 + i] == 1001 + i, "%s/%s: accumulate left %d at [%d], "
          "expected %d", kind, epoch, base[8 + i], 8 + i, 1001 + i);
  }
  CHECK(base[16] == 5 && base[17] == 42, "%s/%s: [16] %d [17] %d, expected 5 "
        "42", kind, epoch, base[16], base[17]);
  for (int i = 0; i < 24; ++i) {
    const int expected = i % 3 == 0 ? 10 + i / 3 : 0;
    CHECK(base[18 + i] == expected, "%s/%s: vector target [%d] = %d, "
          "expected %d", kind, epoch, 18 + i, base[18 + i], expected);
  }
  if (!fence) {
    CHECK(base[42] == 501 && base[43] == 503, "%s/%s: [42] %d [43] %d", kind,
          epoch, base[42], base[43]);
  }
  if (disp0 == 0) {
    for (int o = 0; o < g_size; ++o) {
      const int expected = o == me ? 0 : o + 1;
      CHECK(base[kInts + o] == expected, "%s/%s: slot of rank %d holds %d, "
            "expected %d", kind, epoch, o, base[kInts + o], expected);
    }
  }
#undef D
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  const MPI_Aint bytes = (MPI_Aint)(kInts + g_size) * (MPI_Aint)sizeof(int);
  const char* epochs[] = {"fence", "lock_all"};

  /* MPI_Win_create. */
  int* memory = (int*)test_malloc((size_t)bytes);
  MPI_Win win;
  MPI_CHECK(MPI_Win_create(memory, bytes, sizeof(int), MPI_INFO_NULL,
                           MPI_COMM_WORLD, &win));
  for (int e = 0; e < 2; ++e) run_self(win, memory, 0, 1, "create", epochs[e]);
  MPI_CHECK(MPI_Win_free(&win));
  free(memory);

  /* MPI_Win_allocate. */
  int* allocated = NULL;
  MPI_CHECK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &allocated, &win));
  for (int e = 0; e < 2; ++e) {
    run_self(win, allocated, 0, 1, "allocate", epochs[e]);
  }
  MPI_CHECK(MPI_Win_free(&win));

  /* MPI_Win_allocate_shared, on the ranks of this node. */
  MPI_Comm node;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                                MPI_INFO_NULL, &node));
  int world_rank = g_rank, world_size = g_size;
  MPI_CHECK(MPI_Comm_rank(node, &g_rank));
  MPI_CHECK(MPI_Comm_size(node, &g_size));
  const MPI_Aint node_bytes =
      (MPI_Aint)(kInts + g_size) * (MPI_Aint)sizeof(int);
  MPI_CHECK(MPI_Win_allocate_shared(node_bytes, sizeof(int), MPI_INFO_NULL,
                                    node, &allocated, &win));
  /* Ranks are the node's here (run_self's barriers stay MPI_COMM_WORLD's,
   * which every rank calls alike). */
  for (int e = 0; e < 2; ++e) {
    run_self(win, allocated, 0, 1, "shared", epochs[e]);
  }
  MPI_CHECK(MPI_Win_free(&win));
  MPI_CHECK(MPI_Comm_free(&node));
  g_rank = world_rank;
  g_size = world_size;

  /* MPI_Win_create_dynamic: displacements are addresses. */
  MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  memory = (int*)test_malloc((size_t)bytes);
  MPI_CHECK(MPI_Win_attach(win, memory, bytes));
  MPI_Aint address;
  MPI_CHECK(MPI_Get_address(memory, &address));
  for (int e = 0; e < 2; ++e) {
    run_self(win, memory, address, (int)sizeof(int), "dynamic", epochs[e]);
  }
  /* Outside what this rank attached: refused at the closing sync. */
  MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  int value = 3;
  MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, g_rank, 0, win));
  MPI_CHECK(MPI_Accumulate(&value, 1, MPI_INT, g_rank, address + bytes, 1,
                           MPI_INT, MPI_SUM, win));
  CHECK_ERROR_CLASS(MPI_Win_unlock(g_rank, win), MPI_ERR_RMA_RANGE);
  MPI_CHECK(MPI_Win_detach(win, memory));
  MPI_CHECK(MPI_Win_free(&win));
  free(memory);

  test_report_pass("rma_self", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
