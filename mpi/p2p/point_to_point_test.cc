// Point-to-point in one process, over the loopback transport: a rank
// sending to itself, so each protocol (eager, synchronous, rendezvous,
// gathered rendezvous, cancel, probe) runs start to end with no second
// process, and the transport can refuse posts on purpose to drive the
// backlog and the retries. Data is checked byte for byte against what was
// sent; the order of delivery against a list kept here.
#include "mpi/p2p/point_to_point.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/datatype/layout.h"
#include "mpi/mpi.h"
#include "mpi/vci/vci_set.h"
#include "net/testing/loopback_transport.h"
#include "runtime/settings.h"

namespace minimpi::p2p {
namespace {

using vci::Error;
using vci::ReceiveArguments;
using vci::Request;
using vci::SendArguments;
using vci::SendMode;
using vci::Status;

constexpr int32_t kContext = 5;
constexpr size_t kEagerMax = 1024;

class PointToPointTest : public ::testing::Test {
 protected:
  void Make(int refuse_every = 0) {
    net::testing::LoopbackOptions options;
    options.num_vcis = 3;
    options.refuse_every = refuse_every;
    transport_ = std::make_unique<net::testing::LoopbackTransport>(options);
    runtime::Settings settings;
    settings.num_vcis = 2;
    settings.eager_max = kEagerMax;
    vci::WaitPolicy policy;
    policy.then = vci::WaitPolicy::Then::kSpin;
    auto vcis = vci::VciSet::Create(transport_.get(), settings, policy);
    ASSERT_TRUE(vcis.ok()) << vcis.status();
    vcis_ = std::move(vcis).value();
    auto p2p = PointToPoint::Create(vcis_.get(), settings, /*world_size=*/1);
    ASSERT_TRUE(p2p.ok()) << p2p.status();
    p2p_ = std::move(p2p).value();
  }
  void TearDown() override {
    p2p_.reset();
    vcis_.reset();
  }

  static SendArguments ToSelf(const void* buffer, size_t bytes, int tag,
                              int vci = 0) {
    SendArguments send;
    send.buffer = buffer;
    send.bytes = bytes;
    send.destination_world_rank = 0;
    send.destination_vci = vci;
    send.remote_context = kContext;
    send.source_rank = 0;
    send.tag = tag;
    send.vci = vci;
    return send;
  }
  static ReceiveArguments FromSelf(void* buffer, size_t capacity, int tag,
                                   int vci = 0) {
    ReceiveArguments receive;
    receive.buffer = buffer;
    receive.capacity = capacity;
    receive.context = kContext;
    receive.source = 0;
    receive.tag = tag;
    receive.vci = vci;
    return receive;
  }
  // Waits for `request`, returns its status and gives the request back.
  Status Finish(Request* request) {
    p2p_->Wait(request);
    const Status status = request->status;
    p2p_->Retire(request);
    return status;
  }
  static std::vector<uint8_t> Pattern(size_t bytes, int seed) {
    std::vector<uint8_t> data(bytes);
    for (size_t i = 0; i < bytes; ++i) data[i] = uint8_t(seed * 131 + i * 7);
    return data;
  }

