/* Groups and the communicators made from them.
 *
 *   - MPI_Comm_group, Group_size/rank, and every group operation (union,
 *     intersection, difference, incl, excl, range_incl, range_excl,
 *     translate_ranks, compare) on groups built from random permutations of
 *     the world, each checked against a reference computed here with plain
 *     arrays; MPI_GROUP_EMPTY results and freeing them;
 *   - MPI_Comm_create with every subset of the world as the group (all 2^n
 *     subsets up to 6 ranks; contiguous, strided, reversed and random ones
 *     beyond), and with disjoint groups in one call (MPI-2.2): members get a
 *     communicator whose ranks follow the group's order (checked by passing
 *     world ranks around it and by an allgather), others MPI_COMM_NULL;
 *   - MPI_Comm_create_group on subsets, with different tags, and with
 *     collectives on the parent between calls.
 * Every rank derives the same random groups from a shared seed. */
#include "test_util.h"

static int g_rank, g_size;

/* A small deterministic generator every rank runs identically. */
static unsigned g_seed = 12345;
static unsigned next_random(void) {
  g_seed = g_seed * 1103515245u + 12345u;
  return (g_seed >> 8) & 0xffffff;
}

static void shuffle(int* a, int n) {
  for (int i = n - 1; i > 0; --i) {
    int j = (int)(next_random() % (unsigned)(i + 1));
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

static int index_of(const int* a, int n, int value) {
  for (int i = 0; i < n; ++i)
    if (a[i] == value) return i;
  return -1;
}

/* The world ranks of a group, in group order. */
static int group_members(MPI_Group group, int* members) {
  int n = -1;
  MPI_CHECK(MPI_Group_size(group, &n));
  MPI_Group world_group;
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  int* ranks = (int*)test_malloc(sizeof(int) * (size_t)(n + 1));
  for (int i = 0; i < n; ++i) ranks[i] = i;
  MPI_CHECK(MPI_Group_translate_ranks(group, n, ranks, world_group, members));
  free(ranks);
  MPI_CHECK(MPI_Group_free(&world_group));
  return n;
}

static void check_group(MPI_Group group, const int* expected, int n,
                        const char* what) {
  int* members = (int*)test_malloc(sizeof(int) * (size_t)(g_size + 1));
  int size = group_members(group, members);
  CHECK(size == n, "%s: size %d, expected %d", what, size, n);
  for (int i = 0; i < n; ++i)
    CHECK(members[i] == expected[i],
          "%s: member %d is world rank %d, expected %d", what, i, members[i],
          expected[i]);
  int rank = -2;
  MPI_CHECK(MPI_Group_rank(group, &rank));
  int expected_rank = index_of(expected, n, g_rank);
  CHECK(rank == (expected_rank < 0 ? MPI_UNDEFINED : expected_rank),
        "%s: Group_rank %d, expected %d", what, rank, expected_rank);
  if (n == 0)
    CHECK(group == MPI_GROUP_EMPTY, "%s: empty result is not MPI_GROUP_EMPTY",
          what);
  free(members);
}

/* A group of the world ranks listed in `members`. */
static MPI_Group make_group(const int* members, int n) {
  MPI_Group world_group, group;
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  MPI_CHECK(MPI_Group_incl(world_group, n, members, &group));
  MPI_CHECK(MPI_Group_free(&world_group));
  return group;
}

static void random_subset(int* members, int* n) {
  for (int i = 0; i < g_size; ++i) members[i] = i;
  shuffle(members, g_size);
  *n = (int)(next_random() % (unsigned)(g_size + 1));
}

static void check_group_operations(void) {
  int* a = (int*)test_malloc(sizeof(int) * (size_t)g_size);
  int* b = (int*)test_malloc(sizeof(int) * (size_t)g_size);
  int* expected = (int*)test_malloc(sizeof(int) * (size_t)(2 * g_size + 1));
  int* ranks = (int*)test_malloc(sizeof(int) * (size_t)(g_size + 2));
  int* translated = (int*)test_malloc(sizeof(int) * (size_t)(g_size + 2));
  for (int trial = 0; trial < 60; ++trial) {
    int na, nb, n;
    random_subset(a, &na);
    random_subset(b, &nb);
    MPI_Group ga = make_group(a, na), gb = make_group(b, nb), result;
    check_group(ga, a, na, "Group_incl");

    n = 0;
    for (int i = 0; i < na; ++i) expected[n++] = a[i];
    for (int i = 0; i < nb; ++i)
      if (index_of(a, na, b[i]) < 0) expected[n++] = b[i];
    MPI_CHECK(MPI_Group_union(ga, gb, &result));
    check_group(result, expected, n, "Group_union");
    MPI_CHECK(MPI_Group_free(&result));
    CHECK(result == MPI_GROUP_NULL, "Group_free did not reset the handle");

    n = 0;
    for (int i = 0; i < na; ++i)
      if (index_of(b, nb, a[i]) >= 0) expected[n++] = a[i];
    MPI_CHECK(MPI_Group_intersection(ga, gb, &result));
    check_group(result, expected, n, "Group_intersection");
    MPI_CHECK(MPI_Group_free(&result));

    n = 0;
    for (int i = 0; i < na; ++i)
      if (index_of(b, nb, a[i]) < 0) expected[n++] = a[i];
    MPI_CHECK(MPI_Group_difference(ga, gb, &result));
    check_group(result, expected, n, "Group_difference");
    MPI_CHECK(MPI_Group_free(&result));

    /* Excl of a random selection of a's ranks. */
    int nsel = na == 0 ? 0 : (int)(next_random() % (unsigned)(na + 1));
    for (int i = 0; i < na; ++i) ranks[i] = i;
    shuffle(ranks, na);
    n = 0;
    for (int i = 0; i < na; ++i)
      if (index_of(ranks, nsel, i) < 0) expected[n++] = a[i];
    MPI_CHECK(MPI_Group_excl(ga, nsel, ranks, &result));
    check_group(result, expected, n, "Group_excl");
    MPI_CHECK(MPI_Group_free(&result));

    /* Range incl/excl: (first, last, stride), forwards or backwards. */
    if (na > 0) {
      int first = (int)(next_random() % (unsigned)na);
      int last = (int)(next_random() % (unsigned)na);
      int stride = 1 + (int)(next_random() % 3u);
      if (first > last) stride = -stride;
      int range[1][3] = {{first, last, stride}};
      int nr = 0;
      for (int r = first; stride > 0 ? r <= last : r >= last; r += stride)
        ranks[nr++] = r;
      for (int i = 0; i < nr; ++i) expected[i] = a[ranks[i]];
      MPI_CHECK(MPI_Group_range_incl(ga, 1, range, &result));
      check_group(result, expected, nr, "Group_range_incl");
      MPI_CHECK(MPI_Group_free(&result));
      n = 0;
      for (int i = 0; i < na; ++i)
        if (index_of(ranks, nr, i) < 0) expected[n++] = a[i];
      MPI_CHECK(MPI_Group_range_excl(ga, 1, range, &result));
      check_group(result, expected, n, "Group_range_excl");
      MPI_CHECK(MPI_Group_free(&result));
    }

    /* Translate every rank of a (and MPI_PROC_NULL) into b. */
    for (int i = 0; i < na; ++i) ranks[i] = i;
    ranks[na] = MPI_PROC_NULL;
    MPI_CHECK(MPI_Group_translate_ranks(ga, na + 1, ranks, gb, translated));
    for (int i = 0; i < na; ++i) {
      int in_b = index_of(b, nb, a[i]);
      CHECK(translated[i] == (in_b < 0 ? MPI_UNDEFINED : in_b),
            "Group_translate_ranks: rank %d -> %d, expected %d", i,
            translated[i], in_b);
    }
    /* MPI-2.2 on: MPI_PROC_NULL translates to itself. MPICH 4.0 and Open
     * MPI 4.1 answer MPI_UNDEFINED when one of the groups is empty (a
     * shortcut of theirs); elsewhere they agree. */
    int empty_involved = na == 0 || nb == 0;
#if defined(MPICH) || defined(OPEN_MPI)
    if (!empty_involved)
#endif
      CHECK(translated[na] == MPI_PROC_NULL,
            "MPI_PROC_NULL translated to %d (group sizes %d, %d)",
            translated[na], na, nb);
    (void)empty_involved;

    /* Compare: identical, same members reordered, different. */
    int result_class = -1;
    MPI_CHECK(MPI_Group_compare(ga, ga, &result_class));
    CHECK(result_class == MPI_IDENT, "Group_compare(a, a) = %d", result_class);
    int same = na == nb;
    for (int i = 0; same && i < na; ++i) same = index_of(b, nb, a[i]) >= 0;
    int identical = same;
    for (int i = 0; identical && i < na; ++i) identical = a[i] == b[i];
    MPI_CHECK(MPI_Group_compare(ga, gb, &result_class));
    CHECK(result_class == (identical ? MPI_IDENT
                           : same    ? MPI_SIMILAR
                                     : MPI_UNEQUAL),
          "Group_compare(a, b) = %d", result_class);
    if (na > 1) {
      int* reversed = (int*)test_malloc(sizeof(int) * (size_t)na);
      for (int i = 0; i < na; ++i) reversed[i] = a[na - 1 - i];
      MPI_Group gr = make_group(reversed, na);
      MPI_CHECK(MPI_Group_compare(ga, gr, &result_class));
      CHECK(result_class == MPI_SIMILAR, "Group_compare(a, reversed a) = %d",
            result_class);
      MPI_CHECK(MPI_Group_free(&gr));
      free(reversed);
    }
    if (ga != MPI_GROUP_EMPTY) {
      MPI_CHECK(MPI_Group_compare(ga, MPI_GROUP_EMPTY, &result_class));
      CHECK(result_class == MPI_UNEQUAL, "Group_compare(a, EMPTY) = %d",
            result_class);
    }
    MPI_CHECK(MPI_Group_free(&ga));
    MPI_CHECK(MPI_Group_free(&gb));
  }
  /* Including nothing gives MPI_GROUP_EMPTY, which may be freed. */
  MPI_Group world_group, empty;
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  MPI_CHECK(MPI_Group_incl(world_group, 0, NULL, &empty));
  CHECK(empty == MPI_GROUP_EMPTY,
        "Group_incl with n = 0 is not MPI_GROUP_EMPTY");
  MPI_CHECK(MPI_Group_free(&empty));
  CHECK(empty == MPI_GROUP_NULL,
        "freeing MPI_GROUP_EMPTY did not reset the handle");
  int size = -1;
  MPI_CHECK(MPI_Group_size(MPI_GROUP_EMPTY, &size));
  CHECK(size == 0, "MPI_GROUP_EMPTY has size %d after a free", size);
  MPI_CHECK(MPI_Group_free(&world_group));
  free(a);
  free(b);
  free(expected);
  free(ranks);
  free(translated);
}

/* A created communicator over `members` (world ranks, in rank order):
 * right size and rank, ring traffic reaches the right neighbours, and an
 * allgather of world ranks gives the member list. */
static void check_members(MPI_Comm comm, const int* members, int n,
                          const char* what) {
  int position = index_of(members, n, g_rank);
  if (position < 0) {
    CHECK(comm == MPI_COMM_NULL, "%s: a non-member got a communicator", what);
    return;
  }
  CHECK(comm != MPI_COMM_NULL, "%s: member world rank %d got MPI_COMM_NULL",
        what, g_rank);
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  CHECK(size == n && rank == position, "%s: rank %d of %d, expected %d of %d",
        what, rank, size, position, n);
  int* gathered = (int*)test_malloc(sizeof(int) * (size_t)n);
  MPI_CHECK(MPI_Allgather(&g_rank, 1, MPI_INT, gathered, 1, MPI_INT, comm));
  for (int i = 0; i < n; ++i)
    CHECK(gathered[i] == members[i],
          "%s: rank %d is world rank %d, expected %d", what, i, gathered[i],
          members[i]);
  free(gathered);
  unsigned char out[300], in[300];
  test_fill(out, sizeof out, g_rank, 77);
  memset(in, 0, sizeof in);
  MPI_Status status;
  MPI_CHECK(MPI_Sendrecv(out, (int)sizeof out, MPI_BYTE, (rank + 1) % n, 77, in,
                         (int)sizeof in, MPI_BYTE, (rank + n - 1) % n, 77, comm,
                         &status));
  CHECK_PATTERN(in, sizeof in, members[(rank + n - 1) % n], 77, what);
  int compare = -1;
  MPI_Group group, expected_group = make_group(members, n);
  MPI_CHECK(MPI_Comm_group(comm, &group));
  MPI_CHECK(MPI_Group_compare(group, expected_group, &compare));
  CHECK(compare == MPI_IDENT, "%s: Comm_group differs from the group (%d)",
        what, compare);
  MPI_CHECK(MPI_Group_free(&group));
  MPI_CHECK(MPI_Group_free(&expected_group));
}

static void check_comm_create(void) {
  int* members = (int*)test_malloc(sizeof(int) * (size_t)g_size);
  char what[128];
  /* Every subset, in increasing order, while 2^n stays small. */
  if (g_size <= 6) {
    for (unsigned mask = 0; mask < (1u << g_size); ++mask) {
      int n = 0;
      for (int r = 0; r < g_size; ++r)
        if (mask & (1u << r)) members[n++] = r;
      MPI_Group group = make_group(members, n);
      MPI_Comm comm;
      MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, group, &comm));
      snprintf(what, sizeof what, "Comm_create(subset 0x%x)", mask);
      check_members(comm, members, n, what);
      if (comm != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&comm));
      MPI_CHECK(MPI_Group_free(&group));
    }
  }
  /* Shapes at any size: reversed, every other rank, one rank, random. */
  for (int shape = 0; shape < 12; ++shape) {
    int n = 0;
    switch (shape) {
      case 0:
        for (int r = g_size - 1; r >= 0; --r) members[n++] = r;
        break;
      case 1:
        for (int r = 1; r < g_size; r += 2) members[n++] = r;
        break;
      case 2:
        members[n++] = g_size - 1;
        break;
      default:
        random_subset(members, &n);
    }
    MPI_Group group = make_group(members, n);
    MPI_Comm comm;
    MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, group, &comm));
    snprintf(what, sizeof what, "Comm_create(shape %d, %d members)", shape, n);
    check_members(comm, members, n, what);
    if (comm != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&comm));
    MPI_CHECK(MPI_Group_free(&group));
  }
  /* Disjoint groups in one call: each rank passes its own part (rank mod
   * 3), listed in reverse. */
  {
    int n = 0;
    for (int r = g_size - 1; r >= 0; --r)
      if (r % 3 == g_rank % 3) members[n++] = r;
    MPI_Group group = make_group(members, n);
    MPI_Comm comm;
    MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, group, &comm));
    check_members(comm, members, n, "Comm_create(disjoint groups)");
    MPI_CHECK(MPI_Comm_free(&comm));
    MPI_CHECK(MPI_Group_free(&group));
  }
  /* MPI_GROUP_EMPTY: nobody gets a communicator. */
  MPI_Comm none;
  MPI_CHECK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &none));
  CHECK(none == MPI_COMM_NULL,
        "Comm_create(MPI_GROUP_EMPTY) gave a communicator");
  /* From a communicator that is itself a subset, with the parent's own
   * collectives around it. */
  {
    MPI_Comm odd;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, -g_rank, &odd));
    MPI_Group odd_group, sub;
    MPI_CHECK(MPI_Comm_group(odd, &odd_group));
    int odd_size;
    MPI_CHECK(MPI_Group_size(odd_group, &odd_size));
    int range[1][3] = {{odd_size - 1, 0, -2}};
    MPI_CHECK(MPI_Group_range_incl(odd_group, 1, range, &sub));
    int n = group_members(sub, members);
    MPI_Comm comm;
    MPI_CHECK(MPI_Barrier(odd));
    MPI_CHECK(MPI_Comm_create(odd, sub, &comm));
    MPI_CHECK(MPI_Barrier(odd));
    check_members(comm, members, n, "Comm_create(subset of a split)");
    if (comm != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&comm));
    MPI_CHECK(MPI_Group_free(&sub));
    MPI_CHECK(MPI_Group_free(&odd_group));
    MPI_CHECK(MPI_Comm_free(&odd));
  }
  free(members);
}

