// The conformance suite: every transport that can be created here must pass
// it. Each test forks a job of 2 or 4 ranks (FakeJob bootstraps them) and
// checks data byte for byte. Transports that cannot run here (ib without an
// RDMA device) are skipped with a message.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "net/ib/ib_devices.h"
#include "net/testing/fake_bootstrap.h"
#include "net/testing/transport_checks.h"
#include "net/transport.h"
#include "runtime/settings.h"

namespace minimpi::net {
namespace {

using runtime::Bootstrap;
using runtime::Settings;
using testing::ExchangeBuffer;
using testing::FakeJobOptions;
using testing::FillPattern;
using testing::FirstMismatch;
using testing::FunctionHandler;
using testing::Mix;
using testing::PatternByte;
using testing::RunRanks;

uint64_t MessageSeed(int sender, int receiver, int vci, uint64_t seq) {
  return Mix((uint64_t(sender) << 48) ^ (uint64_t(receiver) << 32) ^
             (uint64_t(vci) << 24) ^ seq);
}

// Length of message `seq`: first every edge case, then a mix of small and
// full-size messages.
size_t MessageLength(uint64_t seq, size_t max_message) {
  const size_t special[] = {0,
                            1,
                            2,
                            7,
                            8,
                            9,
                            15,
                            16,
                            17,
                            63,
                            64,
                            65,
                            127,
                            128,
                            129,
                            1000,
                            4095,
                            4096,
                            max_message - 1,
                            max_message};
  constexpr size_t kSpecial = sizeof(special) / sizeof(special[0]);
  if (seq < kSpecial) return std::min(special[seq], max_message);
  const uint64_t h = Mix(seq);
  if (h % 8 == 0) return max_message - (h >> 32) % 64;
  return (h >> 32) % 300;
}

// How much of message `seq` goes in the header argument of Send.
size_t HeaderLength(uint64_t seq, size_t length) {
  const size_t choices[] = {0, 16, kMaxHeaderBytes, length};
  return std::min(choices[seq % 4], length);
}

PostResult SendPatterned(Transport& transport, int vci, int sender, int peer,
                         uint64_t seq, std::vector<uint8_t>& scratch) {
  const size_t length = MessageLength(seq, transport.max_message_size());
  scratch.resize(length);
  FillPattern(MessageSeed(sender, peer, vci, seq), scratch.data(), length);
  const size_t header = HeaderLength(seq, length);
  return transport.Send(vci, {peer, vci}, scratch.data(), header,
                        scratch.data() + header, length - header);
}

// Checks a received message against what the sender must have sent.
std::string CheckPatterned(const Transport& transport, const Completion& c,
                           int receiver, int vci, uint64_t expected_seq) {
  if (c.type != CompletionType::kReceive) return "not a kReceive";
  const size_t length =
      MessageLength(expected_seq, transport.max_message_size());
  if (c.length != length) {
    return absl::StrCat("message ", expected_seq, " from ", c.peer, " on vci ",
                        vci, " has ", c.length, " bytes, expected ", length);
  }
  const int64_t bad =
      FirstMismatch(MessageSeed(c.peer, receiver, vci, expected_seq),
                    static_cast<const uint8_t*>(c.data), c.length);
  if (bad >= 0) {
    return absl::StrCat("message ", expected_seq, " from ", c.peer, " on vci ",
                        vci, " differs at byte ", bad);
  }
  return "";
}

struct Param {
  std::string transport;
  int ranks;
  // Each rank's pretend node; empty: all on one node.
  std::vector<int> nodes = {};
  // net/ib over the software device (net/ib/testing) instead of hardware.
  bool soft_device = false;
};

// The software verbs device, from this test's runfiles.
std::string SoftDeviceLibrary() {
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return "";
  return absl::StrCat(cwd, "/net/ib/testing/libminimpi_softib.so");
}

void PrintTo(const Param& param, std::ostream* out) {
  *out << param.transport << " with " << param.ranks << " ranks";
  if (!param.nodes.empty()) *out << " on several nodes";
  if (param.soft_device) *out << " over the software verbs device";
}

class TransportConformanceTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (GetParam().transport == "ib" && !GetParam().soft_device &&
        ib::ListRdmaDevices().empty()) {
      GTEST_SKIP() << "net/ib on hardware SKIPPED: no RDMA device on this "
                      "machine (ibv_devices lists none); the software-device "
                      "runs cover net/ib here";
    }
  }

  // Runs `body` on every rank of a fresh job with its own transport.
  void RunJob(Settings settings,
              std::function<absl::Status(Transport&, Bootstrap&)> body) {
    settings.transport = GetParam().transport;
    if (GetParam().soft_device) {
      settings.ib_test_device = SoftDeviceLibrary();
      // Any receiver-not-ready is a failure: credits must prevent them.
      setenv("MINIMPI_SOFTIB_MAX_RNR", "0", 1);
    }
    FakeJobOptions options;
    options.size = GetParam().ranks;
    options.node_of_rank = GetParam().nodes;
    options.timeout = absl::Seconds(240);
    absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
      absl::StatusOr<std::unique_ptr<Transport>> transport =
          CreateTransport(bootstrap, settings);
      if (!transport.ok()) return transport.status();
      RETURN_IF_ERROR(body(**transport, bootstrap));
      // Nobody tears down while a peer may still read its memory.
      return bootstrap.Fence();
    });
    EXPECT_TRUE(status.ok()) << status;
  }
};

