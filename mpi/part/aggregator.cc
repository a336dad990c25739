#include "mpi/part/aggregator.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <ranges>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mpi/part/model/ploggp_model.h"

namespace minimpi::part {
namespace {

int64_t Clamp(int64_t groups, int64_t units) {
  return std::max<int64_t>(1, std::min(groups, std::max<int64_t>(units, 1)));
}

// Transport partitions for `wanted` groups of user partitions, expressed in
// units (a unit may hold several partitions).
int64_t GroupsInUnits(int64_t wanted_groups, const PlanInput& input) {
  return Clamp(wanted_groups, input.units);
}

class NoAggregation final : public Aggregator {
 public:
  const char* name() const override { return "none"; }
  Plan Initial(const PlanInput& input) override {
    Plan plan;
    plan.transport_partitions = Clamp(input.units, input.units);
    plan.reason = "one write per user partition";
    return plan;
  }
};

// MPICH's scheme (Gillis et al.): gcd(send, receive partitions) messages,
// so that every message feeds whole receive partitions, then neighbours are
// merged while a message stays under the size threshold.
class SizeAggregator final : public Aggregator {
 public:
  explicit SizeAggregator(size_t threshold) : threshold_(threshold) {}
  const char* name() const override { return "size"; }
  Plan Initial(const PlanInput& input) override {
    const int64_t base =
        std::gcd(std::max<int64_t>(input.send_partitions, 1),
                 std::max<int64_t>(input.receive_partitions, 1));
    const size_t message_bytes = input.total_bytes / static_cast<size_t>(base);
    int64_t merge = 1;
    if (message_bytes > 0 && message_bytes < threshold_) {
      merge = static_cast<int64_t>(threshold_ / message_bytes);
    } else if (message_bytes == 0) {
      merge = base;
    }
    // Merge only by divisors of `base`, so every message still feeds whole
    // receive partitions.
    merge = std::min(merge, base);
    while (base % merge != 0) --merge;
    Plan plan;
    plan.transport_partitions = GroupsInUnits(base / merge, input);
    plan.reason = absl::StrFormat(
        "gcd(%d, %d) = %d messages of %d bytes, merged by %d up to %d bytes",
        input.send_partitions, input.receive_partitions, base, message_bytes,
        merge, threshold_);
    return plan;
  }

 private:
  const size_t threshold_;
};

class TableAggregator final : public Aggregator {
 public:
  TableAggregator(std::vector<TableEntry> table, int max_channels)
      : table_(std::move(table)), max_channels_(max_channels) {}
  const char* name() const override { return "table"; }
  Plan Initial(const PlanInput& input) override {
    // The entry nearest at or below (partitions, bytes): the largest
    // partition count, then the largest size.
    const TableEntry* best = nullptr;
    for (const TableEntry& entry : table_) {
      if (entry.user_partitions > input.send_partitions ||
          entry.partition_bytes > input.partition_bytes) {
        continue;
      }
      if (best == nullptr || entry.user_partitions > best->user_partitions ||
          (entry.user_partitions == best->user_partitions &&
           entry.partition_bytes > best->partition_bytes)) {
        best = &entry;
      }
    }
    Plan plan;
    if (best == nullptr) {
      plan.transport_partitions = input.units;
      plan.reason = "no table entry at or below; one write per partition";
      return plan;
    }
    // The entry's ratio of transport to user partitions carries over.
    const double ratio = static_cast<double>(best->transport_partitions) /
                         static_cast<double>(best->user_partitions);
    plan.transport_partitions = GroupsInUnits(
        std::llround(ratio * static_cast<double>(input.send_partitions)),
        input);
    plan.channels = std::max(1, std::min(best->channels, max_channels_));
    plan.reason = absl::StrFormat(
        "table entry (%d partitions, %d bytes) -> %d transport partitions, "
        "%d channels",
        best->user_partitions, best->partition_bytes,
        best->transport_partitions, best->channels);
    return plan;
  }

