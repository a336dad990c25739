#include "mpi/part/model/loggp.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace minimpi::part {
namespace {

// The forward model FitLogGP inverts: n messages of s bytes, the sender
// waiting d between sends, then one answer of s bytes. Each message after the
// first starts max(o_s + d, max(g, o_s) + (s - 1) G) after the one before:
// the sender's loop or the link, whichever is slower.
double ForwardPrtt(const LogGPParameters& p, int n, double d, size_t s) {
  const double wire = (s - 1) * p.gap_per_byte_us;
  const double one_way =
      p.latency_us + p.send_overhead_us + p.receive_overhead_us + wire;
  const double step = std::max(p.send_overhead_us + d,
                               std::max(p.gap_us, p.send_overhead_us) + wire);
  return 2 * one_way + (n - 1) * step;
}

// Netgauge's measurement plan: sizes 1 B .. 1 MiB, n in {1, 8, 16}, no delay
// and a delay twice the link's per-message time (plus 1 us), `repeats`
// samples of each, every sample stretched by up to `noise` (relative; noise
// only ever adds time to a round trip).
std::vector<PrttSample> Synthesize(const LogGPParameters& p, double noise,
                                   int repeats, std::mt19937& random) {
  std::uniform_real_distribution<double> stretch(0, noise);
  std::vector<PrttSample> samples;
  for (size_t s = 1; s <= (size_t{1} << 20); s *= 2) {
    const double link_step =
        std::max(p.gap_us, p.send_overhead_us) + (s - 1) * p.gap_per_byte_us;
    const double delay = 2 * link_step + 1;
    for (int repeat = 0; repeat < repeats; ++repeat) {
      for (int n : {1, 8, 16}) {
        for (double d : {0.0, delay}) {
          if (n == 1 && d > 0) continue;
          const double prtt = ForwardPrtt(p, n, d, s) * (1 + stretch(random));
          samples.push_back({n, d, s, prtt});
        }
      }
    }
  }
  return samples;
}

// Expects `actual` within `relative` of `expected`, or within `absolute`
// (for values near zero).
void ExpectNear(double expected, double actual, double relative,
                double absolute, const char* what) {
  EXPECT_NEAR(actual, expected, std::max(relative * expected, absolute))
      << what;
}

TEST(DefaultLogGPTest, IsAPlausibleSharedMemoryNode) {
  const LogGPParameters p = DefaultLogGP();
  EXPECT_GT(p.latency_us, 0);
  EXPECT_LT(p.latency_us, 2);
  EXPECT_GT(p.send_overhead_us, 0);
  EXPECT_GT(p.receive_overhead_us, 0);
  EXPECT_GT(p.gap_us, 0);
  // Between 1 and 100 GB/s.
  EXPECT_GT(p.gap_per_byte_us, 1e-5);
  EXPECT_LT(p.gap_per_byte_us, 1e-3);
}

TEST(FitLogGPTest, RecoversExactParametersWithoutNoise) {
  LogGPParameters truth;
  truth.latency_us = 0.4;
  truth.send_overhead_us = 0.15;
  truth.receive_overhead_us = 0.15;  // the fit assumes o_r = o_s
  truth.gap_us = 0.3;
  truth.gap_per_byte_us = 2e-4;
  std::mt19937 random(1);
  absl::StatusOr<LogGPParameters> fit =
      FitLogGP(Synthesize(truth, 0, 1, random));
  ASSERT_TRUE(fit.ok()) << fit.status();
  ExpectNear(truth.latency_us, fit->latency_us, 1e-9, 1e-12, "L");
  ExpectNear(truth.send_overhead_us, fit->send_overhead_us, 1e-9, 1e-12, "o_s");
  ExpectNear(truth.receive_overhead_us, fit->receive_overhead_us, 1e-9, 1e-12,
             "o_r");
  ExpectNear(truth.gap_us, fit->gap_us, 1e-9, 1e-12, "g");
  ExpectNear(truth.gap_per_byte_us, fit->gap_per_byte_us, 1e-9, 1e-15, "G");
}

TEST(FitLogGPTest, RecoversRandomParametersFromNoisySamples) {
  std::mt19937 random(12345);
  for (int trial = 0; trial < 200; ++trial) {
    SCOPED_TRACE(absl::StrCat("trial ", trial));
    LogGPParameters truth;
    truth.latency_us = std::uniform_real_distribution<double>(0.1, 5)(random);
    truth.send_overhead_us =
        std::uniform_real_distribution<double>(0.05, 2)(random);
    truth.receive_overhead_us = truth.send_overhead_us;
    // Netgauge's relations hold for g >= o_s; the other case has its own
    // test below.
    truth.gap_us = truth.send_overhead_us *
                   std::uniform_real_distribution<double>(1, 3)(random);
    // 1 to 100 GB/s.
    truth.gap_per_byte_us =
        std::pow(10, std::uniform_real_distribution<double>(-5, -3)(random));
    // Up to 0.2 % added per round trip, the best of 5.
    absl::StatusOr<LogGPParameters> fit =
        FitLogGP(Synthesize(truth, 2e-3, 5, random));
    ASSERT_TRUE(fit.ok()) << fit.status();
    ExpectNear(truth.latency_us, fit->latency_us, 0.05, 0.02, "L");
    ExpectNear(truth.send_overhead_us, fit->send_overhead_us, 0.05, 0.01,
               "o_s");
    ExpectNear(truth.receive_overhead_us, fit->receive_overhead_us, 0.05, 0.01,
               "o_r");
    ExpectNear(truth.gap_us, fit->gap_us, 0.05, 0.01, "g");
    ExpectNear(truth.gap_per_byte_us, fit->gap_per_byte_us, 0.02, 0, "G");
  }
}

TEST(FitLogGPTest, OverheadAboveGapShowsAsGap) {
  LogGPParameters truth;
  truth.latency_us = 1;
  truth.send_overhead_us = 0.5;
  truth.receive_overhead_us = 0.5;
  truth.gap_us = 0.2;
  truth.gap_per_byte_us = 1e-4;
  std::mt19937 random(7);
  absl::StatusOr<LogGPParameters> fit =
      FitLogGP(Synthesize(truth, 0, 1, random));
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->gap_us, 0.5, 1e-9);  // max(g, o_s)
  EXPECT_NEAR(fit->send_overhead_us, 0.5, 1e-9);
  EXPECT_NEAR(fit->latency_us, 1, 1e-9);
  EXPECT_NEAR(fit->gap_per_byte_us, 1e-4, 1e-12);
}

