// Many threads per rank under MPI_THREAD_MULTIPLE, written in C++17 to
// prove mpi.h is C++-clean.  Every rank runs the same threads; thread t of
// a rank talks to thread t of its ring neighbours:
//   1. one shared communicator, each thread on its own tag;
//   2. each thread on its own Comm_dup'ed communicator, all on tag 0;
//   3. wildcard receives (ANY_SOURCE, ANY_TAG) from all threads at once on
//      one communicator: every message must arrive exactly once.
// Each message carries (sender rank, sender thread, sequence) and the
// pattern for that triple; every byte is verified.
//
// Usage: threads [threads-per-rank] [messages-per-thread]
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

struct Header {
  int rank;
  int thread;
  int sequence;
};

constexpr int kBigEvery = 50;  // every 50th message is large (rendezvous)
constexpr size_t kSmallBytes = 96;
constexpr size_t kBigBytes = 64 * 1024 + 11;

size_t MessageBytes(int sequence) {
  return sequence % kBigEvery == kBigEvery - 1 ? kBigBytes
                                               : kSmallBytes + sequence % 7;
}

int PatternKey(int thread, int sequence) { return thread * 100000 + sequence; }

std::vector<unsigned char> BuildMessage(int rank, int thread, int sequence) {
  std::vector<unsigned char> message(MessageBytes(sequence));
  test_fill(message.data(), message.size(), rank, PatternKey(thread, sequence));
  const Header header{rank, thread, sequence};
  std::memcpy(message.data(), &header, sizeof header);
  return message;
}

// Checks a received message against its header and returns the header.
Header CheckMessage(std::vector<unsigned char>& buffer,
                    const MPI_Status& status, int expected_source,
                    const char* what) {
  Header header;
  std::memcpy(&header, buffer.data(), sizeof header);
  CHECK(header.rank == expected_source && status.MPI_SOURCE == expected_source,
        "%s: message says rank %d, status source %d, expected %d", what,
        header.rank, status.MPI_SOURCE, expected_source);
  int count = -1;
  MPI_Get_count(&status, MPI_BYTE, &count);
  CHECK(header.sequence >= 0 &&
            count == static_cast<int>(MessageBytes(header.sequence)),
        "%s: message #%d has %d bytes, expected %zu", what, header.sequence,
        count, MessageBytes(header.sequence));
  // The header overwrote the first pattern bytes; restore them to check all.
  for (size_t i = 0; i < sizeof header; ++i)
    buffer[i] = test_pattern_byte(
        header.rank, PatternKey(header.thread, header.sequence), i);
  CHECK_PATTERN(buffer.data(), count, header.rank,
                PatternKey(header.thread, header.sequence), what);
  return header;
}

// Thread `thread` sends `messages` messages right and receives as many from
// the left on (comm, tag), checking they arrive in send order.
void OrderedExchange(MPI_Comm comm, int tag, int thread, int messages,
                     const char* what) {
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  // A bounded window of outstanding sends keeps memory small.
  constexpr int kWindow = 16;
  std::vector<std::vector<unsigned char>> outgoing(kWindow);
  std::vector<MPI_Request> sends(kWindow, MPI_REQUEST_NULL);
  std::vector<unsigned char> incoming(kBigBytes);
  for (int i = 0; i < messages; ++i) {
    const int slot = i % kWindow;
    MPI_CHECK(MPI_Wait(&sends[slot], MPI_STATUS_IGNORE));
    outgoing[slot] = BuildMessage(rank, thread, i);
    MPI_CHECK(MPI_Isend(outgoing[slot].data(),
                        static_cast<int>(outgoing[slot].size()), MPI_BYTE,
                        right, tag, comm, &sends[slot]));
    MPI_Status status;
    MPI_CHECK(MPI_Recv(incoming.data(), static_cast<int>(incoming.size()),
                       MPI_BYTE, left, tag, comm, &status));
    CHECK(status.MPI_TAG == tag, "%s: thread %d got tag %d, expected %d", what,
          thread, status.MPI_TAG, tag);
    const Header header = CheckMessage(incoming, status, left, what);
    CHECK(
        header.thread == thread && header.sequence == i,
        "%s: thread %d expected message #%d of thread %d, got #%d of thread %d",
        what, thread, i, thread, header.sequence, header.thread);
  }
  MPI_CHECK(MPI_Waitall(kWindow, sends.data(), MPI_STATUSES_IGNORE));
}

