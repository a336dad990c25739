// The PLogGP model of partitioned sends (Temuçin et al.): LogGP applied to
// the messages a partitioned send becomes once its user partitions are
// grouped into transport partitions, used to choose how many transport
// partitions to use.
//
// Arrival pattern modelled: many before one. All user partitions but one are
// marked ready (MPI_Pready) at time 0; the last one, the laggard, at
// `delay_us`. Aggregating into few transport partitions saves per-message
// costs; splitting into many lets most of the data leave while the laggard
// is still computing, so only a small message is left to send after it.
//
// Grouping: `transport_partitions` (K) groups of contiguous user partitions
// whose sizes differ by at most one; of N user partitions the first N mod K
// groups hold one partition more than the others. The laggard is the last
// user partition, so it is in the last group, one of the smaller ones. A
// group is sent as one message of m = (its partitions) * partition_bytes
// bytes as soon as its last partition is ready.
//
// The model, in LogGP terms (loggp.h):
//   - every message costs the sender o_s;
//   - consecutive messages start at least max(g, o_s) + (m - 1) G apart, m
//     the size of the earlier one: the sender's CPU needs o_s, the link g,
//     and the wire carries m bytes at G per byte;
//   - the K - 1 early groups, all ready at 0, start back to back from 0;
//   - the laggard's group starts at max(delay, time the link is free after
//     the early groups);
//   - a message started at t has fully arrived at t + o_s + (m - 1) G + L +
//     o_r. The last message arrives last (the link is FIFO), so its arrival
//     is the completion time.
//
// Plain code, called by mpi/part's PLogGP aggregator at setup (never on the
// MPI_Pready path) and by tools that print predictions.
#ifndef MINIMPI_MPI_PART_MODEL_PLOGGP_MODEL_H_
#define MINIMPI_MPI_PART_MODEL_PLOGGP_MODEL_H_

#include <cstddef>
#include <cstdint>

#include "mpi/part/model/loggp.h"

namespace minimpi::part {

// Predicted time from the first MPI_Pready until the last byte has arrived
// at the receiver, with `user_partitions` partitions of `partition_bytes`
// each grouped into `transport_partitions` transport partitions as described
// above. `user_partitions` below 1 counts as 1, `transport_partitions` is
// clamped to [1, user_partitions], a negative delay counts as 0.
double PredictManyBeforeOne(const LogGPParameters& parameters,
                            int64_t user_partitions, size_t partition_bytes,
                            int64_t transport_partitions, double delay_us);

struct PLogGPChoice {
  int64_t transport_partitions;  // the chosen count
  double predicted_us;           // its prediction
  double single_message_us;      // the prediction for 1 transport partition
};

// The transport partition count among 1, 2, 4, ... (powers of two, at most
// `user_partitions`) with the smallest predicted time; a tie goes to the
// smaller count (fewer messages use fewer resources for the same time).
PLogGPChoice ChooseTransportPartitions(const LogGPParameters& parameters,
                                       int64_t user_partitions,
                                       size_t partition_bytes, double delay_us);

// The same choice with slack: the fewest transport partitions (a power of
// two) whose prediction is within (1 + slack) of the best one. The model's
// optimum is often a hair ahead of counts that post far fewer writes (with a
// long delay, splitting finer only shrinks the laggard's group); slack
// trades that hair for fewer writes.
PLogGPChoice ChooseTransportPartitionsWithSlack(
    const LogGPParameters& parameters, int64_t user_partitions,
    size_t partition_bytes, double delay_us, double slack);

// The timer aggregator under the same pattern: groups without the laggard
// complete at time 0 and leave at once; in the laggard's group the first
// thread waits `delta_us`, then the group's punctual partitions leave as one
// message, and the laggard leaves alone when it is ready. (With delta_us at
// or beyond the delay the timer never fires: PredictManyBeforeOne.)
double PredictTimerManyBeforeOne(const LogGPParameters& parameters,
                                 int64_t user_partitions,
                                 size_t partition_bytes,
                                 int64_t transport_partitions, double delay_us,
                                 double delta_us);

// ChooseTransportPartitionsWithSlack for the timer's prediction.
PLogGPChoice ChooseTimerTransportPartitions(const LogGPParameters& parameters,
                                            int64_t user_partitions,
                                            size_t partition_bytes,
                                            double delay_us, double delta_us,
                                            double slack);

}  // namespace minimpi::part

#endif  // MINIMPI_MPI_PART_MODEL_PLOGGP_MODEL_H_
