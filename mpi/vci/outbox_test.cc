// The outbox alone, over the loopback transport refusing posts on purpose:
// messages to each peer arrive in the order they were sent, byte for byte,
// whatever was refused; senders are told of each queued message once it
// left; a later message never overtakes a waiting one; Withdraw takes out
// exactly the one asked for.
#include "mpi/vci/outbox.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "net/testing/loopback_transport.h"

namespace minimpi::vci {
namespace {

using net::testing::LoopbackOptions;
using net::testing::LoopbackTransport;

// No padding: the bytes compared are all set.
struct Header {
  uint8_t type = 7;
  uint8_t unused[3] = {};
  uint32_t sequence = 0;
};

class RecordingSender : public Outbox::Sender {
 public:
  void OnSentLocked(int vci, uint64_t word, uint32_t flags) override {
    told.push_back(word);
    EXPECT_EQ(vci, 0);
    EXPECT_EQ(flags, 5u);
  }
  std::vector<uint64_t> told;
};

class Inbox : public net::CompletionHandler {
 public:
  void OnCompletion(int, const net::Completion& completion) override {
    ASSERT_EQ(completion.type, net::CompletionType::kReceive);
    const auto* bytes = static_cast<const char*>(completion.data);
    received.emplace_back(bytes, completion.length);
  }
  std::vector<std::string> received;
};

// The payload of message `sequence`: a few bytes that differ per message.
std::string Payload(uint32_t sequence) {
  return std::string(sequence % 13, char('a' + sequence % 26)) + "|" +
         std::to_string(sequence);
}

std::string Expected(uint32_t sequence) {
  Header header;
  header.sequence = sequence;
  return std::string(reinterpret_cast<const char*>(&header), sizeof header) +
         Payload(sequence);
}

void PackPayload(const void* source, void* destination) {
  const auto* text = static_cast<const std::string*>(source);
  std::memcpy(destination, text->data(), text->size());
}

std::vector<std::string> Drain(LoopbackTransport& transport, int vci) {
  Inbox inbox;
  while (transport.Poll(vci, inbox, 16) > 0) {
  }
  return inbox.received;
}

TEST(OutboxTest, OrderPerPeerAndEveryoneToldWhateverIsRefused) {
  for (const int refuse_every : {1, 2, 3, 7}) {
    LoopbackOptions options;
    options.refuse_every = refuse_every;
    LoopbackTransport transport(options);
    Outbox outbox;
    RecordingSender sender;
    const net::PeerVci peers[2] = {{0, 1}, {0, 2}};
    std::vector<std::string> payloads(200);
    std::vector<Header> headers(200);
    std::vector<uint64_t> sent_at_once;
    for (uint32_t i = 0; i < 200; ++i) {
      headers[i].sequence = i;
      payloads[i] = Payload(i);
      Outbox::Message message;
      message.header = &headers[i];
      message.header_length = sizeof(Header);
      if (i % 3 == 0) {
        message.pack = PackPayload;
        message.pack_source = &payloads[i];
        message.packed_length = payloads[i].size();
      } else {
        message.payload = payloads[i].data();
        message.payload_length = payloads[i].size();
      }
      message.sender = &sender;
      message.word = i;
      message.flags = 5;
      // The header is copied when the message queues: clobber ours.
      if (outbox.Send(transport, 0, peers[i % 2], message)) {
        sent_at_once.push_back(i);
      }
      headers[i].sequence = 0xdead;
      if (i % 10 == 9) outbox.RetryLocked(transport, 0);
    }
    transport.set_refuse_every(0);
    while (!outbox.empty()) outbox.RetryLocked(transport, 0);
    for (int p = 0; p < 2; ++p) {
      const std::vector<std::string> got = Drain(transport, peers[p].vci);
      ASSERT_EQ(got.size(), 100u) << "refuse_every " << refuse_every;
      for (uint32_t k = 0; k < 100; ++k) {
        EXPECT_EQ(got[k], Expected(2 * k + p)) << "peer " << p << " #" << k;
      }
    }
    // Told of every message that queued, none that left at once.
    std::vector<bool> told(200, false);
    for (uint64_t word : sender.told) {
      ASSERT_LT(word, 200u);
      EXPECT_FALSE(told[word]) << "told twice of " << word;
      told[word] = true;
    }
    for (uint64_t word : sent_at_once) EXPECT_FALSE(told[word]);
    EXPECT_EQ(sender.told.size() + sent_at_once.size(), 200u);
    // What a tool reads: each message counted once, when it left, by the
    // link the transport names (the loopback's is self); every refusal;
    // every message that queued.
    uint64_t payload_bytes = 0;
    for (const std::string& payload : payloads) payload_bytes += payload.size();
    const Outbox::Counters& counters = outbox.counters();
    EXPECT_EQ(counters.messages_sent.Read(net::Link::kSelf), 200u);
    EXPECT_EQ(counters.bytes_sent.Read(net::Link::kSelf), payload_bytes);
    for (net::Link other : {net::Link::kShm, net::Link::kTcp, net::Link::kIb}) {
      EXPECT_EQ(counters.messages_sent.Read(other), 0u);
      EXPECT_EQ(counters.bytes_sent.Read(other), 0u);
    }
    EXPECT_EQ(counters.refused.Read(), transport.refusals());
    EXPECT_EQ(counters.queued.Read(), sender.told.size());
    EXPECT_GT(counters.queued.Read(), 0u);
  }
}

// A rank past the table (another job's process, or before the table is
// filled) is classified by the transport.
TEST(OutboxTest, RanksPastTheLinkTableAskTheTransport) {
  LoopbackTransport transport;
  Outbox outbox;
  LinkTable links;  // empty: every rank asks the transport (self)
  outbox.set_links(&links);
  Header header;
  const std::string payload(10, 'x');
  Outbox::Message message;
  message.header = &header;
  message.header_length = sizeof(Header);
  message.payload = payload.data();
  message.payload_length = payload.size();
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(outbox.Send(transport, 0, {0, 1}, message));
  EXPECT_EQ(outbox.counters().messages_sent.Read(net::Link::kSelf), 3u);
  EXPECT_EQ(outbox.counters().bytes_sent.Read(net::Link::kSelf), 30u);
  EXPECT_EQ(outbox.counters().refused.Read(), 0u);
  EXPECT_EQ(outbox.counters().queued.Read(), 0u);
}

TEST(OutboxTest, NothingOvertakesAWaitingMessage) {
  LoopbackOptions options;
  options.refuse_every = 1;
  LoopbackTransport transport(options);
  Outbox outbox;
  Header first{7, {}, 1}, second{7, {}, 2}, elsewhere{7, {}, 3};
  Outbox::Message message;
  message.header_length = sizeof(Header);
  message.header = &first;
  EXPECT_FALSE(outbox.Send(transport, 0, {0, 1}, message));
  transport.set_refuse_every(0);
  message.header = &second;
  EXPECT_FALSE(outbox.TrySend(transport, 0, {0, 1}, message))
      << "overtook the waiting message";
  message.header = &elsewhere;
  EXPECT_TRUE(outbox.TrySend(transport, 0, {0, 2}, message))
      << "another peer waits for nobody";
  message.header = &second;
  outbox.Enqueue({0, 1}, message);
  EXPECT_TRUE(outbox.RetryLocked(transport, 0));
  EXPECT_TRUE(outbox.empty());
  const std::vector<std::string> got = Drain(transport, 1);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], Expected(1).substr(0, sizeof(Header)));
  EXPECT_EQ(got[1], Expected(2).substr(0, sizeof(Header)));
}

