/* MPI_Comm_join: ranks pair up (0 with 1, 2 with 3, ...); the even one
 * listens on a TCP socket, tells the odd one its port over MPI_COMM_WORLD,
 * and the odd one connects; both hand their end of the connection to
 * MPI_Comm_join, then data moves both ways over the intercommunicator it
 * makes and through its merge. An odd rank out only checks that join
 * refuses a bad descriptor. */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_util.h"

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));

  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Comm none = MPI_COMM_WORLD;
  int rc = MPI_Comm_join(-1, &none);
  int error_class = -1;
  MPI_Error_class(rc, &error_class);
  CHECK(error_class == MPI_ERR_ARG, "join(-1) gave class %d", error_class);
  CHECK(none == MPI_COMM_NULL, "a failed join left a communicator");
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

  const int partner = rank % 2 == 0 ? rank + 1 : rank - 1;
  if (partner < size) {
    int fd = -1;
    if (rank % 2 == 0) {
      int listener = socket(AF_INET, SOCK_STREAM, 0);
      struct sockaddr_in address;
      memset(&address, 0, sizeof address);
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      socklen_t length = sizeof address;
      CHECK(
          listener >= 0 &&
              bind(listener, (struct sockaddr*)&address, sizeof address) == 0 &&
              listen(listener, 1) == 0 &&
              getsockname(listener, (struct sockaddr*)&address, &length) == 0,
          "cannot listen");
      int port = ntohs(address.sin_port);
      MPI_CHECK(MPI_Send(&port, 1, MPI_INT, partner, 0, MPI_COMM_WORLD));
      fd = accept(listener, NULL, NULL);
      CHECK(fd >= 0, "accept failed");
      close(listener);
    } else {
      int port = 0;
      MPI_CHECK(MPI_Recv(&port, 1, MPI_INT, partner, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
      fd = socket(AF_INET, SOCK_STREAM, 0);
      struct sockaddr_in address;
      memset(&address, 0, sizeof address);
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons((uint16_t)port);
      CHECK(fd >= 0 &&
                connect(fd, (struct sockaddr*)&address, sizeof address) == 0,
            "connect failed");
    }
    MPI_Comm inter;
    MPI_CHECK(MPI_Comm_join(fd, &inter));
    int is_inter = 0, local_size = 0, remote_size = 0;
    MPI_CHECK(MPI_Comm_test_inter(inter, &is_inter));
    MPI_CHECK(MPI_Comm_size(inter, &local_size));
    MPI_CHECK(MPI_Comm_remote_size(inter, &remote_size));
    CHECK(is_inter && local_size == 1 && remote_size == 1,
          "join made inter=%d local %d remote %d", is_inter, local_size,
          remote_size);
    /* A message of 100000 doubles each way, every value checked. */
    enum { kCount = 100000 };
    static double out[kCount], in[kCount];
    for (int i = 0; i < kCount; ++i) {
      out[i] = rank * 1e6 + i;
      in[i] = -1;
    }
    MPI_CHECK(MPI_Sendrecv(out, kCount, MPI_DOUBLE, 0, 4, in, kCount,
                           MPI_DOUBLE, 0, 4, inter, MPI_STATUS_IGNORE));
    for (int i = 0; i < kCount; ++i) {
      CHECK(in[i] == partner * 1e6 + i, "element %d is %g", i, in[i]);
    }
    MPI_Comm merged;
    MPI_CHECK(MPI_Intercomm_merge(inter, rank % 2, &merged));
    int merged_rank = -1, sum = 0;
    MPI_CHECK(MPI_Comm_rank(merged, &merged_rank));
    CHECK(merged_rank == rank % 2, "merged rank %d", merged_rank);
    MPI_CHECK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == rank + partner, "merged allreduce gave %d", sum);
    MPI_CHECK(MPI_Comm_free(&merged));
    MPI_CHECK(MPI_Comm_disconnect(&inter));
    /* The socket stays the caller's. */
    CHECK(close(fd) == 0, "join closed the caller's socket");
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) printf("join: %d ranks: ok\n", size);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
