// Persistent collectives alone, in one process (the singleton sends to
// itself): a schedule built once runs again at each start, sees the data
// of that start, keeps its nested schedules, takes no new tag; a schedule
// rebuilt at each start takes the first one's tags; a request freed while
// active is reclaimed when it completes (the ASan build's leak checker
// watches).
#include "mpi/coll/persistent.h"

#include <mpi.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/coll/services.h"

namespace minimpi::coll {
namespace {

class PersistentCollectiveTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int provided;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  }
  static void TearDownTestSuite() { MPI_Finalize(); }

  static Communicator& Self() { return *ToCommunicator(MPI_COMM_SELF); }
  static p2p::PointToPoint& P2p() { return Services().p2p; }

  static void StartAndWait(vci::Request* request) {
    PersistentCollective::Start(request);
    P2p().Wait(request);
    EXPECT_EQ(request->status.error, vci::Error::kNone);
    P2p().Retire(request);
    EXPECT_EQ(request->state.load(), vci::RequestState::kInactive);
  }
};

// Send `from` to ourselves, copy what arrived onward, then run a nested
// schedule that does the same again.
std::unique_ptr<Schedule> Relay(Communicator& comm, const int* from, int* hop,
                                int* to, int* nested_to) {
  auto schedule = std::make_unique<Schedule>(comm, CollectiveKind::kBcast, 4);
  schedule->Send(from, sizeof(int), 0);
  schedule->Receive(hop, sizeof(int), 0);
  schedule->EndRound();
  schedule->Copy(hop, to, sizeof(int));
  schedule->EndRound();
  auto child = std::make_unique<Schedule>(comm, CollectiveKind::kBcast, 4);
  child->Send(to, sizeof(int), 0);
  child->Receive(nested_to, sizeof(int), 0);
  schedule->Nested(std::move(child));
  return schedule;
}

TEST_F(PersistentCollectiveTest, BuiltOnceRunsAtEveryStart) {
  int from = 0, hop = 0, to = 0, nested_to = 0;
  vci::Request* request;
  std::string error;
  ASSERT_EQ(PersistentCollective::Create(
                P2p(), Self(),
                [&](std::unique_ptr<Schedule>* schedule, std::string*) {
                  *schedule = Relay(Self(), &from, &hop, &to, &nested_to);
                  return 0;
                },
                /*rebuild_each_start=*/false, &request, &error),
            0);
  EXPECT_EQ(request->state.load(), vci::RequestState::kInactive);
  const uint32_t sequence = Self().collective_sequence;
  for (int start = 1; start <= 5; ++start) {
    from = 100 * start;
    StartAndWait(request);
    EXPECT_EQ(to, 100 * start);
    EXPECT_EQ(nested_to, 100 * start);
  }
  // A start draws no tag: other collectives' tags stay where they were.
  EXPECT_EQ(Self().collective_sequence, sequence);
  P2p().Free(request);
}

TEST_F(PersistentCollectiveTest, RebuiltScheduleTakesTheFirstTags) {
  int from = 0, hop = 0, to = 0, nested_to = 0;
  int builds = 0;
  uint32_t first_tag_sequence = 0;
  vci::Request* request;
  std::string error;
  ASSERT_EQ(PersistentCollective::Create(
                P2p(), Self(),
                [&](std::unique_ptr<Schedule>* schedule, std::string*) {
                  // Every build starts from the same sequence number.
                  if (builds++ == 0) {
                    first_tag_sequence = Self().collective_sequence;
                  }
                  EXPECT_EQ(Self().collective_sequence, first_tag_sequence);
                  *schedule = Relay(Self(), &from, &hop, &to, &nested_to);
                  return 0;
                },
                /*rebuild_each_start=*/true, &request, &error),
            0);
  const uint32_t sequence = Self().collective_sequence;
  for (int start = 1; start <= 3; ++start) {
    from = 7 * start;
    StartAndWait(request);
    EXPECT_EQ(nested_to, 7 * start);
  }
  EXPECT_EQ(builds, 4);
  EXPECT_EQ(Self().collective_sequence, sequence);
  P2p().Free(request);
}

TEST_F(PersistentCollectiveTest, FreedWhileActiveIsReclaimed) {
  int from = 9, hop = 0, to = 0, nested_to = 0;
  vci::Request* request;
  std::string error;
  ASSERT_EQ(PersistentCollective::Create(
                P2p(), Self(),
                [&](std::unique_ptr<Schedule>* schedule, std::string*) {
                  *schedule = Relay(Self(), &from, &hop, &to, &nested_to);
                  return 0;
                },
                /*rebuild_each_start=*/false, &request, &error),
            0);
  PersistentCollective::Start(request);
  MPI_Request handle = ToHandle(request);
  MPI_Request_free(&handle);
  for (int i = 0; i < 100000 && nested_to != 9; ++i) P2p().vcis().ProgressAll();
  EXPECT_EQ(nested_to, 9);
}

}  // namespace
}  // namespace minimpi::coll
