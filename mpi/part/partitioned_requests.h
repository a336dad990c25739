// The state of a partitioned send and receive request, which every file
// of mpi/part's Partitioned reaches, and the small helpers they share (the
// immediate's encoding, the clock). Private to the partitioned library.
//
// Owned by: mpi/part.
#ifndef MINIMPI_MPI_PART_PARTITIONED_REQUESTS_H_
#define MINIMPI_MPI_PART_PARTITIONED_REQUESTS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mpi/datatype/layout.h"
#include "mpi/part/aggregator.h"
#include "mpi/part/partitioned.h"
#include "mpi/part/reactions.h"
#include "mpi/vci/counters.h"
#include "mpi/vci/request.h"
#include "net/transport.h"

namespace minimpi::part {

// kPartitionedClear flags.
constexpr uint32_t kSizeMismatch = 1;

// The immediate: slot | first unit | units - 1.
constexpr int kUnitBits = 11;
constexpr uint32_t kUnitMask = (1u << kUnitBits) - 1;
inline uint32_t EncodeImmediate(uint32_t slot, int64_t first, int64_t units) {
  return (slot << (2 * kUnitBits)) | (uint32_t(first) << kUnitBits) |
         uint32_t(units - 1);
}

// What both kinds share.
struct PartitionedRequestBase : Partitioned::CompletionTarget {
  vci::Request* request = nullptr;
  bool is_send = false;
  bool proc_null = false;
  net::PeerVci peer;  // the other side's rank and VCI
  int vci = 0;
  int32_t context = 0, source_rank = 0, tag = 0;
  int64_t partitions = 0;
  size_t partition_bytes = 0;
  size_t total_bytes = 0;
  void* data = nullptr;
  const datatype::Layout* layout = nullptr;
  int64_t item_count = 0;
  datatype::LayoutRef layout_hold;
  net::MemoryRegion region{};
  bool registered = false;
  // Rounds started; partitions stamp the round they were marked in.
  // Written by Start under the VCI lock, read by Pready/Parrived (which the
  // program orders after Start).
  std::atomic<uint32_t> round{0};
  // The totals of both sides disagree: every round fails. Set by the clear
  // handler, read by Pready threads.
  std::atomic<bool> size_mismatch{false};
};

// Where a send's reaction posts its runs: the send's engine.
class Partitioned::RunPoster final : public RunSink {
 public:
  RunPoster(Partitioned& engine, PartitionedSend& send)
      : engine_(engine), send_(send) {}
  void PostRun(int64_t first_unit, int64_t units, int held_vci) override {
    engine_.PostRun(send_, first_unit, units, held_vci);
  }
  void WindowOpened() override;

 private:
  Partitioned& engine_;
  PartitionedSend& send_;
};

struct PartitionedSend : PartitionedRequestBase {
  uint64_t id = 0;  // SendKey: how the receiver names this send
  Backend backend = Backend::kNative;  // never kAuto once made
  // persist with a non-contiguous buffer: the data packed, so that each
  // message's payload is contiguous. Packed at each run's post.
  std::unique_ptr<std::byte[]> packed;
  std::unique_ptr<Aggregator> aggregator;
  PlanInput input;
  Plan plan;       // in force for the current round
  Plan next_plan;  // applied at the next Start
  bool plan_changed = false;
  int64_t units = 0;
  int64_t per_unit = 1;
  int num_vcis = 1;

  // The receiver, from its first clear. Guarded by the VCI lock.
  bool receiver_known = false;
  uint32_t receiver_slot = 0;
  net::RemoteBuffer remote{};
  int clears_waiting = 0;  // clears of rounds not started yet
  bool ever_started = false;

  std::unique_ptr<std::atomic<uint32_t>[]> ready_round;    // per partition
  std::unique_ptr<std::atomic<int32_t>[]> unit_remaining;  // per_unit > 1
  // This round's reaction to each ready unit, of the kind the plan names
  // (remade at a Start whose plan names another), posting through
  // `poster`. It holds the round's readiness state and whether the clear
  // arrived.
  std::unique_ptr<Partitioned::RunPoster> poster;
  std::unique_ptr<Reaction> reaction;
  std::unique_ptr<Partitioned::PendingWrite[]> writes;  // one per run start

  std::atomic<int64_t> units_posted{0};
  std::atomic<int64_t> writes_posted{0};
  std::atomic<int64_t> writes_done{0};

  // Measurements (profile, statistics, adaptive): when each partition was
  // marked ready and when each run's write was posted, this round.
  bool timed = false;
  int64_t start_ns = 0;
  std::unique_ptr<int64_t[]> ready_ns;         // per partition
  std::unique_ptr<uint32_t[]> ready_thread;    // per partition: who marked
  std::unique_ptr<int64_t[]> write_posted_ns;  // per run start unit
  std::unique_ptr<int64_t[]> write_units;      // per run start unit
  // Totals over completed rounds, written at the end of each round (Start
  // or Free) and read by MINIMPI_PART_STATS and MPI_T
  // (mpi/part/tool_variables.h) on any thread.
  struct Counters {
    vci::OwnedCounter rounds;
    vci::OwnedCounter writes;  // transport partitions written
    std::atomic<uint64_t> last_round_writes{0};
    // The aggregator's delta (its wait) of the plan in force, ns.
    std::atomic<uint64_t> planned_delta_ns{0};
    // Timed sends only (see `timed`): the last MPI_Pready to the last
    // write, summed over rounds; and bytes of runs written before the
    // round's last MPI_Pready.
    vci::OwnedCounter last_ready_to_write_ns;
    vci::OwnedCounter early_bird_bytes;
  } counters;
};

struct PartitionedReceive : PartitionedRequestBase {
  uint32_t slot = 0;
  bool matched = false;  // guarded by the VCI lock
  net::PeerVci sender_peer;
  uint64_t sender_id = 0;
  int64_t send_partitions = 0;
  size_t send_partition_bytes = 0;
  int64_t send_per_unit = 1;
  int64_t send_units = 0;
  std::byte* staging = nullptr;  // non-contiguous receive buffers
  std::unique_ptr<std::atomic<int64_t>[]> remaining_bytes;  // per partition
  std::unique_ptr<std::atomic<uint32_t>[]> arrived_round;   // per partition
  std::atomic<int64_t> partitions_left{0};
  std::atomic<int64_t> units_left{0};  // zero-byte data: count writes
};

}  // namespace minimpi::part

#endif  // MINIMPI_MPI_PART_PARTITIONED_REQUESTS_H_
