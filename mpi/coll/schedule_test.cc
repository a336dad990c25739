// The schedule engine alone, in one process (the singleton sends to itself):
// rounds run in order, overlapping schedules complete independently, local
// steps need no messages, mismatched sizes surface, and threads driving
// schedules on their own communicators do not race (CI runs this under
// ThreadSanitizer).
#include "mpi/coll/schedule.h"

#include <mpi.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/coll/services.h"

namespace minimpi::coll {
namespace {

class ScheduleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int provided;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  }
  static void TearDownTestSuite() { MPI_Finalize(); }

  static Communicator& Self() { return *ToCommunicator(MPI_COMM_SELF); }
  static p2p::PointToPoint& P2p() { return Services().p2p; }
};

TEST_F(ScheduleTest, RoundsRunInOrder) {
  char first[8] = "abcdefg", hop[8] = {}, copied[8] = {}, last[8] = {};
  auto schedule = std::make_unique<Schedule>(Self(), CollectiveKind::kBcast, 8);
  schedule->Send(first, 8, 0);
  schedule->Receive(hop, 8, 0);
  schedule->EndRound();
  schedule->Copy(hop, copied, 8);  // must see the received bytes
  schedule->EndRound();
  schedule->Send(copied, 8, 0);
  schedule->Receive(last, 8, 0);
  ASSERT_TRUE(Schedule::Run(std::move(schedule), P2p()));
  EXPECT_STREQ(last, "abcdefg");
}

TEST_F(ScheduleTest, ReduceStepsCombineInOrder) {
  std::vector<int> in = {1, 2, 3}, received(3), total = {10, 20, 30};
  auto schedule =
      std::make_unique<Schedule>(Self(), CollectiveKind::kAllreduce, 12);
  schedule->Send(in.data(), 12, 0);
  schedule->Receive(received.data(), 12, 0);
  schedule->EndRound();
  schedule->Reduce(received.data(), total.data(), 3, MPI_INT,
                   LookupOp(MPI_SUM));
  ASSERT_TRUE(Schedule::Run(std::move(schedule), P2p()));
  EXPECT_EQ(total, (std::vector<int>{11, 22, 33}));
}

TEST_F(ScheduleTest, LocalStepsAloneFinishAtStart) {
  int from = 42, to = 0;
  auto schedule = std::make_unique<Schedule>(Self(), CollectiveKind::kBcast, 4);
  schedule->Copy(&from, &to, sizeof(from));
  vci::Request* request = schedule.release()->Start(P2p());
  EXPECT_TRUE(p2p::PointToPoint::IsComplete(request));
  EXPECT_EQ(to, 42);
  P2p().Retire(request);
}

// Schedules started together finish whatever order they are waited in; the
// per-collective tags keep their messages apart.
TEST_F(ScheduleTest, OverlappingSchedulesCompleteIndependently) {
  constexpr int kSchedules = 40;
  constexpr size_t kBytes = 20000;  // rendezvous-sized: several steps each
  std::vector<std::vector<uint8_t>> out(kSchedules), mid(kSchedules),
      back(kSchedules);
  std::vector<vci::Request*> requests;
  for (int s = 0; s < kSchedules; ++s) {
    out[s].assign(kBytes, static_cast<uint8_t>(s * 3 + 1));
    mid[s].assign(kBytes, 0);
    back[s].assign(kBytes, 0);
    auto schedule =
        std::make_unique<Schedule>(Self(), CollectiveKind::kAlltoall, kBytes);
    schedule->Send(out[s].data(), kBytes, 0);
    schedule->Receive(mid[s].data(), kBytes, 0);
    schedule->EndRound();
    schedule->Send(mid[s].data(), kBytes, 0);
    schedule->Receive(back[s].data(), kBytes, 0);
    requests.push_back(schedule.release()->Start(P2p()));
  }
  for (int s = kSchedules - 1; s >= 0; --s) {
    P2p().Wait(requests[s]);
    EXPECT_EQ(requests[s]->status.error, vci::Error::kNone);
    P2p().Retire(requests[s]);
    EXPECT_EQ(back[s], out[s]) << "schedule " << s;
  }
}

TEST_F(ScheduleTest, MismatchedSizesAreReported) {
  char big[16] = "0123456789abcde", small[4] = {};
  auto schedule = std::make_unique<Schedule>(Self(), CollectiveKind::kBcast, 4);
  schedule->Send(big, sizeof(big), 0);
  schedule->Receive(small, sizeof(small), 0);
  EXPECT_FALSE(Schedule::Run(std::move(schedule), P2p()));
  EXPECT_EQ(std::memcmp(small, "0123", 4), 0);
}

TEST_F(ScheduleTest, FreedActiveCollectiveIsReclaimed) {
  int from = 7, to = 0;
  auto schedule = std::make_unique<Schedule>(Self(), CollectiveKind::kBcast, 4);
  schedule->Send(&from, sizeof(from), 0);
  schedule->EndRound();
  schedule->Receive(&to, sizeof(to), 0);
  MPI_Request request = ToHandle(schedule.release()->Start(P2p()));
  MPI_Request_free(&request);  // the leak checker of the ASan build watches
  // Drive progress until the freed collective has delivered.
  for (int i = 0; i < 100000 && to != 7; ++i) P2p().vcis().ProgressAll();
  EXPECT_EQ(to, 7);
}

void AddInts(void* in, void* inout, int* count, MPI_Datatype*) {
  for (int i = 0; i < *count; ++i) {
    static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
  }
}

// MPI lets a program free an operation that a pending nonblocking
// collective still uses; the collective must still apply it (the ASan build
// catches a use after free).
TEST_F(ScheduleTest, UserOpFreedWhileScheduleRuns) {
  MPI_Op op;
  MPI_Op_create(AddInts, /*commute=*/1, &op);
  int sent = 5, received = 0, total = 10;
  auto schedule =
      std::make_unique<Schedule>(Self(), CollectiveKind::kAllreduce, 4);
  schedule->Send(&sent, sizeof(sent), 0);
  schedule->EndRound();  // the receive waits a round: still pending below
  schedule->Receive(&received, sizeof(received), 0);
  schedule->EndRound();
  schedule->Reduce(&received, &total, 1, MPI_INT, LookupOp(op));
  vci::Request* request = schedule.release()->Start(P2p());
  MPI_Op_free(&op);
  EXPECT_EQ(op, MPI_OP_NULL);
  P2p().Wait(request);
  P2p().Retire(request);
  EXPECT_EQ(total, 15);
}

TEST_F(ScheduleTest, ThreadsOnTheirOwnCommunicators) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  std::vector<MPI_Comm> comms(kThreads);
  for (auto& comm : comms) MPI_Comm_dup(MPI_COMM_SELF, &comm);
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Communicator& comm = *ToCommunicator(comms[t]);
      for (int r = 0; r < kRounds; ++r) {
        int value = t * 1000 + r, got = -1, again = -1;
        auto schedule =
            std::make_unique<Schedule>(comm, CollectiveKind::kBcast, 4);
        schedule->Send(&value, sizeof(value), 0);
        schedule->Receive(&got, sizeof(got), 0);
        schedule->EndRound();
        schedule->Send(&got, sizeof(got), 0);
        schedule->Receive(&again, sizeof(again), 0);
        if (!Schedule::Run(std::move(schedule), P2p()) || again != value) {
          ++failures[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
  for (auto& comm : comms) MPI_Comm_free(&comm);
}

}  // namespace
}  // namespace minimpi::coll
