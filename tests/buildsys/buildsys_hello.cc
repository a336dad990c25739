// buildsys_hello, in C++: the same check as buildsys_hello.c, built as C++
// against MPI::MPI_CXX (CMake) or mpi-cxx.pc (pkg-config).
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> ranks(size);
  MPI_Allgather(&rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < size; ++i) {
    if (ranks[i] != i) {
      std::fprintf(stderr, "buildsys_hello: rank %d: slot %d holds %d\n", rank,
                   i, ranks[i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  if (rank == 0) {
    std::string version(MPI_MAX_LIBRARY_VERSION_STRING, '\0');
    int length = 0;
    MPI_Get_library_version(version.data(), &length);
    version.resize(length);
    std::printf("buildsys_hello (C++): %d ranks, library %s\n", size,
                version.c_str());
  }
  MPI_Finalize();
  return 0;
}
