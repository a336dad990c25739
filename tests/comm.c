/* Communicator management and isolation: Comm_dup, nested Comm_split (by
 * parity, then again inside with a key that reverses the order),
 * MPI_UNDEFINED color, Comm_compare results, Comm_free, COMM_SELF, and
 * traffic on several communicators with the same tags never crossing.
 * Every split's membership is checked by passing world ranks around it. */
#include "test_util.h"

static void check_compare(MPI_Comm a, MPI_Comm b, int expected, const char* what) {
  int result = -1;
  MPI_CHECK(MPI_Comm_compare(a, b, &result));
  CHECK(result == expected, "Comm_compare(%s) = %d, expected %d (IDENT %d CONGRUENT %d "
        "SIMILAR %d UNEQUAL %d)", what, result, expected, MPI_IDENT, MPI_CONGRUENT,
        MPI_SIMILAR, MPI_UNEQUAL);
}

/* Passes world ranks once around `comm` and checks each rank's left
 * neighbour is members[(my_rank - 1) mod size], where members lists the
 * expected world rank of each rank of comm. */
static void check_membership(MPI_Comm comm, const int* members, int member_count,
                             int world_rank, const char* what) {
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  CHECK(size == member_count, "%s: size %d, expected %d", what, size, member_count);
  CHECK(members[rank] == world_rank, "%s: world rank %d has rank %d, expected world rank %d there",
        what, world_rank, rank, members[rank]);
  int from_left = -1;
  MPI_Status status;
  MPI_CHECK(MPI_Sendrecv(&world_rank, 1, MPI_INT, (rank + 1) % size, 3, &from_left, 1, MPI_INT,
                         (rank + size - 1) % size, 3, comm, &status));
  const int left = (rank + size - 1) % size;
  CHECK(from_left == members[left] && status.MPI_SOURCE == left,
        "%s: rank %d got world rank %d from rank %d, expected %d from %d", what, rank, from_left,
        status.MPI_SOURCE, members[left], left);
}

