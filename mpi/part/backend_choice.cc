#include "mpi/part/backend_choice.h"

#include <fstream>
#include <ranges>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace minimpi::part {

std::vector<std::string> BackendNames() {
  auto names = std::views::transform(kBackends, &BackendChoice::name);
  return {names.begin(), names.end()};
}

absl::StatusOr<Backend> BackendByName(const std::string& name) {
  for (const BackendChoice& choice : kBackends) {
    if (name == choice.name) return choice.backend;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown partitioned backend \"", name,
                   "\" (one of: ", absl::StrJoin(BackendNames(), ", "), ")"));
}

const char* BackendName(Backend backend) {
  for (const BackendChoice& choice : kBackends) {
    if (choice.backend == backend) return choice.name;
  }
  return "unknown";
}

Backend ChooseBackend(const AutoBackendRule& rule, bool peer_on_node,
                      int64_t partition_bytes) {
  const int64_t limit =
      peer_on_node ? rule.on_node_persist_max : rule.between_nodes_persist_max;
  return partition_bytes <= limit ? Backend::kPersist : Backend::kNative;
}

absl::StatusOr<AutoBackendRule> ReadBackendTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot open the partitioned backend table ", path));
  }
  AutoBackendRule rule;
  bool on_node = false, between_nodes = false;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string key;
    if (!(fields >> key)) continue;  // blank line
    int64_t bytes = -1;
    std::string extra;
    const bool known =
        key == "on_node_persist_max" || key == "between_nodes_persist_max";
    if (!known || !(fields >> bytes) || bytes < 0 || (fields >> extra)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", number,
          ": expected 'on_node_persist_max BYTES' or "
          "'between_nodes_persist_max BYTES' (a non-negative integer)"));
    }
    if (key == "on_node_persist_max") {
      rule.on_node_persist_max = bytes;
      on_node = true;
    } else {
      rule.between_nodes_persist_max = bytes;
      between_nodes = true;
    }
  }
  if (!on_node || !between_nodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the partitioned backend table ", path,
                     " needs both on_node_persist_max and "
                     "between_nodes_persist_max"));
  }
  return rule;
}

}  // namespace minimpi::part
