// VciSet in one process, over the loopback transport: each completion
// reaches the kind of traffic that owns it, registration refuses clashes,
// endpoints' VCIs are made once and reused, idle kinds are skipped, waits
// progress, and threads racing for one VCI handle each completion once.
#include "mpi/vci/vci_set.h"

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/tool/catalogue.h"
#include "mpi/vci/tool_variables.h"
#include "net/testing/loopback_transport.h"
#include "runtime/settings.h"

namespace minimpi::vci {
namespace {

using net::Completion;
using net::CompletionType;
using net::PeerVci;
using net::testing::LoopbackOptions;
using net::testing::LoopbackTransport;

// Records what the VCIs hand it.
class RecordingHandler : public TrafficHandler {
 public:
  absl::Status AttachVci(int vci, Vci& state) override {
    std::lock_guard<std::mutex> lock(mutex);
    attached.push_back(vci);
    mutexes[vci] = &state.mutex;
    return absl::OkStatus();
  }
  void OnMessageLocked(int vci, PeerVci peer, const std::byte* data,
                       size_t length) override {
    std::lock_guard<std::mutex> lock(mutex);
    messages.push_back(
        {vci, peer, std::string(reinterpret_cast<const char*>(data), length)});
  }
  void OnWriteImmediateLocked(int vci, PeerVci, uint32_t immediate,
                              size_t length) override {
    std::lock_guard<std::mutex> lock(mutex);
    immediates.push_back({vci, immediate, length});
  }
  void OnLocalDoneLocked(int vci, uint64_t context) override {
    std::lock_guard<std::mutex> lock(mutex);
    local_done.push_back({vci, context});
  }
  bool ProgressLocked(int) override {
    progress_calls.fetch_add(1);
    return false;
  }

  struct Message {
    int vci;
    PeerVci peer;
    std::string bytes;
  };
  struct Immediate {
    int vci;
    uint32_t immediate;
    size_t length;
  };
  std::mutex mutex;
  std::vector<int> attached;
  std::map<int, VciLock*> mutexes;
  std::vector<Message> messages;
  std::vector<Immediate> immediates;
  std::vector<std::pair<int, uint64_t>> local_done;
  std::atomic<int> progress_calls{0};
};

class VciSetTest : public ::testing::Test {
 protected:
  void Make(int shared = 4, int endpoints = 2) {
    LoopbackOptions options;
    options.num_vcis = shared + endpoints;
    transport_ = std::make_unique<LoopbackTransport>(options);
    runtime::Settings settings;
    settings.num_vcis = shared;
    WaitPolicy policy;
    policy.then = WaitPolicy::Then::kSpin;
    auto vcis = VciSet::Create(transport_.get(), settings, policy);
    ASSERT_TRUE(vcis.ok()) << vcis.status();
    vcis_ = std::move(vcis).value();
  }
  // A message of `type` with `text` behind it, from VCI `from` to `to`.
  void SendMessage(int from, int to, uint8_t type, const std::string& text) {
    ASSERT_EQ(
        transport_->Send(from, {0, to}, &type, 1, text.data(), text.size()),
        net::PostResult::kOk);
  }