TEST(FitLogGPTest, SeesThroughProtocolChanges) {
  // Like a two-sided MPI on shared memory: messages up to 32 B travel
  // inline; above, every message costs 0.05 us more (sender and link), and
  // above 8 KiB a rendezvous handshake of 1.5 us more (in the single round
  // trip, every train step and the sender's blocking send). One line through
  // all sizes would take part of these for per-message cost.
  LogGPParameters truth;
  truth.latency_us = 0.3;
  truth.send_overhead_us = 0.12;
  truth.receive_overhead_us = 0.12;
  truth.gap_us = 0.16;
  truth.gap_per_byte_us = 2e-5;
  std::mt19937 random(11);
  std::vector<PrttSample> samples = Synthesize(truth, 1e-3, 5, random);
  for (PrttSample& sample : samples) {
    double extra_us = 0;
    if (sample.bytes > 32) extra_us += 0.05;
    if (sample.bytes > 8192) extra_us += 1.5;
    sample.prtt_us += (sample.messages + 1) * extra_us;
  }
  absl::StatusOr<LogGPParameters> fit = FitLogGP(samples);
  ASSERT_TRUE(fit.ok()) << fit.status();
  ExpectNear(truth.latency_us, fit->latency_us, 0.05, 0.02, "L");
  ExpectNear(truth.send_overhead_us, fit->send_overhead_us, 0.05, 0.01, "o_s");
  ExpectNear(truth.gap_us, fit->gap_us, 0.05, 0.01, "g");
  ExpectNear(truth.gap_per_byte_us, fit->gap_per_byte_us, 0.02, 0, "G");
}

