// The matching interface: pairs posted receives with arriving messages under
// MPI's rules, and holds whichever side arrives first.
//
// Rules every engine keeps (MPI standard, "Communication Modes" and
// "Semantics of point-to-point communication"):
//   - posted receives are matched in the order they were posted;
//   - messages from one sender in one context are matched in the order they
//     arrived (the transport delivers them in send order);
//   - a receive may name kAnySource and/or kAnyTag; the context never has a
//     wildcard (each communicator's point-to-point and collective traffic use
//     different contexts, so a user's wildcard never sees collective traffic).
//
// Elements are intrusive: the caller owns the memory (a request, an
// unexpected-message record) and the engine only links it. That keeps the
// engine free of allocation on the message path and lets one request object
// be posted again and again (persistent receives).
//
// An engine is used by one thread at a time (the owning VCI's lock is held).
// This package depends on nothing but the standard library and Abseil.
//
// Owned by: mpi/match. Called by: mpi/p2p.
#ifndef MINIMPI_MPI_MATCH_MATCH_ENGINE_H_
#define MINIMPI_MPI_MATCH_MATCH_ENGINE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "mpi/match/context_counters.h"

namespace minimpi::match {

inline constexpr int32_t kAnySource = -1;
inline constexpr int32_t kAnyTag = -1;

// What a message is, for engines that keep collective and point-to-point
// traffic apart (COL+PNP). Point-to-point traffic leaves `collective` at
// kNone; collectives say which operation, how big and over how many ranks.
struct TrafficKind {
  enum class Collective : uint8_t {
    kNone = 0,
    kBarrier,
    kBcast,
    kReduce,
    kAllreduce,
    kGather,
    kScatter,
    kAllgather,
    kAlltoall,
    kReduceScatter,
    kScan,
    kCommCreate,  // internal exchanges of Comm_dup / Comm_split
  };
  Collective collective = Collective::kNone;
  uint32_t message_size = 0;
  uint32_t comm_size = 0;

  bool is_collective() const { return collective != Collective::kNone; }
};

struct Envelope {
  int32_t context = 0;
  int32_t source = 0;  // kAnySource allowed in a posted receive
  int32_t tag = 0;     // kAnyTag allowed in a posted receive
};

inline bool Matches(const Envelope& wanted, const Envelope& arrived) {
  return wanted.context == arrived.context &&
         (wanted.source == kAnySource || wanted.source == arrived.source) &&
         (wanted.tag == kAnyTag || wanted.tag == arrived.tag);
}

// Intrusive links an engine may use however it likes while it holds the
// element. `queued` tells the owner whether the engine still holds it.
struct QueueLinks {
  void* next = nullptr;
  void* previous = nullptr;
  void* queue = nullptr;  // the list that holds the element, for O(1) removal
  uint64_t sequence = 0;  // posting or arrival order, stamped by the engine
  bool queued = false;
};

// A second pair of links for unexpected messages: engines with several
// queues also thread every unexpected message onto one arrival-ordered
// list, so an MPI_ANY_SOURCE receive finds the earliest matching arrival
// without merging queues.
struct OrderLinks {
  void* next = nullptr;
  void* previous = nullptr;
  void* queue = nullptr;
};

// One more link, used while an element sits in a long IndexedQueue (the
// queues of PNP): it chains the queue's elements with the same envelope, so
// a search for one sender and tag skips the rest.
struct IndexLinks {
  void* next = nullptr;
};

struct PostedReceive {
  Envelope wanted;
  TrafficKind traffic;
  QueueLinks links;
  IndexLinks same_envelope;
};

struct UnexpectedMessage {
  Envelope arrived;
  TrafficKind traffic;
  QueueLinks links;
  OrderLinks arrival_order;
  IndexLinks same_envelope;
};

// What an engine has done so far, for MINIMPI_MATCH_STATS, tests and
// benchmarks: the sum of its contexts' counters (ContextCounters) by kind.
// Point-to-point and collective elements are counted apart, and so are the
// posted-receive queue (PRQ: searched by arrivals) and the unexpected-message
// queue (UMQ: searched by posted receives and probes).
struct QueueStats {
  uint64_t searches = 0;    // searches of this queue structure
  uint64_t traversals = 0;  // elements inspected by those searches
  uint64_t matches = 0;     // searches that found an element
  uint64_t search_ns = 0;   // time spent searching (when timing is on)
  uint64_t inserted = 0;    // elements queued
  size_t longest = 0;       // the most elements held at once
};

struct KindStats {
  QueueStats posted;      // PRQ
  QueueStats unexpected;  // UMQ
  // Queues given to single senders (PNP partners, perpeer) or to collective
  // traffic (COL levels), over PRQ and UMQ together, and their bytes.
  size_t dedicated_queues = 0;
  size_t dedicated_queue_bytes = 0;
  size_t partners = 0;  // PNP: senders with a queue of their own
  size_t levels = 0;    // PNP: partner levels; COL: levels of queues
};

struct MatchStats {
  KindStats point_to_point;
  KindStats collective;
};

// Tunables of the adaptive engines (MINIMPI_MATCH_THETA, _KC, _KP).
struct MatchEngineOptions {
  // PNP: a shared queue this long triggers a new level of partners.
  int theta = 100;
  // Dedicated queues are capped at k * sqrt(ranks): kc for COL, kp for PNP.
  int kc = 8;
  int kp = 8;
  // The number of ranks whose messages the engine may see (the job size).
  int ranks = 1;
  // Time every search (MINIMPI_MATCH_STATS): two clock reads per search.
  // SetSearchTiming turns it on for every engine while a tool asks.
  bool time_searches = false;
};

// Times every engine's searches while on (an MPI_T timer is started),
// whatever MatchEngineOptions::time_searches says. Calibrates the clock
// when turned on, so that no search pays for it. Any thread.
void SetSearchTiming(bool on);
bool SearchTimingRequested();

class MatchEngine {
 public:
  explicit MatchEngine(const MatchEngineOptions& options)
      : time_searches_(options.time_searches) {}
  virtual ~MatchEngine() = default;

