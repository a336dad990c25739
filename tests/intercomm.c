/* Intercommunicators: MPI_Intercomm_create over halves of MPI_COMM_WORLD
 * (even and uneven), its inquiries (test_inter, remote size and group,
 * Comm_group, compare), point-to-point between the groups (ranks name the
 * remote group; a receiver sees the sender's rank in its own group; any
 * source, probes, nonblocking), MPI_Intercomm_merge in both orders, and
 * MPI_Comm_dup / _idup / _split / _create of an intercommunicator,
 * each checked by traffic that must arrive on the new communicator and not
 * on the old one. Every byte is checked. Collectives on intercommunicators
 * have their own test (intercomm_collectives.c). */
#include "test_util.h"

static int world_rank, world_size;

/* World ranks of the two groups: [0, split) and [split, size). */
static int in_left(int rank, int split) { return rank < split; }
static int group_size(int left, int split) {
  return left ? split : world_size - split;
}
static int world_of(int left, int rank, int split) {
  return left ? rank : split + rank;
}

/* Every process sends a message to every process of the other group and
 * receives one from each, with MPI_ANY_SOURCE: the status names the
 * sender's rank in the remote group.  `skip` leading ranks of each original
 * group are not in `inter` (rank r of it is rank r + skip of the original). */
static void all_pairs_without(MPI_Comm inter, int left, int split, int tag,
                              int skip) {
  int rank, size, remote_size;
  MPI_CHECK(MPI_Comm_rank(inter, &rank));
  MPI_CHECK(MPI_Comm_size(inter, &size));
  MPI_CHECK(MPI_Comm_remote_size(inter, &remote_size));
  CHECK(size == group_size(left, split) - skip &&
            remote_size == group_size(!left, split) - skip,
        "sizes %d/%d, expected %d/%d", size, remote_size,
        group_size(left, split) - skip, group_size(!left, split) - skip);
  MPI_Request* requests =
      (MPI_Request*)test_malloc(sizeof(MPI_Request) * remote_size);
  unsigned char out[64 * 4];
  for (int r = 0; r < remote_size; ++r) {
    /* Message to remote rank r carries (my world rank, r). */
    test_fill(out + 64 * (r % 4), 64, world_rank, tag + r);
    MPI_CHECK(MPI_Isend(out + 64 * (r % 4), 64, MPI_BYTE, r, tag + r, inter,
                        &requests[r]));
    if (r % 4 == 3) {
      MPI_CHECK(MPI_Waitall(4, &requests[r - 3], MPI_STATUSES_IGNORE));
    }
  }
  MPI_CHECK(MPI_Waitall(remote_size % 4,
                        &requests[remote_size - remote_size % 4],
                        MPI_STATUSES_IGNORE));
  int* seen = (int*)test_malloc(sizeof(int) * remote_size);
  memset(seen, 0, sizeof(int) * remote_size);
  for (int i = 0; i < remote_size; ++i) {
    MPI_Status status;
    MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, tag + rank, inter, &status));
    const int source = status.MPI_SOURCE;
    CHECK(source >= 0 && source < remote_size && !seen[source],
          "probe found source %d", source);
    unsigned char in[64];
    MPI_CHECK(MPI_Recv(in, 64, MPI_BYTE, source, tag + rank, inter, &status));
    seen[source] = 1;
    CHECK_PATTERN(in, 64, world_of(!left, source + skip, split), tag + rank,
                  "intercommunicator message");
  }
  free(seen);
  free(requests);
}

static void all_pairs(MPI_Comm inter, int left, int split, int tag) {
  all_pairs_without(inter, left, split, tag, 0);
}

static void check_groups(MPI_Comm inter, int left, int split) {
  int flag;
  MPI_CHECK(MPI_Comm_test_inter(inter, &flag));
  CHECK(flag, "test_inter says no");
  MPI_Group local, remote, world_group;
  MPI_CHECK(MPI_Comm_group(inter, &local));
  MPI_CHECK(MPI_Comm_remote_group(inter, &remote));
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  int local_size, remote_size;
  MPI_Group_size(local, &local_size);
  MPI_Group_size(remote, &remote_size);
  for (int r = 0; r < remote_size; ++r) {
    int world;
    MPI_CHECK(MPI_Group_translate_ranks(remote, 1, &r, world_group, &world));
    CHECK(world == world_of(!left, r, split),
          "remote rank %d is world rank %d, expected %d", r, world,
          world_of(!left, r, split));
  }
  for (int r = 0; r < local_size; ++r) {
    int world;
    MPI_CHECK(MPI_Group_translate_ranks(local, 1, &r, world_group, &world));
    CHECK(world == world_of(left, r, split), "local rank %d is world rank %d",
          r, world);
  }
  MPI_Group_free(&local);
  MPI_Group_free(&remote);
  MPI_Group_free(&world_group);
}