// Every rank sends to every rank (itself included) on several VCIs at once,
// messages of every size up to the maximum; each connection must deliver in
// order and intact, and mutual flooding must not deadlock.
TEST_P(TransportConformanceTest, OrderedDeliveryOfAllSizesOnSeveralVcis) {
  Settings settings;
  settings.num_vcis = 3;
  settings.endpoint_vcis = 0;
  settings.eager_max = 4096;
  constexpr uint64_t kMessages = 3000;  // per connection
  RunJob(settings, [&](Transport& transport, Bootstrap& bootstrap) {
    const int size = bootstrap.size();
    const int me = bootstrap.rank();
    const int vcis = transport.num_vcis();
    RETURN_IF_FALSE(transport.max_message_size() >= kMaxHeaderBytes + 4096);
    std::vector<uint64_t> sent(vcis * size, 0), received(vcis * size, 0);
    std::string error;
    FunctionHandler handler([&](int vci, const Completion& c) {
      uint64_t& next = received[vci * size + c.peer];
      std::string problem = CheckPatterned(transport, c, me, vci, next);
      if (!problem.empty() && error.empty()) error = problem;
      ++next;
    });
    uint64_t retries = 0;
    bool done = false;
    while (!done && error.empty()) {
      done = true;
      for (int vci = 0; vci < vcis; ++vci) {
        for (int peer = 0; peer < size; ++peer) {
          uint64_t& next = sent[vci * size + peer];
          std::vector<uint8_t> scratch;
          // A burst per connection, so rings fill up and kRetry happens.
          for (int burst = 0; burst < 8 && next < kMessages; ++burst) {
            if (SendPatterned(transport, vci, me, peer, next, scratch) ==
                PostResult::kRetry) {
              ++retries;
              break;
            }
            ++next;
          }
          if (next < kMessages || received[vci * size + peer] < kMessages) {
            done = false;
          }
        }
        while (transport.Poll(vci, handler, 16) > 0) {
        }
      }
    }
    RETURN_IF_FALSE(error.empty(), error);
    for (int vci = 0; vci < vcis; ++vci) {
      for (int peer = 0; peer < size; ++peer) {
        RETURN_IF_FALSE(received[vci * size + peer] == kMessages);
      }
    }
    return absl::OkStatus();
  });
}

// Any VCI talks to any VCI of any rank (endpoints need it): every rank sends
// from each of its VCIs to each VCI of every rank, itself included, at once.
// Each of those connections delivers in order and intact, and says which
// VCI sent. Connections are made on first use, by the sender alone.
TEST_P(TransportConformanceTest, AnyVciReachesAnyVciOfAnyRank) {
  Settings settings;
  settings.num_vcis = 2;
  settings.endpoint_vcis = 2;
  settings.eager_max = 2048;
  settings.shm_ring_bytes = 8192;      // small: kRetry happens
  constexpr uint64_t kMessages = 300;  // per connection
  RunJob(settings, [&](Transport& transport, Bootstrap& bootstrap) {
    const int size = bootstrap.size();
    const int me = bootstrap.rank();
    const int vcis = transport.num_vcis();
    RETURN_IF_FALSE(vcis == 4, "num_vcis() is ", vcis);
    // By (our VCI, peer, peer's VCI) and (our VCI, sender, sender's VCI).
    auto index = [&](int vci, int rank, int other_vci) {
      return (size_t(vci) * size + rank) * vcis + other_vci;
    };
    std::vector<uint64_t> sent(size_t(vcis) * size * vcis, 0);
    std::vector<uint64_t> received(sent.size(), 0);
    std::string error;
    FunctionHandler handler([&](int vci, const Completion& c) {
      if (c.peer_vci < 0 || c.peer_vci >= vcis) {
        if (error.empty()) error = absl::StrCat("peer VCI ", c.peer_vci);
        return;
      }
      uint64_t& next = received[index(vci, c.peer, c.peer_vci)];
      // The seed names both VCIs of the connection.
      std::string problem =
          CheckPatterned(transport, c, me, c.peer_vci * 16 + vci, next);
      if (!problem.empty() && error.empty()) error = problem;
      ++next;
    });
    std::vector<uint8_t> scratch;
    bool done = false;
    while (!done && error.empty()) {
      done = true;
      for (int vci = 0; vci < vcis; ++vci) {
        for (int peer = 0; peer < size; ++peer) {
          for (int peer_vci = 0; peer_vci < vcis; ++peer_vci) {
            uint64_t& next = sent[index(vci, peer, peer_vci)];
            for (int burst = 0; burst < 4 && next < kMessages; ++burst) {
              const size_t length =
                  MessageLength(next, transport.max_message_size());
              scratch.resize(length);
              FillPattern(MessageSeed(me, peer, vci * 16 + peer_vci, next),
                          scratch.data(), length);
              const size_t header = HeaderLength(next, length);
              if (transport.Send(vci, {peer, peer_vci}, scratch.data(), header,
                                 scratch.data() + header,
                                 length - header) == PostResult::kRetry) {
                break;
              }
              ++next;
            }
            if (next < kMessages) done = false;
          }
        }
        while (transport.Poll(vci, handler, 16) > 0) {
        }
      }
      for (uint64_t count : received) done = done && count == kMessages;
    }
    RETURN_IF_FALSE(error.empty(), error);
    return absl::OkStatus();
  });
}

