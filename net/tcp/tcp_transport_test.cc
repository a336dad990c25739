// Tests of net/tcp beyond the conformance suite: large RDMA in place,
// back-pressure, a peer that dies, remote access errors, one connection
// per pair of VCIs, answers on the socket they came on, order kept when two
// ranks connect at once, the chosen congestion control, and a ping-pong
// that prints latency and bandwidth.
// Each test forks a job (FakeJob) whose ranks sit on pretend nodes.
#include "net/tcp/tcp_transport.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "net/testing/fake_bootstrap.h"
#include "net/testing/transport_checks.h"
#include "net/transport.h"
#include "runtime/settings.h"

namespace minimpi::net::tcp {
namespace {

using runtime::Bootstrap;
using runtime::Settings;
using testing::ExchangeBuffer;
using testing::FakeJobOptions;
using testing::FillPattern;
using testing::FirstMismatch;
using testing::FunctionHandler;
using testing::RunRanks;

// Runs `body` on every rank of a job whose ranks are on nodes of their own.
absl::Status RunJob(
    int size, const Settings& settings,
    const std::function<absl::Status(TcpTransport&, Bootstrap&)>& body) {
  FakeJobOptions options;
  options.size = size;
  options.timeout = absl::Seconds(120);
  for (int rank = 0; rank < size; ++rank) options.node_of_rank.push_back(rank);
  return RunRanks(options, [&](Bootstrap& bootstrap) -> absl::Status {
    absl::StatusOr<std::unique_ptr<TcpTransport>> transport =
        TcpTransport::Create(bootstrap, settings);
    if (!transport.ok()) return transport.status();
    RETURN_IF_ERROR(body(**transport, bootstrap));
    return bootstrap.Fence();
  });
}

// What the ranks of a job wrote to stderr (Abort's line goes there).
class CaptureStderr {
 public:
  CaptureStderr() {
    std::fflush(stderr);
    path_ = absl::StrCat(::testing::TempDir(), "/stderr-", getpid(), "-",
                         absl::ToUnixNanos(absl::Now()));
    saved_ = dup(2);
    const int fd = open(path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    dup2(fd, 2);
    close(fd);
  }
  std::string Finish() {
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    std::string text;
    if (FILE* file = std::fopen(path_.c_str(), "r")) {
      char buffer[4096];
      size_t n;
      while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
        text.append(buffer, n);
      }
      std::fclose(file);
    }
    std::remove(path_.c_str());
    std::fputs(text.c_str(), stderr);  // still visible in the test log
    return text;
  }