static void check_isolation(int rank, int size) {
  /* Three communicators over the same group, same tag, same peers. */
  MPI_Comm comms[3];
  comms[0] = MPI_COMM_WORLD;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
  MPI_CHECK(MPI_Comm_dup(comms[1], &comms[2]));
  check_compare(MPI_COMM_WORLD, comms[1], MPI_CONGRUENT, "WORLD vs its dup");
  check_compare(comms[1], comms[2], MPI_CONGRUENT, "dup vs dup of dup");
  check_compare(comms[2], comms[2], MPI_IDENT, "dup vs itself");
  enum { kRounds = 20, kBytes = 512, kTag = 5 };
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  unsigned char out[3][kRounds][kBytes], in[3][kRounds][kBytes];
  MPI_Request sends[3 * kRounds], recvs[3 * kRounds];
  /* Receives posted newest communicator first, with wildcards; sends go
   * out oldest first: only the context can keep them apart. */
  for (int c = 2; c >= 0; --c)
    for (int r = 0; r < kRounds; ++r) {
      memset(in[c][r], 0, kBytes);
      MPI_CHECK(MPI_Irecv(in[c][r], kBytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c],
                          &recvs[c * kRounds + r]));
    }
  for (int r = 0; r < kRounds; ++r)
    for (int c = 0; c < 3; ++c) {
      test_fill(out[c][r], kBytes, rank, c * 1000 + r);
      MPI_CHECK(MPI_Isend(out[c][r], kBytes, MPI_BYTE, right, kTag, comms[c],
                          &sends[c * kRounds + r]));
    }
  MPI_Status statuses[3 * kRounds];
  MPI_CHECK(MPI_Waitall(3 * kRounds, recvs, statuses));
  MPI_CHECK(MPI_Waitall(3 * kRounds, sends, MPI_STATUSES_IGNORE));
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < kRounds; ++r) {
      char what[64];
      snprintf(what, sizeof what, "communicator %d message %d", c, r);
      CHECK_STATUS(statuses[c * kRounds + r], left, kTag, MPI_BYTE, kBytes, what);
      CHECK_PATTERN(in[c][r], kBytes, left, c * 1000 + r, what);
    }
  MPI_CHECK(MPI_Comm_free(&comms[2]));
  MPI_CHECK(MPI_Comm_free(&comms[1]));
  CHECK(comms[1] == MPI_COMM_NULL && comms[2] == MPI_COMM_NULL, "Comm_free did not null the handle");
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  int* members = (int*)test_malloc((size_t)size * sizeof(int));
  int count;

  check_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT, "WORLD vs WORLD");
  check_compare(MPI_COMM_SELF, MPI_COMM_WORLD, size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL,
                "SELF vs WORLD");

  /* Split by parity, keyed by world rank. */
  MPI_Comm parity;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity));
  count = 0;
  for (int w = 0; w < size; ++w)
    if (w % 2 == rank % 2) members[count++] = w;
  check_membership(parity, members, count, rank, "parity split");
  check_compare(parity, MPI_COMM_WORLD, size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL,
                "parity split vs WORLD");

  /* Inside each parity half, split again by (world rank / 2) % 2 with a key
   * that reverses the order. */
  int parity_rank;
  MPI_CHECK(MPI_Comm_rank(parity, &parity_rank));
  MPI_Comm inner;
  MPI_CHECK(MPI_Comm_split(parity, parity_rank % 2, -parity_rank, &inner));
  count = 0;
  for (int w = size - 1; w >= 0; --w)
    if (w % 2 == rank % 2 && (w / 2) % 2 == (rank / 2) % 2) members[count++] = w;
  check_membership(inner, members, count, rank, "nested split with reversed keys");

  /* Same members, reversed order: SIMILAR (unless a single rank). */
  MPI_Comm reversed, same_order;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed));
  for (int w = 0; w < size; ++w) members[w] = size - 1 - w;
  check_membership(reversed, members, size, rank, "reversed split");
  check_compare(reversed, MPI_COMM_WORLD, size == 1 ? MPI_CONGRUENT : MPI_SIMILAR,
                "reversed split vs WORLD");
  /* Equal keys keep the old order: CONGRUENT. */
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 7, 0, &same_order));
  for (int w = 0; w < size; ++w) members[w] = w;
  check_membership(same_order, members, size, rank, "split with equal keys");
  check_compare(same_order, MPI_COMM_WORLD, MPI_CONGRUENT, "equal-key split vs WORLD");

  /* MPI_UNDEFINED color: no communicator for those ranks. */
  MPI_Comm some;
  const int excluded = rank % 3 == 0;
  MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, excluded ? MPI_UNDEFINED : 1, rank, &some));
  if (excluded) {
    CHECK(some == MPI_COMM_NULL, "MPI_UNDEFINED color did not give MPI_COMM_NULL");
  } else {
    count = 0;
    for (int w = 0; w < size; ++w)
      if (w % 3 != 0) members[count++] = w;
    check_membership(some, members, count, rank, "split excluding every third rank");
    MPI_CHECK(MPI_Comm_free(&some));
  }

  check_isolation(rank, size);

  /* COMM_SELF: a message to oneself, and a dup of it. */
  int self_rank = -1, self_size = -1;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_SELF, &self_rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_SELF, &self_size));
  CHECK(self_rank == 0 && self_size == 1, "COMM_SELF rank %d size %d", self_rank, self_size);
  MPI_Comm self_dup;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &self_dup));
  check_compare(self_dup, MPI_COMM_SELF, MPI_CONGRUENT, "dup of SELF vs SELF");
  MPI_Comm self_comms[2] = {MPI_COMM_SELF, self_dup};
  for (int c = 0; c < 2; ++c) {
    unsigned char out[3000], in[3000];
    MPI_Request request;
    MPI_Status status;
    test_fill(out, sizeof out, rank, 40 + c);
    MPI_CHECK(MPI_Isend(out, (int)sizeof out, MPI_BYTE, 0, 40 + c, self_comms[c], &request));
    MPI_CHECK(MPI_Recv(in, (int)sizeof in, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, self_comms[c],
                       &status));
    MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK_STATUS(status, 0, 40 + c, MPI_BYTE, (int)sizeof in, "send to self");
    CHECK_PATTERN(in, sizeof in, rank, 40 + c, "send to self");
  }
  MPI_CHECK(MPI_Comm_free(&self_dup));

  MPI_CHECK(MPI_Comm_free(&inner));
  MPI_CHECK(MPI_Comm_free(&parity));
  MPI_CHECK(MPI_Comm_free(&reversed));
  MPI_CHECK(MPI_Comm_free(&same_order));
  CHECK(parity == MPI_COMM_NULL && inner == MPI_COMM_NULL, "Comm_free did not null the handle");
  free(members);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("comm", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
