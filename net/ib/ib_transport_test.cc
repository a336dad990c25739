// net/ib's own behaviour over the software device, beyond what the
// conformance suite checks: connections made lazily and once per pair,
// flow control that never lets a receive queue run dry (the device is told
// to treat any receiver-not-ready as fatal), the send queue's limit
// answered with kRetry, device and GID choice, and errors from the device
// ending the job with a line that names the peer and the status.
#include "net/ib/ib_transport.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "net/ib/testing/soft_verbs.h"
#include "net/testing/fake_bootstrap.h"
#include "net/testing/transport_checks.h"

namespace minimpi::net::ib {
namespace {

using ::minimpi::net::testing::FakeJobOptions;
using ::minimpi::net::testing::FunctionHandler;
using ::minimpi::net::testing::RunRanks;
using ::minimpi::runtime::Bootstrap;
using ::minimpi::runtime::Settings;

class IbTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Any receiver-not-ready is a failure: credits must prevent them.
    setenv("MINIMPI_SOFTIB_MAX_RNR", "0", 1);
    unsetenv("MINIMPI_SOFTIB_LINK");
  }

  static absl::StatusOr<std::unique_ptr<IbTransport>> Make(
      Bootstrap& bootstrap, const Settings& settings) {
    return IbTransport::Create(bootstrap, settings,
                               ::minimpi::net::ib::testing::CreateSoftVerbs());
  }

  static Settings Small() {
    Settings settings;
    settings.num_vcis = 2;
    settings.endpoint_vcis = 1;
    settings.eager_max = 1024;
    return settings;
  }
};

// Polls `vci` until `done` or a deadline.
absl::Status PollUntil(Transport& transport, int vci,
                       CompletionHandler& handler,
                       const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!done()) {
    transport.Poll(vci, handler, 32);
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError("timed out polling");
    }
  }
  return absl::OkStatus();
}

// A flood's message n from peer p is FloodLength(n) bytes of pattern
// p * 100000 + n.
size_t FloodLength(int n, size_t max) { return 1 + (n * 131) % max; }

// Checks each arrival against the flood pattern, in order per peer:
// next[p] counts peer p's messages, `error` names the first that differs.
FunctionHandler FloodChecker(size_t max, std::vector<int>& next,
                             std::string& error) {
  return FunctionHandler([max, &next, &error](int, const Completion& c) {
    if (c.type != CompletionType::kReceive) return;
    int& n = next[c.peer];
    const size_t length = FloodLength(n, max);
    std::vector<uint8_t> expected(length);
    ::minimpi::net::testing::FillPattern(c.peer * 100000 + n, expected.data(),
                                         length);
    if (error.empty() && (c.length != length ||
                          std::memcmp(c.data, expected.data(), length) != 0)) {
      error = absl::StrCat("message ", n, " from ", c.peer, " differs");
    }
    ++n;
  });
}

