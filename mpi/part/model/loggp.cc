#include "mpi/part/model/loggp.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace minimpi::part {
namespace {

// The file's keys, in the order WriteLogGPFile writes them.
struct Key {
  const char* name;
  double LogGPParameters::*field;
  const char* description;
};
constexpr Key kKeys[] = {
    {"L", &LogGPParameters::latency_us, "latency, microseconds"},
    {"o_s", &LogGPParameters::send_overhead_us, "send overhead, microseconds"},
    {"o_r", &LogGPParameters::receive_overhead_us,
     "receive overhead, microseconds"},
    {"g", &LogGPParameters::gap_us, "gap between messages, microseconds"},
    {"G", &LogGPParameters::gap_per_byte_us,
     "gap per byte, microseconds per byte"},
};

// Shortest text that reads back as exactly `value`.
std::string FormatExact(double value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (error != std::errc()) return absl::StrCat(value);
  return std::string(buffer, end);
}

// One point of a line fit y = a + b x, with the scale of its noise. Noise
// grows with the round trips a value is derived from, so a per-message time
// (PRTT(n) - PRTT(1)) / (n - 1) carries the scale (PRTT(n) + PRTT(1)) /
// (n - 1), and fits minimise errors relative to it: otherwise the largest
// messages (hundreds of microseconds) would decide the intercept, which only
// the small ones can show.
//
// Below 10 ns nothing is measurable with MPI_Wtime; the floor only keeps a
// zero from getting an infinite weight.
constexpr double kMinScaleUs = 0.01;

struct Point {
  double x;
  double y;
  double scale;
};

struct Line {
  double intercept;
  double slope;
};

// Weighted least squares with weights 1 / scale^2, constrained to a line
// with intercept and slope both >= 0 (no LogGP quantity is negative; a
// negative estimate is noise).
Line FitLine(const std::vector<Point>& points) {
  double sw = 0, swx = 0, swy = 0, swxx = 0, swxy = 0;
  for (const Point& p : points) {
    const double scale = std::max(std::fabs(p.scale), kMinScaleUs);
    const double w = 1.0 / (scale * scale);
    sw += w;
    swx += w * p.x;
    swy += w * p.y;
    swxx += w * p.x * p.x;
    swxy += w * p.x * p.y;
  }
  Line line{swy / sw, 0};
  const double denominator = sw * swxx - swx * swx;
  // All points at one x: no slope can be told; the weighted mean is the best
  // constant.
  if (denominator > 1e-12 * sw * swxx) {
    line.slope = (sw * swxy - swx * swy) / denominator;
    line.intercept = (swy - line.slope * swx) / sw;
  }
  if (line.slope < 0) {
    line = {swy / sw, 0};
  }
  if (line.intercept < 0) {
    // Best line through the origin.
    line = {0, swxx > 0 ? std::max(swxy / swxx, 0.0) : 0.0};
  }
  return line;
}

// Weighted squared residuals of `line` (weights as in FitLine).
double Residual(const std::vector<Point>& points, const Line& line) {
  double sum = 0;
  for (const Point& p : points) {
    const double scale = std::max(std::fabs(p.scale), kMinScaleUs);
    const double error = p.y - (line.intercept + line.slope * p.x);
    sum += error * error / (scale * scale);
  }
  return sum;
}

// Lines fitted to small and to large messages.
struct Regimes {
  Line small;
  Line large;

