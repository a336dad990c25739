#include "mpi/part/model/ploggp_model.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "mpi/part/model/loggp.h"

namespace minimpi::part {
namespace {

// (m - 1) G for a message of m bytes; an empty message costs no wire time.
double WireTime(const LogGPParameters& p, double bytes) {
  return std::max(bytes - 1, 0.0) * p.gap_per_byte_us;
}

// Least time between the start of a message of `bytes` and the next one.
double SendStep(const LogGPParameters& p, double bytes) {
  return std::max(p.gap_us, p.send_overhead_us) + WireTime(p, bytes);
}

}  // namespace

double PredictManyBeforeOne(const LogGPParameters& parameters,
                            int64_t user_partitions, size_t partition_bytes,
                            int64_t transport_partitions, double delay_us) {
  const int64_t n = std::max<int64_t>(user_partitions, 1);
  const int64_t k = std::clamp<int64_t>(transport_partitions, 1, n);
  // n = q k + r: r groups of q + 1 partitions, then k - r groups of q. The
  // laggard's group is the last, one of size q (r < k).
  const int64_t q = n / k;
  const int64_t r = n % k;
  const double bytes = static_cast<double>(partition_bytes);
  const double big_group_bytes = static_cast<double>(q + 1) * bytes;
  const double small_group_bytes = static_cast<double>(q) * bytes;

  // The k - 1 early groups leave back to back from time 0: r big ones, then
  // k - 1 - r small ones. The link is free for the last group after them.
  const double link_free_us =
      static_cast<double>(r) * SendStep(parameters, big_group_bytes) +
      static_cast<double>(k - 1 - r) * SendStep(parameters, small_group_bytes);
  const double last_start_us = std::max(std::max(delay_us, 0.0), link_free_us);
  return last_start_us + parameters.send_overhead_us +
         WireTime(parameters, small_group_bytes) + parameters.latency_us +
         parameters.receive_overhead_us;
}

PLogGPChoice ChooseTransportPartitions(const LogGPParameters& parameters,
                                       int64_t user_partitions,
                                       size_t partition_bytes,
                                       double delay_us) {
  const int64_t n = std::max<int64_t>(user_partitions, 1);
  PLogGPChoice choice;
  choice.transport_partitions = 1;
  choice.single_message_us =
      PredictManyBeforeOne(parameters, n, partition_bytes, 1, delay_us);
  choice.predicted_us = choice.single_message_us;
  for (int64_t k = 2; k <= n; k *= 2) {
    const double predicted =
        PredictManyBeforeOne(parameters, n, partition_bytes, k, delay_us);
    // Only a clear gain beats fewer messages: a difference within rounding
    // is a tie.
    if (predicted < choice.predicted_us * (1 - 1e-12)) {
      choice.transport_partitions = k;
      choice.predicted_us = predicted;
    }
    if (k > n / 2) break;  // the next doubling would pass n (or overflow)
  }
  return choice;
}

namespace {

// Over 1, 2, 4, ... up to n: the best prediction, then the fewest
// transport partitions within (1 + slack) of it.
template <typename Predict>
PLogGPChoice ChooseWithSlack(int64_t n, double slack, Predict predict) {
  PLogGPChoice choice;
  choice.single_message_us = predict(1);
  double best = choice.single_message_us;
  for (int64_t k = 2; k <= n; k *= 2) {
    best = std::min(best, predict(k));
    if (k > n / 2) break;
  }
  const double limit = best * (1 + std::max(slack, 0.0));
  for (int64_t k = 1; k <= n; k *= 2) {
    const double predicted = predict(k);
    if (predicted <= limit) {
      choice.transport_partitions = k;
      choice.predicted_us = predicted;
      return choice;
    }
    if (k > n / 2) break;
  }
  choice.transport_partitions = 1;  // unreachable: the best is within limit
  choice.predicted_us = choice.single_message_us;
  return choice;
}

}  // namespace

PLogGPChoice ChooseTransportPartitionsWithSlack(
    const LogGPParameters& parameters, int64_t user_partitions,
    size_t partition_bytes, double delay_us, double slack) {
  const int64_t n = std::max<int64_t>(user_partitions, 1);
  return ChooseWithSlack(n, slack, [&](int64_t k) {
    return PredictManyBeforeOne(parameters, n, partition_bytes, k, delay_us);
  });
}

double PredictTimerManyBeforeOne(const LogGPParameters& parameters,
                                 int64_t user_partitions,
                                 size_t partition_bytes,
                                 int64_t transport_partitions, double delay_us,
                                 double delta_us) {
  const int64_t n = std::max<int64_t>(user_partitions, 1);
  const int64_t k = std::clamp<int64_t>(transport_partitions, 1, n);
  const double delay = std::max(delay_us, 0.0);
  if (delta_us >= delay) {
    return PredictManyBeforeOne(parameters, n, partition_bytes, k, delay);
  }
  const int64_t q = n / k;
  const int64_t r = n % k;
  const double bytes = static_cast<double>(partition_bytes);
  double link_free_us =
      static_cast<double>(r) * SendStep(parameters, (q + 1) * bytes) +
      static_cast<double>(k - 1 - r) * SendStep(parameters, q * bytes);
  if (q > 1) {  // the laggard's group: its punctual run when the timer fires
    link_free_us = std::max(std::max(delta_us, 0.0), link_free_us) +
                   SendStep(parameters, (q - 1) * bytes);
  }
  const double last_start_us = std::max(delay, link_free_us);
  return last_start_us + parameters.send_overhead_us +
         WireTime(parameters, bytes) + parameters.latency_us +
         parameters.receive_overhead_us;
}

PLogGPChoice ChooseTimerTransportPartitions(const LogGPParameters& parameters,
                                            int64_t user_partitions,
                                            size_t partition_bytes,
                                            double delay_us, double delta_us,
                                            double slack) {
  const int64_t n = std::max<int64_t>(user_partitions, 1);
  return ChooseWithSlack(n, slack, [&](int64_t k) {
    return PredictTimerManyBeforeOne(parameters, n, partition_bytes, k,
                                     delay_us, delta_us);
  });
}

}  // namespace minimpi::part