 private:
  std::string path_;
  int saved_ = -1;
};

// (a) A 64 MiB write with immediate lands byte for byte while the target
// polls, and a 64 MiB read brings the source back byte for byte.
TEST(TcpTransportTest, LargeRdmaWriteAndReadLandInPlace) {
  constexpr size_t kBytes = 64u << 20;
  absl::Status status =
      RunJob(2, Settings{}, [&](TcpTransport& transport, Bootstrap& bootstrap) {
        const int me = bootstrap.rank();
        std::vector<uint8_t> buffer(kBytes + 2, 0xEE);
        if (me == 0) FillPattern(42, buffer.data() + 1, kBytes);
        absl::StatusOr<MemoryRegion> region =
            transport.RegisterMemory(buffer.data(), buffer.size());
        RETURN_IF_FALSE(region.ok());
        absl::StatusOr<RemoteBuffer> peer = ExchangeBuffer(
            bootstrap, "buffer", buffer.data() + 1, *region, 1 - me);
        RETURN_IF_FALSE(peer.ok());
        bool landed = false, done = false, finished = false;
        uint32_t immediate = 0;
        FunctionHandler handler([&](int, const Completion& c) {
          if (c.type == CompletionType::kWriteImmediate) {
            landed = c.length == kBytes;
            immediate = c.immediate;
          } else if (c.type == CompletionType::kLocalDone) {
            done = true;
          } else {
            finished = true;
          }
        });
        if (me == 0) {
          while (transport.RdmaWriteImmediate(0, {1, 0}, buffer.data() + 1,
                                              *region, *peer, kBytes, 77,
                                              5) == PostResult::kRetry) {
            transport.Poll(0, handler, 8);
          }
          while (!done || !finished) transport.Poll(0, handler, 8);
          return absl::OkStatus();
        }
        while (!landed) transport.Poll(0, handler, 8);
        RETURN_IF_FALSE(immediate == 77);
        int64_t bad = FirstMismatch(42, buffer.data() + 1, kBytes);
        RETURN_IF_FALSE(bad < 0, "write: byte ", bad);
        RETURN_IF_FALSE(buffer[0] == 0xEE && buffer[kBytes + 1] == 0xEE);
        // Now read it back from rank 0 into a fresh buffer.
        std::vector<uint8_t> fetched(kBytes, 0);
        absl::StatusOr<MemoryRegion> fetched_region =
            transport.RegisterMemory(fetched.data(), fetched.size());
        RETURN_IF_FALSE(fetched_region.ok());
        while (transport.RdmaRead(0, {0, 0}, fetched.data(), *fetched_region,
                                  *peer, kBytes, 9) == PostResult::kRetry) {
          transport.Poll(0, handler, 8);
        }
        while (!done) transport.Poll(0, handler, 8);
        bad = FirstMismatch(42, fetched.data(), kBytes);
        RETURN_IF_FALSE(bad < 0, "read: byte ", bad);
        const char bye = 1;
        while (transport.Send(0, {0, 0}, &bye, 1, nullptr, 0) !=
               PostResult::kOk) {
          transport.Poll(0, handler, 8);
        }
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
}

// Dynamic processes: two transports that know no ranks of a job (as for a
// job meeting another one) add each other as peer 5 (an index past the
// job's ranks) from the addresses they advertise, one before the other has,
// and a message, an answer and an RDMA write go both ways. Completions name
// the added index.
TEST(TcpTransportTest, PeersOfOtherJobsAddedAfterSetup) {
  constexpr int kOtherJobPeer = 5;
  constexpr size_t kBytes = 1u << 20;
  FakeJobOptions options;
  options.size = 2;
  options.timeout = absl::Seconds(120);
  absl::Status status =
      RunRanks(options, [&](Bootstrap& bootstrap) -> absl::Status {
        absl::StatusOr<std::unique_ptr<Transport>> created =
            CreateTcpTransportForOtherJobs(bootstrap, Settings{});
        if (!created.ok()) return created.status();
        Transport& transport = **created;
        const int me = bootstrap.rank();
        absl::StatusOr<std::string> mine = transport.DynamicAddress();
        RETURN_IF_FALSE(mine.ok());
        std::vector<uint8_t> buffer(kBytes, 0);
        absl::StatusOr<MemoryRegion> region =
            transport.RegisterMemory(buffer.data(), buffer.size());
        RETURN_IF_FALSE(region.ok());
        // The bootstrap stands in for the meeting of the two jobs.
        RETURN_IF_ERROR(bootstrap.Put("other_job_address", *mine));
        absl::StatusOr<RemoteBuffer> remote =
            ExchangeBuffer(bootstrap, "buffer", buffer.data(), *region, 1 - me);
        RETURN_IF_FALSE(remote.ok());
        absl::StatusOr<std::string> theirs =
            bootstrap.Get(1 - me, "other_job_address");
        RETURN_IF_FALSE(theirs.ok());
        // Rank 1 adds rank 0 only after rank 0's first message is on its
        // way: that connection waits until AddPeer names its sender.
        if (me == 1) absl::SleepFor(absl::Milliseconds(200));
        RETURN_IF_ERROR(transport.AddPeer(kOtherJobPeer, *theirs));

        int received = -1, from = -1;
        bool landed = false, done = false;
        FunctionHandler handler([&](int, const Completion& c) {
          if (c.type == CompletionType::kReceive) {
            std::memcpy(&received, c.data, sizeof(received));
            from = c.peer;
          } else if (c.type == CompletionType::kWriteImmediate) {
            landed = c.length == kBytes && c.peer == kOtherJobPeer;
          } else {
            done = true;
          }
        });
        const PeerVci other{kOtherJobPeer, 0};
        const int value = 1000 + me;
        if (me == 0) {
          while (transport.Send(0, other, &value, sizeof(value), nullptr, 0) !=
                 PostResult::kOk) {
            transport.Poll(0, handler, 8);
          }
          while (received < 0) transport.Poll(0, handler, 8);
          RETURN_IF_FALSE(received == 1001 && from == kOtherJobPeer, "got ",
                          received, " from ", from);
          FillPattern(7, buffer.data(), kBytes);
          while (transport.RdmaWriteImmediate(0, other, buffer.data(), *region,
                                              *remote, kBytes, 3,
                                              1) == PostResult::kRetry) {
            transport.Poll(0, handler, 8);
          }
          while (!done) transport.Poll(0, handler, 8);
          return absl::OkStatus();
        }
        while (received < 0) transport.Poll(0, handler, 8);
        RETURN_IF_FALSE(received == 1000 && from == kOtherJobPeer, "got ",
                        received, " from ", from);
        while (transport.Send(0, other, &value, sizeof(value), nullptr, 0) !=
               PostResult::kOk) {
          transport.Poll(0, handler, 8);
        }
        while (!landed) transport.Poll(0, handler, 8);
        const int64_t bad = FirstMismatch(7, buffer.data(), kBytes);
        RETURN_IF_FALSE(bad < 0, "write: byte ", bad);
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
}

// A peer index inside the job, or an address that is not one, is refused.
TEST(TcpTransportTest, AddPeerRefusesBadIndexAndAddress) {
  FakeJobOptions options;
  options.size = 1;
  absl::Status status =
      RunRanks(options, [&](Bootstrap& bootstrap) -> absl::Status {
        absl::StatusOr<std::unique_ptr<Transport>> created =
            CreateTcpTransportForOtherJobs(bootstrap, Settings{});
        if (!created.ok()) return created.status();
        Transport& transport = **created;
        RETURN_IF_FALSE(!transport.AddPeer(0, "127.0.0.1:5000").ok());
        RETURN_IF_FALSE(!transport.AddPeer(3, "no address").ok());
        RETURN_IF_FALSE(
            !transport.AddPeer(1 + kMaxDynamicPeers, "127.0.0.1:5000").ok());
        RETURN_IF_ERROR(transport.AddPeer(1, "127.0.0.1:5000"));
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
}

// (b) A sender floods a peer that does not poll until the socket pushes
// back (kRetry); then everything arrives, in order, intact.
TEST(TcpTransportTest, FloodUntilRetryThenEverythingArrivesInOrder) {
  Settings settings;
  settings.num_vcis = 1;
  settings.endpoint_vcis = 0;
  absl::Status status =
      RunJob(2, settings, [&](TcpTransport& transport, Bootstrap& bootstrap) {
        const int me = bootstrap.rank();
        const size_t max = transport.max_message_size();
        std::vector<uint8_t> message(max);
        uint64_t sent = 0;
        auto send = [&]() {
          const size_t length = 8 + sent * 7919 % (max - 8);
          std::memcpy(message.data(), &sent, 8);
          FillPattern(sent, message.data() + 8, length - 8);
          return transport.Send(0, {1, 0}, message.data(), 8,
                                message.data() + 8, length - 8);
        };
        if (me == 0) {
          while (send() == PostResult::kOk) ++sent;
          RETURN_IF_FALSE(sent > 0);
          std::printf("flood: kRetry after %llu messages\n",
                      static_cast<unsigned long long>(sent));
          RETURN_IF_ERROR(bootstrap.Put("total", absl::StrCat(sent + 20000)));
          RETURN_IF_ERROR(bootstrap.Commit());
        }
        RETURN_IF_ERROR(bootstrap.Fence());  // rank 1 polls only now
        if (me == 0) {
          FunctionHandler none([](int, const Completion&) {});
          const uint64_t total = sent + 20000;
          while (sent < total) {
            if (send() == PostResult::kOk) {
              ++sent;
            } else {
              transport.Poll(0, none, 8);
            }
          }
          return absl::OkStatus();
        }
        uint64_t received = 0;
        std::string error;
        FunctionHandler handler([&](int, const Completion& c) {
          uint64_t seq = ~0ull;
          if (c.length >= 8) std::memcpy(&seq, c.data, 8);
          const size_t length = 8 + received * 7919 % (max - 8);
          if (error.empty() &&
              (seq != received || c.length != length ||
               FirstMismatch(seq, static_cast<const uint8_t*>(c.data) + 8,
                             c.length - 8) >= 0)) {
            error = absl::StrCat("message ", received, " wrong (seq ", seq,
                                 ", ", c.length, " bytes)");
          }
          ++received;
        });
        absl::StatusOr<std::string> total = bootstrap.Get(0, "total");
        RETURN_IF_FALSE(total.ok());
        while (std::to_string(received) != *total && error.empty()) {
          transport.Poll(0, handler, 16);
        }
        RETURN_IF_FALSE(error.empty(), error);
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
}

// (c) A peer that dies in the middle of a large write: the survivor ends
// the job with one line naming both ranks and their nodes.
TEST(TcpTransportTest, PeerDeathEndsTheJobWithOneLine) {
  CaptureStderr capture;
  absl::Status status =
      RunJob(2, Settings{}, [&](TcpTransport& transport, Bootstrap& bootstrap) {
        const int me = bootstrap.rank();
        std::vector<uint8_t> buffer(64u << 20, 1);
        absl::StatusOr<MemoryRegion> region =
            transport.RegisterMemory(buffer.data(), buffer.size());
        RETURN_IF_FALSE(region.ok());
        absl::StatusOr<RemoteBuffer> peer =
            ExchangeBuffer(bootstrap, "buffer", buffer.data(), *region, 1 - me);
        RETURN_IF_FALSE(peer.ok());
        FunctionHandler none([](int, const Completion&) {});
        if (me == 1) {
          while (transport.RdmaWrite(0, {0, 0}, buffer.data(), *region, *peer,
                                     buffer.size(), 1) == PostResult::kRetry) {
          }
          _exit(0);  // dies with most of the write still queued
        }
        const absl::Time deadline = absl::Now() + absl::Seconds(30);
        while (absl::Now() < deadline) transport.Poll(0, none, 8);
        return absl::InternalError("rank 0 survived its peer's death");
      });
  const std::string text = capture.Finish();
  EXPECT_FALSE(status.ok());
  // "in the middle of a message" when some of the write had left rank 1
  // before it died; a slow machine may see it die before its connection
  // carried a byte.
  EXPECT_NE(text.find("minimpi: net/tcp: rank 0 (node0) lost its connection "
                      "to rank 1 (node1)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("survived"), std::string::npos) << text;
}

// (d) Writes under a bad key, or past the end of a region, end the target
// with a remote access error.
TEST(TcpTransportTest, BadRemoteWriteEndsTheTarget) {
  for (bool bad_key : {true, false}) {
    CaptureStderr capture;
    absl::Status status = RunJob(
        2, Settings{}, [&](TcpTransport& transport, Bootstrap& bootstrap) {
          const int me = bootstrap.rank();
          std::vector<uint8_t> buffer(4096, 1);
          absl::StatusOr<MemoryRegion> region =
              transport.RegisterMemory(buffer.data(), buffer.size());
          RETURN_IF_FALSE(region.ok());
          absl::StatusOr<RemoteBuffer> peer = ExchangeBuffer(
              bootstrap, "buffer", buffer.data(), *region, 1 - me);
          RETURN_IF_FALSE(peer.ok());
          FunctionHandler none([](int, const Completion&) {});
          if (me == 0) {
            RemoteBuffer target = *peer;
            if (bad_key) {
              target.remote_key += 1000;
            } else {
              target.address += 100;  // 4096 bytes from here overrun it
            }
            while (transport.RdmaWrite(0, {1, 0}, buffer.data(), *region,
                                       target, buffer.size(),
                                       1) == PostResult::kRetry) {
            }
          }
          const absl::Time deadline = absl::Now() + absl::Seconds(30);
          while (absl::Now() < deadline) transport.Poll(0, none, 8);
          return absl::InternalError("nobody noticed the bad write");
        });
    const std::string text = capture.Finish();
    EXPECT_FALSE(status.ok());
    EXPECT_NE(text.find("minimpi: net/tcp: rank 1 (node1) got an RDMA write "
                        "from rank 0 (node0) of 4096 bytes"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("remote access error"), std::string::npos) << text;
  }
}

// (e) Two VCIs talking to two VCIs of a peer use distinct connections: one
// each, and a flood that fills one does not push back on the other.
TEST(TcpTransportTest, EachPairOfVcisHasItsOwnConnection) {
  Settings settings;
  settings.num_vcis = 2;
  settings.endpoint_vcis = 0;
  absl::Status status =
      RunJob(2, settings, [&](TcpTransport& transport, Bootstrap& bootstrap) {
        const int me = bootstrap.rank();
        RETURN_IF_FALSE(transport.ConnectionCountForTesting(0) == 0);
        std::vector<uint8_t> message(transport.max_message_size(), 3);
        int received[2] = {0, 0};
        FunctionHandler handler(
            [&](int vci, const Completion&) { ++received[vci]; });
        int flood = 0;
        if (me == 0) {
          while (transport.Send(0, {1, 0}, message.data(), message.size(),
                                nullptr, 0) == PostResult::kOk) {
            ++flood;
          }
          // VCI 0's socket is full; VCI 1's is another socket.
          RETURN_IF_FALSE(transport.Send(1, {1, 1}, message.data(), 8, nullptr,
                                         0) == PostResult::kOk);
          RETURN_IF_FALSE(transport.ConnectionCountForTesting(0) == 1);
          RETURN_IF_FALSE(transport.ConnectionCountForTesting(1) == 1);
          RETURN_IF_ERROR(bootstrap.Put("flood", absl::StrCat(flood)));
          RETURN_IF_ERROR(bootstrap.Commit());
        }
        RETURN_IF_ERROR(bootstrap.Fence());
        if (me == 1) {
          absl::StatusOr<std::string> text = bootstrap.Get(0, "flood");
          RETURN_IF_FALSE(text.ok());
          const int expected = std::stoi(*text);
          while (received[1] < 1) transport.Poll(1, handler, 8);
          while (received[0] < expected) transport.Poll(0, handler, 8);
          // One accepted socket each, handed to the VCI its hello named.
          RETURN_IF_FALSE(transport.ConnectionCountForTesting(0) == 1);
          RETURN_IF_FALSE(transport.ConnectionCountForTesting(1) == 1);
        } else {
          // Rank 0's queue drains as rank 1 reads.
          FunctionHandler none([](int, const Completion&) {});
          for (int i = 0; i < 100; ++i) transport.Poll(0, none, 8);
        }
        RETURN_IF_ERROR(bootstrap.Fence());
        if (me == 0) {
          // Keep flushing until the queue is gone (the receiver counted).
          FunctionHandler none([](int, const Completion&) {});
          transport.Poll(0, none, 8);
        }
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
}

// (f) One socket carries both directions: the answer to a message goes back
// on the socket the message came on (its ACKs ride on the answer), so a
// ping-pong opens one connection, not one each way.
TEST(TcpTransportTest, AnswersGoBackOnTheSocketTheyCameOn) {
  Settings settings;
  settings.num_vcis = 1;
  settings.endpoint_vcis = 0;
  absl::Status status =
      RunJob(2, settings, [&](TcpTransport& transport, Bootstrap& bootstrap) {
        const int me = bootstrap.rank();
        const int peer = 1 - me;
        std::vector<uint8_t> out(300);
        FillPattern(me + 1, out.data(), out.size());
        std::string error;
        int received = 0;
        FunctionHandler handler([&](int, const Completion& c) {
          if (c.length != out.size() ||
              FirstMismatch(peer + 1, static_cast<const uint8_t*>(c.data),
                            c.length) >= 0) {
            error = absl::StrCat("rank ", me, " got a wrong message of ",
                                 c.length, " bytes");
          }
          ++received;
        });
        for (int round = 0; round < 3; ++round) {
          if (me == 0) {
            RETURN_IF_FALSE(transport.Send(0, {peer, 0}, out.data(), 8,
                                           out.data() + 8,
                                           out.size() - 8) == PostResult::kOk);
          }
          while (received <= round) transport.Poll(0, handler, 8);
          if (me == 1) {
            RETURN_IF_FALSE(transport.Send(0, {peer, 0}, out.data(), 8,
                                           out.data() + 8,
                                           out.size() - 8) == PostResult::kOk);
          }
        }
        RETURN_IF_FALSE(error.empty(), error);
        RETURN_IF_FALSE(transport.ConnectionCountForTesting(0) == 1, "rank ",
                        me, " has ", transport.ConnectionCountForTesting(0),
                        " connections");
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
}

// (g) Two ranks that send to each other at once each keep sending on the
// socket they opened first (adopting the other's later would let a message
// overtake an earlier one): every message arrives, in order, intact.
TEST(TcpTransportTest, RanksThatConnectAtOnceKeepTheirOrder) {
  Settings settings;
  settings.num_vcis = 1;
  settings.endpoint_vcis = 0;
  absl::Status status =
      RunJob(2, settings, [&](TcpTransport& transport, Bootstrap& bootstrap) {
        const int me = bootstrap.rank();
        const int peer = 1 - me;
        constexpr uint64_t kMessages = 3000;
        std::vector<uint8_t> message(8 + 512);
        uint64_t sent = 0;
        uint64_t received = 0;
        std::string error;
        FunctionHandler handler([&](int, const Completion& c) {
          uint64_t seq = ~0ull;
          if (c.length >= 8) std::memcpy(&seq, c.data, 8);
          const size_t length = 8 + received * 61 % 512;
          if (error.empty() &&
              (seq != received || c.length != length ||
               FirstMismatch(seq * 2 + peer,
                             static_cast<const uint8_t*>(c.data) + 8,
                             c.length - 8) >= 0)) {
            error =
                absl::StrCat("rank ", me, ": message ", received,
                             " wrong (seq ", seq, ", ", c.length, " bytes)");
          }
          ++received;
        });
        RETURN_IF_ERROR(bootstrap.Fence());  // both start sending at once
        while ((sent < kMessages || received < kMessages) && error.empty()) {
          if (sent < kMessages) {
            const size_t length = 8 + sent * 61 % 512;
            std::memcpy(message.data(), &sent, 8);
            FillPattern(sent * 2 + me, message.data() + 8, length - 8);
            if (transport.Send(0, {peer, 0}, message.data(), 8,
                               message.data() + 8,
                               length - 8) == PostResult::kOk) {
              ++sent;
            }
          }
          transport.Poll(0, handler, 16);
        }
        RETURN_IF_FALSE(error.empty(), error);
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
}

// Latency and bandwidth over loopback between two forked ranks: prints,
// asserts nothing about time.
TEST(TcpTransportTest, PingPongPrintsLatencyAndBandwidth) {
  constexpr int kSmallRounds = 10000;
  constexpr int kLargeRounds = 200;
  constexpr size_t kLarge = 1u << 20;
  absl::Status status =
      RunJob(2, Settings{}, [&](TcpTransport& transport, Bootstrap& bootstrap) {
        const int me = bootstrap.rank();
        const int peer = 1 - me;
        std::vector<uint8_t> source(kLarge, uint8_t(me)), landing(kLarge, 0);
        absl::StatusOr<MemoryRegion> source_region =
            transport.RegisterMemory(source.data(), source.size());
        absl::StatusOr<MemoryRegion> landing_region =
            transport.RegisterMemory(landing.data(), landing.size());
        RETURN_IF_FALSE(source_region.ok() && landing_region.ok());
        absl::StatusOr<RemoteBuffer> remote = ExchangeBuffer(
            bootstrap, "landing", landing.data(), *landing_region, peer);
        RETURN_IF_FALSE(remote.ok());
        int arrivals = 0;
        FunctionHandler handler([&](int, const Completion& c) {
          if (c.type != CompletionType::kLocalDone) ++arrivals;
        });
        uint64_t word = 0;
        auto ping = [&] {
          while (transport.Send(0, {peer, 0}, &word, 8, nullptr, 0) !=
                 PostResult::kOk) {
            transport.Poll(0, handler, 16);
          }
        };
        auto wait = [&](int count) {
          while (arrivals < count) transport.Poll(0, handler, 16);
        };
        // Warm up the connections first.
        if (me == 0) ping();
        wait(1);
        if (me == 1) ping();
        if (me == 0) wait(1);
        arrivals = 0;
        absl::Time start = absl::Now();
        for (int i = 0; i < kSmallRounds; ++i) {
          if (me == 0) {
            ping();
            wait(i + 1);
          } else {
            wait(i + 1);
            ping();
          }
        }
        const absl::Duration small = absl::Now() - start;
        arrivals = 0;
        start = absl::Now();
        for (int i = 0; i < kLargeRounds; ++i) {
          auto write = [&] {
            while (transport.RdmaWriteImmediate(0, {peer, 0}, source.data(),
                                                *source_region, *remote, kLarge,
                                                i, i) != PostResult::kOk) {
              transport.Poll(0, handler, 16);
            }
          };
          if (me == 0) {
            write();
            wait(i + 1);
          } else {
            wait(i + 1);
            write();
          }
        }
        const absl::Duration large = absl::Now() - start;
        RETURN_IF_FALSE(landing[0] == uint8_t(peer) &&
                        landing[kLarge - 1] == uint8_t(peer));
        if (me == 0) {
          const double small_us =
              absl::ToDoubleMicroseconds(small) / kSmallRounds;
          const double large_us =
              absl::ToDoubleMicroseconds(large) / kLargeRounds;
          std::printf(
              "tcp ping-pong over loopback: 8 B round trip %.1f us (half "
              "%.1f us); 1 MiB round trip %.1f us (%.0f MB/s each way)\n",
              small_us, small_us / 2, large_us, 2.0 * kLarge / large_us);
          std::fflush(stdout);
        }
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
}

// The kernel's default congestion control, as /proc says it ("" when it
// cannot be read).
std::string SystemCongestionControl() {
  std::string name;
  if (FILE* file =
          std::fopen("/proc/sys/net/ipv4/tcp_congestion_control", "r")) {
    char text[32] = {};
    if (std::fgets(text, sizeof(text), file) != nullptr) name = text;
    std::fclose(file);
  }
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) {
    name.pop_back();
  }
  return name;
}

// MINIMPI_TCP_CONGESTION: both ends of a connection (the one that connected
// and the one that accepted and answers on it) use the chosen congestion
// control, "system" leaves the kernel's default, and a name the kernel
// refuses ends Create with an error that names the setting.
TEST(TcpTransportTest, SocketsUseTheChosenCongestionControl) {
  const std::string system = SystemCongestionControl();
  for (const std::string chosen : {"reno", "system"}) {
    Settings settings;
    settings.tcp_congestion = chosen;
    const std::string expected = chosen == "system" ? system : chosen;
    absl::Status status =
        RunJob(2, settings, [&](TcpTransport& transport, Bootstrap& bootstrap) {
          const int me = bootstrap.rank();
          int arrivals = 0;
          FunctionHandler handler([&](int, const Completion& c) {
            if (c.type == CompletionType::kReceive) ++arrivals;
          });
          const uint64_t word = 1;
          // Rank 0 connects; rank 1 answers on the socket it accepted.
          if (me == 0) {
            while (transport.Send(0, {1, 0}, &word, 8, nullptr, 0) !=
                   PostResult::kOk) {
              transport.Poll(0, handler, 8);
            }
          }
          while (arrivals < 1 && me == 1) transport.Poll(0, handler, 8);
          if (me == 1) {
            while (transport.Send(0, {0, 0}, &word, 8, nullptr, 0) !=
                   PostResult::kOk) {
              transport.Poll(0, handler, 8);
            }
          }
          while (arrivals < 1 && me == 0) transport.Poll(0, handler, 8);
          RETURN_IF_FALSE(transport.ConnectionCountForTesting(0) == 1);
          const std::string used =
              transport.CongestionControlForTesting(0, {1 - me, 0});
          RETURN_IF_FALSE(expected.empty() || used == expected, "rank ", me,
                          " uses ", used, ", not ", expected);
          return absl::OkStatus();
        });
    EXPECT_TRUE(status.ok()) << chosen << ": " << status;
  }
  Settings refused;
  refused.tcp_congestion = "no-such-cc";
  FakeJobOptions options;
  options.size = 1;
  options.timeout = absl::Seconds(60);
  absl::Status status = RunRanks(options, [&](Bootstrap& bootstrap) {
    absl::StatusOr<std::unique_ptr<TcpTransport>> transport =
        TcpTransport::Create(bootstrap, refused);
    RETURN_IF_FALSE(!transport.ok());
    RETURN_IF_FALSE(
        transport.status().message().find(
            "MINIMPI_TCP_CONGESTION=no-such-cc") != std::string::npos,
        transport.status().ToString());
    return absl::OkStatus();
  });
  EXPECT_TRUE(status.ok()) << status;
}

// MINIMPI_TCP_IF: an address is taken as it is, an interface name by its
// address, and anything else is an error that names the setting.
TEST(TcpListenAddressTest, FollowsTheSetting) {
  absl::StatusOr<std::string> by_address = ListenAddress("127.0.0.1");
  ASSERT_TRUE(by_address.ok()) << by_address.status();
  EXPECT_EQ(*by_address, "127.0.0.1");
  absl::StatusOr<std::string> by_name = ListenAddress("lo");
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ(*by_name, "127.0.0.1");
  absl::StatusOr<std::string> automatic = ListenAddress("");
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  EXPECT_FALSE(automatic->empty());
  absl::StatusOr<std::string> bogus = ListenAddress("no-such-interface0");
  ASSERT_FALSE(bogus.ok());
  EXPECT_NE(bogus.status().message().find("MINIMPI_TCP_IF=no-such-interface0"),
            std::string::npos)
      << bogus.status();
}

}  // namespace
}  // namespace minimpi::net::tcp