TEST(OutboxTest, WithdrawTakesOutOnlyTheOneAskedFor) {
  LoopbackOptions options;
  options.refuse_every = 1;
  LoopbackTransport transport(options);
  Outbox outbox;
  RecordingSender sender;
  Header headers[4] = {{7, {}, 0}, {7, {}, 1}, {7, {}, 2}, {7, {}, 3}};
  for (uint32_t i = 0; i < 4; ++i) {
    Outbox::Message message;
    message.header = &headers[i];
    message.header_length = sizeof(Header);
    message.sender = &sender;
    message.word = i;
    message.flags = 5;
    outbox.Send(transport, 0, {0, 1}, message);
  }
  auto word_is = [](uint64_t word) {
    return
        [word](const Outbox::Message& message) { return message.word == word; };
  };
  EXPECT_FALSE(outbox.Withdraw({0, 2}, word_is(1))) << "wrong peer";
  EXPECT_TRUE(outbox.Withdraw({0, 1}, word_is(1)));
  EXPECT_FALSE(outbox.Withdraw({0, 1}, word_is(1))) << "taken out twice";
  EXPECT_TRUE(outbox.Withdraw({0, 1}, word_is(3)));  // the tail
  transport.set_refuse_every(0);
  while (!outbox.empty()) outbox.RetryLocked(transport, 0);
  const std::vector<std::string> got = Drain(transport, 1);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], Expected(0).substr(0, sizeof(Header)));
  EXPECT_EQ(got[1], Expected(2).substr(0, sizeof(Header)));
  EXPECT_EQ(sender.told, (std::vector<uint64_t>{0, 2}));
}

}  // namespace
}  // namespace minimpi::vci