static void check_merge(MPI_Comm inter, int left, int split, int high_left) {
  MPI_Comm merged;
  const int high = left ? high_left : !high_left;
  MPI_CHECK(MPI_Intercomm_merge(inter, high, &merged));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(merged, &rank));
  MPI_CHECK(MPI_Comm_size(merged, &size));
  CHECK(size == world_size, "merged size %d", size);
  /* The group with high = false comes first. */
  const int left_first = !high_left;
  const int expected =
      left == left_first
          ? (left ? world_rank : world_rank - split)
          : group_size(!left, split) + (left ? world_rank : world_rank - split);
  CHECK(rank == expected, "merged rank %d, expected %d (high_left %d)", rank,
        expected, high_left);
  /* The merged communicator works: gather everyone's world rank. */
  int* ranks = (int*)test_malloc(sizeof(int) * size);
  MPI_CHECK(MPI_Allgather(&world_rank, 1, MPI_INT, ranks, 1, MPI_INT, merged));
  for (int r = 0; r < size; ++r) {
    const int in_first = r < group_size(left_first, split);
    const int want =
        in_first
            ? world_of(left_first, r, split)
            : world_of(!left_first, r - group_size(left_first, split), split);
    CHECK(ranks[r] == want, "merged rank %d is world %d, expected %d", r,
          ranks[r], want);
  }
  free(ranks);
  MPI_CHECK(MPI_Comm_free(&merged));
}

static void check_split_and_create(MPI_Comm inter, int left, int split) {
  /* Split by parity of the local rank: parity classes pair up across. */
  int rank;
  MPI_CHECK(MPI_Comm_rank(inter, &rank));
  MPI_Comm halves;
  MPI_CHECK(MPI_Comm_split(inter, rank % 2, -rank, &halves));
  const int remote_class =
      (group_size(!left, split) + (rank % 2 == 0 ? 1 : 0)) / 2;
  if (remote_class == 0) {
    CHECK(halves == MPI_COMM_NULL, "split without partners is not NULL");
  } else {
    int size, remote_size, new_rank;
    MPI_CHECK(MPI_Comm_size(halves, &size));
    MPI_CHECK(MPI_Comm_remote_size(halves, &remote_size));
    MPI_CHECK(MPI_Comm_rank(halves, &new_rank));
    const int local_class = (group_size(left, split) + (rank % 2 == 0)) / 2;
    CHECK(size == local_class && remote_size == remote_class,
          "split sizes %d/%d, expected %d/%d", size, remote_size, local_class,
          remote_class);
    /* Keys are -rank: the highest old rank is new rank 0. */
    CHECK(new_rank == local_class - 1 - rank / 2, "split rank %d", new_rank);
    /* Rank 0 of each side swaps a message. */
    if (new_rank == 0) {
      int out = world_rank, in = -1;
      MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, 0, 5, &in, 1, MPI_INT, 0, 5,
                             halves, MPI_STATUS_IGNORE));
      CHECK(in >= 0 && in_left(in, split) != left, "split partner is world %d",
            in);
    }
    MPI_CHECK(MPI_Comm_free(&halves));
  }

  /* Create without local rank 0 on each side (needs 2 per side). */
  if (split >= 2 && world_size - split >= 2) {
    MPI_Group local, without_first;
    MPI_CHECK(MPI_Comm_group(inter, &local));
    const int zero = 0;
    MPI_CHECK(MPI_Group_excl(local, 1, &zero, &without_first));
    MPI_Comm smaller;
    MPI_CHECK(MPI_Comm_create(inter, without_first, &smaller));
    if (rank == 0) {
      CHECK(smaller == MPI_COMM_NULL, "excluded rank got a communicator");
    } else {
      int size, remote_size, new_rank;
      MPI_CHECK(MPI_Comm_size(smaller, &size));
      MPI_CHECK(MPI_Comm_remote_size(smaller, &remote_size));
      MPI_CHECK(MPI_Comm_rank(smaller, &new_rank));
      CHECK(size == group_size(left, split) - 1 &&
                remote_size == group_size(!left, split) - 1 &&
                new_rank == rank - 1,
            "create: size %d remote %d rank %d", size, remote_size, new_rank);
      all_pairs_without(smaller, left, split, 4000, 1);
      MPI_CHECK(MPI_Comm_free(&smaller));
    }
    MPI_Group_free(&local);
    MPI_Group_free(&without_first);
  }
}

