/* A program that uses exactly MiniAMR's set of MPI calls (Init, Finalize,
 * Abort, Wtime, Comm_rank, Comm_size, Comm_split, Comm_set_errhandler, Send,
 * Recv, Isend, Irecv, Wait, Waitany, Barrier, Bcast, Allreduce, Alltoall,
 * Scan; MPI_INT, MPI_DOUBLE, MPI_LONG_LONG_INT; MPI_SUM, MPI_MIN, MPI_MAX)
 * on nested split communicators, in a small "refinement" loop: halo
 * exchanges on a ring of blocks, global reductions, an Alltoall of block
 * counts and a Scan for offsets.  Every result is checked against what the
 * rank can compute alone.  (No helper that calls other MPI functions is
 * used, so the call set stays MiniAMR's.) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int world_rank;

static void fail(const char* what, long got, long expected) {
  fprintf(stderr, "FAIL [rank %d] miniamr_like: %s: got %ld, expected %ld\n", world_rank, what, got, expected);
  MPI_Abort(MPI_COMM_WORLD, 1);
}
#define EXPECT(got, expected, what) \
  do { if ((long)(got) != (long)(expected)) fail((what), (long)(got), (long)(expected)); } while (0)

enum { kHalo = 64, kSteps = 6 };

/* Blocks a rank owns at step `step`: refinement adds some, coarsening drops. */
static int blocks_of(int rank, int step) { return 1 + (rank * 3 + step * 5) % 4; }

