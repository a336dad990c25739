// An engine that never lets collective and point-to-point elements share a
// queue: each kind of traffic has its own posted and unexpected structures,
// chosen by template. colpnp = COL + PNP (the default), col+ll and ll+pnp
// swap one side for a single list, and perpeer keeps a queue per sender on
// both sides.
//
// Elements are routed by the TrafficKind hint (collective or not). Both ends
// of a message derive it from the same call, and each kind lives in its own
// contexts, so a message and its receive always meet on the same side.
//
// Owned by: mpi/match. Called by: CreateMatchEngine.
#ifndef MINIMPI_MPI_MATCH_SPLIT_ENGINE_H_
#define MINIMPI_MPI_MATCH_SPLIT_ENGINE_H_

#include <string>
#include <string_view>

#include "mpi/match/match_engine.h"
#include "mpi/match/queue_search.h"
#include "mpi/match/search_stats.h"

namespace minimpi::match {

template <template <typename> class CollectiveStructure,
          template <typename> class PointToPointStructure>
class SplitEngine final : public MatchEngine {
 public:
  SplitEngine(std::string name, const MatchEngineOptions& options)
      : MatchEngine(options),
        name_(std::move(name)),
        collective_(options, options.kc),
        point_to_point_(options, options.kp) {}

  std::string_view name() const override { return name_; }

  PostedReceive* MatchArrival(const Envelope& arrived,
                              const TrafficKind& kind) override {
    return kind.is_collective()
               ? MatchArrivalIn(collective_, arrived, kind)
               : MatchArrivalIn(point_to_point_, arrived, kind);
  }
  void AddUnexpected(UnexpectedMessage* message) override {
    message->links.sequence = ++arrivals_;
    if (message->traffic.is_collective()) {
      AddUnexpectedIn(collective_, message);
    } else {
      AddUnexpectedIn(point_to_point_, message);
    }
  }
  UnexpectedMessage* MatchPosted(PostedReceive* receive) override {
    return receive->traffic.is_collective()
               ? MatchPostedIn(collective_, receive)
               : MatchPostedIn(point_to_point_, receive);
  }
  UnexpectedMessage* Probe(const Envelope& wanted,
                           const TrafficKind& kind) override {
    ContextCounters& counters = CountersFor(wanted.context, kind);
    return kind.is_collective()
               ? ProbeIn(collective_, counters, wanted, kind)
               : ProbeIn(point_to_point_, counters, wanted, kind);
  }
  void RemoveUnexpected(UnexpectedMessage* message) override {
    if (!message->links.queued) return;
    if (message->traffic.is_collective()) {
      collective_.unexpected.Remove(message);
    } else {
      point_to_point_.unexpected.Remove(message);
    }
    CountersFor(message->arrived.context, message->traffic)
        .unexpected.Dequeued();
  }
  UnexpectedMessage* PopAnyUnexpected() override {
    UnexpectedMessage* message = point_to_point_.unexpected.PopAny();
    if (message == nullptr) message = collective_.unexpected.PopAny();
    if (message != nullptr) {
      CountersFor(message->arrived.context, message->traffic)
          .unexpected.Dequeued();
    }
    return message;
  }
  bool CancelPosted(PostedReceive* receive) override {
    if (!receive->links.queued) return false;
    if (receive->traffic.is_collective()) {
      collective_.posted.Remove(receive);
    } else {
      point_to_point_.posted.Remove(receive);
    }
    CountersFor(receive->wanted.context, receive->traffic).posted.Dequeued();
    return true;
  }
  size_t posted_count() const override {
    return collective_.posted.size() + point_to_point_.posted.size();
  }
  size_t unexpected_count() const override {
    return collective_.unexpected.size() + point_to_point_.unexpected.size();
  }
  MatchStats stats() const override {
    MatchStats stats = CountedStats();
    collective_.Report(stats.collective);
    point_to_point_.Report(stats.point_to_point);
    return stats;
  }
  uint64_t partner_promotions() const override {
    return collective_.promotions() + point_to_point_.promotions();
  }

 private:
  template <template <typename> class Structure>
  struct Side {
    // `k`: the design's share of dedicated queues, k * sqrt(ranks).
    Side(const MatchEngineOptions& options, int k)
        : posted_budget(k, options.ranks, 2),
          unexpected_budget(k, options.ranks, 2),
          posted(options, &posted_budget),
          unexpected(options, &unexpected_budget) {}
    void Report(KindStats& stats) const {
      posted.AddStructureStats(stats);
      unexpected.AddStructureStats(stats);
    }
    uint64_t promotions() const {
      return posted.promotions() + unexpected.promotions();
    }
    QueueBudget posted_budget;
    QueueBudget unexpected_budget;
    Structure<PostedReceive> posted;
    Structure<UnexpectedMessage> unexpected;
  };

  template <typename S>
  PostedReceive* MatchArrivalIn(S& side, const Envelope& arrived,
                                const TrafficKind& kind) {
    ContextCounters& counters = CountersFor(arrived.context, kind);
    counters.arrivals_by_kind[static_cast<int>(kind.collective)].Add();
    if (side.posted.size() == 0) return RecordEmptySearch(counters.posted);
    PostedReceive* receive =
        RecordSearch(counters.posted, timed(), [&](uint64_t& traversals) {
          return side.posted.Find(arrived, kind, traversals);
        });
    if (receive != nullptr) {
      side.posted.Remove(receive);
      counters.posted.Dequeued();
    }
    return receive;
  }
  template <typename S>
  void AddUnexpectedIn(S& side, UnexpectedMessage* message) {
    side.unexpected.Insert(message);
    RecordQueued(
        CountersFor(message->arrived.context, message->traffic).unexpected,
        message->traffic, /*posted=*/false, side.unexpected.size());
  }
  template <typename S>
  UnexpectedMessage* MatchPostedIn(S& side, PostedReceive* receive) {
    ContextCounters& counters =
        CountersFor(receive->wanted.context, receive->traffic);
    UnexpectedMessage* message =
        ProbeIn(side, counters, receive->wanted, receive->traffic);
    if (message != nullptr) {
      side.unexpected.Remove(message);
      counters.unexpected.Dequeued();
      return message;
    }
    receive->links.sequence = ++posts_;
    side.posted.Insert(receive);
    RecordQueued(counters.posted, receive->traffic, /*posted=*/true,
                 side.posted.size());
    return nullptr;
  }
  template <typename S>
  UnexpectedMessage* ProbeIn(S& side, ContextCounters& counters,
                             const Envelope& wanted, const TrafficKind& kind) {
    if (side.unexpected.size() == 0) {
      return RecordEmptySearch<UnexpectedMessage>(counters.unexpected);
    }
    return RecordSearch(counters.unexpected, timed(),
                        [&](uint64_t& traversals) {
                          return side.unexpected.Find(wanted, kind, traversals);
                        });
  }

  const std::string name_;
  uint64_t posts_ = 0;     // stamps posted receives in posting order
  uint64_t arrivals_ = 0;  // stamps unexpected messages in arrival order
  Side<CollectiveStructure> collective_;
  Side<PointToPointStructure> point_to_point_;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_SPLIT_ENGINE_H_
