#include "mpi/part/tool_variables.h"

#include <cstddef>
#include <string>

#include "mpi/part/partitioned_requests.h"
#include "mpi/vci/request.h"

namespace minimpi::part {

std::atomic<tool::Event*> partition_arrived_event{nullptr};

namespace {

// The partitioned request behind a tool's bound object, or nullptr.
const PartitionedRequestBase* PartitionedOf(const void* object) {
  const auto* request = static_cast<const vci::Request*>(object);
  if (request == nullptr || request->kind != vci::RequestKind::kPartitioned) {
    return nullptr;
  }
  return static_cast<const PartitionedRequestBase*>(request->extension);
}

const PartitionedSend* SendOf(const void* object) {
  const PartitionedRequestBase* base = PartitionedOf(object);
  return base != nullptr && base->is_send
             ? static_cast<const PartitionedSend*>(base)
             : nullptr;
}

tool::PerformanceVariable Variable(const char* name, const char* description,
                                   int var_class) {
  tool::PerformanceVariable variable;
  variable.name = name;
  variable.description = description;
  variable.category = "partitioned";
  variable.var_class = var_class;
  variable.binding = tool::Binding::kRequest;
  return variable;
}

// A send's counter as unsigned long long (0 for anything else).
void RegisterSendCounter(const char* name, const char* description,
                         int var_class,
                         uint64_t (*read)(const PartitionedSend&)) {
  tool::PerformanceVariable variable = Variable(name, description, var_class);
  variable.read = [read](const void* object, void* values) {
    const PartitionedSend* send = SendOf(object);
    *static_cast<uint64_t*>(values) = send == nullptr ? 0 : read(*send);
  };
  tool::RegisterPerformanceVariable(std::move(variable));
}

void RegisterSendSeconds(const char* name, const char* description,
                         int var_class,
                         uint64_t (*read_ns)(const PartitionedSend&)) {
  tool::PerformanceVariable variable = Variable(name, description, var_class);
  variable.type = tool::ValueType::kDouble;
  variable.read = [read_ns](const void* object, void* values) {
    const PartitionedSend* send = SendOf(object);
    *static_cast<double*>(values) =
        send == nullptr ? 0.0 : static_cast<double>(read_ns(*send)) * 1e-9;
  };
  tool::RegisterPerformanceVariable(std::move(variable));
}

}  // namespace

void RegisterPartitionedToolVariables() {
  RegisterSendCounter(
      "part_rounds",
      "Rounds of a partitioned send closed (a round closes when the next "
      "MPI_Start begins another, or at the free).",
      MPI_T_PVAR_CLASS_COUNTER,
      [](const PartitionedSend& s) { return s.counters.rounds.Read(); });
  RegisterSendCounter(
      "part_writes",
      "Transport partitions a partitioned send wrote (each one RDMA write "
      "or message run), over its closed rounds.",
      MPI_T_PVAR_CLASS_COUNTER,
      [](const PartitionedSend& s) { return s.counters.writes.Read(); });
  RegisterSendCounter(
      "part_writes_last_round",
      "Transport partitions a partitioned send wrote in its last closed "
      "round.",
      MPI_T_PVAR_CLASS_LEVEL, [](const PartitionedSend& s) -> uint64_t {
        return s.counters.last_round_writes.load(std::memory_order_relaxed);
      });
  RegisterSendCounter(
      "part_early_bird_bytes",
      "Bytes a partitioned send wrote before its round's last MPI_Pready "
      "(measured when the send is timed: MINIMPI_PART_STATS, "
      "MINIMPI_PART_PROFILE or an adaptive aggregator).",
      MPI_T_PVAR_CLASS_COUNTER, [](const PartitionedSend& s) {
        return s.counters.early_bird_bytes.Read();
      });
  RegisterSendSeconds(
      "part_planned_delta",
      "Seconds the aggregator's plan in force lets the first ready partition "
      "of a group wait for the others (0 for schemes without a wait).",
      MPI_T_PVAR_CLASS_LEVEL, [](const PartitionedSend& s) -> uint64_t {
        return s.counters.planned_delta_ns.load(std::memory_order_relaxed);
      });
  RegisterSendSeconds(
      "part_measured_delta",
      "Seconds from the last MPI_Pready to the last write, summed over the "
      "closed rounds (measured when the send is timed).",
      MPI_T_PVAR_CLASS_TIMER, [](const PartitionedSend& s) {
        return s.counters.last_ready_to_write_ns.Read();
      });
  {
    tool::PerformanceVariable variable = Variable(
        "part_partitions_per_write",
        "User partitions per transport partition a partitioned send wrote, "
        "over its closed rounds.",
        MPI_T_PVAR_CLASS_LEVEL);
    variable.type = tool::ValueType::kDouble;
    variable.read = [](const void* object, void* values) {
      const PartitionedSend* send = SendOf(object);
      const uint64_t writes =
          send == nullptr ? 0 : send->counters.writes.Read();
      *static_cast<double*>(values) =
          writes == 0 ? 0.0
                      : static_cast<double>(send->counters.rounds.Read()) *
                            static_cast<double>(send->partitions) /
                            static_cast<double>(writes);
    };
    tool::RegisterPerformanceVariable(std::move(variable));
  }
  {
    tool::PerformanceVariable variable = Variable(
        "part_partitions_arrived",
        "User partitions that arrived at a partitioned receive, over all its "
        "rounds.",
        MPI_T_PVAR_CLASS_COUNTER);
    variable.read = [](const void* object, void* values) {
      const PartitionedRequestBase* base = PartitionedOf(object);
      uint64_t arrived = 0;
      if (base != nullptr && !base->is_send) {
        // Rounds before the current one arrived whole; the current one as
        // far as its countdown went. No counter on the arrival path.
        const auto& receive = *static_cast<const PartitionedReceive*>(base);
        const uint64_t round = receive.round.load(std::memory_order_acquire);
        const int64_t left =
            receive.partitions_left.load(std::memory_order_acquire);
        if (round > 0) {
          arrived = (round - 1) * static_cast<uint64_t>(receive.partitions) +
                    static_cast<uint64_t>(receive.partitions - left);
        }
      }
      *static_cast<uint64_t*>(values) = arrived;
    };
    tool::RegisterPerformanceVariable(std::move(variable));
  }
  tool::EventType type;
  type.name = "partition_arrived";
  type.description =
      "A transport partition of a partitioned receive arrived whole. "
      "Payload: transport_partition (the sender's first transport unit in "
      "it), first_partition and last_partition (the receiver's user "
      "partitions it filled), round (the receive's rounds started), bytes.";
  type.category = "partitioned";
  type.verbosity = MPI_T_VERBOSITY_USER_DETAIL;
  type.binding = tool::Binding::kRequest;
  type.elements = {
      {MPI_INT64_T, offsetof(PartitionArrivedPayload, transport_partition),
       "transport_partition"},
      {MPI_INT64_T, offsetof(PartitionArrivedPayload, first_partition),
       "first_partition"},
      {MPI_INT64_T, offsetof(PartitionArrivedPayload, last_partition),
       "last_partition"},
      {MPI_UNSIGNED_LONG_LONG, offsetof(PartitionArrivedPayload, round),
       "round"},
      {MPI_UNSIGNED_LONG_LONG, offsetof(PartitionArrivedPayload, bytes),
       "bytes"},
  };
  type.payload_bytes = sizeof(PartitionArrivedPayload);
  partition_arrived_event.store(tool::RegisterEventType(std::move(type)),
                                std::memory_order_release);
}

}  // namespace minimpi::part
