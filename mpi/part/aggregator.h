// Aggregators: how a partitioned send groups its user partitions into
// transport partitions, each sent as one RDMA write with immediate.
//
// A send's partitions are first grouped into at most kMaxUnits "units" of
// consecutive partitions (one partition per unit unless there are more than
// kMaxUnits partitions), because the 32-bit immediate names a run of units.
// A plan splits the units into `transport_partitions` groups of consecutive
// units, sized as evenly as possible, and names the reaction that decides,
// as each unit becomes ready, when a group goes: whole when its last unit
// is ready, or (the timers) in runs of ready units once a wait or window
// of `delta_us` is over. An aggregator plans (Initial), its plan's
// Reaction reacts to each ready unit (reactions.h), and it re-plans
// between rounds from what it measured (Replan).
//
// One class per scheme, chosen once per request (MINIMPI_PART_AGGR, or the
// MPI_Info key "minimpi_part_aggr") by its name in the table kAggregators
// (aggregator.cc):
//   none      one transport partition per unit: pure early bird
//   size      MPICH's scheme: gcd(send, receive partitions) messages, merged
//             up to MINIMPI_PART_AGGR_SIZE bytes
//   table     a tuning table keyed by (user partitions, bytes per partition)
//   ploggp    the PLogGP model's best power-of-two count for the
//             many-before-one pattern with MINIMPI_PART_DELAY_US
//   timer     ploggp's grouping, plus the timer (MINIMPI_PART_DELTA_US)
//   adaptive  timer, with delta and the grouping re-derived each round from
//             the arrivals measured in earlier rounds of the same request
//
// Pure code (no MPI, no transport): the plan is a function of its inputs, so
// the aggregators are unit tested against a reference in
// aggregator_test.cc.
//
// Owned by: mpi/part. Called by: mpi/part/partitioned.cc.
#ifndef MINIMPI_MPI_PART_AGGREGATOR_H_
#define MINIMPI_MPI_PART_AGGREGATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mpi/part/model/loggp.h"