  std::unique_ptr<net::testing::LoopbackTransport> transport_;
  std::unique_ptr<vci::VciSet> vcis_;
  std::unique_ptr<PointToPoint> p2p_;
};

TEST_F(PointToPointTest, EagerMessagesArriveIntactAndInOrder) {
  Make();
  // Sizes on both sides of the 16-byte envelope-only header and up to the
  // eager limit; one tag, so order is the MPI order of sends.
  const std::vector<size_t> sizes = {0, 1, 8, 15, 16, 17, 255, 1000, kEagerMax};
  std::vector<std::vector<uint8_t>> sent, received;
  std::vector<Request*> sends, receives;
  for (size_t i = 0; i < sizes.size(); ++i) {
    sent.push_back(Pattern(sizes[i], int(i)));
    sends.push_back(p2p_->Isend(ToSelf(sent[i].data(), sizes[i], 3)));
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    received.emplace_back(kEagerMax, 0xee);
    receives.push_back(p2p_->Irecv(FromSelf(received[i].data(), kEagerMax, 3)));
  }
  for (Request* send : sends) Finish(send);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const Status status = Finish(receives[i]);
    EXPECT_EQ(status.bytes, sizes[i]);
    EXPECT_EQ(status.tag, 3);
    EXPECT_EQ(status.source, 0);
    EXPECT_EQ(status.error, Error::kNone);
    // (An empty vector's data() may be null, which memcmp may not get.)
    EXPECT_TRUE(std::equal(sent[i].begin(), sent[i].end(), received[i].begin()))
        << "message " << i;
    // Nothing written past the message.
    for (size_t b = sizes[i]; b < kEagerMax; ++b) {
      ASSERT_EQ(received[i][b], 0xee) << "message " << i << " byte " << b;
    }
  }
}

TEST_F(PointToPointTest, UnexpectedMessageMeetsAWildcardReceive) {
  Make();
  const std::string text = "early bird";
  Finish(p2p_->Isend(ToSelf(text.data(), text.size(), 42)));
  // Arrived before any receive: the engine keeps it unexpected.
  vcis_->ProgressAll();
  Status probed;
  ASSERT_TRUE(
      p2p_->Iprobe({kContext, match::kAnySource, match::kAnyTag}, 0, &probed));
  EXPECT_EQ(probed.tag, 42);
  EXPECT_EQ(probed.arrived_bytes, text.size());
  char buffer[64] = {};
  ReceiveArguments any = FromSelf(buffer, sizeof(buffer), match::kAnyTag);
  any.source = match::kAnySource;
  const Status status = Finish(p2p_->Irecv(any));
  EXPECT_EQ(status.tag, 42);
  EXPECT_EQ(status.source, 0);
  EXPECT_EQ(std::string(buffer, status.bytes), text);
  EXPECT_FALSE(
      p2p_->Iprobe({kContext, match::kAnySource, match::kAnyTag}, 0, &probed));
}

TEST_F(PointToPointTest, RendezvousMovesALargeMessageInOneCopy) {
  Make();
  const std::vector<uint8_t> sent = Pattern(200'000, 9);
  std::vector<uint8_t> received(sent.size());
  Request* receive = p2p_->Irecv(FromSelf(received.data(), received.size(), 1));
  Request* send = p2p_->Isend(ToSelf(sent.data(), sent.size(), 1));
  const uint64_t posts_before = transport_->posts();
  EXPECT_EQ(Finish(receive).bytes, sent.size());
  Finish(send);
  EXPECT_EQ(received, sent);
  // Request, one read, done: a handful of posts, not one per eager piece.
  EXPECT_LT(transport_->posts() - posts_before, 8u);
}

TEST_F(PointToPointTest, SynchronousSendCompletesOnlyOnceMatched) {
  Make();
  const int value = 1234;
  SendArguments arguments = ToSelf(&value, sizeof(value), 8);
  arguments.mode = SendMode::kSynchronous;
  Request* send = p2p_->Isend(arguments);
  for (int i = 0; i < 100; ++i) vcis_->ProgressAll();
  EXPECT_FALSE(PointToPoint::IsComplete(send));
  int got = 0;
  Request* receive = p2p_->Irecv(FromSelf(&got, sizeof(got), 8));
  Finish(receive);
  Finish(send);
  EXPECT_EQ(got, value);
}

TEST_F(PointToPointTest, TooLongAMessageIsTruncatedAndSaysSo) {
  Make();
  const std::vector<uint8_t> sent = Pattern(100, 3);
  std::vector<uint8_t> received(40, 0);
  Request* receive = p2p_->Irecv(FromSelf(received.data(), received.size(), 2));
  Finish(p2p_->Isend(ToSelf(sent.data(), sent.size(), 2)));
  const Status status = Finish(receive);
  EXPECT_EQ(status.error, Error::kTruncated);
  EXPECT_EQ(status.bytes, 40u);
  EXPECT_EQ(status.arrived_bytes, 100u);
  EXPECT_EQ(std::memcmp(received.data(), sent.data(), 40), 0);
}

TEST_F(PointToPointTest, CancelledReceiveCompletesCancelled) {
  Make();
  char buffer[8];
  Request* receive = p2p_->Irecv(FromSelf(buffer, sizeof(buffer), 77));
  EXPECT_TRUE(p2p_->CancelReceive(receive));
  EXPECT_TRUE(Finish(receive).cancelled);
  // A message sent afterwards is not taken by the cancelled receive.
  const char text[] = "later";
  Finish(p2p_->Isend(ToSelf(text, sizeof(text), 77)));
  char again[8] = {};
  const Status status = Finish(p2p_->Irecv(FromSelf(again, sizeof(again), 77)));
  EXPECT_FALSE(status.cancelled);
  EXPECT_STREQ(again, "later");
}

// A strided send into a strided receive of another shape: the gathered
// rendezvous copies from the sender's layout into the receiver's, compared
// with a pack written out here by hand.
TEST_F(PointToPointTest, NonContiguousRendezvousMatchesAReferencePack) {
  Make();
  const datatype::Layout* integer = datatype::PredefinedLayout(MPI_INT);
  ASSERT_NE(integer, nullptr);
  constexpr int kCount = 20'000;
  // Every other int on the send side, every third on the receive side.
  datatype::LayoutRef every_other = datatype::Vector(kCount, 1, 2, *integer);
  datatype::LayoutRef every_third = datatype::Vector(kCount, 1, 3, *integer);
  std::vector<int> source(2 * kCount), target(3 * kCount, -1);
  for (int i = 0; i < 2 * kCount; ++i) source[i] = i * 11 + 1;
  SendArguments send = ToSelf(source.data(), kCount * sizeof(int), 4);
  send.layout = every_other.get();
  send.count = 1;
  ReceiveArguments receive = FromSelf(target.data(), kCount * sizeof(int), 4);
  receive.layout = every_third.get();
  receive.count = 1;
  Request* receiving = p2p_->Irecv(receive);
  Request* sending = p2p_->Isend(send);
  EXPECT_EQ(Finish(receiving).bytes, kCount * sizeof(int));
  Finish(sending);
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(target[3 * i], source[2 * i]) << "item " << i;
    ASSERT_EQ(target[3 * i + 1], -1);
    ASSERT_EQ(target[3 * i + 2], -1);
  }
}

// The transport refuses every third post: messages queue in the VCI's
// backlog and copies wait in its pending list, yet everything arrives, in
// order, intact.
TEST_F(PointToPointTest, RefusedPostsQueueAndKeepTheOrder) {
  Make(/*refuse_every=*/3);
  constexpr int kMessages = 300;
  std::vector<std::vector<uint8_t>> sent, received;
  std::vector<Request*> sends, receives;
  for (int i = 0; i < kMessages; ++i) {
    // Mostly eager, every seventh a rendezvous.
    const size_t bytes = i % 7 == 0 ? 5000 + i : size_t(i * 3);
    sent.push_back(Pattern(bytes, i));
    received.emplace_back(bytes);
  }
  // Receives posted for half before the sends, half after: both the
  // posted and the unexpected paths meet refusals.
  for (int i = 0; i < kMessages / 2; ++i) {
    receives.push_back(
        p2p_->Irecv(FromSelf(received[i].data(), received[i].size(), 6)));
  }
  for (int i = 0; i < kMessages; ++i) {
    sends.push_back(p2p_->Isend(ToSelf(sent[i].data(), sent[i].size(), 6)));
  }
  for (int i = kMessages / 2; i < kMessages; ++i) {
    receives.push_back(
        p2p_->Irecv(FromSelf(received[i].data(), received[i].size(), 6)));
  }
  for (int i = 0; i < kMessages; ++i) {
    const Status status = Finish(receives[i]);
    ASSERT_EQ(status.bytes, sent[i].size()) << "message " << i;
    ASSERT_EQ(received[i], sent[i]) << "message " << i;
  }
  for (Request* send : sends) Finish(send);
  EXPECT_GT(transport_->refusals(), 50u);
}

// A blocking send that finds no room waits for its message to leave
// without holding the VCI's lock; one on another VCI proceeds meanwhile.
TEST_F(PointToPointTest, BlockingSendsOnTwoVcisBothComplete) {
  Make(/*refuse_every=*/2);
  const std::string a = "on vci zero", b = "on vci one";
  p2p_->Send(ToSelf(a.data(), a.size(), 1, /*vci=*/0));
  p2p_->Send(ToSelf(b.data(), b.size(), 1, /*vci=*/1));
  char got_a[32] = {}, got_b[32] = {};
  EXPECT_EQ(Finish(p2p_->Irecv(FromSelf(got_b, sizeof(got_b), 1, 1))).bytes,
            b.size());
  EXPECT_EQ(Finish(p2p_->Irecv(FromSelf(got_a, sizeof(got_a), 1, 0))).bytes,
            a.size());
  EXPECT_EQ(std::string(got_a), a);
  EXPECT_EQ(std::string(got_b), b);
}

}  // namespace
}  // namespace minimpi::p2p
