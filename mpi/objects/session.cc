#include "mpi/objects/session.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace minimpi {

Errhandler* Session::AcquireErrhandler() {
  std::lock_guard<std::mutex> lock(errhandler_mutex_);
  errhandler_->Retain();
  return errhandler_;
}

void Session::SetErrhandler(Errhandler* handler) {
  Errhandler* previous;
  {
    std::lock_guard<std::mutex> lock(errhandler_mutex_);
    previous = errhandler_;
    errhandler_ = handler;
  }
  previous->Release();
}

HandleTable<Session>& Sessions() {
  // Leaked on purpose: error paths at exit may still look handles up.
  static auto* sessions = new HandleTable<Session>(HandleKind::kSession);
  return *sessions;
}

std::vector<ProcessSet> BuildProcessSets(
    int my_rank, const std::vector<int>& node_of_rank,
    const std::vector<std::string>& node_names) {
  std::vector<ProcessSet> sets;
  ProcessSet world{"mpi://WORLD", {}};
  for (int rank = 0; rank < static_cast<int>(node_of_rank.size()); ++rank) {
    world.world_ranks.push_back(rank);
  }
  sets.push_back(std::move(world));
  sets.push_back({"mpi://SELF", {my_rank}});
  for (int node = 0; node < static_cast<int>(node_names.size()); ++node) {
    ProcessSet set{absl::StrCat("mpix://node/", node_names[node]), {}};
    for (int rank = 0; rank < static_cast<int>(node_of_rank.size()); ++rank) {
      if (node_of_rank[rank] == node) set.world_ranks.push_back(rank);
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

const ProcessSet* FindProcessSet(const std::vector<ProcessSet>& sets,
                                 std::string_view name) {
  for (const ProcessSet& set : sets) {
    if (absl::EqualsIgnoreCase(set.name,
                               absl::string_view(name.data(), name.size())))
      return &set;
  }
  return nullptr;
}

}  // namespace minimpi