namespace minimpi::part {

// The immediate carries a unit run as 11 + 11 bits (first unit, count - 1).
inline constexpr int64_t kMaxUnits = 2048;

// Partitions per unit, and the number of units, for `partitions` user
// partitions.
inline int64_t PartitionsPerUnit(int64_t partitions) {
  return partitions <= kMaxUnits ? 1 : (partitions + kMaxUnits - 1) / kMaxUnits;
}
inline int64_t UnitCount(int64_t partitions) {
  const int64_t per_unit = PartitionsPerUnit(partitions);
  return (partitions + per_unit - 1) / per_unit;
}

// Group g of `units` units split into `groups` groups: [GroupBegin(g),
// GroupBegin(g + 1)). Sizes differ by at most one.
inline int64_t GroupBegin(int64_t g, int64_t units, int64_t groups) {
  return g * units / groups;
}
// The group that unit u belongs to.
inline int64_t GroupOf(int64_t u, int64_t units, int64_t groups) {
  // Largest g with GroupBegin(g) <= u.
  int64_t g = ((u + 1) * groups - 1) / units;
  while (g > 0 && GroupBegin(g, units, groups) > u) --g;
  while (g + 1 < groups && GroupBegin(g + 1, units, groups) <= u) ++g;
  return g;
}

struct PlanInput {
  int64_t send_partitions = 0;
  int64_t receive_partitions = 0;
  int64_t units = 0;           // UnitCount(send_partitions)
  size_t partition_bytes = 0;  // of one send partition
  size_t total_bytes = 0;
};

// How a send reacts to each ready unit (mpi/part/reactions.h has one class
// per kind): post a group when its last unit is ready; or the timer, whose
// first arrival of a group waits up to delta_us for the others; or
// deferred windows, where nobody waits: the first arrival of a group only
// sets a deadline delta_us away, and whichever MPI_Pready or progress
// comes after it sends the ready runs (adaptive, for arrivals in bursts).
enum class ReactionKind { kWhenComplete, kWaitingTimer, kDeferredWindows };

struct Plan {
  int64_t transport_partitions = 1;  // groups of units, 1..units
  int channels = 1;                  // VCIs the writes are spread over
  ReactionKind reaction = ReactionKind::kWhenComplete;
  double delta_us = 0;  // the timers' wait or window
  bool timed() const { return reaction != ReactionKind::kWhenComplete; }
  double predicted_us = -1;  // the model's prediction, if one was made
  std::string reason;        // one line: what decided this plan
};

// One line of a tuning table: for `user_partitions` partitions of
// `partition_bytes` bytes (the nearest entry at or below both wins).
struct TableEntry {
  int64_t user_partitions = 0;
  size_t partition_bytes = 0;
  int64_t transport_partitions = 1;
  int channels = 1;
};

// Reads a table file: lines "user_partitions bytes transport_partitions
// channels", '#' comments. Errors name the file and line.
absl::StatusOr<std::vector<TableEntry>> ReadTuningTable(
    const std::string& path);
// What `table` uses without a file: measured on a 2-core shared-memory
// node (see README).
std::vector<TableEntry> BuiltInTuningTable();

// Everything any aggregator needs, fixed at MPI_Init.
struct AggregatorConfig {
  size_t aggregation_size = 65536;  // size
  std::vector<TableEntry> table;    // table
  LogGPParameters loggp;            // ploggp, timer, adaptive
  double delay_us = 50;             // ploggp, timer
  double delta_us = 20;             // timer
  // ploggp, timer, adaptive: the fewest writes whose predicted time is
  // within (1 + slack) of the model's best.
  double slack = 0.10;
  int max_channels = 1;  // VCIs available
  // The MPI_Info keys minimpi_part_transport_partitions / _channels of one
  // request: a fixed plan whatever the scheme (0: not given). For tuning.
  int64_t forced_transport_partitions = 0;
  int forced_channels = 0;
};

class Aggregator {
 public:
  virtual ~Aggregator() = default;
  virtual const char* name() const = 0;
  // The plan of the first round, once the receiver is known.
  virtual Plan Initial(const PlanInput& input) = 0;
  // Whether Replan wants the arrival times of each round.
  virtual bool wants_arrivals() const { return false; }
  // Between rounds: `unit_ready_us[u]` is when unit u became ready, in
  // microseconds after the round's MPI_Start; `most_by_one_thread`, the
  // most partitions one thread marked in it. Returns the next round's plan.
  virtual Plan Replan(const PlanInput& input, const Plan& current,
                      std::span<const double> unit_ready_us,
                      int64_t most_by_one_thread = 1) {
    (void)input;
    (void)unit_ready_us;
    (void)most_by_one_thread;
    return current;
  }
};

// One scheme MINIMPI_PART_AGGR (or the info key minimpi_part_aggr) may
// name. kAggregators in aggregator.cc is the one list of them:
// MakeAggregator, the names, the descriptions, the settings' check and the
// tests all read it, so adding an aggregator is its class and one entry.
struct AggregatorChoice {
  const char* name;
  const char* description;  // one line, for minimpi_info
  std::unique_ptr<Aggregator> (*make)(const AggregatorConfig& config);
};
// Every aggregator, in minimpi_info's order.
std::span<const AggregatorChoice> AggregatorChoices();

// The aggregator called `name` (see above), or an error listing the names.
absl::StatusOr<std::unique_ptr<Aggregator>> MakeAggregator(
    const std::string& name, const AggregatorConfig& config);

// The names MakeAggregator accepts, in the table's order, for error
// messages and the info key's check.
std::vector<std::string> AggregatorNames();

// One line on what the aggregator `name` does (minimpi_info).
const char* AggregatorDescription(const std::string& name);

// The adaptive aggregator's statistic: from the ready times of one round,
// the time by which all but the laggards were ready (the non-laggard
// spread) and the laggards' delay after that. Laggards are the arrivals
// later than the median by more than max(4 * MAD, 10% of the median,
// 2 us).
struct ArrivalSpread {
  double non_laggard_spread_us = 0;
  double laggard_delay_us = 0;
  int64_t laggards = 0;
};
ArrivalSpread MeasureArrivalSpread(std::span<const double> ready_us);
// The median time between consecutive arrivals (in arrival order).
double MedianGap(std::span<const double> ready_us);

}  // namespace minimpi::part

#endif  // MINIMPI_MPI_PART_AGGREGATOR_H_
