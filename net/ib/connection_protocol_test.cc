#include "net/ib/connection_protocol.h"

#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi::net::ib {
namespace {

TEST(ConnectionProtocolTest, RequestDecisionsFollowTheOrderOfVcis) {
  const PeerVci small{0, 1}, large{1, 0};
  EXPECT_EQ(DecideOnRequest(PairState::kNone, large, small),
            RequestAction::kCreateAndAccept);
  EXPECT_EQ(DecideOnRequest(PairState::kNone, small, large),
            RequestAction::kCreateAndAccept);
  // Both asked: the smaller (rank, VCI) wins.
  EXPECT_EQ(DecideOnRequest(PairState::kRequested, large, small),
            RequestAction::kAcceptWithOurs);
  EXPECT_EQ(DecideOnRequest(PairState::kRequested, small, large),
            RequestAction::kIgnore);
  // Same rank, VCIs decide.
  EXPECT_EQ(
      DecideOnRequest(PairState::kRequested, PeerVci{2, 3}, PeerVci{2, 1}),
      RequestAction::kAcceptWithOurs);
  for (PairState done : {PairState::kAccepted, PairState::kConnected}) {
    EXPECT_EQ(DecideOnRequest(done, large, small), RequestAction::kIgnore);
    EXPECT_EQ(DecideOnRequest(done, small, large), RequestAction::kIgnore);
  }
  EXPECT_TRUE(ShouldConnectOnAccept(PairState::kRequested));
  EXPECT_FALSE(ShouldConnectOnAccept(PairState::kNone));
  EXPECT_FALSE(ShouldConnectOnAccept(PairState::kAccepted));
  EXPECT_FALSE(ShouldConnectOnAccept(PairState::kConnected));
}

// A model of two connection managers and their VCIs' pair state, driven
// through the same decisions as net/ib, with messages delivered in every
// order the two (ordered, independent) sockets allow. Whoever asks first,
// and however the messages interleave, each side ends with exactly one QP,
// connected to the other's, and nobody sends before the far QP can receive.
struct Side {
  PeerVci me;
  PairState state = PairState::kNone;
  int qps_created = 0;
  int my_qp = -1;         // id of our QP
  int connected_to = -1;  // id of the peer QP ours is connected to
};

struct Message {
  ConnectType type;
  int qp;  // sender's QP id
};

TEST(ConnectionProtocolTest, HandshakeModelEndsWithOnePairOfQps) {
  std::mt19937 random(12345);
  for (int trial = 0; trial < 20000; ++trial) {
    Side sides[2];
    sides[0].me = {trial % 3, trial % 2};
    sides[1].me = {trial % 3 == 0 ? 0 : 5, trial % 2 == 0 ? 1 : 0};
    if (sides[0].me == sides[1].me) sides[1].me.vci += 1;
    std::deque<Message> wire[2];  // wire[i]: messages to side i
    int next_qp = 0;
    const bool wants[2] = {(random() % 3) != 0, true};
    bool asked[2] = {false, false};

    auto create = [&](Side& side) {
      ++side.qps_created;
      side.my_qp = next_qp++;
    };
    auto receive = [&](int i) {
      Side& side = sides[i];
      Side& other = sides[1 - i];
      const Message m = wire[i].front();
      wire[i].pop_front();
      switch (m.type) {
        case ConnectType::kRequest: {
          RequestAction action = DecideOnRequest(side.state, side.me, other.me);
          if (action == RequestAction::kIgnore) return;
          if (action == RequestAction::kCreateAndAccept) create(side);
          side.connected_to = m.qp;
          side.state = PairState::kAccepted;
          wire[1 - i].push_back({ConnectType::kAccept, side.my_qp});
          return;
        }
        case ConnectType::kAccept:
          if (!ShouldConnectOnAccept(side.state)) return;
          side.connected_to = m.qp;
          side.state = PairState::kConnected;
          wire[1 - i].push_back({ConnectType::kReady, side.my_qp});
          return;
        case ConnectType::kReady:
          if (side.state == PairState::kAccepted) {
            // The far QP is connected to ours before we may send.
            ASSERT_EQ(other.connected_to, side.my_qp);
            side.state = PairState::kConnected;
          }
          return;
      }
    };
    for (int step = 0; step < 100; ++step) {
      std::vector<int> choices;
      for (int i = 0; i < 2; ++i) {
        if (wants[i] && !asked[i]) choices.push_back(i);  // i asks
        if (!wire[i].empty()) choices.push_back(2 + i);   // i receives
      }
      if (choices.empty()) break;
      const int choice = choices[random() % choices.size()];
      if (choice < 2) {
        asked[choice] = true;
        Side& side = sides[choice];
        if (side.state != PairState::kNone) continue;  // already connecting
        create(side);
        side.state = PairState::kRequested;
        wire[1 - choice].push_back({ConnectType::kRequest, side.my_qp});
      } else {
        receive(choice - 2);
      }
    }
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(sides[i].state, PairState::kConnected) << "trial " << trial;
      ASSERT_EQ(sides[i].qps_created, 1) << "trial " << trial;
      ASSERT_EQ(sides[i].connected_to, sides[1 - i].my_qp) << "trial " << trial;
    }
  }
}