 private:
  const std::vector<TableEntry> table_;
  const int max_channels_;
};

// The PLogGP choice (Temuçin et al.), without or with the timer in the
// model, taking the fewest writes within the configured slack of the best.
Plan PLogGPPlan(const AggregatorConfig& config, const PlanInput& input,
                double delay_us, bool timer, double delta_us) {
  const PLogGPChoice choice =
      timer ? ChooseTimerTransportPartitions(
                  config.loggp, input.send_partitions, input.partition_bytes,
                  delay_us, delta_us, config.slack)
            : ChooseTransportPartitionsWithSlack(
                  config.loggp, input.send_partitions, input.partition_bytes,
                  delay_us, config.slack);
  Plan plan;
  plan.transport_partitions = GroupsInUnits(choice.transport_partitions, input);
  plan.predicted_us = choice.predicted_us;
  plan.reaction =
      timer ? ReactionKind::kWaitingTimer : ReactionKind::kWhenComplete;
  plan.delta_us = delta_us;
  plan.reason = absl::StrFormat(
      "PLogGP%s many-before-one, delay %.1f us: %d transport partitions "
      "predicted %.2f us (one message: %.2f us; fewest writes within %.0f%% "
      "of the best)",
      timer ? absl::StrFormat(" with timer (delta %.1f us)", delta_us) : "",
      delay_us, choice.transport_partitions, choice.predicted_us,
      choice.single_message_us, config.slack * 100);
  return plan;
}

class PLogGPAggregator : public Aggregator {
 public:
  PLogGPAggregator(const AggregatorConfig& config, bool timer)
      : config_(config), timer_(timer) {}
  const char* name() const override { return timer_ ? "timer" : "ploggp"; }
  Plan Initial(const PlanInput& input) override {
    return PLogGPPlan(config_, input, config_.delay_us, timer_,
                      timer_ ? config_.delta_us : 0);
  }

 protected:
  const AggregatorConfig config_;
  const bool timer_;
};

// Nobody has to guess delta or the laggard's delay: both come from the
// previous rounds of the same request. The first round runs the timer
// aggregator's plan; after each round, delta becomes the non-laggard spread
// (the time it takes the punctual threads to all arrive, so the first one
// waits just long enough for them, plus a quarter and 1 us for jitter),
// smoothed over rounds, and the grouping is the timer-aware PLogGP choice
// for the measured laggard delay.
class AdaptiveAggregator final : public PLogGPAggregator {
 public:
  explicit AdaptiveAggregator(const AggregatorConfig& config)
      : PLogGPAggregator(config, /*timer=*/true) {}
  const char* name() const override { return "adaptive"; }
  bool wants_arrivals() const override { return true; }
  Plan Replan(const PlanInput& input, const Plan& current,
              std::span<const double> unit_ready_us,
              int64_t most_by_one_thread) override {
    if (unit_ready_us.size() < 2) return current;
    const ArrivalSpread spread = MeasureArrivalSpread(unit_ready_us);
    constexpr double kWeight = 0.5;  // newest round's share
    if (rounds_ == 0) {
      spread_us_ = spread.non_laggard_spread_us;
      delay_us_ = spread.laggard_delay_us;
    } else {
      spread_us_ =
          kWeight * spread.non_laggard_spread_us + (1 - kWeight) * spread_us_;
      delay_us_ = kWeight * spread.laggard_delay_us + (1 - kWeight) * delay_us_;
    }
    ++rounds_;
    // The timer pays when the arrivals form a punctual cluster and a
    // laggard well behind it: wait long enough for the cluster (plus a
    // quarter and 1 us for jitter), then the laggard goes alone. Arrivals
    // spread out with no such cluster (a wavefront, say) are best sent as
    // they come: one write per partition, no waiting.
    if (spread.laggards == 0 || spread_us_ * 2 > delay_us_) {
      // No cluster ahead of a laggard. Arrivals close together (a thread
      // marking its partitions back to back, threads waking near each
      // other) are merged in windows of four typical gaps, opened by the
      // first arrival and closed by whoever comes after it, nobody waiting
      // — when such a window costs no more than two writes, or delays data
      // by at most an eighth of the round's arrival span (early bird
      // mostly kept). Arrivals further apart (a wavefront) go one write
      // each, at once.
      const double gap = MedianGap(unit_ready_us);
      const auto [first, last] =
          std::minmax_element(unit_ready_us.begin(), unit_ready_us.end());
      const double span = *last - *first;
      const double write_us =
          config_.loggp.send_overhead_us + config_.loggp.receive_overhead_us +
          config_.loggp.gap_per_byte_us * double(input.partition_bytes);
      Plan plan;
      if (gap <= 2 * write_us || 4 * gap <= span / 8) {
        // A thread that marks one partition has nothing left to do, so the
        // first arrival may wait out the window itself (which guarantees
        // it closes in time); one that marks several must not wait before
        // its next ones, so its windows are closed by whoever comes after.
        plan.transport_partitions = 1;
        plan.reaction = most_by_one_thread > 1 ? ReactionKind::kDeferredWindows
                                               : ReactionKind::kWaitingTimer;
        plan.delta_us = 4 * gap + 0.5;
        plan.reason = absl::StrFormat(
            "adaptive: arrivals close together (median gap %.2f us, writes "
            "of %.2f us, span %.1f us, up to %d partitions per thread): "
            "windows of %.1f us, %s",
            gap, write_us, span, most_by_one_thread, plan.delta_us,
            plan.reaction == ReactionKind::kDeferredWindows
                ? "nobody waits"
                : "the first arrival waits");
      } else {
        plan.transport_partitions = input.units;
        plan.reason = absl::StrFormat(
            "adaptive: arrivals spread out (median gap %.1f us, writes of "
            "%.2f us, span %.1f us, no laggard apart): one write per "
            "partition, at once",
            gap, write_us, span);
      }
      return plan;
    }
    const double delta = 1.25 * spread_us_ + 1.0;
    Plan plan = PLogGPPlan(config_, input, delay_us_, /*timer=*/true, delta);
    absl::StrAppendFormat(&plan.reason,
                          "; measured over %d rounds: non-laggard spread "
                          "%.1f us, laggard delay %.1f us -> delta %.1f us",
                          rounds_, spread_us_, delay_us_, plan.delta_us);
    return plan;
  }

