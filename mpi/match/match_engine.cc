#include "mpi/match/match_engine.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mpi/match/linked_list_engine.h"

namespace minimpi::match {

std::vector<std::string> MatchEngineNames() { return {"ll"}; }

std::string MatchEngineDescription(std::string_view name) {
  if (name == "ll") {
    return "one posted and one unexpected list for all traffic, searched "
           "front to back (MPICH/MVAPICH style; the baseline)";
  }
  return "unknown engine";
}

absl::StatusOr<std::unique_ptr<MatchEngine>> CreateMatchEngine(
    std::string_view name) {
  if (name == "ll") return std::make_unique<LinkedListEngine>();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown matching engine '", std::string(name),
                   "'; known: ", absl::StrJoin(MatchEngineNames(), ", ")));
}

}  // namespace minimpi::match
