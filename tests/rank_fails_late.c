/* One rank fails after the job is fully up (MPI_Init and a barrier done, so
 * every connection a transport makes lazily may exist), while the others
 * wait for it: even ranks in MPI_Recv from it, odd ranks in MPI_Barrier.
 * The launcher (mpiexec, or srun across nodes) must end the whole job
 * promptly and exit non-zero. tests/cluster/faults.sh runs it with the
 * failing rank on another node than rank 0.
 *
 * Usage: rank_fails_late kill|abort [VICTIM]
 *   kill:  VICTIM (default: the last rank) raises SIGKILL;
 *   abort: VICTIM calls MPI_Abort(MPI_COMM_WORLD, 3).
 * Before failing, VICTIM prints "rank_fails_late: rank R on HOST: MODE",
 * so the output names where it happened. */
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
  CHECK(argc == 2 || argc == 3, "usage: rank_fails_late kill|abort [VICTIM]");
  CHECK(size >= 2, "rank_fails_late needs at least 2 ranks, got %d", size);
  const char* mode = argv[1];
  CHECK(strcmp(mode, "kill") == 0 || strcmp(mode, "abort") == 0, "unknown mode %s", mode);
  const int victim = argc == 3 ? atoi(argv[2]) : size - 1;
  CHECK(victim >= 0 && victim < size, "victim %d is not a rank of %d", victim, size);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == victim) {
    /* Give the others time to block first. */
    struct timespec delay = {0, 300 * 1000000L};
    nanosleep(&delay, NULL);
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    printf("rank_fails_late: rank %d on %s: %s\n", rank, host, mode);
    fflush(stdout);
    if (strcmp(mode, "kill") == 0) raise(SIGKILL);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 4; /* not reached: MPI_Abort does not return */
  }
  int rc;
  if (rank % 2 == 0) {
    int value = 0;
    rc = MPI_Recv(&value, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    rc = MPI_Barrier(MPI_COMM_WORLD);
  }
  /* Returning is allowed only with an error (a library that detects the
   * dead peer); exiting non-zero then is what the test expects. */
  fprintf(stderr, "rank %d: the wait for rank %d returned %d\n", rank, victim, rc);
  MPI_Finalize();
  return rc == MPI_SUCCESS ? 0 : 2;
}