static void run_level(MPI_Comm comm, int step) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* Halo exchange with both ring neighbours: Irecv first, then Isend,
   * completed by Waitany (receives) and Wait (sends). */
  double send_left[kHalo], send_right[kHalo], recv_left[kHalo], recv_right[kHalo];
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  for (int i = 0; i < kHalo; ++i) {
    send_left[i] = rank * 1000.0 + i + 0.5 * step;
    send_right[i] = -(rank * 1000.0 + i) - 0.25 * step;
  }
  MPI_Request recvs[2], sends[2];
  MPI_Irecv(recv_left, kHalo, MPI_DOUBLE, left, 10 + step, comm, &recvs[0]);
  MPI_Irecv(recv_right, kHalo, MPI_DOUBLE, right, 20 + step, comm, &recvs[1]);
  MPI_Isend(send_right, kHalo, MPI_DOUBLE, right, 10 + step, comm, &sends[0]);
  MPI_Isend(send_left, kHalo, MPI_DOUBLE, left, 20 + step, comm, &sends[1]);
  for (int done = 0; done < 2; ++done) {
    int which = -1;
    MPI_Status status;
    MPI_Waitany(2, recvs, &which, &status);
    if (which != 0 && which != 1) fail("Waitany index", which, 0);
  }
  MPI_Wait(&sends[0], MPI_STATUS_IGNORE);
  MPI_Wait(&sends[1], MPI_STATUS_IGNORE);
  for (int i = 0; i < kHalo; ++i) {
    if (recv_left[i] != -(left * 1000.0 + i) - 0.25 * step) fail("halo from left", (long)recv_left[i], i);
    if (recv_right[i] != right * 1000.0 + i + 0.5 * step) fail("halo from right", (long)recv_right[i], i);
  }

  /* Global reductions: block totals (long long SUM), min/max of a double. */
  long long my_blocks = blocks_of(rank, step), total = 0, expected_total = 0;
  for (int r = 0; r < size; ++r) expected_total += blocks_of(r, step);
  MPI_Allreduce(&my_blocks, &total, 1, MPI_LONG_LONG_INT, MPI_SUM, comm);
  EXPECT(total, expected_total, "Allreduce SUM of block counts");
  double load = rank * 1.5 + step, min = 0, max = 0;
  MPI_Allreduce(&load, &min, 1, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(&load, &max, 1, MPI_DOUBLE, MPI_MAX, comm);
  EXPECT(min * 2, step * 2, "Allreduce MIN");
  EXPECT(max * 2, ((size - 1) * 1.5 + step) * 2, "Allreduce MAX");
  int flags[2] = {rank, step}, flags_max[2];
  MPI_Allreduce(flags, flags_max, 2, MPI_INT, MPI_MAX, comm);
  EXPECT(flags_max[0], size - 1, "Allreduce MAX int");

  /* Alltoall of how many blocks each rank sends to each other rank. */
  int* to_send = (int*)malloc(sizeof(int) * size);
  int* to_recv = (int*)malloc(sizeof(int) * size);
  for (int r = 0; r < size; ++r) to_send[r] = (rank * 7 + r * 3 + step) % 5;
  MPI_Alltoall(to_send, 1, MPI_INT, to_recv, 1, MPI_INT, comm);
  for (int r = 0; r < size; ++r) EXPECT(to_recv[r], (r * 7 + rank * 3 + step) % 5, "Alltoall block counts");
  free(to_send);
  free(to_recv);

  /* Scan: where this rank's blocks start in the global numbering. */
  int mine = blocks_of(rank, step), offset = 0, expected_offset = 0;
  MPI_Scan(&mine, &offset, 1, MPI_INT, MPI_SUM, comm);
  for (int r = 0; r <= rank; ++r) expected_offset += blocks_of(r, step);
  EXPECT(offset, expected_offset, "Scan offsets");

  /* The root decides the next refinement; everyone must agree. */
  int root = step % size, decision = rank == root ? 4242 + step : -1;
  MPI_Bcast(&decision, 1, MPI_INT, root, comm);
  EXPECT(decision, 4242 + step, "Bcast decision");
  double timestamp = rank == 0 ? 0.125 * step : -1.0;
  MPI_Bcast(&timestamp, 1, MPI_DOUBLE, 0, comm);
  EXPECT(timestamp * 8, step, "Bcast double");

  /* Blocking Send/Recv: each rank hands its count to rank 0 of the level. */
  if (rank == 0) {
    for (int r = 1; r < size; ++r) {
      int count = -1;
      MPI_Status status;
      MPI_Recv(&count, 1, MPI_INT, r, 30 + step, comm, &status);
      EXPECT(count, blocks_of(r, step), "Recv block count");
    }
  } else {
    MPI_Send(&mine, 1, MPI_INT, 0, 30 + step, comm);
  }
  MPI_Barrier(comm);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  double start = MPI_Wtime();
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  /* World split by parity, then each half split again by rank / 2 parity:
   * key = -rank reverses the order inside each piece. */
  MPI_Comm parity, quarter;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &parity);
  int parity_rank, parity_size;
  MPI_Comm_rank(parity, &parity_rank);
  MPI_Comm_size(parity, &parity_size);
  EXPECT(parity_rank, world_rank / 2, "rank in the parity communicator");
  EXPECT(parity_size, (size + 1 - world_rank % 2) / 2, "size of the parity communicator");
  MPI_Comm_split(parity, parity_rank % 2, -parity_rank, &quarter);
  int quarter_rank, quarter_size;
  MPI_Comm_rank(quarter, &quarter_rank);
  MPI_Comm_size(quarter, &quarter_size);
  int expected_quarter_size = 0, expected_quarter_rank = 0;
  for (int p = 0; p < parity_size; ++p)
    if (p % 2 == parity_rank % 2) {
      ++expected_quarter_size;
      if (p > parity_rank) ++expected_quarter_rank;
    }
  EXPECT(quarter_size, expected_quarter_size, "size of the nested communicator");
  EXPECT(quarter_rank, expected_quarter_rank, "rank in the nested communicator (reversed key)");

  for (int step = 0; step < kSteps; ++step) {
    run_level(MPI_COMM_WORLD, step);
    run_level(parity, step);
    run_level(quarter, step);
  }
  double elapsed = MPI_Wtime() - start;
  if (!(elapsed >= 0.0)) fail("Wtime went backwards", (long)(elapsed * 1e6), 0);
  if (world_rank == 0) printf("miniamr_like: all checks passed at %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