// Sends to oneself through a tiny ring: the ring fills (kRetry), draining it
// makes room, and nothing is lost or reordered.
TEST_P(TransportConformanceTest, SelfSendsSurviveBackPressure) {
  Settings settings;
  settings.num_vcis = 2;
  settings.shm_ring_bytes = 4096;
  settings.eager_max = 512;
  constexpr uint64_t kMessages = 20000;
  RunJob(settings, [&](Transport& transport, Bootstrap& bootstrap) {
    const int me = bootstrap.rank();
    constexpr int kVci = 1;
    uint64_t received = 0;
    std::string error;
    FunctionHandler handler([&](int vci, const Completion& c) {
      if (error.empty() && (vci != kVci || c.peer != me))
        error = "wrong source";
      std::string problem = CheckPatterned(transport, c, me, kVci, received);
      if (!problem.empty() && error.empty()) error = problem;
      ++received;
    });
    std::vector<uint8_t> scratch;
    uint64_t retries = 0;
    uint64_t accepted_before_first_retry = 0;
    for (uint64_t seq = 0; seq < kMessages && error.empty();) {
      if (SendPatterned(transport, kVci, me, me, seq, scratch) ==
          PostResult::kOk) {
        ++seq;
        continue;
      }
      if (retries++ == 0) accepted_before_first_retry = seq;
      transport.Poll(kVci, handler, 3);
    }
    while (transport.Poll(kVci, handler, 64) > 0) {
    }
    RETURN_IF_FALSE(error.empty(), error);
    RETURN_IF_FALSE(received == kMessages, "received ", received);
    RETURN_IF_FALSE(retries > 0, "a 4 KiB ring never pushed back");
    if (std::string(transport.name()) == "shm") {
      // Records are 64-byte aligned: at most 4096 / 64 fit, at least one.
      RETURN_IF_FALSE(accepted_before_first_retry >= 1 &&
                          accepted_before_first_retry <= 4096 / 64,
                      "accepted ", accepted_before_first_retry);
    }
    return absl::OkStatus();
  });
}

// Every rank floods its right neighbour, which does not poll until the
// sender saw kRetry; then everything must still arrive, in order.
TEST_P(TransportConformanceTest, BackPressureBetweenRanksLosesNothing) {
  Settings settings;
  settings.num_vcis = 1;
  settings.shm_ring_bytes = 12288;
  settings.eager_max = 1024;
  constexpr uint64_t kMessages = 5000;
  RunJob(settings, [&](Transport& transport, Bootstrap& bootstrap) {
    const int size = bootstrap.size();
    const int me = bootstrap.rank();
    const int right = (me + 1) % size;
    const int left = (me + size - 1) % size;
    std::vector<uint8_t> scratch;
    uint64_t sent = 0;
    while (SendPatterned(transport, 0, me, right, sent, scratch) ==
           PostResult::kOk) {
      ++sent;
      RETURN_IF_FALSE(sent < 1000000, "the transport never pushed back");
    }
    // net/ib connects on first contact, through its peer's connection
    // manager, and may push back before the connection is up.
    RETURN_IF_FALSE(sent > 0 || std::string(transport.name()).find("ib") !=
                                    std::string::npos);
    // Nobody has polled yet; now everyone may.
    RETURN_IF_ERROR(bootstrap.Fence());
    uint64_t received = 0;
    std::string error;
    FunctionHandler handler([&](int, const Completion& c) {
      if (error.empty() && c.peer != left) error = "wrong source";
      std::string problem = CheckPatterned(transport, c, me, 0, received);
      if (!problem.empty() && error.empty()) error = problem;
      ++received;
    });
    while ((sent < kMessages || received < kMessages) && error.empty()) {
      if (sent < kMessages && SendPatterned(transport, 0, me, right, sent,
                                            scratch) == PostResult::kOk) {
        ++sent;
      }
      transport.Poll(0, handler, 4);
    }
    RETURN_IF_FALSE(error.empty(), error);
    return absl::OkStatus();
  });
}

// Polls `vci` until the kLocalDone for `context` arrives.
absl::Status WaitLocalDone(Transport& transport, int vci, uint64_t context) {
  bool done = false;
  std::string error;
  FunctionHandler handler([&](int, const Completion& c) {
    if (c.type == CompletionType::kLocalDone && c.context == context) {
      done = true;
    } else if (error.empty()) {
      error = absl::StrCat("unexpected completion of type ", int(c.type),
                           " context ", c.context);
    }
  });
  while (!done && error.empty()) transport.Poll(vci, handler, 8);
  RETURN_IF_FALSE(error.empty(), error);
  return absl::OkStatus();
}

