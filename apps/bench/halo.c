/* Strided halo exchange between ranks 0 and 1: how fast non-contiguous data
 * moves when a program describes its halo with a derived datatype and calls
 * MPI_Sendrecv, as stencil codes do.
 *
 * Plain C and MPI only, so the same source builds against any MPI library
 * (apps/bench/halo_compare.sh builds it with minimpi, MPICH and Open MPI).
 *
 *   usage: halo [MAX_HALO_BYTES [quick]]   run with exactly 2 ranks
 *   quick: a few iterations only (a correctness run, not a measurement)
 *
 * Shapes (all of doubles, each rank sends its halo to the other at once):
 *   column1  one double per row of a 2-D array with 1024 columns
 *            (MPI_Type_vector(rows, 1, 1024)): 8-byte blocks
 *   column4  four doubles per row (MPI_Type_vector(rows, 4, 1024)):
 *            32-byte blocks
 *   face3d   the x-face of an n*n*n array (MPI_Type_create_subarray):
 *            single doubles n apart, in rows of n, the worst case
 * For each shape and size the received halo is checked once against the
 * sender's values, then the exchange is timed in TRIALS trials and the
 * fastest is kept (a descheduled trial on a small machine says nothing).
 *
 * Output: '#' comment lines, then one line per shape and size:
 *   shape  halo_bytes  exchange_us  bandwidth_GBps
 * bandwidth = halo bytes / time of one exchange (1 GB = 1e9 B): each rank
 * both sends and receives that much at once.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kTrials = 3, kColumns = 1024 };
static const double kBytesPerTrial = 256.0 * 1024 * 1024;

static int quick = 0;

static int Iterations(size_t bytes) {
  if (quick) return 2;
  double iterations = kBytesPerTrial / (double)bytes;
  if (iterations < 4) iterations = 4;
  if (iterations > 20000) iterations = 20000;
  return (int)iterations;
}

/* The value element `index` of rank `rank`'s array holds. */
static double Value(int rank, size_t index) {
  return (double)rank * 1e9 + (double)index;
}

/* Exchanges the halo described by (send_offset, type) with the other rank
 * into (receive_offset, type); checks it once, then times it. */
static void Measure(const char* shape, double* array, size_t elements,
                    MPI_Datatype type, size_t send_offset,
                    size_t receive_offset, int rank) {
  const int peer = 1 - rank;
  int type_size;
  MPI_Type_size(type, &type_size);
  for (size_t i = 0; i < elements; ++i) array[i] = Value(rank, i);
  MPI_Sendrecv(array + send_offset, 1, type, peer, 0, array + receive_offset, 1,
               type, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  /* Check: the receive places got the peer's send places, in order; every
   * other element is untouched. Pack both sides through MPI_Pack to list
   * their elements in typemap order. */
  double* got = malloc((size_t)type_size);
  double* want = malloc((size_t)type_size);
  double* peer_array = malloc(elements * sizeof(double));
  int position = 0;
  MPI_Pack(array + receive_offset, 1, type, got, type_size, &position,
           MPI_COMM_WORLD);
  for (size_t i = 0; i < elements; ++i) peer_array[i] = Value(peer, i);
  position = 0;
  MPI_Pack(peer_array + send_offset, 1, type, want, type_size, &position,
           MPI_COMM_WORLD);
  if (memcmp(got, want, (size_t)type_size) != 0) {
    fprintf(stderr, "halo: %s %d B: wrong data received\n", shape, type_size);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  free(got);
  free(want);
  free(peer_array);

  const int iterations = Iterations((size_t)type_size);
  double best = 1e30;
  for (int trial = 0; trial < kTrials; ++trial) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i) {
      MPI_Sendrecv(array + send_offset, 1, type, peer, 1,
                   array + receive_offset, 1, type, peer, 1, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    }
    double elapsed = (MPI_Wtime() - start) / iterations;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    if (elapsed < best) best = elapsed;
  }
  if (rank == 0) {
    printf("%s %d %.3f %.3f\n", shape, type_size, best * 1e6,
           type_size / best / 1e9);
    fflush(stdout);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "halo: run with exactly 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  const size_t max_bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 1 << 20;
  quick = argc > 2 && strcmp(argv[2], "quick") == 0;
  if (rank == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(version, &length);
    for (int i = 0; i < length; ++i) {
      if (version[i] == '\n') version[i] = ' ';
    }
    printf("# library: %.100s\n", version);
    printf("# shape halo_bytes exchange_us bandwidth_GBps\n");
  }

  /* 2-D columns: rank r sends column 1 and receives into column 0 of a
   * rows x 1024 array (halo on the left, as a stencil with one ghost). */
  for (int width = 1; width <= 4; width *= 4) {
    for (size_t rows = 64; rows * width * 8 <= max_bytes; rows *= 4) {
      const size_t elements = rows * kColumns;
      double* array = malloc(elements * sizeof(double));
      MPI_Datatype column;
      MPI_Type_vector((int)rows, width, kColumns, MPI_DOUBLE, &column);
      MPI_Type_commit(&column);
      Measure(width == 1 ? "column1" : "column4", array, elements, column,
              (size_t)width, 0, rank);
      MPI_Type_free(&column);
      free(array);
    }
  }

  /* 3-D x-faces: the plane x = 1 goes to the other rank's x = 0. */
  for (int n = 32; (size_t)n * n * 8 <= max_bytes && n <= 512; n *= 2) {
    const size_t elements = (size_t)n * n * n;
    double* array = malloc(elements * sizeof(double));
    const int sizes[3] = {n, n, n};
    const int subsizes[3] = {n, n, 1};
    const int starts[3] = {0, 0, 0};
    MPI_Datatype face;
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C,
                             MPI_DOUBLE, &face);
    MPI_Type_commit(&face);
    Measure("face3d", array, elements, face, 1, 0, rank);
    MPI_Type_free(&face);
    free(array);
  }
  MPI_Finalize();
  return 0;
}
