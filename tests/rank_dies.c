/* A rank that dies, or exits with an error, while the others wait for it.
 * The launcher must notice, end the remaining ranks and exit non-zero
 * within seconds (the runner's time limit is the hang guard).
 *
 * Usage: rank_dies exit|kill|exit_code
 *   exit:      rank 1 calls _exit(7) while the others block in MPI_Recv;
 *   kill:      rank 1 raises SIGKILL while the others block in MPI_Recv;
 *   exit_code: every rank finalizes, then rank 1 returns 5 from main. */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(argc == 2, "usage: rank_dies exit|kill|exit_code");
  CHECK(size >= 2, "rank_dies needs at least 2 ranks, got %d", size);
  const char* mode = argv[1];
  const int victim = 1;
  if (strcmp(mode, "exit_code") == 0) {
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    return rank == victim ? 5 : 0;
  }
  CHECK(strcmp(mode, "exit") == 0 || strcmp(mode, "kill") == 0, "unknown mode %s", mode);
  if (rank == victim) {
    /* Give the others time to block in their receives first. */
    struct timespec delay = {0, 200 * 1000000L};
    nanosleep(&delay, NULL);
    fflush(stdout);
    if (strcmp(mode, "kill") == 0) raise(SIGKILL);
    _exit(7);
  }
  int value = 0;
  const int rc = MPI_Recv(&value, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  /* Returning is allowed only with an error (a library that detects the
   * dead peer); exiting non-zero then is what the test expects. */
  fprintf(stderr, "rank %d: MPI_Recv from the dead rank returned %d\n", rank, rc);
  return rc == MPI_SUCCESS ? 0 : 2;
}