// RdmaRead and RdmaWrite from 0 B to 64 MiB with the right neighbour,
// including unaligned addresses, checked byte for byte.
TEST_P(TransportConformanceTest, RdmaReadAndWriteMoveExactBytes) {
  Settings settings;
  settings.num_vcis = 2;
  RunJob(settings, [&](Transport& transport, Bootstrap& bootstrap) {
    const int size = bootstrap.size();
    const int me = bootstrap.rank();
    const int right = (me + 1) % size;
    const int left = (me + size - 1) % size;
    const size_t sizes[] = {0, 1, 7, 4096, (1u << 20) + 3, 64u << 20};
    uint64_t context = 100;
    for (size_t length : sizes) {
      // Buffers one byte longer so that an overrun is visible; odd offsets.
      std::vector<uint8_t> source(length + 8), landing(length + 8, 0xEE),
          fetched(length + 8, 0xEE);
      const uint64_t my_seed = Mix(me * 1000 + length);
      FillPattern(my_seed, source.data() + 1, length);
      absl::StatusOr<MemoryRegion> source_region =
          transport.RegisterMemory(source.data(), source.size());
      absl::StatusOr<MemoryRegion> landing_region =
          transport.RegisterMemory(landing.data(), landing.size());
      absl::StatusOr<MemoryRegion> fetched_region =
          transport.RegisterMemory(fetched.data(), fetched.size());
      RETURN_IF_FALSE(source_region.ok() && landing_region.ok() &&
                      fetched_region.ok());
      RETURN_IF_ERROR(bootstrap.Put(
          "rdma", absl::StrCat(reinterpret_cast<uint64_t>(source.data() + 1),
                               " ", source_region->remote_key, " ",
                               reinterpret_cast<uint64_t>(landing.data() + 1),
                               " ", landing_region->remote_key)));
      RETURN_IF_ERROR(bootstrap.Commit());
      RETURN_IF_ERROR(bootstrap.Fence());
      absl::StatusOr<std::string> peer = bootstrap.Get(right, "rdma");
      RETURN_IF_FALSE(peer.ok());
      unsigned long long source_address = 0, landing_address = 0;
      unsigned source_key = 0, landing_key = 0;
      RETURN_IF_FALSE(std::sscanf(peer->c_str(), "%llu %u %llu %u",
                                  &source_address, &source_key,
                                  &landing_address, &landing_key) == 4);

      const int vci = static_cast<int>(length % 2);
      while (transport.RdmaRead(vci, {right, vci}, fetched.data() + 1,
                                *fetched_region,
                                RemoteBuffer{source_address, source_key},
                                length, ++context) == PostResult::kRetry) {
      }
      RETURN_IF_ERROR(WaitLocalDone(transport, vci, context));
      const int64_t bad_read =
          FirstMismatch(Mix(right * 1000 + length), fetched.data() + 1, length);
      RETURN_IF_FALSE(bad_read < 0, "read of ", length, " B: byte ", bad_read);
      RETURN_IF_FALSE(fetched[0] == 0xEE && fetched[length + 1] == 0xEE,
                      "read of ", length, " B overran the buffer");

      while (transport.RdmaWrite(vci, {right, vci}, source.data() + 1,
                                 *source_region,
                                 RemoteBuffer{landing_address, landing_key},
                                 length, ++context) == PostResult::kRetry) {
      }
      RETURN_IF_ERROR(WaitLocalDone(transport, vci, context));
      RETURN_IF_ERROR(bootstrap.Fence());  // every write has landed
      const int64_t bad_write =
          FirstMismatch(Mix(left * 1000 + length), landing.data() + 1, length);
      RETURN_IF_FALSE(bad_write < 0, "write of ", length, " B: byte ",
                      bad_write);
      RETURN_IF_FALSE(landing[0] == 0xEE && landing[length + 1] == 0xEE,
                      "write of ", length, " B overran the buffer");
      RETURN_IF_ERROR(bootstrap.Fence());  // nobody reads freed buffers
      transport.DeregisterMemory(*source_region);
      transport.DeregisterMemory(*landing_region);
      transport.DeregisterMemory(*fetched_region);
    }
    return absl::OkStatus();
  });
}

// Gathered reads: the peer's strided blocks land in local blocks of another
// size and stride, in order, with nothing written between them; up to the
// most segments a post may carry.
TEST_P(TransportConformanceTest, GatheredReadMovesExactBytes) {
  Settings settings;
  settings.num_vcis = 2;
  RunJob(settings, [&](Transport& transport, Bootstrap& bootstrap) {
    const int size = bootstrap.size();
    const int me = bootstrap.rank();
    const int right = (me + 1) % size;
    const int max_segments = transport.max_io_segments();
    // (remote block, local block, blocks on the remote side)
    const struct {
      size_t remote_block, local_block, remote_blocks;
    } shapes[] = {{8, 8, 1},
                  {8, 3, 100},
                  {5, 16, 333},
                  {64, 70, 1000},
                  {1, 1, size_t(max_segments)},
                  {4096, 200, 40}};
    uint64_t context = 1000;
    for (const auto& shape : shapes) {
      const size_t total = shape.remote_block * shape.remote_blocks;
      const size_t local_blocks =
          (total + shape.local_block - 1) / shape.local_block;
      if (local_blocks > size_t(max_segments)) continue;
      // Remote: blocks at twice their length. Local: blocks 3 bytes apart.
      std::vector<uint8_t> source(2 * total + 8);
      const uint64_t seed = Mix(me * 7919 + total);
      FillPattern(seed, source.data(), source.size());
      std::vector<uint8_t> landing(local_blocks * (shape.local_block + 3) + 8,
                                   0xEE);
      absl::StatusOr<MemoryRegion> source_region =
          transport.RegisterMemory(source.data(), source.size());
      absl::StatusOr<MemoryRegion> landing_region =
          transport.RegisterMemory(landing.data(), landing.size());
      RETURN_IF_FALSE(source_region.ok() && landing_region.ok());
      RETURN_IF_ERROR(bootstrap.Put(
          "gather", absl::StrCat(reinterpret_cast<uint64_t>(source.data()), " ",
                                 source_region->remote_key)));
      RETURN_IF_ERROR(bootstrap.Commit());
      RETURN_IF_ERROR(bootstrap.Fence());
      absl::StatusOr<std::string> peer = bootstrap.Get(right, "gather");
      RETURN_IF_FALSE(peer.ok());
      unsigned long long remote_base = 0;
      unsigned remote_key = 0;
      RETURN_IF_FALSE(std::sscanf(peer->c_str(), "%llu %u", &remote_base,
                                  &remote_key) == 2);
      std::vector<IoSegment> remote(shape.remote_blocks), local(local_blocks);
      for (size_t b = 0; b < shape.remote_blocks; ++b) {
        remote[b] = {remote_base + 2 * b * shape.remote_block,
                     shape.remote_block};
      }
      for (size_t b = 0; b < local_blocks; ++b) {
        const size_t length =
            std::min(shape.local_block, total - b * shape.local_block);
        local[b] = {reinterpret_cast<uint64_t>(landing.data()) +
                        b * (shape.local_block + 3),
                    length};
      }
      const int vci = static_cast<int>(total % 2);
      while (transport.RdmaReadv(vci, {right, vci}, local.data(),
                                 static_cast<int>(local.size()),
                                 *landing_region, remote.data(),
                                 static_cast<int>(remote.size()), remote_key,
                                 ++context) == PostResult::kRetry) {
      }
      RETURN_IF_ERROR(WaitLocalDone(transport, vci, context));
      // The bytes in order, and 0xEE everywhere else.
      const uint64_t right_seed = Mix(right * 7919 + total);
      std::vector<uint8_t> expected_landing(landing.size(), 0xEE);
      for (size_t i = 0; i < total; ++i) {
        const size_t remote_offset =
            (i / shape.remote_block) * 2 * shape.remote_block +
            i % shape.remote_block;
        const size_t local_offset =
            (i / shape.local_block) * (shape.local_block + 3) +
            i % shape.local_block;
        expected_landing[local_offset] = PatternByte(right_seed, remote_offset);
      }
      size_t bad = 0;
      while (bad < landing.size() && landing[bad] == expected_landing[bad]) {
        ++bad;
      }
      RETURN_IF_FALSE(bad == landing.size(), "gathered read of ", total,
                      " B in ", shape.remote_blocks, "/", local_blocks,
                      " segments: byte ", bad, " of the landing buffer wrong");
      RETURN_IF_ERROR(bootstrap.Fence());  // nobody frees what a peer reads
      transport.DeregisterMemory(*source_region);
      transport.DeregisterMemory(*landing_region);
    }
    return absl::OkStatus();
  });
}

