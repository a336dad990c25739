// A nonblocking call never blocks, and no call waits holding a lock another
// thread or VCI needs. Correct programs that hung when a send spun on a full
// shared-memory ring while holding its VCI's lock:
//
//   crossed    every rank duplicates MPI_COMM_WORLD twice, sends 40
//              MPI_Isends to its partner on one duplicate and posts the 40
//              matching MPI_Irecvs on the other, then MPI_Waitall (the
//              duplicates use different VCIs, so each rank's sends only
//              drain if the other rank progresses a VCI it is not waiting
//              on); for eager, large eager and rendezvous sizes.
//   computing  rank 0 posts 10,000 MPI_Isends to rank 1 while rank 1 makes
//              no MPI call at all: rank 1 waits for a file that rank 0
//              creates only after every MPI_Isend has returned. A blocking
//              MPI_Isend deadlocks here (rank 1 reports it after 60 s).
//   headon     both ranks of each pair MPI_Send eager messages to each other
//              before either receives: the sends must complete by draining
//              each other's rings into the unexpected queue.
//   threads    several threads per rank, each on its own communicator (and
//              some sharing one), exchange bursts of random sizes with
//              Isend/Irecv and with blocking Send/Recv.
//
// Every byte is checked. Run it with tiny rings (MINIMPI_SHM_RING_BYTES=8384)
// and one or several VCIs; the test's timeout is the hang guard.
//
// Usage: send_progress [crossed|computing|headon|threads|all] [threads]
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

int WorldRank() {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int WorldSize() {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Ranks pair up 0-1, 2-3, ...; an odd last rank talks to itself.
int Partner(int rank, int size) {
  const int partner = rank ^ 1;
  return partner < size ? partner : rank;
}

void Crossed(size_t bytes) {
  const int rank = WorldRank();
  const int partner = Partner(rank, WorldSize());
  MPI_Comm first, second;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &first));
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &second));
  // The lower rank of a pair sends on `first` and receives on `second`,
  // the higher one the other way round; a rank alone does both on `first`.
  const bool lower = rank <= partner;
  MPI_Comm send_comm = lower ? first : second;
  MPI_Comm receive_comm = lower ? second : first;
  if (partner == rank) receive_comm = send_comm;
  constexpr int kMessages = 40;
  std::vector<std::vector<unsigned char>> out(kMessages), in(kMessages);
  std::vector<MPI_Request> requests(2 * kMessages);
  for (int i = 0; i < kMessages; ++i) {
    out[i].resize(bytes + i);
    in[i].assign(bytes + i, 0);
    test_fill(out[i].data(), out[i].size(), rank, i);
    MPI_CHECK(MPI_Isend(out[i].data(), static_cast<int>(out[i].size()),
                        MPI_BYTE, partner, i, send_comm, &requests[i]));
  }
  for (int i = 0; i < kMessages; ++i) {
    MPI_CHECK(MPI_Irecv(in[i].data(), static_cast<int>(in[i].size()), MPI_BYTE,
                        partner, i, receive_comm, &requests[kMessages + i]));
  }
  std::vector<MPI_Status> statuses(2 * kMessages);
  MPI_CHECK(MPI_Waitall(2 * kMessages, requests.data(), statuses.data()));
  for (int i = 0; i < kMessages; ++i) {
    CHECK_STATUS(statuses[kMessages + i], partner, i, MPI_BYTE,
                 static_cast<int>(bytes + i), "crossed");
    CHECK_PATTERN(in[i].data(), in[i].size(), partner, i, "crossed");
  }
  MPI_CHECK(MPI_Comm_free(&first));
  MPI_CHECK(MPI_Comm_free(&second));
}

// The name of the file rank 0 creates once all its MPI_Isends returned;
// rank 0 picks it and tells rank 1 before the test starts.
std::string SignalFile() {
  char name[256] = {};
  if (WorldRank() == 0) {
    const char* directory = std::getenv("TEST_TMPDIR");
    if (directory == nullptr) directory = std::getenv("TMPDIR");
    if (directory == nullptr) directory = "/tmp";
    std::snprintf(
        name, sizeof name, "%s/send_progress.%d.%ld", directory,
        static_cast<int>(getpid()),
        static_cast<long>(
            std::chrono::steady_clock::now().time_since_epoch().count() %
            1000000007));
  }
  MPI_CHECK(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD));
  return name;
}

