// "ll": one posted-receive list and one unexpected-message list for all
// traffic, collective and point-to-point alike, searched front to back, as
// MPICH and MVAPICH do. Simple, and the baseline every other engine is
// measured against. Counters go to the context of the element searched for.
#ifndef MINIMPI_MPI_MATCH_LINKED_LIST_ENGINE_H_
#define MINIMPI_MPI_MATCH_LINKED_LIST_ENGINE_H_

#include "mpi/match/match_engine.h"
#include "mpi/match/queue_search.h"

namespace minimpi::match {

class LinkedListEngine final : public MatchEngine {
 public:
  explicit LinkedListEngine(const MatchEngineOptions& options)
      : MatchEngine(options) {}

  std::string_view name() const override { return "ll"; }
  PostedReceive* MatchArrival(const Envelope& arrived,
                              const TrafficKind& kind) override;
  void AddUnexpected(UnexpectedMessage* message) override;
  UnexpectedMessage* MatchPosted(PostedReceive* receive) override;
  UnexpectedMessage* Probe(const Envelope& wanted,
                           const TrafficKind& kind) override;
  void RemoveUnexpected(UnexpectedMessage* message) override;
  UnexpectedMessage* PopAnyUnexpected() override;
  bool CancelPosted(PostedReceive* receive) override;
  size_t posted_count() const override { return posted_.size(); }
  size_t unexpected_count() const override { return unexpected_.size(); }
  MatchStats stats() const override;

 private:
  UnexpectedMessage* ProbeIn(ContextCounters& counters, const Envelope& wanted);

  Queue<PostedReceive> posted_;
  Queue<UnexpectedMessage> unexpected_;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_LINKED_LIST_ENGINE_H_
