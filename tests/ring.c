/* A token travels around MPI_COMM_WORLD several laps.  Each hop appends
 * nothing but rewrites the payload with a pattern derived from the hop's
 * sender, so a receiver can tell the message came from its left neighbour
 * and was not reordered or stale.  Payload sizes grow per lap to cross the
 * eager/rendezvous boundary.  Works at 1 rank (a rank sends to itself). */
#include "test_util.h"

enum { kLaps = 6, kRingTag = 7 };

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  static const size_t kLapBytes[kLaps] = {0, 1, 1000, 65537, 1 << 20, 3 << 20};

  for (int lap = 0; lap < kLaps; ++lap) {
    const size_t bytes = kLapBytes[lap];
    const int tag = kRingTag + lap;
    unsigned char* buffer = (unsigned char*)test_malloc(bytes);
    MPI_Status status;
    MPI_Request send_request = MPI_REQUEST_NULL;
    if (rank == 0) {
      test_fill(buffer, bytes, rank, tag);
      /* Nonblocking so a 1-rank ring (send to self) cannot deadlock. */
      MPI_CHECK(MPI_Isend(buffer, (int)bytes, MPI_BYTE, right, tag,
                          MPI_COMM_WORLD, &send_request));
      unsigned char* incoming = (unsigned char*)test_malloc(bytes);
      MPI_CHECK(MPI_Recv(incoming, (int)bytes, MPI_BYTE, left, tag,
                         MPI_COMM_WORLD, &status));
      MPI_CHECK(MPI_Wait(&send_request, MPI_STATUS_IGNORE));
      CHECK_STATUS(status, left, tag, MPI_BYTE, (int)bytes, "ring token at rank 0");
      CHECK_PATTERN(incoming, bytes, left, tag, "ring token back at rank 0");
      free(incoming);
    } else {
      MPI_CHECK(MPI_Recv(buffer, (int)bytes, MPI_BYTE, left, tag,
                         MPI_COMM_WORLD, &status));
      CHECK_STATUS(status, left, tag, MPI_BYTE, (int)bytes, "ring token");
      CHECK_PATTERN(buffer, bytes, left, tag, "ring token");
      test_fill(buffer, bytes, rank, tag);
      MPI_CHECK(MPI_Send(buffer, (int)bytes, MPI_BYTE, right, tag, MPI_COMM_WORLD));
    }
    free(buffer);
  }

  /* A counter of typed ints, incremented at each hop, for many short laps:
   * proves the order of many small messages on one tag. */
  const int kShortLaps = 200;
  int counter[4] = {0, 0, 0, 0};
  for (int lap = 0; lap < kShortLaps; ++lap) {
    if (rank == 0) {
      int outgoing[4] = {lap * size, lap, -lap, 12345};
      MPI_Request request;
      MPI_CHECK(MPI_Isend(outgoing, 4, MPI_INT, right, 1, MPI_COMM_WORLD, &request));
      MPI_CHECK(MPI_Recv(counter, 4, MPI_INT, left, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
      MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
      CHECK(counter[0] == lap * size + size - 1 &&
                counter[1] == lap && counter[2] == -lap && counter[3] == 12345,
            "short lap %d: got {%d,%d,%d,%d}, expected {%d,%d,%d,12345}", lap,
            counter[0], counter[1], counter[2], counter[3],
            lap * size + size - 1, lap, -lap);
    } else {
      MPI_CHECK(MPI_Recv(counter, 4, MPI_INT, left, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
      CHECK(counter[0] == lap * size + rank - 1 && counter[1] == lap,
            "short lap %d: got counter %d lap %d, expected %d and %d", lap,
            counter[0], counter[1], lap * size + rank - 1, lap);
      counter[0]++;
      MPI_CHECK(MPI_Send(counter, 4, MPI_INT, right, 1, MPI_COMM_WORLD));
    }
  }

  test_report_pass("ring", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
