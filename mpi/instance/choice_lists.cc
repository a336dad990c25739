#include "mpi/instance/choice_lists.h"

#include <vector>

#include "mpi/match/match_engine.h"
#include "mpi/part/aggregator.h"
#include "mpi/part/backend_choice.h"
#include "net/transport.h"

namespace minimpi {
namespace {

// Every owner's table entry has a name and a one-line description.
template <typename Table>
std::vector<runtime::Choice> ChoicesOf(const Table& table) {
  std::vector<runtime::Choice> choices;
  for (const auto& entry : table) {
    choices.push_back({entry.name, entry.description});
  }
  return choices;
}

}  // namespace

const runtime::ChoiceLists& LibraryChoiceLists() {
  static const auto* const lists = new runtime::ChoiceLists{
      .transports = ChoicesOf(net::TransportChoices()),
      .match_engines = ChoicesOf(match::MatchEngineChoices()),
      .part_aggregators = ChoicesOf(part::AggregatorChoices()),
      .part_backends = ChoicesOf(part::kBackends),
  };
  return *lists;
}

}  // namespace minimpi