TEST(FitLogGPTest, KeepsTheOneWayTimeWhenLatencyIsTiny) {
  // L + o_r below o_s: the fit cannot take o_r = o_s without a negative L,
  // so it keeps the measured sum, with L = 0.
  LogGPParameters truth;
  truth.latency_us = 0.01;
  truth.send_overhead_us = 0.13;
  truth.receive_overhead_us = 0.07;
  truth.gap_us = 0.15;
  truth.gap_per_byte_us = 1.5e-5;
  std::mt19937 random(5);
  absl::StatusOr<LogGPParameters> fit =
      FitLogGP(Synthesize(truth, 0, 1, random));
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->send_overhead_us, 0.13, 1e-9);
  EXPECT_EQ(fit->latency_us, 0);
  EXPECT_NEAR(fit->receive_overhead_us, 0.08, 1e-9);
}

TEST(FitLogGPTest, UsesTheSmallestOfRepeatedSamples) {
  LogGPParameters truth = DefaultLogGP();
  std::mt19937 random(3);
  std::vector<PrttSample> samples = Synthesize(truth, 0, 1, random);
  // Slower copies of every sample, as a disturbed repetition would give.
  const size_t count = samples.size();
  for (size_t i = 0; i < count; ++i) {
    PrttSample slow = samples[i];
    slow.prtt_us *= 1.5;
    samples.push_back(slow);
  }
  absl::StatusOr<LogGPParameters> fit = FitLogGP(samples);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->latency_us, truth.latency_us, 1e-9);
  EXPECT_NEAR(fit->gap_us, truth.gap_us, 1e-9);
}

TEST(FitLogGPTest, ClampsNoiseToZero) {
  // A link with no gap and no per-byte cost, measured with noise, may give
  // slightly negative estimates; none may come out below zero.
  std::vector<PrttSample> samples;
  for (size_t s : {size_t{1}, size_t{1024}}) {
    samples.push_back({1, 0, s, 1.0});
    samples.push_back({8, 0, s, 0.99});
    samples.push_back({8, 5, s, 0.9 + 7 * 5});
  }
  absl::StatusOr<LogGPParameters> fit = FitLogGP(samples);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_GE(fit->gap_us, 0);
  EXPECT_GE(fit->gap_per_byte_us, 0);
  EXPECT_GE(fit->send_overhead_us, 0);
  EXPECT_GE(fit->latency_us, 0);
}

TEST(FitLogGPTest, RejectsTooFewSamples) {
  EXPECT_EQ(FitLogGP({}).status().code(), absl::StatusCode::kInvalidArgument);
  // One size cannot separate g from G.
  std::vector<PrttSample> one_size = {
      {1, 0, 64, 2}, {8, 0, 64, 5}, {8, 10, 64, 80}};
  absl::Status status = FitLogGP(one_size).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "two message sizes"))
      << status;
}

TEST(FitLogGPTest, RejectsDelaysShorterThanTheMessageTime) {
  LogGPParameters truth = DefaultLogGP();
  std::vector<PrttSample> samples;
  for (size_t s : {size_t{8}, size_t{4096}}) {
    samples.push_back({1, 0, s, ForwardPrtt(truth, 1, 0, s)});
    samples.push_back({16, 0, s, ForwardPrtt(truth, 16, 0, s)});
    // A delay far below g: the link, not the delay, paces this train.
    samples.push_back({16, 0.001, s, ForwardPrtt(truth, 16, 0.001, s)});
  }
  absl::Status status = FitLogGP(samples).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "o_s")) << status;
}

TEST(FitLogGPTest, RejectsInvalidSamples) {
  const std::vector<PrttSample> bad[] = {
      {{0, 0, 8, 1}},         // no messages
      {{1, -1, 8, 1}},        // negative delay
      {{1, 0, 0, 1}},         // empty messages
      {{1, 0, 8, 0}},         // zero round trip
      {{1, 0, 8, -3}},        // negative round trip
      {{1, 0, 8, NAN}},       // not a number
      {{1, INFINITY, 8, 1}},  // infinite delay
  };
  for (const std::vector<PrttSample>& samples : bad) {
    absl::Status status = FitLogGP(samples).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(status.message(), "invalid sample"))
        << status;
  }
}

// Files.