TEST_F(IbTransportTest, ConnectsLazilyWithOneQueuePairPerPair) {
  FakeJobOptions options;
  options.size = 3;
  absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
    absl::StatusOr<std::unique_ptr<IbTransport>> made =
        Make(bootstrap, Small());
    if (!made.ok()) return made.status();
    IbTransport& transport = **made;
    const int me = bootstrap.rank();
    // Nothing exists before anybody talks.
    RETURN_IF_FALSE(!transport.MayHaveWork(0), "VCI 0 ready before use");
    RETURN_IF_FALSE(transport.CountersForTesting(0).queue_pairs == 0);
    RETURN_IF_ERROR(bootstrap.Fence());
    // Ranks 0 and 1 send to each other at once, on VCI 0 to VCI 1 and back
    // (both ask at the same time); rank 2 stays silent.
    int received = 0;
    FunctionHandler handler([&](int, const Completion& c) {
      if (c.type == CompletionType::kReceive) ++received;
    });
    if (me < 2) {
      const int other = 1 - me;
      const int my_vci = me == 0 ? 0 : 1, their_vci = me == 0 ? 1 : 0;
      const uint64_t word = 0x1234000 + me;
      const absl::Time deadline = absl::Now() + absl::Seconds(60);
      while (transport.Send(my_vci, {other, their_vci}, &word, sizeof(word),
                            nullptr, 0) == PostResult::kRetry) {
        transport.Poll(my_vci, handler, 8);
        RETURN_IF_FALSE(absl::Now() < deadline, "never connected");
      }
      RETURN_IF_ERROR(
          PollUntil(transport, my_vci, handler, [&] { return received == 1; }));
      const IbTransport::Counters counters =
          transport.CountersForTesting(my_vci);
      RETURN_IF_FALSE(counters.queue_pairs == 1, "VCI ", my_vci, " has ",
                      counters.queue_pairs, " queue pairs, expected 1");
      RETURN_IF_FALSE(counters.receive_buffers == Settings().ib_credits);
      RETURN_IF_FALSE(transport.CountersForTesting(1 - my_vci).queue_pairs ==
                      0);
    } else {
      RETURN_IF_FALSE(transport.CountersForTesting(0).queue_pairs == 0);
      RETURN_IF_FALSE(!transport.MayHaveWork(0));
    }
    return bootstrap.Fence();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// Two credits per connection, both ranks flooding each other (self too)
// with messages of every size: everything arrives in order and intact,
// senders wait for credits, and no receive ever finds the queue empty.
TEST_F(IbTransportTest, TinyCreditsFloodArrivesInOrderWithoutReceiverNotReady) {
  FakeJobOptions options;
  options.size = 2;
  absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
    Settings settings = Small();
    settings.ib_credits = 2;
    absl::StatusOr<std::unique_ptr<IbTransport>> made =
        Make(bootstrap, settings);
    if (!made.ok()) return made.status();
    IbTransport& transport = **made;
    const int me = bootstrap.rank();
    constexpr int kMessages = 3000;
    const size_t max = transport.max_message_size();
    std::vector<int> next(2, 0);
    std::string error;
    FunctionHandler handler = FloodChecker(max, next, error);
    std::vector<uint8_t> scratch(max);
    int sent[2] = {0, 0};
    const absl::Time deadline = absl::Now() + absl::Seconds(120);
    while (sent[0] < kMessages || sent[1] < kMessages || next[0] < kMessages ||
           next[1] < kMessages) {
      for (int peer = 0; peer < 2; ++peer) {
        if (sent[peer] >= kMessages) continue;
        const size_t length = FloodLength(sent[peer], max);
        ::minimpi::net::testing::FillPattern(me * 100000 + sent[peer],
                                             scratch.data(), length);
        const size_t header = std::min<size_t>(length, 16);
        if (transport.Send(0, {peer, 0}, scratch.data(), header,
                           scratch.data() + header,
                           length - header) == PostResult::kOk) {
          ++sent[peer];
        }
      }
      transport.Poll(0, handler, 16);
      RETURN_IF_FALSE(error.empty(), error);
      RETURN_IF_FALSE(absl::Now() < deadline, "flood timed out: sent ", sent[0],
                      "/", sent[1], " received ", next[0], "/", next[1]);
    }
    const IbTransport::Counters counters = transport.CountersForTesting(0);
    RETURN_IF_FALSE(counters.credit_waits > 0, "never waited for credits");
    RETURN_IF_FALSE(counters.credit_returns > 0);
    RETURN_IF_FALSE(counters.receive_buffers == 2 * 2, "receive buffers ",
                    counters.receive_buffers);
    return bootstrap.Fence();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// A receive queue capped at 4 buffers with 4 credits per connection: the
// second peer's connection adds no buffer, so 8 credits share 4 buffers.
// Both peers fill their credits before the receiver polls at all, so the
// device answers receiver-not-ready, retries, and every message still
// arrives in order and intact.
TEST_F(IbTransportTest, ConnectionsPastTheReceiveQueueCapShareItsBuffers) {
  FakeJobOptions options;
  options.size = 3;
  // Here receiver-not-ready is expected, and retried without limit.
  unsetenv("MINIMPI_SOFTIB_MAX_RNR");
  absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
    Settings settings = Small();
    settings.ib_credits = 4;
    settings.ib_receive_buffers = 4;
    absl::StatusOr<std::unique_ptr<IbTransport>> made =
        Make(bootstrap, settings);
    if (!made.ok()) return made.status();
    IbTransport& transport = **made;
    const int me = bootstrap.rank();
    constexpr int kMessages = 1500;
    const size_t max = transport.max_message_size();
    FunctionHandler ignore([](int, const Completion&) {});
    if (me != 0) {
      std::vector<uint8_t> scratch(max);
      auto send = [&](int n) {
        const size_t length = FloodLength(n, max);
        ::minimpi::net::testing::FillPattern(me * 100000 + n, scratch.data(),
                                             length);
        const size_t header = std::min<size_t>(length, 16);
        return transport.Send(0, {0, 0}, scratch.data(), header,
                              scratch.data() + header,
                              length - header) == PostResult::kOk;
      };
      int sent = 0;
      const absl::Time deadline = absl::Now() + absl::Seconds(120);
      // Every credit used before the receiver looks.
      while (sent < settings.ib_credits) {
        if (send(sent)) ++sent;
        transport.Poll(0, ignore, 16);
        RETURN_IF_FALSE(absl::Now() < deadline, "first sends timed out");
      }
      RETURN_IF_ERROR(bootstrap.Fence());
      while (sent < kMessages) {
        if (send(sent)) ++sent;
        transport.Poll(0, ignore, 16);
        RETURN_IF_FALSE(absl::Now() < deadline, "flood timed out at ", sent);
      }
      return bootstrap.Fence();
    }
    RETURN_IF_ERROR(bootstrap.Fence());
    // 8 messages for 4 buffers, none reposted yet: the device must turn
    // some away.
    const uint64_t before = ::minimpi::net::ib::testing::SoftVerbsRnrNakCount();
    const absl::Time nak_deadline = absl::Now() + absl::Seconds(30);
    while (::minimpi::net::ib::testing::SoftVerbsRnrNakCount() == before) {
      RETURN_IF_FALSE(absl::Now() < nak_deadline,
                      "no receiver-not-ready with 8 credits on 4 buffers");
      absl::SleepFor(absl::Milliseconds(1));
    }
    std::vector<int> next(3, 0);
    std::string error;
    FunctionHandler handler = FloodChecker(max, next, error);
    RETURN_IF_ERROR(PollUntil(transport, 0, handler, [&] {
      return next[1] == kMessages && next[2] == kMessages;
    }));
    RETURN_IF_FALSE(error.empty(), error);
    const IbTransport::Counters counters = transport.CountersForTesting(0);
    RETURN_IF_FALSE(counters.queue_pairs == 2, "queue pairs ",
                    counters.queue_pairs);
    RETURN_IF_FALSE(counters.receive_buffers == 4, "receive buffers ",
                    counters.receive_buffers);
    RETURN_IF_FALSE(counters.overcommitted == 1, "overcommitted ",
                    counters.overcommitted);
    return bootstrap.Fence();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// A send queue of 4: posting many RDMA writes without polling answers
// kRetry once 4 are outstanding, and all complete, byte for byte.
TEST_F(IbTransportTest, SendQueueLimitAnswersRetry) {
  FakeJobOptions options;
  options.size = 2;
  absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
    Settings settings = Small();
    settings.ib_send_queue = 4;
    absl::StatusOr<std::unique_ptr<IbTransport>> made =
        Make(bootstrap, settings);
    if (!made.ok()) return made.status();
    IbTransport& transport = **made;
    const int me = bootstrap.rank();
    constexpr int kWrites = 64;
    constexpr size_t kBytes = 4096;
    std::vector<uint8_t> memory(kWrites * kBytes, 0);
    if (me == 0) {
      for (int i = 0; i < kWrites; ++i) {
        ::minimpi::net::testing::FillPattern(i, &memory[i * kBytes], kBytes);
      }
    }
    absl::StatusOr<MemoryRegion> region =
        transport.RegisterMemory(memory.data(), memory.size());
    if (!region.ok()) return region.status();
    const std::string mine = absl::StrCat(
        reinterpret_cast<uint64_t>(memory.data()), " ", region->remote_key);
    RETURN_IF_ERROR(bootstrap.Put("buffer", mine));
    RETURN_IF_ERROR(bootstrap.Commit());
    RETURN_IF_ERROR(bootstrap.Fence());
    if (me == 0) {
      absl::StatusOr<std::string> theirs = bootstrap.Get(1, "buffer");
      if (!theirs.ok()) return theirs.status();
      uint64_t address = 0;
      uint32_t key = 0;
      RETURN_IF_FALSE(std::sscanf(theirs->c_str(), "%lu %u", &address, &key) ==
                      2);
      int done = 0, retries = 0, posted = 0;
      FunctionHandler handler([&](int, const Completion& c) {
        if (c.type == CompletionType::kLocalDone) ++done;
      });
      const absl::Time deadline = absl::Now() + absl::Seconds(60);
      while (posted < kWrites) {
        const PostResult result = transport.RdmaWrite(
            0, {1, 0}, &memory[posted * kBytes], *region,
            {address + posted * kBytes, key}, kBytes, posted);
        if (result == PostResult::kOk) {
          ++posted;
          continue;
        }
        ++retries;
        transport.Poll(0, handler, 8);
        RETURN_IF_FALSE(absl::Now() < deadline, "writes never posted");
      }
      RETURN_IF_ERROR(
          PollUntil(transport, 0, handler, [&] { return done == kWrites; }));
      RETURN_IF_FALSE(retries > 0, "the send queue limit never showed");
      RETURN_IF_FALSE(transport.CountersForTesting(0).queue_full_waits > 0);
    }
    RETURN_IF_ERROR(bootstrap.Fence());
    if (me == 1) {
      for (int i = 0; i < kWrites; ++i) {
        const int64_t bad = ::minimpi::net::testing::FirstMismatch(
            i, &memory[i * kBytes], kBytes);
        RETURN_IF_FALSE(bad < 0, "write ", i, " differs at byte ", bad);
      }
    }
    transport.DeregisterMemory(*region);
    return bootstrap.Fence();
  });
  EXPECT_TRUE(status.ok()) << status;
}

TEST_F(IbTransportTest, ChoosesDevicePortAndGid) {
  std::unique_ptr<Verbs> verbs = ::minimpi::net::ib::testing::CreateSoftVerbs();
  Settings settings;
  absl::StatusOr<PortChoice> ib = ChoosePort(*verbs, settings);
  ASSERT_TRUE(ib.ok()) << ib.status();
  EXPECT_FALSE(ib->ethernet);
  EXPECT_NE(ib->lid, 0);
  EXPECT_EQ(ib->gid_index, -1);
  settings.ib_device = "mlx5_9";
  absl::StatusOr<PortChoice> missing = ChoosePort(*verbs, settings);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("mlx5_9"),
            std::string::npos)
      << missing.status();
  settings.ib_device = "";
  settings.ib_port = 2;
  EXPECT_FALSE(ChoosePort(*verbs, settings).ok());

  // RoCE: the RoCE v2 entry with an IPv4 address, unless told otherwise.
  setenv("MINIMPI_SOFTIB_LINK", "roce", 1);
  std::unique_ptr<Verbs> roce = ::minimpi::net::ib::testing::CreateSoftVerbs();
  settings = Settings();
  absl::StatusOr<PortChoice> chosen = ChoosePort(*roce, settings);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_TRUE(chosen->ethernet);
  EXPECT_EQ(chosen->gid_index, 3);
  EXPECT_EQ(chosen->gid.raw[10], 0xff);
  settings.ib_gid_index = 1;
  chosen = ChoosePort(*roce, settings);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(chosen->gid_index, 1);
  settings.ib_gid_index = 77;
  EXPECT_FALSE(ChoosePort(*roce, settings).ok());
  unsetenv("MINIMPI_SOFTIB_LINK");
}