static void check_comm_create_group(void) {
  int* members = (int*)test_malloc(sizeof(int) * (size_t)g_size);
  char what[128];
  for (int trial = 0; trial < 10; ++trial) {
    int n;
    random_subset(members, &n);
    MPI_Group group = make_group(members, n);
    const int tag = trial * 1000003 % 2147483647;
    MPI_Comm comm = MPI_COMM_NULL;
    if (index_of(members, n, g_rank) >= 0) {
      /* Only members call; the others run a collective on the world, which
       * must not be confused with the members' exchange. */
      MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &comm));
    }
    int value = g_rank, sum = 0;
    MPI_CHECK(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == g_size * (g_size - 1) / 2, "Allreduce between creations: %d",
          sum);
    snprintf(what, sizeof what, "Comm_create_group(trial %d, tag %d)", trial,
             tag);
    check_members(comm, members, n, what);
    if (comm != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&comm));
    MPI_CHECK(MPI_Group_free(&group));
  }
  /* Two groups created back to back with different tags, the second
   * overlapping the first; the largest tag works too. */
  {
    int n = 0;
    for (int r = 0; r < g_size; r += 2) members[n++] = r;
    MPI_Group evens = make_group(members, n);
    MPI_Group world_group;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    MPI_Comm a = MPI_COMM_NULL, b;
    if (g_rank % 2 == 0)
      MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, &a));
    int tag_ub = 32767, *tag_ub_value, flag = 0;
    MPI_CHECK(
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub_value, &flag));
    if (flag) tag_ub = *tag_ub_value;
    MPI_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, world_group, tag_ub, &b));
    check_members(a, members, n, "Comm_create_group(evens, tag 5)");
    for (int r = 0; r < g_size; ++r) members[r] = r;
    check_members(b, members, g_size, "Comm_create_group(world, tag TAG_UB)");
    if (a != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&a));
    MPI_CHECK(MPI_Comm_free(&b));
    MPI_CHECK(MPI_Group_free(&evens));
    MPI_CHECK(MPI_Group_free(&world_group));
  }
  free(members);
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  check_group_operations();
  check_comm_create();
  check_comm_create_group();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("groups", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
