/* hello_ring: every rank says hello, then a token travels once around the
 * ring 0 -> 1 -> ... -> n-1 -> 0, each rank adding its rank number. Rank 0
 * checks the sum, so a lost or corrupted message fails the program.
 *
 * Plain C that also compiles as C++ (the install check builds it with both
 * mpicc and mpicxx). Run: mpiexec -n 4 ./hello_ring
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char host[MPI_MAX_PROCESSOR_NAME];
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);
  printf("hello from rank %d of %d on %s\n", rank, size, host);
  fflush(stdout);

  const int kTag = 7;
  const long kStart = 1000;
  int next = (rank + 1) % size;
  int previous = (rank + size - 1) % size;
  long token = 0;
  if (rank == 0) {
    /* Sendrecv so that a ring of one (rank 0 sending to itself) works too. */
    long start = kStart;
    MPI_Sendrecv(&start, 1, MPI_LONG, next, kTag, &token, 1, MPI_LONG,
                 previous, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    /* The token came back holding kStart + 1 + 2 + ... + (size - 1). */
    long expected = kStart + (long)size * (size - 1) / 2;
    if (token != expected) {
      fprintf(stderr, "ring FAILED: token %ld, expected %ld\n", token,
              expected);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("ring ok: token passed through %d ranks (%ld)\n", size, token);
  } else {
    MPI_Recv(&token, 1, MPI_LONG, previous, kTag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    token += rank;
    MPI_Send(&token, 1, MPI_LONG, next, kTag, MPI_COMM_WORLD);
  }

  MPI_Finalize();
  return 0;
}