  std::unique_ptr<LoopbackTransport> transport_;
  std::unique_ptr<VciSet> vcis_;
};

TEST_F(VciSetTest, MessagesGoToTheKindThatOwnsTheirType) {
  Make();
  RecordingHandler p2p, part;
  ASSERT_TRUE(vcis_
                  ->Register({.traffic = Traffic::kPointToPoint,
                              .handler = &p2p,
                              .message_types = {1, 2}})
                  .ok());
  ASSERT_TRUE(vcis_
                  ->Register({.traffic = Traffic::kPartitioned,
                              .handler = &part,
                              .message_types = {10}})
                  .ok());
  SendMessage(1, 0, 1, "eager");
  SendMessage(2, 0, 10, "init");
  SendMessage(3, 0, 2, "ack");
  EXPECT_TRUE(vcis_->TryProgress(0));
  ASSERT_EQ(p2p.messages.size(), 2u);
  EXPECT_EQ(p2p.messages[0].bytes, std::string("\x01") + "eager");
  EXPECT_EQ(p2p.messages[0].peer.vci, 1);
  EXPECT_EQ(p2p.messages[1].bytes, std::string("\x02") + "ack");
  EXPECT_EQ(p2p.messages[1].peer.vci, 3);
  ASSERT_EQ(part.messages.size(), 1u);
  EXPECT_EQ(part.messages[0].bytes, std::string("\x0a") + "init");
  EXPECT_EQ(part.messages[0].vci, 0);
  // Nothing left: the next round finds nothing.
  EXPECT_FALSE(vcis_->TryProgress(0));
  // What a tool reads: three messages received on VCI 0, all from this
  // process (the loopback's link), none on the other VCIs.
  EXPECT_EQ(vcis_->counters(0).messages_received.Read(net::Link::kSelf), 3u);
  EXPECT_EQ(vcis_->counters(0).messages_received.Read(net::Link::kShm), 0u);
  for (int v = 1; v < vcis_->num_vcis(); ++v) {
    EXPECT_EQ(vcis_->counters(v).messages_received.Read(net::Link::kSelf), 0u);
  }
}

TEST_F(VciSetTest, LocalCompletionsGoByTheTagInTheirContext) {
  Make();
  RecordingHandler p2p, part;
  ASSERT_TRUE(
      vcis_->Register({.traffic = Traffic::kPointToPoint, .handler = &p2p})
          .ok());
  ASSERT_TRUE(
      vcis_->Register({.traffic = Traffic::kPartitioned, .handler = &part})
          .ok());
  alignas(8) static int request, send;
  const uint64_t untagged = reinterpret_cast<uint64_t>(&request);
  const uint64_t tagged = TagContext(Traffic::kPartitioned, &send);
  EXPECT_EQ(UntagContext(tagged), &send);
  Completion done;
  done.type = CompletionType::kLocalDone;
  done.context = untagged;
  transport_->Inject(2, done);
  done.context = tagged;
  transport_->Inject(2, done);
  EXPECT_TRUE(vcis_->TryProgress(2));
  ASSERT_EQ(p2p.local_done.size(), 1u);
  EXPECT_EQ(p2p.local_done[0], std::make_pair(2, untagged));
  ASSERT_EQ(part.local_done.size(), 1u);
  EXPECT_EQ(part.local_done[0], std::make_pair(2, tagged));
}

TEST_F(VciSetTest, WritesWithImmediateGoToTheKindThatTakesThem) {
  Make();
  RecordingHandler p2p, part;
  ASSERT_TRUE(
      vcis_->Register({.traffic = Traffic::kPointToPoint, .handler = &p2p})
          .ok());
  ASSERT_TRUE(vcis_
                  ->Register({.traffic = Traffic::kPartitioned,
                              .handler = &part,
                              .receives_writes_with_immediate = true})
                  .ok());
  char source[16] = "partition 7", target[16] = {};
  net::MemoryRegion region = *transport_->RegisterMemory(source, 16);
  ASSERT_EQ(
      transport_->RdmaWriteImmediate(
          1, {0, 3}, source, region, {reinterpret_cast<uint64_t>(target), 0},
          12, 0xabcd, TagContext(Traffic::kPartitioned, source)),
      net::PostResult::kOk);
  EXPECT_TRUE(vcis_->TryProgress(3));
  EXPECT_TRUE(vcis_->TryProgress(1));
  EXPECT_STREQ(target, "partition 7");
  ASSERT_EQ(part.immediates.size(), 1u);
  EXPECT_EQ(part.immediates[0].vci, 3);
  EXPECT_EQ(part.immediates[0].immediate, 0xabcdu);
  EXPECT_EQ(part.immediates[0].length, 12u);
  ASSERT_EQ(part.local_done.size(), 1u);
  EXPECT_EQ(part.local_done[0].first, 1);
  EXPECT_TRUE(p2p.immediates.empty());
  EXPECT_TRUE(p2p.local_done.empty());
}

TEST_F(VciSetTest, RegistrationRefusesClashes) {
  Make();
  RecordingHandler a, b, c;
  ASSERT_TRUE(vcis_
                  ->Register({.traffic = Traffic::kPointToPoint,
                              .handler = &a,
                              .message_types = {1, 2},
                              .receives_writes_with_immediate = true})
                  .ok());
  // The same kind twice; a type another kind owns; writes with immediate
  // claimed twice; no handler at all.
  EXPECT_FALSE(
      vcis_->Register({.traffic = Traffic::kPointToPoint, .handler = &b}).ok());
  EXPECT_FALSE(vcis_
                   ->Register({.traffic = Traffic::kPartitioned,
                               .handler = &b,
                               .message_types = {3, 2}})
                   .ok());
  EXPECT_FALSE(vcis_
                   ->Register({.traffic = Traffic::kPartitioned,
                               .handler = &b,
                               .receives_writes_with_immediate = true})
                   .ok());
  EXPECT_FALSE(
      vcis_->Register({.traffic = Traffic::kOneSided, .handler = nullptr})
          .ok());
  // A refused registration left nothing behind: type 3 is still free.
  EXPECT_TRUE(vcis_
                  ->Register({.traffic = Traffic::kOneSided,
                              .handler = &c,
                              .message_types = {3}})
                  .ok());
  // Unregistered, a kind's types are free again.
  vcis_->Unregister(Traffic::kPointToPoint);
  EXPECT_TRUE(vcis_
                  ->Register({.traffic = Traffic::kPartitioned,
                              .handler = &b,
                              .message_types = {1, 2}})
                  .ok());
}

TEST_F(VciSetTest, EndpointVcisAreMadeOnceAttachedAndReused) {
  Make(/*shared=*/4, /*endpoints=*/2);
  RecordingHandler handler;
  ASSERT_TRUE(
      vcis_->Register({.traffic = Traffic::kPointToPoint, .handler = &handler})
          .ok());
  // Registration attached the shared VCIs, each with its own lock.
  EXPECT_EQ(handler.attached, (std::vector<int>{0, 1, 2, 3}));
  std::set<VciLock*> locks;
  for (int v = 0; v < 4; ++v) {
    EXPECT_EQ(handler.mutexes[v], &vcis_->mutex(v));
    locks.insert(handler.mutexes[v]);
  }
  EXPECT_EQ(locks.size(), 4u);
  EXPECT_FALSE(vcis_->Exists(4));
  EXPECT_EQ(vcis_->in_use(), 4);

  const int first = vcis_->AcquireEndpointVci();
  const int second = vcis_->AcquireEndpointVci();
  EXPECT_EQ(first, 4);
  EXPECT_EQ(second, 5);
  EXPECT_TRUE(vcis_->IsEndpointVci(first));
  EXPECT_FALSE(vcis_->IsEndpointVci(3));
  EXPECT_EQ(vcis_->AcquireEndpointVci(), -1);  // all taken
  EXPECT_EQ(handler.attached, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(vcis_->in_use(), 6);

  // A derived communicator holds a second reference: one release keeps it.
  vcis_->RetainEndpointVci(first);
  vcis_->ReleaseEndpointVci(first);
  EXPECT_EQ(vcis_->AcquireEndpointVci(), -1);
  vcis_->ReleaseEndpointVci(first);
  // Given back, it is reused as it is: not made or attached again.
  EXPECT_EQ(vcis_->AcquireEndpointVci(), first);
  EXPECT_EQ(handler.attached.size(), 6u);
  EXPECT_FALSE(vcis_->Exists(6));
  EXPECT_FALSE(vcis_->Exists(~0u));
}

TEST_F(VciSetTest, IdleKindsAreSkippedUntilTheyHaveUsers) {
  Make();
  RecordingHandler always, on_demand;
  ASSERT_TRUE(
      vcis_->Register({.traffic = Traffic::kPointToPoint, .handler = &always})
          .ok());
  ASSERT_TRUE(vcis_
                  ->Register({.traffic = Traffic::kPartitioned,
                              .handler = &on_demand,
                              .always_progress = false})
                  .ok());
  vcis_->TryProgress(0);
  EXPECT_EQ(always.progress_calls.load(), 1);
  EXPECT_EQ(on_demand.progress_calls.load(), 0);
  vcis_->AddUser(Traffic::kPartitioned);
  vcis_->TryProgress(0);
  EXPECT_EQ(on_demand.progress_calls.load(), 1);
  vcis_->RemoveUser(Traffic::kPartitioned);
  vcis_->TryProgress(0);
  EXPECT_EQ(on_demand.progress_calls.load(), 1);
  EXPECT_EQ(always.progress_calls.load(), 3);
}

// A handler that answers each message with the next one, up to a count: a
// ping-pong between two VCIs of this process.
class EchoHandler : public TrafficHandler {
 public:
  EchoHandler(net::Transport& transport, int limit)
      : transport_(transport), limit_(limit) {}
  void OnMessageLocked(int vci, PeerVci peer, const std::byte* data,
                       size_t length) override {
    uint32_t count;
    ASSERT_EQ(length, 1 + sizeof(count));
    std::memcpy(&count, data + 1, sizeof(count));
    EXPECT_EQ(count, received.load());  // in order, none lost
    received.fetch_add(1);
    if (count + 1 < static_cast<uint32_t>(limit_)) {
      ++count;
      const uint8_t type = 1;
      EXPECT_EQ(transport_.Send(vci, peer, &type, 1, &count, sizeof(count)),
                net::PostResult::kOk);
    }
  }
  void OnLocalDoneLocked(int, uint64_t) override {}
  std::atomic<int> received{0};

 private:
  net::Transport& transport_;
  const int limit_;
};

TEST_F(VciSetTest, WaitUntilProgressesEveryVciAWaitNeeds) {
  Make();
  EchoHandler echo(*transport_, 1000);
  ASSERT_TRUE(vcis_
                  ->Register({.traffic = Traffic::kPointToPoint,
                              .handler = &echo,
                              .message_types = {1}})
                  .ok());
  const uint32_t zero = 0;
  const uint8_t type = 1;
  ASSERT_EQ(transport_->Send(0, {0, 2}, &type, 1, &zero, sizeof(zero)),
            net::PostResult::kOk);
  // The wait names VCI 0, but every other message lands on VCI 2: only
  // the sweep of the other VCIs moves those.
  vcis_->WaitUntil(0, [&] { return echo.received.load() == 1000; });
  EXPECT_EQ(echo.received.load(), 1000);
}

// Threads racing to progress one VCI: the try-lock lets one poll at a
// time, and each message is handled exactly once. Run under TSan in CI.
TEST_F(VciSetTest, ThreadsRacingForOneVciHandleEachMessageOnce) {
  Make();
  RecordingHandler handler;
  ASSERT_TRUE(vcis_
                  ->Register({.traffic = Traffic::kPointToPoint,
                              .handler = &handler,
                              .message_types = {7}})
                  .ok());
  constexpr int kThreads = 4, kPerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string text = std::to_string(t * kPerThread + i);
        // The transport's calls for VCI 1 need VCI 1's lock.
        {
          std::lock_guard lock(vcis_->mutex(1));
          SendMessage(1, 0, 7, text);
        }
        vcis_->TryProgress(0);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  vcis_->WaitUntil(0, [&] {
    std::lock_guard<std::mutex> lock(handler.mutex);
    return handler.messages.size() == size_t{kThreads * kPerThread};
  });
  std::set<std::string> seen;
  for (const auto& message : handler.messages) {
    EXPECT_TRUE(seen.insert(message.bytes.substr(1)).second) << message.bytes;
  }
  EXPECT_EQ(seen.size(), size_t{kThreads * kPerThread});
}

// A tool's thread reads every VCI variable (as MPI_T_pvar_read does) while
// threads send through the outbox and progress: the counters are written
// under the VCI's lock with plain loads and stores, read without it. Run
// under TSan in CI; the totals must come out exact.
TEST_F(VciSetTest, ToolReadsWhileTrafficFlows) {
  static std::once_flag registered;
  std::call_once(registered, RegisterVciToolVariables);
  Make();
  RecordingHandler handler;
  ASSERT_TRUE(vcis_
                  ->Register({.traffic = Traffic::kPointToPoint,
                              .handler = &handler,
                              .message_types = {7}})
                  .ok());
  std::vector<int> variables;
  for (int i = 0; i < tool::NumPerformanceVariables(); ++i) {
    if (tool::PerformanceVariableAt(i).category == "vci")
      variables.push_back(i);
  }
  ASSERT_EQ(variables.size(), 3u * net::kNumLinks + 5);
  std::atomic<bool> stop{false};
  std::thread tool_thread([&] {
    std::vector<double> values;  // wide enough for either element type
    while (!stop.load()) {
      for (int i : variables) {
        const tool::PerformanceVariable& variable =
            tool::PerformanceVariableAt(i);
        values.assign(variable.count_for(nullptr), 0);
        variable.read(nullptr, values.data());
      }
    }
  });
  constexpr int kThreads = 2, kPerThread = 2000;
  const uint8_t type = 7;
  const std::string text = "0123456789";
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        Outbox::Message message;
        message.header = &type;
        message.header_length = 1;
        message.payload = text.data();
        message.payload_length = text.size();
        {
          std::lock_guard lock(vcis_->mutex(1));
          vcis_->outbox(1).Send(vcis_->transport(), 1, {0, 0}, message);
        }
        vcis_->TryProgress(1);
        vcis_->TryProgress(0);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  vcis_->WaitUntil(0, [&] {
    std::lock_guard lock(vcis_->mutex(1));
    return vcis_->outbox(1).empty() &&
           vcis_->counters(0).messages_received.Read(net::Link::kSelf) ==
               uint64_t{kThreads * kPerThread};
  });
  stop = true;
  tool_thread.join();
  const int sent = tool::FindPerformanceVariable("vci_self_messages_sent",
                                                 MPI_T_PVAR_CLASS_COUNTER);
  const int bytes = tool::FindPerformanceVariable("vci_self_bytes_sent",
                                                  MPI_T_PVAR_CLASS_COUNTER);
  const int received = tool::FindPerformanceVariable(
      "vci_self_messages_received", MPI_T_PVAR_CLASS_COUNTER);
  std::vector<uint64_t> values(
      tool::PerformanceVariableAt(sent).count_for(nullptr));
  ASSERT_GE(values.size(), 2u);
  tool::PerformanceVariableAt(sent).read(nullptr, values.data());
  EXPECT_EQ(values[1], uint64_t{kThreads * kPerThread});
  EXPECT_EQ(values[0], 0u);
  tool::PerformanceVariableAt(bytes).read(nullptr, values.data());
  EXPECT_EQ(values[1], uint64_t{kThreads * kPerThread} * text.size());
  tool::PerformanceVariableAt(received).read(nullptr, values.data());
  EXPECT_EQ(values[0], uint64_t{kThreads * kPerThread});
  EXPECT_EQ(values[1], 0u);
}

}  // namespace
}  // namespace minimpi::vci