// The whole job over RoCE addressing (GIDs, global routes).
TEST_F(IbTransportTest, RoceAddressingCarriesMessages) {
  setenv("MINIMPI_SOFTIB_LINK", "roce", 1);
  FakeJobOptions options;
  options.size = 2;
  absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
    absl::StatusOr<std::unique_ptr<IbTransport>> made =
        Make(bootstrap, Small());
    if (!made.ok()) return made.status();
    IbTransport& transport = **made;
    RETURN_IF_FALSE(transport.port().ethernet);
    const int me = bootstrap.rank();
    int received = 0;
    uint64_t value = 0;
    FunctionHandler handler([&](int, const Completion& c) {
      if (c.type != CompletionType::kReceive) return;
      std::memcpy(&value, c.data, sizeof(value));
      ++received;
    });
    const uint64_t word = 0xabcdef00 + me;
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (transport.Send(0, {1 - me, 0}, &word, sizeof(word), nullptr, 0) ==
           PostResult::kRetry) {
      transport.Poll(0, handler, 8);
      RETURN_IF_FALSE(absl::Now() < deadline, "never connected");
    }
    RETURN_IF_ERROR(
        PollUntil(transport, 0, handler, [&] { return received == 1; }));
    RETURN_IF_FALSE(value == 0xabcdef00 + (1 - me), "got ", value);
    return bootstrap.Fence();
  });
  unsetenv("MINIMPI_SOFTIB_LINK");
  EXPECT_TRUE(status.ok()) << status;
}

