// How a partitioned send's transport partitions travel (its backend), and
// the rule the `auto` backend follows. kBackends below is the one list of
// backends: the names MINIMPI_PART_BACKEND and the info key
// minimpi_part_backend accept, their descriptions (minimpi_info, the
// settings' help) and the enum each gives all come from it, so adding a
// backend is one entry here plus its path in mpi/part (partitioned.h
// describes the protocols).
//
// Owned by: mpi/part. Called by: mpi/part (init.cc), the bindings (the info
// key's check) and whoever assembles the settings' choices.
#ifndef MINIMPI_MPI_PART_BACKEND_CHOICE_H_
#define MINIMPI_MPI_PART_BACKEND_CHOICE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace minimpi::part {

enum class Backend : uint8_t { kNative, kPersist, kRma, kAuto };

struct BackendChoice {
  const char* name;
  const char* description;  // a few words, given inline in the help
  Backend backend;
};

inline constexpr BackendChoice kBackends[] = {
    {"native", "RDMA write with immediate", Backend::kNative},
    {"persist", "two-sided messages", Backend::kPersist},
    {"rma", "a plain write, then a signal", Backend::kRma},
    {"auto", "chosen per request", Backend::kAuto},
};

// The names, in the table's order (Settings::part_backend's values).
std::vector<std::string> BackendNames();
// The backend a name gives, or an error listing the names.
absl::StatusOr<Backend> BackendByName(const std::string& name);
const char* BackendName(Backend backend);

// The rule of `auto`: requests whose partitions hold at most the threshold
// of where the peer is go as messages (persist), others as writes with
// immediate (native). The thresholds come from the machine's calibration
// (Settings::part_backend_table, which tools/part_tune/backend_tune.sh
// writes) or, without one, from Settings::part_auto_persist_max inside a
// node and 0 (native always) between nodes.
struct AutoBackendRule {
  int64_t on_node_persist_max = 0;
  int64_t between_nodes_persist_max = 0;
};
Backend ChooseBackend(const AutoBackendRule& rule, bool peer_on_node,
                      int64_t partition_bytes);
// Reads a calibration file: lines "on_node_persist_max BYTES" and
// "between_nodes_persist_max BYTES", '#' comments. Errors name the file and
// line.
absl::StatusOr<AutoBackendRule> ReadBackendTable(const std::string& path);

}  // namespace minimpi::part

#endif  // MINIMPI_MPI_PART_BACKEND_CHOICE_H_
