/* The predefined pair types (MPI_DOUBLE_INT, ...) are not contiguous: a
 * C struct {double; int;} has 4 bytes of padding that MPI never moves. So
 * sending arrays of them exercises every non-contiguous path of p2p
 * without a single derived-type constructor: eager messages packed into the
 * ring and unpacked, rendezvous messages read in place with gathered reads,
 * in both directions between pairs and their packed bytes (12 per pair),
 * with the padding bytes of the receive buffer left untouched. Run it with
 * small eager limits and tiny rings to force every protocol path.
 * Rank 0 sends to rank 1. */
#include "test_util.h"

typedef struct {
  double value;
  int index;
} DoubleInt;

static void fill_pairs(DoubleInt* pairs, int n, int salt) {
  memset(pairs, 0, (size_t)n * sizeof(DoubleInt));
  for (int k = 0; k < n; ++k) {
    pairs[k].value = k * 1.5 + salt;
    pairs[k].index = -k - salt;
  }
}

static void check_pairs(const DoubleInt* pairs, int n, int salt,
                        const char* what) {
  for (int k = 0; k < n; ++k) {
    CHECK(pairs[k].value == k * 1.5 + salt && pairs[k].index == -k - salt,
          "%s: pair %d of %d is (%g, %d)", what, k, n, pairs[k].value,
          pairs[k].index);
    const unsigned char* padding = (const unsigned char*)&pairs[k] + 12;
    for (int b = 0; b < 4; ++b) {
      CHECK(padding[b] == 0xEE, "%s: padding of pair %d of %d was written",
            what, k, n);
    }
  }
}

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int counts[] = {1, 3, 100, 683, 5000, 100000};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const int n = counts[c];
    const int tag = (int)c * 10;
    DoubleInt* pairs = (DoubleInt*)test_malloc((size_t)n * sizeof(DoubleInt));
    unsigned char* packed = (unsigned char*)test_malloc((size_t)n * 12);
    if (rank == 0 && size > 1) {
      fill_pairs(pairs, n, (int)c);
      MPI_CHECK(MPI_Send(pairs, n, MPI_DOUBLE_INT, 1, tag, MPI_COMM_WORLD));
      MPI_Request request;
      MPI_CHECK(MPI_Isend(pairs, n, MPI_DOUBLE_INT, 1, tag + 1, MPI_COMM_WORLD,
                          &request));
      MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
      for (int k = 0; k < n; ++k) {
        memcpy(packed + 12 * (size_t)k, &pairs[k].value, 8);
        memcpy(packed + 12 * (size_t)k + 8, &pairs[k].index, 4);
      }
      MPI_CHECK(MPI_Send(packed, n * 12, MPI_BYTE, 1, tag + 2, MPI_COMM_WORLD));
    } else if (rank == 1) {
      MPI_Status status;
      int count;
      memset(pairs, 0xEE, (size_t)n * sizeof(DoubleInt));
      MPI_CHECK(MPI_Recv(pairs, n, MPI_DOUBLE_INT, 0, tag, MPI_COMM_WORLD,
                         &status));
      MPI_CHECK(MPI_Get_count(&status, MPI_DOUBLE_INT, &count));
      CHECK(count == n, "count %d, expected %d", count, n);
      check_pairs(pairs, n, (int)c, "pairs into pairs");
      /* Pairs received as their packed bytes. */
      MPI_CHECK(MPI_Recv(packed, n * 12, MPI_BYTE, 0, tag + 1, MPI_COMM_WORLD,
                         &status));
      MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &count));
      CHECK(count == n * 12, "byte count %d, expected %d", count, n * 12);
      for (int k = 0; k < n; ++k) {
        double value;
        int index;
        memcpy(&value, packed + 12 * (size_t)k, 8);
        memcpy(&index, packed + 12 * (size_t)k + 8, 4);
        CHECK(value == k * 1.5 + (int)c && index == -k - (int)c,
              "pairs into bytes: pair %d of %d is (%g, %d)", k, n, value,
              index);
      }
      /* Packed bytes received as pairs. */
      memset(pairs, 0xEE, (size_t)n * sizeof(DoubleInt));
      MPI_CHECK(MPI_Recv(pairs, n, MPI_DOUBLE_INT, 0, tag + 2, MPI_COMM_WORLD,
                         &status));
      check_pairs(pairs, n, (int)c, "bytes into pairs");
    }
    free(pairs);
    free(packed);
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("pair_types", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
