/* Nodes: what the launcher says about where ranks run, and traffic between
 * every pair whether it shares a node or not.
 *
 *   usage: nodes MIN_NODES
 *
 * Checks, on every rank:
 *   - MPI_Get_processor_name names at least MIN_NODES distinct nodes, and
 *     MPI_COMM_TYPE_SHARED groups exactly the ranks that share a name (so
 *     the pretend nodes of MINIMPI_NODE_SPLIT, or the nodes of a cluster,
 *     show the same in both);
 *   - every ordered pair of ranks (itself included) exchanges messages of
 *     sizes from 0 bytes to 4 MiB (eager and rendezvous, contiguous and a
 *     strided derived datatype) whose bytes are checked one by one, by
 *     nonblocking sends and receives all in flight at once, and an
 *     MPI_ANY_SOURCE receive that takes them in whatever order they come.
 * Run with several ranks per node so that pairs cross nodes and share
 * nodes. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int g_rank, g_size;

static unsigned char pattern(int from, int to, int size_index, size_t i) {
  return (unsigned char)(from * 31 + to * 17 + size_index * 7 + i * 13 + 1);
}

static void check_names(int min_nodes) {
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int length = 0;
  MPI_CHECK(MPI_Get_processor_name(name, &length));
  CHECK(length > 0 && (size_t)length == strlen(name),
        "processor name \"%s\" has length %d", name, length);
  char* names = calloc((size_t)g_size, MPI_MAX_PROCESSOR_NAME);
  CHECK(names != NULL, "out of memory");
  MPI_CHECK(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names,
                          MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD));
  int distinct = 0, mates = 0;
  for (int r = 0; r < g_size; ++r) {
    const char* other = names + (size_t)r * MPI_MAX_PROCESSOR_NAME;
    int seen = 0;
    for (int q = 0; q < r && !seen; ++q) {
      seen = strcmp(names + (size_t)q * MPI_MAX_PROCESSOR_NAME, other) == 0;
    }
    distinct += !seen;
    mates += strcmp(other, name) == 0;
  }
  CHECK(distinct >= min_nodes,
        "%d distinct processor names, expected at least %d nodes", distinct,
        min_nodes);
  MPI_Comm shared;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                                MPI_INFO_NULL, &shared));
  int shared_size = 0;
  MPI_CHECK(MPI_Comm_size(shared, &shared_size));
  CHECK(shared_size == mates,
        "MPI_COMM_TYPE_SHARED has %d ranks, but %d share the name \"%s\"",
        shared_size, mates, name);
  /* Every member of the shared communicator has my name. */
  char* shared_names = calloc((size_t)shared_size, MPI_MAX_PROCESSOR_NAME);
  CHECK(shared_names != NULL, "out of memory");
  MPI_CHECK(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, shared_names,
                          MPI_MAX_PROCESSOR_NAME, MPI_CHAR, shared));
  for (int r = 0; r < shared_size; ++r) {
    CHECK(strcmp(shared_names + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0,
          "shared communicator rank %d is on \"%s\", not \"%s\"", r,
          shared_names + (size_t)r * MPI_MAX_PROCESSOR_NAME, name);
  }
  free(shared_names);
  MPI_CHECK(MPI_Comm_free(&shared));
  if (g_rank == 0) {
    printf("nodes: %d ranks on %d nodes\n", g_size, distinct);
  }
  free(names);
}