static void run(int split) {
  const int left = in_left(world_rank, split);
  MPI_Comm local;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, left, world_rank, &local));
  /* Leaders: world rank 0 and world rank `split`. */
  const int remote_leader = left ? split : 0;
  MPI_Comm inter;
  MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader,
                                 100 + split, &inter));
  check_groups(inter, left, split);
  all_pairs(inter, left, split, 1000);

  /* A duplicate is a separate channel: a message on it does not match a
   * receive on the original. */
  MPI_Comm copy;
  MPI_CHECK(MPI_Comm_dup(inter, &copy));
  int result;
  MPI_CHECK(MPI_Comm_compare(inter, copy, &result));
  CHECK(result == MPI_CONGRUENT, "compare(inter, dup) = %d", result);
  MPI_CHECK(MPI_Comm_compare(inter, local, &result));
  CHECK(result == MPI_UNEQUAL, "compare(inter, intra) = %d", result);
  all_pairs(copy, left, split, 2000);
  int rank;
  MPI_CHECK(MPI_Comm_rank(inter, &rank));
  if (rank == 0) {
    int out = 17, in = 0;
    MPI_Request request;
    MPI_CHECK(MPI_Irecv(&in, 1, MPI_INT, 0, 9, inter, &request));
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, 0, 9, copy));
    int flag = 1;
    for (int i = 0; i < 100 && flag; ++i) {
      MPI_CHECK(MPI_Iprobe(0, 9, copy, &flag, MPI_STATUS_IGNORE));
      if (flag) break;
    }
    MPI_CHECK(MPI_Recv(&in, 1, MPI_INT, 0, 9, copy, MPI_STATUS_IGNORE));
    CHECK(in == 17, "dup message %d", in);
    MPI_CHECK(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a message on the duplicate matched the original");
    /* Both leaders have looked before either sends on the original. */
    MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, 0, 10, &in, 1, MPI_INT, 0, 10,
                           copy, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Send(&out, 1, MPI_INT, 0, 9, inter));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  }
  MPI_CHECK(MPI_Comm_free(&copy));

  /* MPI_Comm_idup: the duplicate is usable once the request completes,
   * with point-to-point traffic on the original meanwhile. */
  MPI_Comm later;
  MPI_Request request;
  MPI_CHECK(MPI_Comm_idup(inter, &later, &request));
  all_pairs(inter, left, split, 2500);
  MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  int flag;
  MPI_CHECK(MPI_Comm_test_inter(later, &flag));
  CHECK(flag, "the idup of an intercommunicator is not one");
  check_groups(later, left, split);
  all_pairs(later, left, split, 3000);
  MPI_CHECK(MPI_Comm_free(&later));

  check_merge(inter, left, split, 0);
  check_merge(inter, left, split, 1);
  check_split_and_create(inter, left, split);

  /* Scans are not defined on an intercommunicator. */
  MPI_CHECK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
  CHECK(test_error_class(MPI_Scan(&world_rank, &rank, 1, MPI_INT, MPI_SUM, inter)) ==
            MPI_ERR_COMM,
        "MPI_Scan on an intercommunicator did not fail cleanly");
  MPI_CHECK(MPI_Comm_free(&inter));
  MPI_CHECK(MPI_Comm_free(&local));
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size >= 2) {
    run(world_size / 2); /* even halves (or almost) */
    run(1);              /* one process against the rest */
  }
  /* MPI_COMM_SELF as the local group: pairs 0-1, 2-3, ... */
  if (world_size >= 2 && (world_rank ^ 1) < world_size) {
    MPI_Comm pair;
    MPI_CHECK(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD,
                                   world_rank ^ 1, 7, &pair));
    int out = world_rank, in = -1;
    MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, 0, 0, &in, 1, MPI_INT, 0, 0, pair,
                           MPI_STATUS_IGNORE));
    CHECK(in == (world_rank ^ 1), "pair partner %d", in);
    MPI_CHECK(MPI_Comm_free(&pair));
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("intercomm", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
