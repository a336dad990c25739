/* General active target synchronization (MPI-4.1 section 12.5.2):
 * MPI_Win_post/MPI_Win_start/MPI_Win_complete/MPI_Win_wait and
 * MPI_Win_test, every window checked against a serial model each rank
 * computes for every rank.
 *
 *  - ring: each rank exposes its window to its two neighbours and accesses
 *    them (one group member at 1 and 2 ranks), puts into a region kept per
 *    direction and accumulates (MPI_SUM) into a shared one, several rounds,
 *    ended by MPI_Win_wait or an MPI_Win_test loop by turns; one round
 *    with MPI_MODE_NOCHECK on post and start (after a barrier);
 *  - all ranks: every rank exposes to and accesses every rank, itself
 *    included: puts into its own slot of every window and MPI_Accumulate
 *    (MPI_SUM) into the same counters of every window;
 *  - star: rank 0 alone exposes (MPI_Win_test loop), the others put into
 *    it; then rank 0 alone accesses the others, which post with
 *    MPI_MODE_NOPUT, and gets from each of them;
 *  - the access and exposure groups are checked for their members. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include "rma_util.h"

static int g_rank, g_size;

/* Window layout, in ints. */
enum {
  kN = 40,                 /* ints of each put */
  kFromLeft = 0,           /* put by the left neighbour */
  kFromRight = kFromLeft + kN, /* put by the right neighbour */
  kRingAcc = kFromRight + kN,  /* kN: accumulated by both neighbours */
  kAllAcc = kRingAcc + kN,     /* kN: accumulated by every rank */
  kSlots = kAllAcc + kN,       /* kN per origin: put by every rank */
  kMaxRanks = 64
};

static int value(int test, int o, int t, int round, int i) {
  return (int)(rma_hash((uint64_t)test, (uint64_t)o, (uint64_t)t, (uint64_t)(round * 1000 + i)) >> 40) - (1 << 23);
}

static int* g_base;
static int* g_model; /* [rank][window ints] */
static int g_ints;
static MPI_Win g_win;

static void check_own_window(const char* what, int round) {
  RMA_CHECK_BYTES(g_base, g_model + (size_t)g_rank * g_ints, (size_t)g_ints * sizeof(int),
                  "window after %s, round %d", what, round);
}

static void ends_exposure(int round) {
  if (round % 2 == 0) {
    MPI_CHECK(MPI_Win_wait(g_win));
  } else {
    int flag = 0;
    while (!flag) MPI_CHECK(MPI_Win_test(g_win, &flag));
  }
}

static void check_group(MPI_Group group, const int* ranks, int n, const char* what) {
  MPI_Group expect = MPI_GROUP_NULL, world;
  int result = -1;
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  MPI_CHECK(MPI_Group_incl(world, n, ranks, &expect));
  MPI_CHECK(MPI_Group_compare(group, expect, &result));
  CHECK(result == MPI_IDENT || result == MPI_SIMILAR, "%s: the group built has other members (%d)", what,
        result);
  MPI_CHECK(MPI_Group_free(&expect));
  MPI_CHECK(MPI_Group_free(&world));
}

/* A group of the distinct ranks among ranks[0..n). */
static MPI_Group group_of(const int* ranks, int n) {
  MPI_Group world, group;
  int distinct[kMaxRanks];
  int count = 0;
  for (int i = 0; i < n; ++i) {
    int seen = 0;
    for (int j = 0; j < count; ++j) seen |= distinct[j] == ranks[i];
    if (!seen) distinct[count++] = ranks[i];
  }
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  MPI_CHECK(MPI_Group_incl(world, count, distinct, &group));
  MPI_CHECK(MPI_Group_free(&world));
  check_group(group, distinct, count, "group_of");
  return group;
}

static void ring(void) {
  const int test = 1;
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  const int neighbours[2] = {left, right};
  MPI_Group group = group_of(neighbours, 2);
  int to_right[kN], to_left[kN], acc_right[kN], acc_left[kN];
  const int rounds = 5;
  for (int round = 0; round < rounds; ++round) {
    const int nocheck = round == rounds - 1;
    if (nocheck) {
      /* MPI_MODE_NOCHECK: every post completes before any start. */
      MPI_CHECK(MPI_Win_post(group, MPI_MODE_NOCHECK, g_win));
      MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      MPI_CHECK(MPI_Win_start(group, MPI_MODE_NOCHECK, g_win));
    } else {
      MPI_CHECK(MPI_Win_post(group, 0, g_win));
      MPI_CHECK(MPI_Win_start(group, 0, g_win));
    }
    for (int i = 0; i < kN; ++i) {
      to_right[i] = value(test, g_rank, right, round, i);
      to_left[i] = value(test + 1, g_rank, left, round, i);
      acc_right[i] = value(test + 2, g_rank, right, round, i) >> 8;
      acc_left[i] = value(test + 3, g_rank, left, round, i) >> 8;
    }
    /* I am my right neighbour's left neighbour. */
    MPI_CHECK(MPI_Put(to_right, kN, MPI_INT, right, kFromLeft, kN, MPI_INT, g_win));
    MPI_CHECK(MPI_Put(to_left, kN, MPI_INT, left, kFromRight, kN, MPI_INT, g_win));
    MPI_CHECK(MPI_Accumulate(acc_right, kN, MPI_INT, right, kRingAcc, kN, MPI_INT, MPI_SUM, g_win));
    MPI_CHECK(MPI_Accumulate(acc_left, kN, MPI_INT, left, kRingAcc, kN, MPI_INT, MPI_SUM, g_win));
    MPI_CHECK(MPI_Win_complete(g_win));
    ends_exposure(round);
    for (int t = 0; t < g_size; ++t) {
      int* m = g_model + (size_t)t * g_ints;
      const int l = (t + g_size - 1) % g_size, r = (t + 1) % g_size;
      for (int i = 0; i < kN; ++i) {
        m[kFromLeft + i] = value(test, l, t, round, i);
        m[kFromRight + i] = value(test + 1, r, t, round, i);
        m[kRingAcc + i] += (value(test + 2, l, t, round, i) >> 8) + (value(test + 3, r, t, round, i) >> 8);
      }
    }
    check_own_window("a ring epoch", round);
  }
  MPI_CHECK(MPI_Group_free(&group));
}

