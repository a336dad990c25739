// loggp_probe: measures the LogGP parameters of the link between two ranks
// with Netgauge's parametrised round trips and writes them to a file that
// the PLogGP aggregator of partitioned communication reads
// (mpi/part/model/loggp.h describes the method and the format).
//
//   usage: mpiexec -n 2 loggp_probe OUTPUT_FILE [MAX_BYTES]
//
// Rank 0 sends trains of n messages of s bytes to rank 1 with MPI_Send,
// either back to back (d = 0) or with a busy-wait of d between sends, and
// rank 1 answers each train with one message of s bytes after the last:
// PRTT(n, d, s). n is 1, 8 and 16; s runs over powers of two from 1 B to
// MAX_BYTES (default 1 MiB); d is twice the per-message time the undelayed
// trains showed at that size (at least 1 us), so the sender's loop and not
// the link paces the delayed trains (a calibration sweep measures it). Each
// round trip is repeated over several sweeps through all sizes and the
// fastest kept: on a small machine a descheduling only ever adds time.
// Rank 0 prints the round trips and the fitted parameters and writes the
// file. Takes a few seconds.
//
// Uses only the public MPI API, so it also builds against another MPI
// (e.g. mpicxx.mpich) to compare links.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "mpi/part/model/loggp.h"