// SendPacked: the payload written in place arrives like a Send's, in order
// with Sends on the same connection.
TEST_P(TransportConformanceTest, PackedSendsArriveLikeSends) {
  Settings settings;
  settings.num_vcis = 1;
  settings.eager_max = 2048;
  RunJob(settings, [&](Transport& transport, Bootstrap& bootstrap) {
    const int size = bootstrap.size();
    const int me = bootstrap.rank();
    const int right = (me + 1) % size;
    const int left = (me + size - 1) % size;
    constexpr uint64_t kMessages = 500;
    std::vector<uint8_t> scratch;
    uint64_t sent = 0, received = 0;
    std::string error;
    FunctionHandler handler([&](int, const Completion& c) {
      if (!error.empty()) return;
      if (c.peer != left) {
        error = absl::StrCat("message from ", c.peer, ", expected ", left);
        return;
      }
      error = CheckPatterned(transport, c, me, 0, received++);
    });
    while ((sent < kMessages || received < kMessages) && error.empty()) {
      if (sent < kMessages) {
        PostResult result;
        if (sent % 2 == 0) {
          result = SendPatterned(transport, 0, me, right, sent, scratch);
        } else {
          const size_t length =
              MessageLength(sent, transport.max_message_size());
          const size_t header = HeaderLength(sent, length);
          scratch.resize(length);
          FillPattern(MessageSeed(me, right, 0, sent), scratch.data(), length);
          result = transport.SendPacked(
              0, {right, 0}, scratch.data(), header, length - header,
              [&](void* destination) {
                std::memcpy(destination, scratch.data() + header,
                            length - header);
              });
        }
        if (result == PostResult::kOk) ++sent;
      }
      transport.Poll(0, handler, 16);
    }
    RETURN_IF_FALSE(error.empty(), error);
    return absl::OkStatus();
  });
}

// Sends and writes with immediate interleaved on one connection: the
// receiver sees them in posting order, and when a kWriteImmediate arrives
// its data is already in place.
// Every third write is an RdmaWritev: of three pieces, or of one piece
// (which net/shm lets the receiver pull when it is at least pull_min bytes).
TEST_P(TransportConformanceTest, WriteImmediateIsOrderedAfterSends) {
  for (size_t pull_min : {size_t{0}, size_t{1024}, size_t{3000}}) {
    Settings settings;
    settings.num_vcis = 3;
    settings.shm_ring_bytes = 8 * 8192 + 4096;
    settings.shm_pull_min = pull_min;
    constexpr int kVci = 2;
    constexpr int kOperations = 300;
    constexpr size_t kSlotBytes = 8192;
    RunJob(settings, [&](Transport& transport, Bootstrap& bootstrap) {
      const int size = bootstrap.size();
      const int me = bootstrap.rank();
      const int right = (me + 1) % size;
      const int left = (me + size - 1) % size;
      auto is_write = [](int op) { return op % 3 != 0; };
      auto write_length = [](int op) { return size_t(Mix(op) % kSlotBytes); };
      std::vector<uint8_t> landing(kOperations * kSlotBytes, 0);
      std::vector<uint8_t> source(kOperations * kSlotBytes);
      for (int op = 0; op < kOperations; ++op) {
        FillPattern(Mix(me * 7919 + op), source.data() + op * kSlotBytes,
                    kSlotBytes);
      }
      absl::StatusOr<MemoryRegion> landing_region =
          transport.RegisterMemory(landing.data(), landing.size());
      absl::StatusOr<MemoryRegion> source_region =
          transport.RegisterMemory(source.data(), source.size());
      RETURN_IF_FALSE(landing_region.ok() && source_region.ok());
      absl::StatusOr<RemoteBuffer> peer = ExchangeBuffer(
          bootstrap, "landing", landing.data(), *landing_region, right);
      RETURN_IF_FALSE(peer.ok());
      const uint64_t landing_address = peer->address;
      const uint32_t landing_key = peer->remote_key;

      int next_expected = 0;
      int local_done = 0;
      std::string error;
      FunctionHandler handler([&](int vci, const Completion& c) {
        if (c.type == CompletionType::kLocalDone) {
          ++local_done;
          return;
        }
        const int op = next_expected++;
        std::string problem;
        if (vci != kVci || c.peer != left) {
          problem = "wrong vci or source";
        } else if (is_write(op)) {
          if (c.type != CompletionType::kWriteImmediate ||
              c.immediate != uint32_t(op) * 2654435761u ||
              c.length != write_length(op)) {
            problem = absl::StrCat("operation ", op, ": expected write (type ",
                                   int(c.type), ", immediate ", c.immediate,
                                   ", length ", c.length, ")");
          } else {
            const int64_t bad =
                FirstMismatch(Mix(left * 7919 + op),
                              landing.data() + op * kSlotBytes, c.length);
            if (bad >= 0) {
              problem =
                  absl::StrCat("write ", op, " not visible at byte ", bad);
            }
          }
        } else if (c.type != CompletionType::kReceive || c.length != 4 ||
                   std::memcmp(c.data, &op, 4) != 0) {
          problem = absl::StrCat("operation ", op, ": expected a 4-byte send");
        }
        if (!problem.empty() && error.empty()) error = problem;
      });

      int writes_posted = 0;
      for (int op = 0; op < kOperations && error.empty();) {
        PostResult result;
        if (is_write(op) && op % 3 == 2) {
          // The gathered form: the same bytes in three local pieces.
          const uint64_t base =
              reinterpret_cast<uint64_t>(source.data() + op * kSlotBytes);
          const size_t length = write_length(op);
          const IoSegment pieces[3] = {
              {base, length / 3},
              {base + length / 3, length / 3},
              {base + 2 * (length / 3), length - 2 * (length / 3)}};
          const IoSegment whole[1] = {{base, length}};
          const bool in_one = (op / 3) % 2 == 0;
          const uint32_t immediate = uint32_t(op) * 2654435761u;
          result = transport.RdmaWritev(
              kVci, {right, kVci}, in_one ? whole : pieces, in_one ? 1 : 3,
              *source_region,
              RemoteBuffer{landing_address + op * kSlotBytes, landing_key},
              &immediate, op);
        } else if (is_write(op)) {
          result = transport.RdmaWriteImmediate(
              kVci, {right, kVci}, source.data() + op * kSlotBytes,
              *source_region,
              RemoteBuffer{landing_address + op * kSlotBytes, landing_key},
              write_length(op), uint32_t(op) * 2654435761u, op);
        } else {
          result = transport.Send(kVci, {right, kVci}, &op, 4, nullptr, 0);
        }
        if (result == PostResult::kOk) {
          writes_posted += is_write(op);
          ++op;
        } else {
          transport.Poll(kVci, handler, 4);
        }
      }
      while ((next_expected < kOperations || local_done < writes_posted) &&
             error.empty()) {
        transport.Poll(kVci, handler, 16);
      }
      RETURN_IF_FALSE(error.empty(), error);
      return absl::OkStatus();
    });
  }
}

