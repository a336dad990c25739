/* One-sided epochs as the standard's state machine allows them (MPI-4.1
 * 12.5; the table "One-sided epochs" in docs/architecture.md), at any
 * number of ranks: every rank puts a value that names (phase, origin) into
 * its slot of its right neighbour's window, the epoch closes, and every
 * rank checks what its left neighbour put.
 *
 * Allowed, each followed by a check of the data:
 *   fence(0)  then lock/unlock          (MPICH's rma/mixedsync)
 *   fence(0)  then lock_all/unlock_all
 *   fence(0)  then post/start/complete/wait
 *   fence(0), put, fence(0), then lock  (the second fence closed the epoch)
 *   fence(NOPRECEDE), put, fence(NOSUCCEED), then lock_all
 *   lock/unlock, lock_all/unlock_all, PSCW, each then fence epochs
 *   fence(0), fence(NOSUCCEED), then lock
 *   several locks to different targets at once (2 ranks and more)
 * Refused with MPI_ERR_RMA_SYNC (the window's handler set to
 * MPI_ERRORS_RETURN), each leaving the window usable:
 *   fence(0), put, then lock, lock_all, start or post: the fence's access
 *     epoch is open until the next fence
 *   lock, then fence
 *   fence(NOSUCCEED), then put: no epoch
 *   lock of a target already locked
 * The window is MPI_Win_create'd (rank 0 exposing zero bytes from a NULL
 * base when there are several ranks, as MPICH's test utilities make) or,
 * with argument "allocate", MPI_Win_allocate'd. */
#include "test_util.h"

static int g_rank, g_size, g_left, g_right;

/* The value rank `origin` puts in phase `phase`. */
static int value_of(int phase, int origin) { return phase * 1000 + origin + 1; }

/* Window memory: one int slot per origin, so puts never overlap. */
static int* g_base;
static int g_zero_rank = -1; /* exposes no memory; outside the ring */
static int g_ring_size;      /* ranks in the ring */

/* Origin buffers must stay untouched until the epoch closes: one per
 * phase. */
static int g_origin[1024];

static void put_right(MPI_Win win, int phase) {
  if (g_right == MPI_PROC_NULL) return;
  g_origin[phase] = value_of(phase, g_rank);
  MPI_CHECK(
      MPI_Put(&g_origin[phase], 1, MPI_INT, g_right, g_rank, 1, MPI_INT, win));
}

/* Collective: no rank's next phase may write the slot before its owner
 * has looked. */
static void check_left(int phase, const char* what) {
  if (g_left != MPI_PROC_NULL) {
    CHECK(g_base[g_left] == value_of(phase, g_left),
          "%s: slot of rank %d holds %d, expected %d", what, g_left,
          g_base[g_left], value_of(phase, g_left));
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

static MPI_Group group_of(int rank) {
  MPI_Group world, group = MPI_GROUP_EMPTY;
  if (rank == MPI_PROC_NULL) return MPI_GROUP_EMPTY;
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  MPI_CHECK(MPI_Group_incl(world, 1, &rank, &group));
  MPI_CHECK(MPI_Group_free(&world));
  return group;
}

/* A passive epoch on the right neighbour, closed; then every rank's put
 * has landed (unlock completes it at the target) once all pass the
 * barrier. */
static void lock_phase(MPI_Win win, int phase, int lock_type, const char* what) {
  if (g_right != MPI_PROC_NULL) {
    MPI_CHECK(MPI_Win_lock(lock_type, g_right, 0, win));
    put_right(win, phase);
    MPI_CHECK(MPI_Win_unlock(g_right, win));
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  check_left(phase, what);
}

static void lock_all_phase(MPI_Win win, int phase, const char* what) {
  MPI_CHECK(MPI_Win_lock_all(0, win));
  put_right(win, phase);
  MPI_CHECK(MPI_Win_unlock_all(win));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  check_left(phase, what);
}

static void pscw_phase(MPI_Win win, int phase, const char* what) {
  MPI_Group from = group_of(g_left), to = group_of(g_right);
  MPI_CHECK(MPI_Win_post(from, 0, win));
  MPI_CHECK(MPI_Win_start(to, 0, win));
  put_right(win, phase);
  MPI_CHECK(MPI_Win_complete(win));
  MPI_CHECK(MPI_Win_wait(win));
  check_left(phase, what);
  if (from != MPI_GROUP_EMPTY) MPI_CHECK(MPI_Group_free(&from));
  if (to != MPI_GROUP_EMPTY) MPI_CHECK(MPI_Group_free(&to));
}

static void fence_phase(MPI_Win win, int phase, int open_assert,
                        int close_assert, const char* what) {
  MPI_CHECK(MPI_Win_fence(open_assert, win));
  put_right(win, phase);
  MPI_CHECK(MPI_Win_fence(close_assert, win));
  check_left(phase, what);
}

static void allowed(MPI_Win win) {
  int phase = 1;
  /* fence(0) only makes an epoch possible: a lock may follow. */
  MPI_CHECK(MPI_Win_fence(0, win));
  lock_phase(win, phase++, MPI_LOCK_EXCLUSIVE, "fence then lock");
  MPI_CHECK(MPI_Win_fence(0, win));
  lock_all_phase(win, phase++, "fence then lock_all");
  MPI_CHECK(MPI_Win_fence(0, win));
  pscw_phase(win, phase++, "fence then PSCW");
  /* A fence closes the epoch the calls after the last one opened. */
  fence_phase(win, phase++, 0, 0, "fence epoch");
  lock_phase(win, phase++, MPI_LOCK_SHARED, "fence epoch, fence, then lock");
  fence_phase(win, phase++, MPI_MODE_NOPRECEDE, MPI_MODE_NOSUCCEED,
              "fence epoch with NOPRECEDE and NOSUCCEED");
  lock_all_phase(win, phase++, "NOSUCCEED fence then lock_all");
  /* Every other kind of epoch, closed, then fences. */
  lock_phase(win, phase++, MPI_LOCK_EXCLUSIVE, "lock");
  fence_phase(win, phase++, 0, 0, "lock then fence epoch");
  lock_all_phase(win, phase++, "lock_all");
  fence_phase(win, phase++, MPI_MODE_NOPRECEDE, 0,
              "lock_all then fence epoch");
  pscw_phase(win, phase++, "PSCW after a fence(0) that opened nothing");
  fence_phase(win, phase++, 0, 0, "PSCW then fence epoch");
  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  lock_phase(win, phase++, MPI_LOCK_SHARED, "fence, NOSUCCEED fence, lock");
  /* Locks on two targets at once (each its own epoch). */
  const int two_targets = g_ring_size >= 3;
  if (two_targets && g_right != MPI_PROC_NULL) {
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_right, 0, win));
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_left, 0, win));
    put_right(win, phase);
    MPI_CHECK(MPI_Win_unlock(g_left, win));
    MPI_CHECK(MPI_Win_unlock(g_right, win));
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (two_targets) check_left(phase, "two locks at once");
  phase++;
  /* The window ends in no epoch: the last call was a barrier after locks. */
}