// Every thread sends `messages` messages right with its own tag, then
// receives `messages` messages with wildcards, from whichever thread.
void WildcardExchange(MPI_Comm comm, int thread, int messages,
                      std::vector<std::vector<std::atomic<int>>>& seen) {
  int rank, size;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  std::vector<std::vector<unsigned char>> outgoing(messages);
  std::vector<MPI_Request> sends(messages);
  for (int i = 0; i < messages; ++i) {
    outgoing[i] = BuildMessage(rank, thread, i);
    MPI_CHECK(MPI_Isend(outgoing[i].data(),
                        static_cast<int>(outgoing[i].size()), MPI_BYTE, right,
                        thread, comm, &sends[i]));
  }
  std::vector<unsigned char> incoming(kBigBytes);
  for (int i = 0; i < messages; ++i) {
    MPI_Status status;
    MPI_CHECK(MPI_Recv(incoming.data(), static_cast<int>(incoming.size()),
                       MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &status));
    const Header header =
        CheckMessage(incoming, status, left, "wildcard receive");
    CHECK(status.MPI_TAG == header.thread,
          "wildcard receive: tag %d but message from thread %d", status.MPI_TAG,
          header.thread);
    CHECK(header.thread >= 0 && header.thread < static_cast<int>(seen.size()) &&
              header.sequence < messages,
          "wildcard receive: bad header thread %d sequence %d", header.thread,
          header.sequence);
    const int previous = seen[header.thread][header.sequence].fetch_add(1);
    CHECK(previous == 0,
          "wildcard receive: message #%d of thread %d received twice",
          header.sequence, header.thread);
  }
  MPI_CHECK(MPI_Waitall(messages, sends.data(), MPI_STATUSES_IGNORE));
}

template <typename Body>
void RunThreads(int threads, Body body) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(body, t);
  for (auto& worker : workers) worker.join();
}

}  // namespace

int main(int argc, char** argv) {
  int provided = -1;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE,
        "Init_thread provided %d, expected MPI_THREAD_MULTIPLE %d", provided,
        MPI_THREAD_MULTIPLE);
  const int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  const int messages = argc > 2 ? std::atoi(argv[2]) : 400;
  CHECK(threads > 0 && messages > 0, "bad arguments: %d threads, %d messages",
        threads, messages);

  // 1. One communicator, one tag per thread.
  MPI_Comm shared;
  MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &shared));
  RunThreads(threads, [&](int t) {
    OrderedExchange(shared, t, t, messages, "shared comm");
  });

  // 2. One communicator per thread (created in the same order everywhere,
  //    since Comm_dup is collective), all on the same tag.
  std::vector<MPI_Comm> own(threads);
  for (auto& comm : own) MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  RunThreads(threads, [&](int t) {
    OrderedExchange(own[t], 0, t, messages, "own comm");
  });

  // 3. Concurrent wildcard receives.
  std::vector<std::vector<std::atomic<int>>> seen(threads);
  for (auto& per_thread : seen)
    per_thread = std::vector<std::atomic<int>>(messages);
  RunThreads(threads,
             [&](int t) { WildcardExchange(shared, t, messages, seen); });
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < messages; ++i)
      CHECK(seen[t][i].load() == 1,
            "wildcard receives got message #%d of thread %d %d times", i, t,
            seen[t][i].load());

  for (auto& comm : own) MPI_CHECK(MPI_Comm_free(&comm));
  MPI_CHECK(MPI_Comm_free(&shared));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  test_report_pass("threads", MPI_COMM_WORLD);
  MPI_CHECK(MPI_Finalize());
  return 0;
}