// VCIs nobody used so far work as well as a busy one, in both directions.
TEST_P(TransportConformanceTest, UntouchedVcisStillWork) {
  Settings settings;
  settings.num_vcis = 8;
  RunJob(settings, [&](Transport& transport, Bootstrap& bootstrap) {
    const int size = bootstrap.size();
    const int me = bootstrap.rank();
    for (int vci : {0, 7, 4}) {
      std::vector<uint8_t> scratch;
      for (int peer = 0; peer < size; ++peer) {
        // kRetry (net/ib before its connection is up): progress, retry.
        const absl::Time deadline = absl::Now() + absl::Seconds(60);
        FunctionHandler ignore([](int, const Completion&) {});
        while (SendPatterned(transport, vci, me, peer, 19, scratch) !=
               PostResult::kOk) {
          RETURN_IF_FALSE(
              std::string(transport.name()).find("ib") != std::string::npos &&
                  absl::Now() < deadline,
              "send on untouched VCI ", vci, " pushed back");
          transport.Poll(vci, ignore, 0);
        }
      }
      int received = 0;
      std::string error;
      FunctionHandler handler([&](int v, const Completion& c) {
        std::string problem = CheckPatterned(transport, c, me, v, 19);
        if (!problem.empty() && error.empty()) error = problem;
        ++received;
      });
      while (received < size && error.empty()) {
        transport.Poll(vci, handler, 8);
      }
      RETURN_IF_FALSE(error.empty(), error);
    }
    return absl::OkStatus();
  });
}

