/* buildsys_hello: the program tests/buildsys/check_build_systems.sh builds
 * with each build system (CMake, pkg-config, autoconf). Rank 0 prints the
 * library's version string, so the check can tell minimpi from another MPI
 * the build system might have picked up instead, and the ranks sum their
 * numbers, so a program that links but does not communicate fails. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (sum != size * (size - 1) / 2) {
    fprintf(stderr, "buildsys_hello: rank %d: sum of ranks %d, expected %d\n",
            rank, sum, size * (size - 1) / 2);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    printf("buildsys_hello (C): %d ranks, library %s\n", size, version);
  }
  MPI_Finalize();
  return 0;
}