static void refused(MPI_Win win) {
  MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  const int phase = 500;
  MPI_Group to = group_of(g_right), from = group_of(g_left);
  /* RMA calls after a fence open its access epoch: no other kind may start
   * before the next fence. */
  MPI_CHECK(MPI_Win_fence(0, win));
  put_right(win, phase);
  if (g_right != MPI_PROC_NULL) {
    CHECK_ERROR_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, g_right, 0, win),
                      MPI_ERR_RMA_SYNC);
    CHECK_ERROR_CLASS(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    CHECK_ERROR_CLASS(MPI_Win_start(to, 0, win), MPI_ERR_RMA_SYNC);
    CHECK_ERROR_CLASS(MPI_Win_post(from, 0, win), MPI_ERR_RMA_SYNC);
  }
  MPI_CHECK(MPI_Win_fence(0, win));
  check_left(phase, "the fence epoch after refused calls");
  /* Nothing was left open by the refusals: a lock works now. */
  lock_phase(win, phase + 1, MPI_LOCK_EXCLUSIVE, "lock after refusals");

  /* A fence inside a passive epoch. */
  if (g_right != MPI_PROC_NULL) {
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_right, 0, win));
    CHECK_ERROR_CLASS(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC);
    CHECK_ERROR_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, g_right, 0, win),
                      MPI_ERR_RMA_SYNC);
    MPI_CHECK(MPI_Win_unlock(g_right, win));
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  /* After a fence asserting NOSUCCEED there is no epoch to put in. */
  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  if (g_right != MPI_PROC_NULL) {
    CHECK_ERROR_CLASS(
        MPI_Put(&g_origin[0], 1, MPI_INT, g_right, g_rank, 1, MPI_INT, win),
        MPI_ERR_RMA_SYNC);
  }
  fence_phase(win, phase + 2, 0, MPI_MODE_NOSUCCEED, "fence after refusals");
  if (to != MPI_GROUP_EMPTY) MPI_CHECK(MPI_Group_free(&to));
  if (from != MPI_GROUP_EMPTY) MPI_CHECK(MPI_Group_free(&from));
  MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  const int allocate = argc > 1 && strcmp(argv[1], "allocate") == 0;
  /* A ring; with 3 ranks or more, rank 0 exposes zero bytes from a NULL
   * base and the ring passes it by (the last rank puts to rank 1). */
  g_zero_rank = g_size >= 3 ? 0 : -1;
  g_ring_size = g_size - (g_zero_rank >= 0 ? 1 : 0);
  if (g_rank == g_zero_rank) {
    g_left = g_right = MPI_PROC_NULL;
  } else {
    const int first = g_zero_rank >= 0 ? 1 : 0;
    const int index = g_rank - first;
    g_right = first + (index + 1) % g_ring_size;
    g_left = first + (index + g_ring_size - 1) % g_ring_size;
  }
  const MPI_Aint bytes =
      g_rank == g_zero_rank ? 0 : (MPI_Aint)(g_size * sizeof(int));
  MPI_Win win;
  if (allocate) {
    MPI_CHECK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &g_base, &win));
  } else {
    g_base = bytes > 0 ? (int*)test_malloc((size_t)bytes) : NULL;
    MPI_CHECK(MPI_Win_create(g_base, bytes, sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
  }
  if (bytes > 0) memset(g_base, 0, (size_t)bytes);
  /* A zero-size window is a window like any other. */
  char name[MPI_MAX_OBJECT_NAME];
  int length = 0;
  MPI_CHECK(MPI_Win_set_name(win, "epochs"));
  MPI_CHECK(MPI_Win_get_name(win, name, &length));
  CHECK(strcmp(name, "epochs") == 0 && length == 6, "window name '%s'", name);
  void* base = (void*)1;
  MPI_Aint* size = NULL;
  int flag = 0;
  MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
  CHECK(flag && (bytes > 0 || allocate || base == NULL),
        "MPI_WIN_BASE of a zero-size window is %p", base);
  MPI_CHECK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag));
  CHECK(flag && *size == bytes, "MPI_WIN_SIZE %ld, expected %ld",
        (long)*size, (long)bytes);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

  allowed(win);
  refused(win);

  MPI_CHECK(MPI_Win_free(&win));
  CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle set");
  if (!allocate) free(g_base);
  test_report_pass("rma_epochs", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