// A sleeper on a doorbell is woken by whatever ends its wait: a message to
// its VCI (or to another VCI that shares the doorbell), a write with
// immediate, and the receiver's take of a pulled write (the sender waits for
// its local completion). Each round the receiver arms, looks once, and
// sleeps; the sender answers after a varying delay, so its message lands
// before the arming, between the look and the sleep, or during the sleep.
// A lost wakeup shows as a sleep that runs into its (long) timeout.
TEST_P(TransportConformanceTest, DoorbellWakesSleepersForEveryArrival) {
  Settings settings;
  settings.num_vcis = 3;       // VCIs 0-2 share VCI 0's doorbell
  settings.endpoint_vcis = 2;  // VCIs 3 and 4 have their own
  settings.shm_pull_min = 4096;
  constexpr int kRounds = 150;
  constexpr size_t kWriteBytes = 8192;       // pulled by the receiver
  constexpr size_t kSmallWriteBytes = 1024;  // written by the sender
  constexpr int64_t kLongSleepNs = 20'000'000'000;
  RunJob(settings, [&](Transport& transport, Bootstrap& bootstrap) {
    if (!transport.has_doorbell()) return absl::OkStatus();
    const int me = bootstrap.rank();
    const int size = bootstrap.size();
    RETURN_IF_FALSE(transport.DoorbellOf(2) == transport.DoorbellOf(0));
    RETURN_IF_FALSE(transport.DoorbellOf(3) != transport.DoorbellOf(0));
    RETURN_IF_FALSE(transport.DoorbellOf(4) != transport.DoorbellOf(3));
    std::vector<uint8_t> landing(kWriteBytes), source(kWriteBytes);
    FillPattern(Mix(me), source.data(), source.size());
    absl::StatusOr<MemoryRegion> landing_region =
        transport.RegisterMemory(landing.data(), landing.size());
    absl::StatusOr<MemoryRegion> source_region =
        transport.RegisterMemory(source.data(), source.size());
    RETURN_IF_FALSE(landing_region.ok() && source_region.ok());
    // Everyone writes to rank 0's landing buffer.
    absl::StatusOr<RemoteBuffer> landing_at_0 = ExchangeBuffer(
        bootstrap, "landing", landing.data(), *landing_region, 0);
    RETURN_IF_FALSE(landing_at_0.ok());

    int arrivals = 0;
    int local_done = 0;
    FunctionHandler handler([&](int, const Completion& c) {
      if (c.type == CompletionType::kLocalDone) {
        ++local_done;
      } else {
        ++arrivals;
      }
    });
    // Sleeps on `vci`'s doorbell until `done`, looking once after each
    // arming; false when a sleep ran into its timeout (a lost wakeup).
    auto sleep_until = [&](int vci, int sleep_vci, auto done) {
      while (true) {
        const uint64_t token = transport.ArmDoorbell(sleep_vci);
        transport.Poll(vci, handler, 64);
        if (done()) return true;
        const auto start = absl::Now();
        transport.SleepOnDoorbell(sleep_vci, token, kLongSleepNs);
        if (absl::Now() - start > absl::Seconds(10)) return false;
        transport.Poll(vci, handler, 64);
        if (done()) return true;
      }
    };
    const uint8_t go = 1;
    for (int round = 0; round < kRounds; ++round) {
      // Kinds: a send to a shared VCI slept on through VCI 0's doorbell, a
      // send to an endpoint VCI, a write with immediate, a pulled write.
      const int kind = round % 4;
      const int vci = kind == 0 ? 2 : kind == 1 ? 3 : 4;
      const int sleep_vci = kind == 0 ? 0 : vci;
      if (me == 0) {
        const int expected = (round + 1) * (size - 1);
        // Let the senders go, then sleep until all of them arrived.
        for (int peer = 1; peer < size; ++peer) {
          while (transport.Send(vci, {peer, vci}, &go, 1, nullptr, 0) !=
                 PostResult::kOk) {
            transport.Poll(vci, handler, 64);
          }
        }
        RETURN_IF_FALSE(
            sleep_until(vci, sleep_vci, [&] { return arrivals >= expected; }),
            "lost wakeup in round ", round);
        // The bytes landed before the notice woke us (with one sender:
        // several write the same buffer at once).
        if (kind >= 2 && size == 2) {
          RETURN_IF_FALSE(
              FirstMismatch(Mix(1), landing.data(),
                            kind == 2 ? kSmallWriteBytes : kWriteBytes) < 0,
              "round ", round);
        }
        continue;
      }
      // A sender waits for the go (it may have come while it finished the
      // last round), lets a varying time pass, and sends.
      while (arrivals < round + 1) transport.Poll(vci, handler, 64);
      const auto delay = absl::Microseconds(Mix(round * 31 + me) % 300);
      const auto until = absl::Now() + delay;
      while (absl::Now() < until) {
      }
      PostResult result;
      const int done_before = local_done;
      do {
        if (kind < 2) {
          result = transport.Send(vci, {0, vci}, &go, 1, nullptr, 0);
        } else {
          // Kind 2 is below the pull threshold: written here, announced
          // by a notice; kind 3 is pulled by the receiver.
          const IoSegment piece = {reinterpret_cast<uint64_t>(source.data()),
                                   kind == 2 ? kSmallWriteBytes : kWriteBytes};
          const uint32_t immediate = round;
          result =
              transport.RdmaWritev(vci, {0, vci}, &piece, 1, *source_region,
                                   *landing_at_0, &immediate, round);
        }
        if (result != PostResult::kOk) transport.Poll(vci, handler, 64);
      } while (result != PostResult::kOk);
      if (kind >= 2) {
        // The receiver finishes a pulled write: wait for it asleep.
        RETURN_IF_FALSE(
            sleep_until(vci, vci, [&] { return local_done > done_before; }),
            "lost wakeup for a pulled write in round ", round);
      }
    }
    return absl::OkStatus();
  });
}