  virtual std::string_view name() const = 0;

  // A message arrived: returns the earliest-posted receive that matches it,
  // removed from the engine, or nullptr. On nullptr the caller stores the
  // message and hands it to AddUnexpected before the engine sees anything
  // else (two steps, so an expected message never costs an allocation).
  virtual PostedReceive* MatchArrival(const Envelope& arrived,
                                      const TrafficKind& kind) = 0;
  virtual void AddUnexpected(UnexpectedMessage* message) = 0;

  // A receive was posted: returns the earliest-arrived matching unexpected
  // message, removed from the engine, or queues `receive` and returns
  // nullptr.
  virtual UnexpectedMessage* MatchPosted(PostedReceive* receive) = 0;

  // The earliest-arrived unexpected message matching `wanted`, left queued;
  // nullptr if none. `kind` says which traffic to look through (probes from
  // the API are point-to-point).
  virtual UnexpectedMessage* Probe(const Envelope& wanted,
                                   const TrafficKind& kind = {}) = 0;

  // Removes a message returned by Probe (MPI_Mprobe takes it out of reach of
  // every other receive).
  virtual void RemoveUnexpected(UnexpectedMessage* message) = 0;

  // Removes and returns any queued unexpected message, nullptr when none is
  // left (teardown: contexts have no wildcard, so Probe cannot drain).
  virtual UnexpectedMessage* PopAnyUnexpected() = 0;

  // Removes a posted receive that has not matched yet; false if it already
  // matched (or was never queued).
  virtual bool CancelPosted(PostedReceive* receive) = 0;

  virtual size_t posted_count() const = 0;
  virtual size_t unexpected_count() const = 0;

  virtual MatchStats stats() const = 0;

  // What each context did (see ContextCounters): any thread, no lock.
  const ContextCounterTable& contexts() const { return contexts_; }
  ContextCounterTable& contexts() { return contexts_; }
  // The most elements one kind of traffic held at once in the posted or
  // unexpected structure (all its contexts together): any thread.
  uint64_t longest(bool collective, bool posted) const {
    return longest_[collective][posted].Read();
  }
  // PNP: senders promoted to partners so far (posted and unexpected
  // structures together); 0 for engines without PNP. Any thread.
  virtual uint64_t partner_promotions() const { return 0; }

 protected:
  bool timed() const { return time_searches_ || SearchTimingRequested(); }
  // Traffic comes in runs on one context (a collective's steps, a window
  // of messages): the last context's counters are kept at hand.
  ContextCounters& CountersFor(int32_t context, const TrafficKind& kind) {
    if (context == cached_context_) [[likely]]
      return *cached_counters_;
    ContextCounters& counters =
        contexts_.FindOrMake(context, kind.is_collective());
    cached_context_ = context;
    cached_counters_ = &counters;
    return counters;
  }
  // An element of `kind` was queued; the structure now holds `queued_now`.
  void RecordQueued(QueueCounters& counters, const TrafficKind& kind,
                    bool posted, size_t queued_now) {
    counters.Queued();
    longest_[kind.is_collective()][posted].RaiseTo(queued_now);
  }
  // The counters summed by kind, times in nanoseconds; the structures'
  // shapes are for the engine to add.
  MatchStats CountedStats() const;

 private:
  const bool time_searches_;
  ContextCounterTable contexts_;
  // The engine's thread's alone (under the VCI's lock): see CountersFor.
  int32_t cached_context_ = -1;
  ContextCounters* cached_counters_ = nullptr;
  OwnedCount longest_[2][2];  // [collective][posted]
};

// One matching engine MINIMPI_MATCH may name. kMatchEngines in
// match_engine.cc is the one list of them: CreateMatchEngine, the settings'
// check, minimpi_info and the tests all read it, so adding an engine is one
// entry there.
struct MatchEngineChoice {
  const char* name;
  const char* description;  // one line, for minimpi_info
  std::unique_ptr<MatchEngine> (*create)(std::string name,
                                         const MatchEngineOptions& options);
};
// Every engine, the default first.
std::span<const MatchEngineChoice> MatchEngineChoices();

// Names accepted by CreateMatchEngine (MINIMPI_MATCH), in the table's order.
std::vector<std::string> MatchEngineNames();
// One line on what the named engine is, for minimpi_info.
std::string MatchEngineDescription(std::string_view name);

absl::StatusOr<std::unique_ptr<MatchEngine>> CreateMatchEngine(
    std::string_view name, const MatchEngineOptions& options = {});

// The statistics as a few lines of text, for MINIMPI_MATCH_STATS.
std::string FormatMatchStats(std::string_view engine_name,
                             const MatchStats& stats);

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_MATCH_ENGINE_H_