 private:
  int rounds_ = 0;
  double spread_us_ = 0;
  double delay_us_ = 0;
};

// A fixed plan from the request's info keys, whatever the scheme.
class ForcedPlan final : public Aggregator {
 public:
  ForcedPlan(std::unique_ptr<Aggregator> scheme, int64_t groups, int channels)
      : scheme_(std::move(scheme)), groups_(groups), channels_(channels) {}
  const char* name() const override { return scheme_->name(); }
  Plan Initial(const PlanInput& input) override {
    Plan plan = scheme_->Initial(input);
    if (groups_ > 0) plan.transport_partitions = Clamp(groups_, input.units);
    if (channels_ > 0) plan.channels = channels_;
    plan.reason = absl::StrFormat(
        "fixed by info keys: %d transport partitions, %d channels",
        plan.transport_partitions, plan.channels);
    return plan;
  }

 private:
  std::unique_ptr<Aggregator> scheme_;
  const int64_t groups_;
  const int channels_;
};

}  // namespace

double MedianGap(std::span<const double> ready_us) {
  if (ready_us.size() < 2) return 0;
  std::vector<double> sorted(ready_us.begin(), ready_us.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> gaps(sorted.size() - 1);
  for (size_t i = 0; i + 1 < sorted.size(); ++i) {
    gaps[i] = sorted[i + 1] - sorted[i];
  }
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  return gaps[gaps.size() / 2];
}

ArrivalSpread MeasureArrivalSpread(std::span<const double> ready_us) {
  std::vector<double> sorted(ready_us.begin(), ready_us.end());
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  ArrivalSpread result;
  if (n == 0) return result;
  const double median = sorted[n / 2];
  std::vector<double> deviations(n);
  for (size_t i = 0; i < n; ++i) deviations[i] = std::abs(sorted[i] - median);
  std::nth_element(deviations.begin(), deviations.begin() + n / 2,
                   deviations.end());
  const double mad = deviations[n / 2];
  const double cut = median + std::max({4 * mad, 0.1 * std::abs(median), 2.0});
  size_t punctual = n;
  while (punctual > 1 && sorted[punctual - 1] > cut) --punctual;
  result.non_laggard_spread_us = sorted[punctual - 1] - sorted[0];
  result.laggards = static_cast<int64_t>(n - punctual);
  result.laggard_delay_us =
      punctual < n ? sorted[n - 1] - sorted[punctual - 1] : 0;
  return result;
}

absl::StatusOr<std::vector<TableEntry>> ReadTuningTable(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot open the tuning table ", path));
  }
  std::vector<TableEntry> table;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    TableEntry entry;
    if (!(fields >> entry.user_partitions)) continue;  // blank line
    std::string extra;
    if (!(fields >> entry.partition_bytes >> entry.transport_partitions >>
          entry.channels) ||
        (fields >> extra) || entry.user_partitions <= 0 ||
        entry.transport_partitions <= 0 || entry.channels <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", number,
                       ": expected 'user_partitions bytes_per_partition "
                       "transport_partitions channels' (positive integers)"));
    }
    table.push_back(entry);
  }
  if (table.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the tuning table ", path, " has no entries"));
  }
  return table;
}