// A thread of the same process rings the doorbell for a sleeper.
TEST(ShmTransportTest, RingDoorbellWakesAThreadOfTheSameProcess) {
  Settings settings;
  settings.transport = "shm";
  settings.num_vcis = 2;
  settings.endpoint_vcis = 1;
  FakeJobOptions options;
  options.size = 1;
  absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
    absl::StatusOr<std::unique_ptr<Transport>> transport =
        CreateTransport(bootstrap, settings);
    if (!transport.ok()) return transport.status();
    for (int vci : {0, 1, 2}) {
      for (int round = 0; round < 50; ++round) {
        std::atomic<bool> rung{false};
        const uint64_t token = (*transport)->ArmDoorbell(vci);
        std::thread ringer([&] {
          rung.store(true, std::memory_order_seq_cst);
          (*transport)->RingDoorbell(vci);
        });
        const auto start = absl::Now();
        if (!rung.load(std::memory_order_seq_cst)) {
          (*transport)->SleepOnDoorbell(vci, token, 20'000'000'000);
        }
        ringer.join();
        RETURN_IF_FALSE(absl::Now() - start < absl::Seconds(10),
                        "lost wakeup on VCI ", vci);
      }
    }
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// Every transport of the table (TransportChoices) runs here; the test
// below fails when one does not.
std::vector<Param> ConformanceParams() {
  return {Param{"shm", 2}, Param{"shm", 4}, Param{"ib", 2}, Param{"ib", 4},
          Param{"tcp", 2}, Param{"tcp", 4},
          // auto across pretend nodes: shm inside each, tcp between them
          Param{"auto", 4, {0, 0, 1, 1}}, Param{"auto", 3, {0, 1, 1}},
          // net/ib over the software device; auto then puts pairs on
          // different pretend nodes on it
          Param{"ib", 2, {}, true}, Param{"ib", 4, {}, true},
          Param{"ib", 3, {0, 1, 1}, true},
          Param{"auto", 4, {0, 0, 1, 1}, true}};
}

// (mpi/instance/choice_lists_test.cc checks the names are unique and that
// the settings take them.)
TEST(TransportTableTest, EveryTransportRunsTheConformanceTests) {
  for (const TransportChoice& choice : TransportChoices()) {
    bool exercised = false;
    for (const Param& param : ConformanceParams()) {
      exercised |= param.transport == choice.name;
    }
    EXPECT_TRUE(exercised) << choice.name << " has no conformance parameters";
  }
  EXPECT_STREQ(TransportChoices().front().name, Settings().transport.c_str())
      << "the default first";
}

INSTANTIATE_TEST_SUITE_P(Transports, TransportConformanceTest,
                         ::testing::ValuesIn(ConformanceParams()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return absl::StrCat(
                               info.param.transport, "_", info.param.ranks,
                               "ranks",
                               info.param.nodes.empty() ? "" : "_2nodes",
                               info.param.soft_device ? "_softib" : "");
                         });

// Selection: shared memory cannot reach another node, and says so; auto
// gives each pair its own transport.
TEST(CreateTransportTest, ShmRefusesRanksOnOtherNodes) {
  for (const char* choice : {"shm"}) {
    FakeJobOptions options;
    options.size = 3;
    options.node_of_rank = {0, 0, 1};
    absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
      Settings settings;
      settings.transport = choice;
      absl::StatusOr<std::unique_ptr<Transport>> transport =
          CreateTransport(bootstrap, settings);
      RETURN_IF_FALSE(!transport.ok(), "created a transport anyway");
      const std::string message(transport.status().message());
      RETURN_IF_FALSE(message.find("node") != std::string::npos, message);
      return absl::OkStatus();
    });
    EXPECT_TRUE(status.ok()) << choice << ": " << status;
  }
}

TEST(CreateTransportTest, IbWithoutDeviceSaysSo) {
  if (!ib::ListRdmaDevices().empty()) GTEST_SKIP() << "an RDMA device exists";
  FakeJobOptions options;
  options.size = 1;
  absl::Status status = RunRanks(options, [](Bootstrap& bootstrap) {
    Settings settings;
    settings.transport = "ib";
    absl::StatusOr<std::unique_ptr<Transport>> transport =
        CreateTransport(bootstrap, settings);
    RETURN_IF_FALSE(!transport.ok());
    const std::string message(transport.status().message());
    RETURN_IF_FALSE(message.find("RDMA device") != std::string::npos, message);
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// The shm segment is unlinked once set up, so a crash leaves no trace.
TEST(ShmTransportTest, LeavesNothingInDevShm) {
  FakeJobOptions options;
  options.size = 2;
  absl::Status status = RunRanks(options, [](Bootstrap& bootstrap) {
    Settings settings;
    settings.transport = "shm";
    absl::StatusOr<std::unique_ptr<Transport>> transport =
        CreateTransport(bootstrap, settings);
    if (!transport.ok()) return transport.status();
    RETURN_IF_ERROR(bootstrap.Fence());  // every rank has finished setup
    for (int rank = 0; rank < bootstrap.size(); ++rank) {
      const std::string path =
          absl::StrCat("/dev/shm/minimpi-", bootstrap.job_id(), "-", rank);
      struct stat info;
      RETURN_IF_FALSE(stat(path.c_str(), &info) != 0, path, " still exists");
    }
    return bootstrap.Fence();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// A singleton (size 1) gets a working transport that talks to itself.
TEST(ShmTransportTest, SingletonSendsToItself) {
  FakeJobOptions options;
  options.size = 1;
  absl::Status status = RunRanks(options, [](Bootstrap& bootstrap) {
    absl::StatusOr<std::unique_ptr<Transport>> transport =
        CreateTransport(bootstrap, Settings{});
    if (!transport.ok()) return transport.status();
    RETURN_IF_FALSE(std::string((*transport)->name()) == "shm");
    const char text[] = "hello";
    RETURN_IF_FALSE((*transport)->Send(0, {0, 0}, text, 2, text + 2, 4) ==
                    PostResult::kOk);
    std::string got;
    FunctionHandler handler([&](int, const Completion& c) {
      got.assign(static_cast<const char*>(c.data), c.length);
    });
    RETURN_IF_FALSE((*transport)->Poll(0, handler, 8) == 1);
    RETURN_IF_FALSE(got == std::string(text, 6), got);
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace minimpi::net

namespace minimpi::net {
namespace {

// auto across nodes: net/shm for the pairs of one node, net/tcp between
// them, and the name says both.
TEST(CreateTransportTest, AutoRoutesEachPair) {
  FakeJobOptions options;
  options.size = 3;
  options.node_of_rank = {0, 0, 1};
  absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
    absl::StatusOr<std::unique_ptr<Transport>> transport =
        CreateTransport(bootstrap, Settings{});
    if (!transport.ok()) return transport.status();
    const std::string name = (*transport)->name();
    RETURN_IF_FALSE(name == "shm+tcp", name);
    return bootstrap.Fence();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// An unknown name is refused with the list of known ones.
TEST(CreateTransportTest, UnknownNameIsAnError) {
  FakeJobOptions options;
  options.size = 1;
  absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
    Settings settings;
    settings.transport = "carrier-pigeon";
    absl::StatusOr<std::unique_ptr<Transport>> transport =
        CreateTransport(bootstrap, settings);
    RETURN_IF_FALSE(!transport.ok());
    const std::string message(transport.status().message());
    RETURN_IF_FALSE(message.find("auto, shm, tcp or ib") != std::string::npos,
                    message);
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace minimpi::net
