// Collectives from several threads at once, each thread on its own
// MPI_Comm_dup of COMM_WORLD (MPI_THREAD_MULTIPLE): Allreduce, Bcast,
// Allgather, Alltoall and Reduce, every result checked against a reference
// each thread computes itself.
//
//   usage: collectives_threads [THREADS] [ITERATIONS]
#include <mpi.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

int Value(int rank, int thread, int iteration, int i) {
  return (rank * 7919 + thread * 104729 + iteration * 31 + i * 17) % 1009 - 500;
}

void RunThread(MPI_Comm comm, int thread, int iterations, int rank, int size) {
  constexpr int kCount = 257;
  std::vector<int> in(kCount), out(kCount),
      all(static_cast<size_t>(kCount) * size),
      a2a_in(static_cast<size_t>(size) * 3),
      a2a_out(static_cast<size_t>(size) * 3);
  for (int it = 0; it < iterations; ++it) {
    for (int i = 0; i < kCount; ++i) in[i] = Value(rank, thread, it, i);
    MPI_CHECK(
        MPI_Allreduce(in.data(), out.data(), kCount, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < kCount; ++i) {
      int sum = 0;
      for (int r = 0; r < size; ++r) sum += Value(r, thread, it, i);
      CHECK(out[i] == sum,
            "thread %d iteration %d: Allreduce element %d is %d, expected %d",
            thread, it, i, out[i], sum);
    }
    int root = (thread + it) % size;
    std::vector<int> b(kCount);
    for (int i = 0; i < kCount; ++i)
      b[i] = rank == root ? Value(root, thread, it, i) : 0;
    MPI_CHECK(MPI_Bcast(b.data(), kCount, MPI_INT, root, comm));
    for (int i = 0; i < kCount; ++i)
      CHECK(b[i] == Value(root, thread, it, i),
            "thread %d iteration %d: Bcast element %d wrong", thread, it, i);
    MPI_CHECK(MPI_Allgather(in.data(), kCount, MPI_INT, all.data(), kCount,
                            MPI_INT, comm));
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < kCount; ++i)
        CHECK(
            all[static_cast<size_t>(r) * kCount + i] == Value(r, thread, it, i),
            "thread %d iteration %d: Allgather block %d element %d wrong",
            thread, it, r, i);
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < 3; ++i)
        a2a_in[r * 3 + i] = Value(rank, thread, it + r, i);
    MPI_CHECK(MPI_Alltoall(a2a_in.data(), 3, MPI_INT, a2a_out.data(), 3,
                           MPI_INT, comm));
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < 3; ++i)
        CHECK(a2a_out[r * 3 + i] == Value(r, thread, it + rank, i),
              "thread %d iteration %d: Alltoall from %d element %d wrong",
              thread, it, r, i);
    MPI_CHECK(MPI_Reduce(in.data(), out.data(), kCount, MPI_INT, MPI_MAX, root,
                         comm));
    if (rank == root)
      for (int i = 0; i < kCount; ++i) {
        int max = Value(0, thread, it, i);
        for (int r = 1; r < size; ++r)
          max = Value(r, thread, it, i) > max ? Value(r, thread, it, i) : max;
        CHECK(out[i] == max,
              "thread %d iteration %d: Reduce MAX element %d wrong", thread, it,
              i);
      }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
  int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  int iterations = argc > 2 ? std::atoi(argv[2]) : 50;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Duplicated in the same order on every rank (from the main thread), so
  // thread t of every rank uses the same communicator.
  std::vector<MPI_Comm> comms(threads);
  for (auto& comm : comms) MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back(RunThread, comms[t], t, iterations, rank, size);
  for (auto& worker : workers) worker.join();
  for (auto& comm : comms) MPI_CHECK(MPI_Comm_free(&comm));
  test_report_pass("collectives_threads", MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