  // The slower of the two lines at x: a safe bound where only one applies.
  double UpperBound(double x) const {
    return std::max(small.intercept + small.slope * x,
                    large.intercept + large.slope * x);
  }
};

// Points divided at some x into two lines.
struct Split {
  Line small;
  Line large;
  std::vector<Point> small_points;  // the points of `small`
  double cost;                      // weighted squared residuals of both
};

// Sets `best` to the split of `points` (sorted by x) into two lines, each
// over at least two sizes, with the least cost. False if there are fewer
// than four sizes.
bool BestSplit(const std::vector<Point>& points, Split& best) {
  std::vector<double> sizes;
  for (const Point& p : points) {
    if (sizes.empty() || p.x != sizes.back()) sizes.push_back(p.x);
  }
  if (sizes.size() < 4) return false;
  bool found = false;
  for (size_t left_sizes = 2; left_sizes + 2 <= sizes.size(); ++left_sizes) {
    const double last_small = sizes[left_sizes - 1];
    const auto split =
        std::find_if(points.begin(), points.end(),
                     [last_small](const Point& p) { return p.x > last_small; });
    std::vector<Point> small(points.begin(), split);
    const std::vector<Point> large(split, points.end());
    const Line small_line = FitLine(small);
    const Line large_line = FitLine(large);
    const double cost =
        Residual(small, small_line) + Residual(large, large_line);
    if (!found || cost < best.cost) {
      best = {small_line, large_line, std::move(small), cost};
      found = true;
    }
  }
  return found;
}

// A two-sided MPI library changes protocol with the message size (a few
// bytes inline, eager copies through buffers, then a rendezvous with a
// handshake), so measured per-message times follow one line over some sizes
// and another above them; one line through all would bend the intercept
// towards the larger sizes' costs. So: where one line misses the points by
// more than measurement noise (kLineTolerance of the points' scales, rms;
// the fastest of many round trips is steadier than that) and two lines at
// the best split at least halve its residual, split; `large` is the line
// above the split. Then go on splitting the small side the same way, for
// `small`, the line of the smallest messages. Data that follows one line is
// not split.
Regimes FitRegimes(std::vector<Point> points) {
  constexpr double kLineTolerance = 0.01;
  constexpr double kRequiredGain = 0.5;
  std::sort(points.begin(), points.end(),
            [](const Point& a, const Point& b) { return a.x < b.x; });
  Split split;
  auto should_split = [&split](const std::vector<Point>& candidates,
                               const Line& line) {
    const double residual = Residual(candidates, line);
    return residual > kLineTolerance * kLineTolerance * candidates.size() &&
           BestSplit(candidates, split) &&
           split.cost <= kRequiredGain * residual;
  };
  Regimes regimes;
  regimes.small = FitLine(points);
  regimes.large = regimes.small;
  if (!should_split(points, regimes.small)) return regimes;
  regimes.large = split.large;
  regimes.small = split.small;
  std::vector<Point> small_points = std::move(split.small_points);
  while (should_split(small_points, regimes.small)) {
    regimes.small = split.small;
    small_points = std::move(split.small_points);
  }
  return regimes;
}

// Round trips of one message size, the smallest PRTT of each (n, d).
struct SizeSamples {
  // PRTT(1, 0, s); -1 if none.
  double single_us = -1;
  // n > 1, d = 0: n -> PRTT(n, 0, s).
  std::map<int, double> trains;
  // n > 1, d > 0: (n, d) -> PRTT(n, d, s).
  std::map<std::pair<int, double>, double> delayed;
};

void KeepMin(double& slot, double value) {
  if (slot < 0 || value < slot) slot = value;
}

}  // namespace

LogGPParameters DefaultLogGP() {
  LogGPParameters parameters;
  // Shared-memory rings: a store and a poll, a few hundred cycles each way.
  parameters.latency_us = 0.2;
  parameters.send_overhead_us = 0.1;
  parameters.receive_overhead_us = 0.1;
  parameters.gap_us = 0.1;
  // One single copy at about 10 GB/s = 10^4 bytes per microsecond.
  parameters.gap_per_byte_us = 1e-4;
  return parameters;
}

absl::StatusOr<LogGPParameters> ReadLogGPFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("LogGP file ", path, ": cannot open"));
  }
  LogGPParameters parameters;
  bool seen[std::size(kKeys)] = {};
  std::string text;
  int line_number = 0;
  while (std::getline(in, text)) {
    ++line_number;
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(
          absl::StrCat("LogGP file ", path, ":", line_number, ": ", what));
    };
    absl::string_view line = text;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos) {
      line = line.substr(0, hash);
    }
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty()) continue;
    if (words.size() != 2) {
      return error(absl::StrCat("expected 'KEY VALUE', got '",
                                absl::StripAsciiWhitespace(line), "'"));
    }
    size_t index = 0;
    while (index < std::size(kKeys) && words[0] != kKeys[index].name) ++index;
    if (index == std::size(kKeys)) {
      return error(absl::StrCat("unknown key '", words[0],
                                "' (expected L, o_s, o_r, g or G)"));
    }
    if (seen[index]) {
      return error(absl::StrCat("key '", words[0], "' given twice"));
    }
    double value;
    if (!absl::SimpleAtod(words[1], &value) || !std::isfinite(value) ||
        value < 0) {
      return error(absl::StrCat("value of ", words[0], " is '", words[1],
                                "', expected a number >= 0"));
    }
    seen[index] = true;
    parameters.*(kKeys[index].field) = value;
  }
  if (in.bad()) {
    return absl::DataLossError(
        absl::StrCat("LogGP file ", path, ": read error after line ",
                     line_number, ": ", std::strerror(errno)));
  }
  for (size_t i = 0; i < std::size(kKeys); ++i) {
    if (!seen[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("LogGP file ", path, ": missing key '", kKeys[i].name,
                       "' (", kKeys[i].description, ")"));
    }
  }
  return parameters;
}