// Credits against a model receiver with a shared pool of buffers: the
// sender never makes the receiver run dry, whatever the delays of the
// messages and of the returned totals, and every message gets through.
TEST(ConnectionProtocolTest, CreditsNeverLetTheReceiverRunDry) {
  std::mt19937 random(777);
  for (uint32_t granted : {1u, 2u, 3u, 4u, 16u, 100u}) {
    SendCredits sender(granted);
    ReturnCredits receiver(granted);
    int posted = static_cast<int>(granted);  // receive buffers posted
    std::deque<int> in_flight;               // messages on the wire
    std::deque<uint32_t> returns_in_flight;  // credit totals on the wire
    uint32_t credit_word = 0;                // what the sender has seen
    int consumed_not_reposted = 0;
    const int kMessages = 5000;
    int sent = 0, delivered = 0;
    for (int step = 0; delivered < kMessages; ++step) {
      ASSERT_LT(step, 10'000'000) << "no progress with " << granted;
      switch (random() % 5) {
        case 0:
        case 1:
          if (sent < kMessages && sender.Take(credit_word)) {
            in_flight.push_back(sent++);
          }
          break;
        case 2:
          if (!in_flight.empty()) {
            ASSERT_GT(posted, 0) << "receiver not ready with " << granted;
            --posted;
            ++consumed_not_reposted;
            ASSERT_EQ(in_flight.front(), delivered);
            in_flight.pop_front();
            ++delivered;
          }
          break;
        case 3:
          if (consumed_not_reposted > 0) {
            --consumed_not_reposted;
            ++posted;
            receiver.Reposted();
            if (receiver.ShouldReturn()) {
              returns_in_flight.push_back(receiver.TakeTotal());
            }
          }
          break;
        case 4:
          if (!returns_in_flight.empty()) {
            // Later totals overwrite earlier ones, as RDMA writes do.
            credit_word = returns_in_flight.front();
            returns_in_flight.pop_front();
          }
          break;
      }
      ASSERT_LE(sender.Available(credit_word), granted);
    }
    EXPECT_EQ(posted + consumed_not_reposted, static_cast<int>(granted));
  }
}

TEST(ConnectionProtocolTest, CreditsWrapAroundThirtyTwoBits) {
  SendCredits sender(4);
  uint32_t returned = 0;
  // Run the counters across 2^32 in big strides.
  for (uint64_t round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(sender.Take(returned));
    EXPECT_FALSE(sender.Take(returned));
    returned += 4;
  }
  ReturnCredits receiver(8);
  EXPECT_FALSE(receiver.ShouldReturn());
  receiver.Reposted();
  EXPECT_FALSE(receiver.ShouldReturn());
  receiver.Reposted();
  EXPECT_TRUE(receiver.ShouldReturn());  // a quarter of 8
  EXPECT_EQ(receiver.TakeTotal(), 2u);
  EXPECT_EQ(receiver.owed(), 0u);
  ReturnCredits one(1);
  one.Reposted();
  EXPECT_TRUE(one.ShouldReturn());
}

TEST(ConnectionProtocolTest, WorkIdsAndImmediatesRoundTrip) {
  alignas(64) static char buffer[128];
  const uint64_t receive = ReceiveWorkId(buffer);
  EXPECT_FALSE(IsOperationWorkId(receive));
  EXPECT_EQ(reinterpret_cast<char*>(receive), buffer);
  for (uint32_t index : {0u, 1u, 511u, 0x7fffffffu, 0xffffffffu}) {
    const uint64_t id = OperationWorkId(index);
    EXPECT_TRUE(IsOperationWorkId(id));
    EXPECT_EQ(OperationIndex(id), index);
  }
  for (uint32_t immediate : {0u, 1u, 0x12345678u, 0xffffffffu}) {
    EXPECT_EQ(DecodeImmediate(EncodeImmediate(immediate)), immediate);
  }
  // On the wire the most significant byte comes first.
  const uint32_t wire = EncodeImmediate(0x01020304u);
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(&wire);
  EXPECT_EQ(bytes[0], 0x01);
  EXPECT_EQ(bytes[3], 0x04);
}

}  // namespace
}  // namespace minimpi::net::ib