std::string TempPath(const std::string& name) {
  return testing::TempDir() + "/" + name;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(LogGPFileTest, RoundTripsExactly) {
  LogGPParameters p;
  p.latency_us = 0.1 + 0.2;  // not exactly representable in short decimal
  p.send_overhead_us = 1.0 / 3;
  p.receive_overhead_us = 0;
  p.gap_us = 123.456;
  p.gap_per_byte_us = 7.5e-5;
  const std::string path = TempPath("round_trip.loggp");
  ASSERT_TRUE(
      WriteLogGPFile(path, p, "measured by a test\non two lines\n").ok());
  const std::string text = ReadText(path);
  EXPECT_TRUE(
      absl::StartsWith(text, "# measured by a test\n# on two lines\nL "))
      << text;
  absl::StatusOr<LogGPParameters> read = ReadLogGPFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->latency_us, p.latency_us);
  EXPECT_EQ(read->send_overhead_us, p.send_overhead_us);
  EXPECT_EQ(read->receive_overhead_us, p.receive_overhead_us);
  EXPECT_EQ(read->gap_us, p.gap_us);
  EXPECT_EQ(read->gap_per_byte_us, p.gap_per_byte_us);
}

TEST(LogGPFileTest, WritesNoCommentWhenEmpty) {
  const std::string path = TempPath("no_comment.loggp");
  ASSERT_TRUE(WriteLogGPFile(path, DefaultLogGP(), "").ok());
  EXPECT_TRUE(absl::StartsWith(ReadText(path), "L 0.2 ")) << ReadText(path);
}

TEST(LogGPFileTest, ReadsAnyOrderWithCommentsAndBlankLines) {
  const std::string path = TempPath("hand_written.loggp");
  WriteText(path,
            "# written by hand\n"
            "\n"
            "G\t1e-4   # 10 GB/s\n"
            "  g 0.5\n"
            "o_r 0.25\r\n"
            "o_s 0.125\n"
            "L 2\n");
  absl::StatusOr<LogGPParameters> read = ReadLogGPFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->latency_us, 2);
  EXPECT_EQ(read->send_overhead_us, 0.125);
  EXPECT_EQ(read->receive_overhead_us, 0.25);
  EXPECT_EQ(read->gap_us, 0.5);
  EXPECT_EQ(read->gap_per_byte_us, 1e-4);
}

TEST(LogGPFileTest, BadContentNamesFileAndLine) {
  struct Case {
    const char* text;
    const char* expected;  // in the message, after the path
  };
  const std::string complete = "L 1\no_s 1\no_r 1\ng 1\nG 1\n";
  const Case cases[] = {
      {"L 1\nbandwidth 3\n", ":2: unknown key 'bandwidth'"},
      {"L 1\nL 2\n", ":2: key 'L' given twice"},
      {"# x\nL fast\n", ":2: value of L is 'fast'"},
      {"L -0.5\n", ":1: value of L is '-0.5'"},
      {"L inf\n", ":1: value of L is 'inf'"},
      {"L 1 us\n", ":1: expected 'KEY VALUE', got 'L 1 us'"},
      {"L\n", ":1: expected 'KEY VALUE', got 'L'"},
      {"L 1\no_s 1\no_r 1\ng 1\n", ": missing key 'G'"},
      {"", ": missing key 'L'"},
  };
  int index = 0;
  for (const Case& c : cases) {
    const std::string path = TempPath(absl::StrCat("bad", index++, ".loggp"));
    WriteText(path, c.text);
    absl::Status status = ReadLogGPFile(path).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_TRUE(
        absl::StrContains(status.message(), absl::StrCat(path, c.expected)))
        << "file '" << c.text << "': " << status;
  }
  // The same keys, complete, read fine.
  const std::string path = TempPath("complete.loggp");
  WriteText(path, complete);
  EXPECT_TRUE(ReadLogGPFile(path).ok());
}

TEST(LogGPFileTest, MissingFileIsNotFound) {
  const std::string path = TempPath("does_not_exist.loggp");
  absl::Status status = ReadLogGPFile(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(status.message(), path)) << status;
}

TEST(LogGPFileTest, UnwritablePathIsAnError) {
  absl::Status status =
      WriteLogGPFile(TempPath("no/such/dir/x.loggp"), DefaultLogGP(), "");
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "no/such/dir")) << status;
}

}  // namespace
}  // namespace minimpi::part