absl::Status WriteLogGPFile(const std::string& path,
                            const LogGPParameters& parameters,
                            const std::string& comment) {
  std::string text;
  absl::string_view comment_lines = comment;
  while (absl::ConsumeSuffix(&comment_lines, "\n")) {
  }
  if (!comment_lines.empty()) {
    for (absl::string_view line : absl::StrSplit(comment_lines, '\n')) {
      absl::StrAppend(&text, line.empty() ? "#" : "# ", line, "\n");
    }
  }
  for (const Key& key : kKeys) {
    absl::StrAppend(&text, key.name, " ", FormatExact(parameters.*(key.field)),
                    "  # ", key.description, "\n");
  }
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    return absl::ErrnoToStatus(
        errno, absl::StrCat("LogGP file ", path, ": cannot create"));
  }
  out << text;
  out.close();
  if (!out) {
    return absl::DataLossError(absl::StrCat(
        "LogGP file ", path, ": write failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<LogGPParameters> FitLogGP(
    const std::vector<PrttSample>& samples) {
  std::map<size_t, SizeSamples> by_size;
  for (const PrttSample& sample : samples) {
    if (sample.messages < 1 || sample.bytes < 1 ||
        !std::isfinite(sample.delay_us) || sample.delay_us < 0 ||
        !std::isfinite(sample.prtt_us) || sample.prtt_us <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "FitLogGP: invalid sample PRTT(n=", sample.messages, ", d=",
          sample.delay_us, " us, s=", sample.bytes, " B) = ", sample.prtt_us,
          " us (need n >= 1, d >= 0, s >= 1, PRTT > 0)"));
    }
    SizeSamples& size = by_size[sample.bytes];
    if (sample.messages == 1) {
      // With one message there is no delay between sends.
      KeepMin(size.single_us, sample.prtt_us);
    } else if (sample.delay_us == 0) {
      auto [it, inserted] =
          size.trains.try_emplace(sample.messages, sample.prtt_us);
      if (!inserted) it->second = std::min(it->second, sample.prtt_us);
    } else {
      auto [it, inserted] = size.delayed.try_emplace(
          {sample.messages, sample.delay_us}, sample.prtt_us);
      if (!inserted) it->second = std::min(it->second, sample.prtt_us);
    }
  }

  // g + (s - 1) G per size, from undelayed trains; of several train
  // lengths the fastest per-message time, since a disturbance only ever
  // lengthens a train (a long train is more often hit).
  std::vector<Point> gap_points;
  std::map<size_t, double> train_step_us;
  for (const auto& [bytes, size] : by_size) {
    if (size.single_us < 0 || size.trains.empty()) continue;
    Point fastest{static_cast<double>(bytes - 1),
                  std::numeric_limits<double>::infinity(), 0};
    for (const auto& [n, prtt] : size.trains) {
      const double step = (prtt - size.single_us) / (n - 1);
      if (step < fastest.y) {
        fastest.y = step;
        fastest.scale = (prtt + size.single_us) / (n - 1);
      }
    }
    gap_points.push_back(fastest);
    train_step_us[bytes] = fastest.y;
  }
  if (train_step_us.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "FitLogGP: need PRTT(1, 0, s) and PRTT(n > 1, 0, s) for at least two "
        "message sizes s to separate g from G; have them for ",
        train_step_us.size()));
  }
  const Regimes gap = FitRegimes(gap_points);

  // o_s(s) per size, from trains whose delay was at least the time the
  // link needs per message (measured at that size where possible, else the
  // fitted lines), so the sender's loop set the pace; again the fastest.
  std::vector<Point> overhead_points;
  for (const auto& [bytes, size] : by_size) {
    if (size.single_us < 0) continue;
    const auto measured = train_step_us.find(bytes);
    const double link_step =
        measured != train_step_us.end()
            ? measured->second
            : gap.UpperBound(static_cast<double>(bytes - 1));
    bool found = false;
    Point fastest{static_cast<double>(bytes - 1), 0, 0};
    for (const auto& [key, prtt] : size.delayed) {
      const auto [n, delay] = key;
      if (delay < link_step) continue;
      const double step = (prtt - size.single_us) / (n - 1);
      if (!found || step - delay < fastest.y) {
        fastest.y = step - delay;
        fastest.scale = (prtt + size.single_us) / (n - 1);
        found = true;
      }
    }
    if (found) overhead_points.push_back(fastest);
  }
  if (overhead_points.empty()) {
    return absl::InvalidArgumentError(
        "FitLogGP: no PRTT(n > 1, d, s) with a delay d at least as long as "
        "the undelayed per-message time g + (s - 1) G (and a PRTT(1, 0, s) "
        "of the same size); cannot measure o_s");
  }
  const Regimes overhead = FitRegimes(overhead_points);

  // Per-message costs from small messages, the per-byte cost from large
  // ones (see the header).
  LogGPParameters parameters;
  parameters.gap_us = gap.small.intercept;
  parameters.gap_per_byte_us = gap.large.slope;
  parameters.send_overhead_us = overhead.small.intercept;
  // L + o_r from the smallest size with a single round trip, where the
  // per-byte term matters least. Round trips show only the sum; the receiver
  // is taken as costly as the sender, unless the sum is smaller (on shared
  // memory L is tiny), so the one-way time stays as measured.
  for (const auto& [bytes, size] : by_size) {
    if (size.single_us < 0) continue;
    const double latency_and_receive =
        std::max(0.0, size.single_us / 2 - parameters.send_overhead_us -
                          (bytes - 1) * parameters.gap_per_byte_us);
    parameters.receive_overhead_us =
        std::min(parameters.send_overhead_us, latency_and_receive);
    parameters.latency_us =
        latency_and_receive - parameters.receive_overhead_us;
    break;
  }
  return parameters;
}

}  // namespace minimpi::part