/* Every ordered pair at once: contiguous messages of each size. */
static void exchange_all_pairs(void) {
  static const size_t kSizes[] = {0,    1,     8,       1000,   8192,
                                  8193, 65536, 1 << 20, 4 << 20};
  enum { kCount = sizeof kSizes / sizeof kSizes[0] };
  for (int s = 0; s < kCount; ++s) {
    const size_t bytes = kSizes[s];
    unsigned char** out = malloc(sizeof(unsigned char*) * (size_t)g_size);
    unsigned char** in = malloc(sizeof(unsigned char*) * (size_t)g_size);
    MPI_Request* requests = malloc(sizeof(MPI_Request) * 2 * (size_t)g_size);
    CHECK(out && in && requests, "out of memory");
    for (int peer = 0; peer < g_size; ++peer) {
      out[peer] = malloc(bytes + 1);
      in[peer] = malloc(bytes + 1);
      CHECK(out[peer] && in[peer], "out of memory");
      for (size_t i = 0; i < bytes; ++i)
        out[peer][i] = pattern(g_rank, peer, s, i);
      memset(in[peer], 0xEE, bytes + 1);
      MPI_CHECK(MPI_Irecv(in[peer], (int)bytes, MPI_BYTE, peer, s,
                          MPI_COMM_WORLD, &requests[peer]));
    }
    for (int k = 0; k < g_size; ++k) {
      const int peer = (g_rank + k) % g_size;
      MPI_CHECK(MPI_Isend(out[peer], (int)bytes, MPI_BYTE, peer, s,
                          MPI_COMM_WORLD, &requests[g_size + peer]));
    }
    MPI_CHECK(MPI_Waitall(2 * g_size, requests, MPI_STATUSES_IGNORE));
    for (int peer = 0; peer < g_size; ++peer) {
      for (size_t i = 0; i < bytes; ++i) {
        CHECK(in[peer][i] == pattern(peer, g_rank, s, i),
              "%zu bytes from rank %d: byte %zu is %d, expected %d", bytes,
              peer, i, in[peer][i], pattern(peer, g_rank, s, i));
      }
      CHECK(in[peer][bytes] == 0xEE, "%zu bytes from rank %d overran", bytes,
            peer);
      free(out[peer]);
      free(in[peer]);
    }
    free(out);
    free(in);
    free(requests);
  }
}

/* A strided vector of doubles to every rank, received with ANY_SOURCE. */
static void exchange_strided_any_source(void) {
  enum { kBlocks = 20000, kStride = 3 };
  MPI_Datatype every_third;
  MPI_CHECK(MPI_Type_vector(kBlocks, 1, kStride, MPI_DOUBLE, &every_third));
  MPI_CHECK(MPI_Type_commit(&every_third));
  double* out = malloc(sizeof(double) * kBlocks * kStride);
  double* in = malloc(sizeof(double) * kBlocks * kStride);
  CHECK(out && in, "out of memory");
  for (int i = 0; i < kBlocks * kStride; ++i) out[i] = g_rank * 1e6 + i;
  MPI_Request* sends = malloc(sizeof(MPI_Request) * (size_t)g_size);
  CHECK(sends != NULL, "out of memory");
  for (int peer = 0; peer < g_size; ++peer) {
    MPI_CHECK(
        MPI_Isend(out, 1, every_third, peer, 99, MPI_COMM_WORLD, &sends[peer]));
  }
  int* seen = calloc((size_t)g_size, sizeof(int));
  CHECK(seen != NULL, "out of memory");
  for (int k = 0; k < g_size; ++k) {
    for (int i = 0; i < kBlocks * kStride; ++i) in[i] = -1.0;
    MPI_Status status;
    MPI_CHECK(MPI_Recv(in, 1, every_third, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD,
                       &status));
    const int from = status.MPI_SOURCE;
    CHECK(from >= 0 && from < g_size && !seen[from],
          "ANY_SOURCE gave source %d twice or out of range", from);
    seen[from] = 1;
    for (int i = 0; i < kBlocks * kStride; ++i) {
      const double expected = i % kStride == 0 ? from * 1e6 + i : -1.0;
      CHECK(in[i] == expected,
            "strided data from rank %d: element %d is %g, "
            "expected %g",
            from, i, in[i], expected);
    }
  }
  MPI_CHECK(MPI_Waitall(g_size, sends, MPI_STATUSES_IGNORE));
  MPI_CHECK(MPI_Type_free(&every_third));
  free(seen);
  free(sends);
  free(out);
  free(in);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  CHECK(argc == 2, "usage: nodes MIN_NODES");
  check_names(atoi(argv[1]));
  exchange_all_pairs();
  exchange_strided_any_source();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) printf("nodes ok\n");
  MPI_Finalize();
  return 0;
}
