/* MPI_Scatter and MPI_Scatterv with MPI_IN_PLACE at the root and a
 * non-contiguous send type there (a strided vector, and a resized vector
 * laid out as blocks of a matrix): every receiver gets its block, the
 * root's block stays untouched, for every root and both algorithms. */
#include "test_util.h"

enum { kN = 12, kStride = 10 };

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  MPI_Datatype vector;
  MPI_CHECK(MPI_Type_vector(kN, 1, kStride, MPI_DOUBLE, &vector));
  MPI_CHECK(MPI_Type_commit(&vector));
  MPI_Aint lb, extent;
  MPI_CHECK(MPI_Type_get_extent(vector, &lb, &extent));
  const int per_block = (int)(extent / (MPI_Aint)sizeof(double));
  double* all = (double*)test_malloc((size_t)per_block * size * sizeof(double));
  double mine[kN];
  int* counts = (int*)test_malloc((size_t)size * sizeof(int));
  int* displacements = (int*)test_malloc((size_t)size * sizeof(int));
  for (int root = 0; root < size; ++root) {
    for (int variable = 0; variable <= 1; ++variable) {
      for (int i = 0; i < per_block * size; ++i) all[i] = i;
      for (int i = 0; i < kN; ++i) mine[i] = -1.0;
      if (rank == root) {
        if (variable) {
          /* Blocks in reverse order: displacements in extents. */
          for (int r = 0; r < size; ++r) {
            counts[r] = 1;
            displacements[r] = size - 1 - r;
          }
          MPI_CHECK(MPI_Scatterv(all, counts, displacements, vector,
                                 MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root,
                                 MPI_COMM_WORLD));
        } else {
          MPI_CHECK(MPI_Scatter(all, 1, vector, MPI_IN_PLACE, -1,
                                MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
        }
        for (int i = 0; i < per_block * size; ++i) {
          CHECK(all[i] == i, "root %d: its send buffer changed at %d", root,
                i);
        }
      } else {
        if (variable) {
          MPI_CHECK(MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, mine,
                                 kN, MPI_DOUBLE, root, MPI_COMM_WORLD));
        } else {
          MPI_CHECK(MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, mine, kN,
                                MPI_DOUBLE, root, MPI_COMM_WORLD));
        }
        const int block = variable ? size - 1 - rank : rank;
        for (int i = 0; i < kN; ++i) {
          const double expected = (double)(block * per_block + i * kStride);
          CHECK(mine[i] == expected,
                "root %d %s: element %d is %g, expected %g", root,
                variable ? "Scatterv" : "Scatter", i, mine[i], expected);
        }
      }
    }
  }
  free(all);
  free(counts);
  free(displacements);
  MPI_CHECK(MPI_Type_free(&vector));
  test_report_pass("scatter_in_place", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