void Computing() {
  const int rank = WorldRank();
  if (WorldSize() < 2) return;
  const std::string signal = SignalFile();
  constexpr int kMessages = 10000;
  constexpr int kTag = 7;
  if (rank == 0) {
    std::vector<int> values(kMessages);
    std::vector<MPI_Request> requests(kMessages);
    for (int i = 0; i < kMessages; ++i) {
      values[i] = i * 3 + 1;
      MPI_CHECK(MPI_Isend(&values[i], 1, MPI_INT, 1, kTag, MPI_COMM_WORLD,
                          &requests[i]));
    }
    // Every MPI_Isend returned while rank 1 made no MPI call: tell it.
    FILE* file = std::fopen(signal.c_str(), "w");
    CHECK(file != nullptr, "cannot create %s", signal.c_str());
    std::fclose(file);
    MPI_CHECK(MPI_Waitall(kMessages, requests.data(), MPI_STATUSES_IGNORE));
  } else if (rank == 1) {
    // "Computing": no MPI call until rank 0's sends have all returned.
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (access(signal.c_str(), F_OK) != 0) {
      CHECK(std::chrono::steady_clock::now() < deadline,
            "rank 0's MPI_Isends did not all return within 60 s while this "
            "rank made no MPI call: MPI_Isend blocks");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::remove(signal.c_str());
    for (int i = 0; i < kMessages; ++i) {
      int value = -1;
      MPI_CHECK(MPI_Recv(&value, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
      CHECK(value == i * 3 + 1, "message %d carried %d, expected %d", i, value,
            i * 3 + 1);
    }
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

void HeadOn() {
  const int rank = WorldRank();
  const int partner = Partner(rank, WorldSize());
  if (partner == rank) return;
  constexpr int kMessages = 200;
  for (size_t bytes : {size_t{8}, size_t{1000}, size_t{6000}}) {
    std::vector<unsigned char> out(bytes), in(bytes);
    for (int i = 0; i < kMessages; ++i) {
      test_fill(out.data(), bytes, rank, i);
      MPI_CHECK(MPI_Send(out.data(), static_cast<int>(bytes), MPI_BYTE, partner,
                         i, MPI_COMM_WORLD));
    }
    for (int i = 0; i < kMessages; ++i) {
      MPI_Status status;
      MPI_CHECK(MPI_Recv(in.data(), static_cast<int>(bytes), MPI_BYTE, partner,
                         i, MPI_COMM_WORLD, &status));
      CHECK_STATUS(status, partner, i, MPI_BYTE, static_cast<int>(bytes),
                   "headon");
      CHECK_PATTERN(in.data(), bytes, partner, i, "headon");
    }
  }
}

// One thread's traffic with the same thread of the partner rank.
void ThreadTraffic(MPI_Comm comm, int thread, int rounds) {
  const int rank = WorldRank();
  const int partner = Partner(rank, WorldSize());
  // Both sides draw the same sizes: the generator is seeded by the pair.
  std::mt19937 random(1234u + static_cast<unsigned>(thread) * 77u +
                      static_cast<unsigned>(std::min(rank, partner)));
  std::uniform_int_distribution<int> burst_of(1, 12);
  std::uniform_int_distribution<int> size_class(0, 9);
  auto draw_bytes = [&] {
    const int c = size_class(random);
    if (c < 6) return size_t(random() % 256);          // small eager
    if (c < 9) return size_t(1000 + random() % 7000);  // large eager
    return size_t(10000 + random() % 60000);           // rendezvous
  };
  for (int round = 0; round < rounds; ++round) {
    const int burst = burst_of(random);
    std::vector<size_t> sizes(burst);
    for (size_t& bytes : sizes) bytes = draw_bytes();
    const int tag_base = thread * 1000000 + round * 16;
    std::vector<std::vector<unsigned char>> out(burst), in(burst);
    std::vector<MPI_Request> requests;
    const bool blocking_round = round % 3 == 2;
    for (int i = 0; i < burst; ++i) {
      out[i].resize(sizes[i]);
      in[i].assign(sizes[i], 0);
      test_fill(out[i].data(), sizes[i], rank, tag_base + i);
    }
    if (blocking_round && partner != rank) {
      // Eager sizes only in blocking rounds: two blocking rendezvous sends
      // head-on would deadlock in any MPI.
      for (int i = 0; i < burst; ++i) {
        const int bytes = static_cast<int>(std::min<size_t>(sizes[i], 4000));
        MPI_CHECK(MPI_Send(out[i].data(), bytes, MPI_BYTE, partner,
                           tag_base + i, comm));
      }
      for (int i = 0; i < burst; ++i) {
        const int bytes = static_cast<int>(std::min<size_t>(sizes[i], 4000));
        MPI_Status status;
        MPI_CHECK(MPI_Recv(in[i].data(), bytes, MPI_BYTE, partner, tag_base + i,
                           comm, &status));
        CHECK_STATUS(status, partner, tag_base + i, MPI_BYTE, bytes,
                     "threads (blocking)");
        CHECK_PATTERN(in[i].data(), bytes, partner, tag_base + i,
                      "threads (blocking)");
      }
      continue;
    }
    for (int i = 0; i < burst; ++i) {
      requests.emplace_back();
      MPI_CHECK(MPI_Isend(out[i].data(), static_cast<int>(sizes[i]), MPI_BYTE,
                          partner, tag_base + i, comm, &requests.back()));
    }
    for (int i = burst - 1; i >= 0; --i) {  // posted in reverse: unexpected
      requests.emplace_back();
      MPI_CHECK(MPI_Irecv(in[i].data(), static_cast<int>(sizes[i]), MPI_BYTE,
                          partner, tag_base + i, comm, &requests.back()));
    }
    MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                          MPI_STATUSES_IGNORE));
    for (int i = 0; i < burst; ++i) {
      CHECK_PATTERN(in[i].data(), sizes[i], partner, tag_base + i,
                    "threads (nonblocking)");
    }
  }
}

void Threads(int num_threads) {
  // Even threads have a communicator each; odd threads share one.
  std::vector<MPI_Comm> own(num_threads);
  MPI_Comm shared;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &shared));
  for (int t = 0; t < num_threads; ++t) {
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &own[t]));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) {
    threads.emplace_back(ThreadTraffic, t % 2 == 0 ? own[t] : shared, t, 60);
  }
  for (std::thread& thread : threads) thread.join();
  for (MPI_Comm& comm : own) MPI_CHECK(MPI_Comm_free(&comm));
  MPI_CHECK(MPI_Comm_free(&shared));
}

}  // namespace

int main(int argc, char** argv) {
  int provided;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  const std::string what = argc > 1 ? argv[1] : "all";
  const int num_threads = argc > 2 ? std::atoi(argv[2]) : 4;
  if (what == "crossed" || what == "all") {
    for (size_t bytes : {size_t{4}, size_t{5000}, size_t{40000}}) {
      Crossed(bytes);
    }
  }
  if (what == "computing" || what == "all") Computing();
  if (what == "headon" || what == "all") HeadOn();
  if (what == "threads" || what == "all") Threads(num_threads);
  test_report_pass("send_progress", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