namespace {

using minimpi::part::FitLogGP;
using minimpi::part::LogGPParameters;
using minimpi::part::PrttSample;
using minimpi::part::WriteLogGPFile;

constexpr int kTag = 23;
constexpr int kTrainLengths[] = {1, 8, 16};
constexpr size_t kNumTrains = std::size(kTrainLengths);
constexpr size_t kDefaultMaxBytes = size_t{1} << 20;
// Untimed round trips before anything is measured, so both ranks are
// running, polling and have their buffers and connections set up.
constexpr int kWarmUpRoundTrips = 2000;
// The rounds of each size are spread over this many sweeps through all
// sizes, so a burst of other load on a small machine spoils a few rounds of
// every size, not all rounds of one.
constexpr int kSweeps = 4;
// No sweep starts after this many seconds (a loaded machine).
constexpr double kBudgetSeconds = 8;
// Timed rounds per size up to kFullRoundsBytes (the default MAX_BYTES: a
// few seconds in all even on a 2 GB/s link); above, fewer in proportion to
// the size (at least one a sweep).
constexpr int kRounds = 40;
constexpr size_t kFullRoundsBytes = size_t{1} << 20;
constexpr double kMinDelayUs = 1.0;

int RoundsPerSweep(size_t bytes) {
  size_t rounds = kRounds;
  if (bytes > kFullRoundsBytes) rounds = kRounds * kFullRoundsBytes / bytes;
  return std::max(static_cast<int>(rounds / kSweeps), 1);
}

// The cost of one MPI_Wtime call: every delay below is measured between two
// clock reads and the read that starts it is not part of the measured
// interval, so it is taken out as well (else it would count as overhead).
double ClockReadUs() {
  constexpr int kReads = 1000;
  const double start = MPI_Wtime();
  for (int i = 0; i < kReads; ++i) MPI_Wtime();
  return (MPI_Wtime() - start) * 1e6 / (kReads + 1);
}

// One round trip PRTT(n, d, s). Rank 0 sends n messages with a busy-wait of
// `delay_us` between them and receives the answer; it returns the time in
// microseconds, corrected to exactly `delay_us` per wait (a spin on the
// clock overshoots by up to one read). Rank 1 receives the train and answers
// after the last message; it returns 0. Rank 1 needs no delay, so nothing
// but the data itself crosses the link.
double RoundTrip(int rank, std::vector<char>& buffer, int n, size_t bytes,
                 double delay_us, double clock_read_us) {
  const int count = static_cast<int>(bytes);
  if (rank != 0) {
    for (int i = 0; i < n; ++i) {
      MPI_Recv(buffer.data(), count, MPI_BYTE, 0, kTag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    }
    MPI_Send(buffer.data(), count, MPI_BYTE, 0, kTag, MPI_COMM_WORLD);
    return 0;
  }
  double overshoot_us = 0;
  const double start = MPI_Wtime();
  for (int i = 0; i < n; ++i) {
    MPI_Send(buffer.data(), count, MPI_BYTE, 1, kTag, MPI_COMM_WORLD);
    if (delay_us > 0 && i + 1 < n) {
      const double wait_start = MPI_Wtime();
      const double wait_end = wait_start + delay_us * 1e-6;
      double now = wait_start;
      while (now < wait_end) now = MPI_Wtime();
      overshoot_us += (now - wait_start) * 1e6 + clock_read_us - delay_us;
    }
  }
  MPI_Recv(buffer.data(), count, MPI_BYTE, 1, kTag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  return (MPI_Wtime() - start) * 1e6 - overshoot_us;
}

// The round trips of one size, the fastest of all rounds (rank 0 only).
struct SizeResult {
  using Trains = std::array<double, kNumTrains>;  // one per train length
  size_t bytes;
  Trains undelayed_us;
  // Delay -> delayed round trips ([0] unused: one message has no delay).
  // The delay is chosen anew each sweep from the fastest undelayed trains
  // so far, so an early disturbance cannot make it needlessly long for good.
  std::map<double, Trains> delayed_us;

  explicit SizeResult(size_t size) : bytes(size) { undelayed_us.fill(kNone); }
  static constexpr double kNone = 1e300;

  // Twice the slowest per-message time of the undelayed trains: the
  // sender's loop, not the link, then paces the delayed ones.
  double ChooseDelay() const {
    double step_us = 0;
    for (size_t i = 1; i < kNumTrains; ++i) {
      step_us = std::max(step_us, (undelayed_us[i] - undelayed_us[0]) /
                                      (kTrainLengths[i] - 1));
    }
    return std::max(2 * step_us, kMinDelayUs);
  }
};

// Both ranks walk the same plan: warm-up, then sweeps through all sizes,
// each with undelayed and then delayed rounds. Only rank 0 times, keeps
// results and decides the delays (rank 1 does not need them); it also stops
// the sweeps when the time budget is spent and says so (`sweeps_done`).
std::vector<SizeResult> Measure(int rank, std::vector<char>& buffer,
                                size_t max_bytes, double clock_read_us,
                                int& sweeps_done) {
  std::vector<SizeResult> results;
  for (size_t bytes = 1; bytes <= max_bytes; bytes *= 2) {
    results.emplace_back(bytes);
  }
  for (int i = 0; i < kWarmUpRoundTrips; ++i) {
    RoundTrip(rank, buffer, 1, 8, 0, clock_read_us);
  }
  const double start = MPI_Wtime();
  sweeps_done = 0;
  while (sweeps_done < kSweeps) {
    for (SizeResult& r : results) {
      const int rounds = RoundsPerSweep(r.bytes);
      for (int round = 0; round < rounds; ++round) {
        for (size_t i = 0; i < kNumTrains; ++i) {
          r.undelayed_us[i] = std::min(r.undelayed_us[i],
                                       RoundTrip(rank, buffer, kTrainLengths[i],
                                                 r.bytes, 0, clock_read_us));
        }
      }
      const double delay_us = rank == 0 ? r.ChooseDelay() : 0;
      auto [entry, inserted] = r.delayed_us.try_emplace(delay_us);
      SizeResult::Trains& delayed = entry->second;
      if (inserted) delayed.fill(SizeResult::kNone);
      for (int round = 0; round < rounds; ++round) {
        for (size_t i = 1; i < kNumTrains; ++i) {
          delayed[i] =
              std::min(delayed[i], RoundTrip(rank, buffer, kTrainLengths[i],
                                             r.bytes, delay_us, clock_read_us));
        }
      }
    }
    ++sweeps_done;
    int go_on = MPI_Wtime() - start < kBudgetSeconds;
    MPI_Bcast(&go_on, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!go_on) break;
  }
  return results;
}

// The round trips of each size (with the shortest delay tried, for the
// delayed ones) and the per-message times FitLogGP derives from them.
void PrintTable(const std::vector<SizeResult>& results) {
  std::printf("# PRTT(n, d, s) in microseconds, fastest of the rounds\n");
  std::printf("# %9s %10s %10s %10s %9s %10s %10s %12s %10s\n", "bytes", "n=1",
              "n=8", "n=16", "d", "n=8,d", "n=16,d", "g+(s-1)G", "o_s(s)");
  constexpr size_t kLongest = kNumTrains - 1;
  constexpr double kSteps = kTrainLengths[kLongest] - 1;
  for (const SizeResult& r : results) {
    const auto& [delay_us, delayed_us] = *r.delayed_us.begin();
    const double step = (r.undelayed_us[kLongest] - r.undelayed_us[0]) / kSteps;
    const double overhead =
        (delayed_us[kLongest] - r.undelayed_us[0]) / kSteps - delay_us;
    std::printf(
        "  %9zu %10.3f %10.3f %10.3f %9.3f %10.3f %10.3f %12.4f %10.4f\n",
        r.bytes, r.undelayed_us[0], r.undelayed_us[1], r.undelayed_us[2],
        delay_us, delayed_us[1], delayed_us[2], step, overhead);
  }
}

std::string DescribeRun(double clock_read_us) {
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  char host[MPI_MAX_PROCESSOR_NAME] = "";
  int length = 0;
  MPI_Get_library_version(library, &length);
  MPI_Get_processor_name(host, &length);
  std::string first_line = library;
  first_line = first_line.substr(0, first_line.find('\n'));
  return absl::StrCat(
      "LogGP parameters measured by loggp_probe (Netgauge PRTT method)\n",
      "host: ", host, "\nMPI: ", first_line, "\nclock read: ", clock_read_us,
      " us");
}

int Usage(int rank) {
  if (rank == 0) {
    std::fprintf(stderr,
                 "usage: mpiexec -n 2 loggp_probe OUTPUT_FILE [MAX_BYTES]\n"
                 "  measures LogGP between ranks 0 and 1 (message sizes 1 B "
                 "to MAX_BYTES, default %zu) and writes them to OUTPUT_FILE\n",
                 kDefaultMaxBytes);
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // Every rank checks the arguments, so all of them leave together.
  size_t max_bytes = kDefaultMaxBytes;
  int status = 0;
  if (argc < 2 || argc > 3) {
    status = Usage(rank);
  } else if (argc == 3 && (!absl::SimpleAtoi(argv[2], &max_bytes) ||
                           max_bytes < 1 || max_bytes > (size_t{1} << 30))) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "loggp_probe: MAX_BYTES '%s' is not a size from 1 to "
                   "1073741824\n",
                   argv[2]);
    }
    status = 2;
  } else if (size != 2) {
    if (rank == 0) {
      std::fprintf(stderr, "loggp_probe: needs exactly 2 ranks, got %d\n",
                   size);
    }
    status = 2;
  }
  if (status != 0) {
    MPI_Finalize();
    return status;
  }
  const std::string output_path = argv[1];

  std::vector<char> buffer(max_bytes, 1);
  const double clock_read_us = ClockReadUs();
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  int sweeps = 0;
  const std::vector<SizeResult> results =
      Measure(rank, buffer, max_bytes, clock_read_us, sweeps);
  const double elapsed_s = MPI_Wtime() - start;

  if (rank == 0) {
    std::vector<PrttSample> samples;
    for (const SizeResult& r : results) {
      for (size_t i = 0; i < kNumTrains; ++i) {
        samples.push_back({kTrainLengths[i], 0, r.bytes, r.undelayed_us[i]});
      }
      for (const auto& [delay_us, delayed_us] : r.delayed_us) {
        for (size_t i = 1; i < kNumTrains; ++i) {
          samples.push_back(
              {kTrainLengths[i], delay_us, r.bytes, delayed_us[i]});
        }
      }
    }
    PrintTable(results);
    std::printf("# measured in %.2f s, %d sweeps\n", elapsed_s, sweeps);
    if (sweeps < kSweeps) {
      std::printf(
          "# note: stopped after %d of %d sweeps (over %.0f s): the machine "
          "looks busy; the results may be too slow\n",
          sweeps, kSweeps, kBudgetSeconds);
    }
    absl::StatusOr<LogGPParameters> fit = FitLogGP(samples);
    if (!fit.ok()) {
      std::fprintf(stderr, "loggp_probe: %s\n",
                   std::string(fit.status().message()).c_str());
      status = 1;
    } else {
      std::printf(
          "L   %.4f us\no_s %.4f us\no_r %.4f us (only L + o_r is "
          "measured; see mpi/part/model/loggp.h)\n"
          "g   %.4f us\nG   %.3g us/byte (%.2f GB/s)\n",
          fit->latency_us, fit->send_overhead_us, fit->receive_overhead_us,
          fit->gap_us, fit->gap_per_byte_us,
          fit->gap_per_byte_us > 0 ? 1e-3 / fit->gap_per_byte_us : 0.0);
      const absl::Status written =
          WriteLogGPFile(output_path, *fit, DescribeRun(clock_read_us));
      if (!written.ok()) {
        std::fprintf(stderr, "loggp_probe: %s\n",
                     std::string(written.message()).c_str());
        status = 1;
      } else {
        std::printf("written to %s\n", output_path.c_str());
      }
    }
  }
  MPI_Finalize();
  return status;
}