std::vector<TableEntry> BuiltInTuningTable() {
  // Small partitions are worth merging (a write costs more than it moves);
  // from 64 KiB per partition on, each partition is its own write.
  std::vector<TableEntry> table;
  for (int64_t partitions : {1, 8, 16, 32, 64, 128}) {
    for (size_t bytes : {size_t{1}, size_t{1024}, size_t{4096}, size_t{16384},
                         size_t{65536}}) {
      int64_t groups = partitions;
      if (bytes < 1024) {
        groups = std::max<int64_t>(1, partitions / 16);
      } else if (bytes < 4096) {
        groups = std::max<int64_t>(1, partitions / 8);
      } else if (bytes < 16384) {
        groups = std::max<int64_t>(1, partitions / 4);
      } else if (bytes < 65536) {
        groups = std::max<int64_t>(1, partitions / 2);
      }
      table.push_back({partitions, bytes, groups, 1});
    }
  }
  return table;
}

namespace {

constexpr AggregatorChoice kAggregators[] = {
    {"none", "one write per user partition (pure early bird)",
     [](const AggregatorConfig&) -> std::unique_ptr<Aggregator> {
       return std::make_unique<NoAggregation>();
     }},
    {"size",
     "MPICH's: gcd(send, receive partitions) writes, merged up to "
     "MINIMPI_PART_AGGR_SIZE bytes",
     [](const AggregatorConfig& config) -> std::unique_ptr<Aggregator> {
       return std::make_unique<SizeAggregator>(config.aggregation_size);
     }},
    {"table",
     "tuning table (MINIMPI_PART_TABLE, or built in) keyed by (partitions, "
     "bytes) -> (transport partitions, channels)",
     [](const AggregatorConfig& config) -> std::unique_ptr<Aggregator> {
       return std::make_unique<TableAggregator>(
           config.table.empty() ? BuiltInTuningTable() : config.table,
           config.max_channels);
     }},
    {"ploggp",
     "PLogGP model, many-before-one with MINIMPI_PART_DELAY_US: best "
     "power-of-two transport partition count",
     [](const AggregatorConfig& config) -> std::unique_ptr<Aggregator> {
       return std::make_unique<PLogGPAggregator>(config, /*timer=*/false);
     }},
    {"timer",
     "ploggp grouping; the first thread of a group waits "
     "MINIMPI_PART_DELTA_US, then ready runs go, latecomers go alone",
     [](const AggregatorConfig& config) -> std::unique_ptr<Aggregator> {
       return std::make_unique<PLogGPAggregator>(config, /*timer=*/true);
     }},
    {"adaptive",
     "timer, with delta and the grouping re-derived each round from the "
     "arrivals measured in earlier rounds",
     [](const AggregatorConfig& config) -> std::unique_ptr<Aggregator> {
       return std::make_unique<AdaptiveAggregator>(config);
     }},
};

const AggregatorChoice* FindAggregator(const std::string& name) {
  for (const AggregatorChoice& choice : kAggregators) {
    if (name == choice.name) return &choice;
  }
  return nullptr;
}

}  // namespace

std::span<const AggregatorChoice> AggregatorChoices() { return kAggregators; }

std::vector<std::string> AggregatorNames() {
  auto names = std::views::transform(kAggregators, &AggregatorChoice::name);
  return {names.begin(), names.end()};
}

const char* AggregatorDescription(const std::string& name) {
  const AggregatorChoice* choice = FindAggregator(name);
  return choice == nullptr ? "" : choice->description;
}

absl::StatusOr<std::unique_ptr<Aggregator>> MakeAggregator(
    const std::string& name, const AggregatorConfig& config) {
  const AggregatorChoice* choice = FindAggregator(name);
  if (choice == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown aggregator '", name, "' (expected ",
                     absl::StrJoin(AggregatorNames(), ", "), ")"));
  }
  std::unique_ptr<Aggregator> scheme = choice->make(config);
  if (config.forced_transport_partitions > 0 || config.forced_channels > 0) {
    return std::unique_ptr<Aggregator>(std::make_unique<ForcedPlan>(
        std::move(scheme), config.forced_transport_partitions,
        std::min(config.forced_channels, config.max_channels)));
  }
  return scheme;
}

}  // namespace minimpi::part
