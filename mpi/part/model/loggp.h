// LogGP parameters of one link: what they are, where they come from (a file
// written by tools/loggp_probe, or built-in defaults) and how they are fitted
// from parametrised round-trip times (PRTT), the measuring method of
// Netgauge (Hoefler et al.).
//
// Plain code: no MPI, no transport. Called by the PLogGP aggregation model
// (ploggp_model.h), by mpi/part when it sets up partitioned requests, and by
// tools/loggp_probe, which measures the round trips and writes the file.
#ifndef MINIMPI_MPI_PART_MODEL_LOGGP_H_
#define MINIMPI_MPI_PART_MODEL_LOGGP_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace minimpi::part {

// LogGP, all times in microseconds:
//   L    latency: time from the first byte leaving until it arrives;
//   o_s  CPU time the sender spends per message;
//   o_r  CPU time the receiver spends per message;
//   g    least time between the starts of two consecutive small messages;
//   G    time per byte of a long message (1 / bandwidth).
// A message of s bytes sent at time t arrives completely at
// t + o_s + (s - 1) G + L + o_r.
struct LogGPParameters {
  double latency_us = 0;           // L
  double send_overhead_us = 0;     // o_s
  double receive_overhead_us = 0;  // o_r
  double gap_us = 0;               // g
  double gap_per_byte_us = 0;      // G
};

// Built-in parameters for ranks on one shared-memory node with single-copy
// transfers. A fallback for when no measured file is available: the values
// are plausible for a current x86 node (about 10 GB/s per copy), not
// measured on this one. Run tools/loggp_probe to measure them.
LogGPParameters DefaultLogGP();

// The file format: "KEY VALUE" lines, one per parameter, in any order,
// each exactly once; '#' starts a comment, also after a value:
//
//   # measured by loggp_probe on node17
//   L   0.21    # latency, microseconds
//   o_s 0.11    # send overhead, microseconds
//   o_r 0.11    # receive overhead, microseconds
//   g   0.09    # gap, microseconds
//   G   0.0001  # gap per byte, microseconds per byte (10 GB/s)
//
// Blank lines are ignored. Values must be finite and not negative. Errors
// name the file and the line: InvalidArgument for bad content, the code of
// the system's error (NotFound, PermissionDenied, ...) when the file cannot
// be opened.
absl::StatusOr<LogGPParameters> ReadLogGPFile(const std::string& path);

// Writes `parameters` in the format above, `comment` first (each of its
// lines prefixed with "# "). Values are written so they read back exactly.
absl::Status WriteLogGPFile(const std::string& path,
                            const LogGPParameters& parameters,
                            const std::string& comment);

// One measured parametrised round trip PRTT(n, d, s): one side sends
// `messages` (n) messages of `bytes` (s) bytes, waiting `delay_us` (d)
// between the end of one send call and the start of the next; the other side
// receives them all and answers with one message of s bytes. `prtt_us` is the
// time from the first send until the answer has arrived.
struct PrttSample {
  int messages;
  double delay_us;
  size_t bytes;
  double prtt_us;
};

// Fits LogGP parameters to PRTT samples (Netgauge's method). Per size s:
//
//   PRTT(1, 0, s) = 2 (L + o_s + o_r + (s - 1) G)
//   PRTT(n, 0, s) = PRTT(1, 0, s) + (n - 1) (g + (s - 1) G)
//   PRTT(n, d, s) = PRTT(1, 0, s) + (n - 1) (o_s + d)
//       when d is at least the undelayed per-message time, so the sender's
//       loop (send, wait d) and not the link sets the pace.
//
// Hence per size:
//   g + (s - 1) G = (PRTT(n, 0, s) - PRTT(1, 0, s)) / (n - 1)
//   o_s(s)        = (PRTT(n, d, s) - PRTT(1, 0, s)) / (n - 1) - d
// and then, over sizes, least-squares lines (errors relative to the round
// trips each value comes from, so small and large messages count alike)
// through both:
//   - A two-sided MPI changes protocol with size (inline, eager, rendezvous
//     with a handshake), so where one line misses the points by more than
//     noise (1 % rms) they are split where two lines fit best (if that at
//     least halves the residual), and the small side again, down to the
//     smallest messages. g and o_s are the intercepts of
//     the lines of the smallest messages, G the slope of the line of the
//     largest ones: per-message costs of short messages and the per-byte
//     cost of long ones, which is what the PLogGP model needs for the RDMA
//     writes of partitioned sends (no handshake per message). Data that
//     follows one line is fitted with that line.
//   - o_s(s) also grows with s (a blocking send of a long message waits for
//     the copy); LogGP's o_s is its constant part, the intercept.
//   - L + o_r comes from the smallest size:
//       L + o_r = PRTT(1, 0, s_min) / 2 - o_s - (s_min - 1) G.
// Round trips cannot tell o_r from L (they only ever appear as L + o_r), so
// the fit takes o_r = o_s, as LogP does, unless L + o_r is smaller (on
// shared memory L is tiny): then o_r = L + o_r and L = 0. The PLogGP model
// only uses the sum.
// Where o_s exceeds g the trains are paced by o_s and the fit reports that
// as g; the PLogGP model spaces messages by max(g, o_s) either way. Negative
// results of noise are clamped to 0.
//
// Needs, for at least two sizes, PRTT(1, 0, s) and PRTT(n > 1, 0, s), and for
// at least one of them a PRTT(n > 1, d, s) with d as above. Several samples of
// the same (n, d, s) are allowed; the smallest is used, and of several train
// lengths n (or delays d) at one size the one giving the smallest
// per-message time: noise only ever adds time to a round trip.
absl::StatusOr<LogGPParameters> FitLogGP(
    const std::vector<PrttSample>& samples);

}  // namespace minimpi::part

#endif  // MINIMPI_MPI_PART_MODEL_LOGGP_H_