static void all_ranks(void) {
  const int test = 10;
  MPI_Group world;
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int* data = (int*)test_malloc(sizeof(int) * kN * 2 * g_size);
  const int rounds = 3;
  for (int round = 0; round < rounds; ++round) {
    MPI_CHECK(MPI_Win_post(world, 0, g_win));
    MPI_CHECK(MPI_Win_start(world, 0, g_win));
    for (int k = 0; k < g_size; ++k) {
      const int t = (g_rank + k) % g_size;
      int* put = data + (size_t)t * 2 * kN;
      int* acc = put + kN;
      for (int i = 0; i < kN; ++i) {
        put[i] = value(test, g_rank, t, round, i);
        acc[i] = value(test + 1, g_rank, t, round, i) >> 8;
      }
      MPI_CHECK(MPI_Put(put, kN, MPI_INT, t, kSlots + g_rank * kN, kN, MPI_INT, g_win));
      MPI_CHECK(MPI_Accumulate(acc, kN, MPI_INT, t, kAllAcc, kN, MPI_INT, MPI_SUM, g_win));
    }
    MPI_CHECK(MPI_Win_complete(g_win));
    ends_exposure(round + 1);
    for (int t = 0; t < g_size; ++t) {
      int* m = g_model + (size_t)t * g_ints;
      for (int o = 0; o < g_size; ++o) {
        for (int i = 0; i < kN; ++i) {
          m[kSlots + o * kN + i] = value(test, o, t, round, i);
          m[kAllAcc + i] += value(test + 1, o, t, round, i) >> 8;
        }
      }
    }
    check_own_window("an all-ranks epoch", round);
  }
  MPI_CHECK(MPI_Group_free(&world));
  free(data);
}

static void star(void) {
  if (g_size < 2) return;
  const int test = 20;
  int* others = (int*)test_malloc(sizeof(int) * g_size);
  for (int i = 1; i < g_size; ++i) others[i - 1] = i;
  MPI_Group spokes = group_of(others, g_size - 1);
  const int zero = 0;
  MPI_Group hub = group_of(&zero, 1);
  int put[kN];
  /* Everybody puts into rank 0; rank 0 only exposes. */
  if (g_rank == 0) {
    MPI_CHECK(MPI_Win_post(spokes, 0, g_win));
    ends_exposure(1);
  } else {
    for (int i = 0; i < kN; ++i) put[i] = value(test, g_rank, 0, 0, i);
    MPI_CHECK(MPI_Win_start(hub, 0, g_win));
    MPI_CHECK(MPI_Put(put, kN, MPI_INT, 0, kSlots + g_rank * kN, kN, MPI_INT, g_win));
    MPI_CHECK(MPI_Win_complete(g_win));
  }
  for (int o = 1; o < g_size; ++o)
    for (int i = 0; i < kN; ++i) g_model[kSlots + o * kN + i] = value(test, o, 0, 0, i);
  if (g_rank == 0) check_own_window("the star epoch into rank 0", 0);

  /* Rank 0 gets from everybody, who expose with MPI_MODE_NOPUT. */
  int* got = (int*)test_malloc(sizeof(int) * g_ints * g_size);
  if (g_rank == 0) {
    MPI_CHECK(MPI_Win_start(spokes, 0, g_win));
    for (int t = 1; t < g_size; ++t)
      MPI_CHECK(MPI_Get(got + (size_t)t * g_ints, g_ints, MPI_INT, t, 0, g_ints, MPI_INT, g_win));
    MPI_CHECK(MPI_Win_complete(g_win));
    for (int t = 1; t < g_size; ++t)
      RMA_CHECK_BYTES(got + (size_t)t * g_ints, g_model + (size_t)t * g_ints, (size_t)g_ints * sizeof(int),
                      "rank 0's MPI_Get of rank %d's whole window", t);
  } else {
    MPI_CHECK(MPI_Win_post(hub, MPI_MODE_NOPUT, g_win));
    MPI_CHECK(MPI_Win_wait(g_win));
  }
  MPI_CHECK(MPI_Group_free(&spokes));
  MPI_CHECK(MPI_Group_free(&hub));
  free(others);
  free(got);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  CHECK(g_size <= kMaxRanks, "at most %d ranks", kMaxRanks);
  g_ints = kSlots + g_size * kN;
  g_model = (int*)test_malloc(sizeof(int) * g_ints * g_size);
  for (int t = 0; t < g_size; ++t)
    for (int i = 0; i < g_ints; ++i) g_model[(size_t)t * g_ints + i] = value(99, t, t, 0, i) >> 4;
  MPI_CHECK(MPI_Win_allocate((MPI_Aint)(g_ints * sizeof(int)), (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &g_base, &g_win));
  memcpy(g_base, g_model + (size_t)g_rank * g_ints, g_ints * sizeof(int));
  /* A fence separates the local stores from the first exposure epoch. */
  MPI_CHECK(MPI_Win_fence(0, g_win));
  MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, g_win));

  ring();
  all_ranks();
  star();

  MPI_CHECK(MPI_Win_free(&g_win));
  free(g_model);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("rma_pscw", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