// A write to a key the peer never gave: the device fails it with a remote
// access error, and the job ends with one line naming the peer, the
// operation and the status.
TEST_F(IbTransportTest, RemoteAccessErrorEndsTheJobWithOneLine) {
  auto bad_write = [] {
    FakeJobOptions options;
    options.size = 2;
    options.timeout = absl::Seconds(60);
    absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
      absl::StatusOr<std::unique_ptr<IbTransport>> made =
          Make(bootstrap, Small());
      if (!made.ok()) return made.status();
      IbTransport& transport = **made;
      std::vector<uint8_t> memory(4096, 7);
      absl::StatusOr<MemoryRegion> region =
          transport.RegisterMemory(memory.data(), memory.size());
      if (!region.ok()) return region.status();
      if (bootstrap.rank() == 0) {
        FunctionHandler handler([](int, const Completion&) {});
        const absl::Time deadline = absl::Now() + absl::Seconds(30);
        while (transport.RdmaWrite(0, {1, 0}, memory.data(), *region,
                                   {0x1000, 0xdeadbeef}, 64,
                                   1) == PostResult::kRetry) {
          transport.Poll(0, handler, 8);
        }
        while (absl::Now() < deadline) transport.Poll(0, handler, 8);
        return absl::InternalError("the bad write did not end the job");
      }
      // The target keeps its VCI alive until the job ends.
      FunctionHandler handler([](int, const Completion&) {});
      const absl::Time deadline = absl::Now() + absl::Seconds(30);
      while (absl::Now() < deadline) transport.Poll(0, handler, 8);
      return absl::OkStatus();
    });
    _exit(status.ok() ? 0 : 3);
  };
  EXPECT_EXIT(bad_write(), ::testing::ExitedWithCode(3),
              "net/ib: rank (0 .*RDMA write with rank 1 .*remote access "
              "error|1 .*queue "
              "pair to rank 0 .*error state)");
}

}  // namespace
}  // namespace minimpi::net::ib
