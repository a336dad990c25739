// Engine-level matching benchmark: replays, in one process, the matching
// traffic one rank of an n-rank job would see, through every engine of
// mpi/match, and prints markdown tables comparing each engine with "ll".
//
// The four traffic models follow the queue behaviour of the applications in
// Ghazimirsaeed, Grant and Afsahi (Parallel Computing 2019). The simulated
// rank is rank 0 of a communicator of n ranks (n a power of two, at least
// 64); point-to-point traffic uses context 0 and collective traffic context
// 1, with the tag of every collective call taken from a per-communicator
// sequence number, as mpi/coll does. Unless a model says otherwise, a peer
// in lock step is as likely to be ahead of the simulated rank as behind it,
// so each message arrives before its receive is posted with probability
// one half.
//
//   Radix-like    Almost all collective traffic, short lists. Per iteration:
//                 an 8-byte allreduce by recursive doubling (log2 n steps,
//                 one receive each) and a 1 KiB pairwise-exchange alltoall
//                 (n - 1 receives, posted 4 at a time as a throttled
//                 alltoall does). Point-to-point exchanges with the two ring
//                 neighbours make up 5% of the receives; each is posted and
//                 completed on its own and they are spread at random between
//                 the collective steps.
//   Nbody-like    Mostly point-to-point with heavy partners. 7 fixed partners
//                 send 64 messages each per iteration (tags 0..63) and n/8
//                 light senders, drawn afresh every iteration, send one.
//                 The receives are posted in bulk, sender after sender in a
//                 random order; the messages arrive interleaved at random,
//                 each sender's in its sending order. Even iterations post
//                 everything first (long PRQ); odd ones let half of the
//                 messages arrive before the receives are posted (long UMQ).
//                 One 8-byte allreduce ends every iteration.
//   MiniAMR-like  Allreduce-dominated, medium lists. A halo exchange with the
//                 26 neighbours of a 3D torus posts its receives up front;
//                 its messages arrive in random order, spread at random
//                 through 12 allreduces (recursive doubling; 8 bytes, every
//                 third one 320 bytes) that run while the halo is pending.
//   FDS-like      A gather hot spot on rank 0: every iteration rank 0 posts
//                 n - 1 gather receives in rank order (one per sender, tag =
//                 the call's sequence number) and the n - 1 messages arrive
//                 in random order; every third iteration they all arrive
//                 before the receives are posted (long UMQ). The 6 face
//                 neighbours of a 3D torus exchange one point-to-point
//                 message each, posted before the gather and arriving at
//                 random moments during it.
//
// Each trace is generated once per (model, n) from a fixed seed with a
// generator written here (so it is the same on every platform), checked
// against MPI's ordering rules, and replayed identically for every engine.
// Every receive is paired with the one message MPI says it must match; a
// replay that matches anything else, or leaves an element queued, ends the
// program with a non-zero exit status.
//
// Measured per (model, n, engine), in rounds that replay the trace through
// every engine in turn (at least --reps rounds, more while the rounds so far
// took under a second, so short traces are not timed by a few clock ticks):
//   - the wall time of a whole replay with search timing off, the best over
//     the rounds: matching time including the engine's overhead (insertion,
//     removal, bookkeeping), not only searches;
//   - from a replay with search timing on, in each round: the engine's own
//     search_ns for collective and point-to-point elements (PRQ and UMQ
//     together), best over the rounds, also without the first iteration
//     (COL profiles the first call of each kind of collective, which costs
//     what a single list costs); and traversals per search;
//   - the dedicated queues at the end, and their peak at iteration ends,
//     against the cap floor((kc + kp) * sqrt(n)).
//
//   usage: match_engines [--quick] [--apps=radix,nbody,miniamr,fds]
//                        [--sizes=256,512,...] [--engines=ll,colpnp,...]
//                        [--iterations=N] [--reps=N] [--verbose]
//     --quick       n = 256 and 1024, 4 iterations, 1 round (smoke test)
//     --engines     a subset of the engines; ll and colpnp are required
//     --iterations  iterations per trace (default 20)
//     --reps        rounds at least (default 5)
//     --verbose     every engine's statistics (FormatMatchStats) to stderr
//
// Exits non-zero on a wrong match, an element left queued or a trace that
// breaks MPI's rules; the targets in the summary are reported, not enforced.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "mpi/match/match_engine.h"

namespace minimpi::bench {
namespace {

using match::Envelope;
using match::MatchEngine;
using match::MatchEngineOptions;
using match::MatchStats;
using match::PostedReceive;
using match::TrafficKind;
using match::UnexpectedMessage;
using Collective = TrafficKind::Collective;

constexpr int32_t kPointToPointContext = 0;
constexpr int32_t kCollectiveContext = 1;
constexpr int32_t kSimulatedRank = 0;
constexpr double kPeerAheadChance = 0.5;
constexpr std::string_view kBaseline = "ll";
constexpr std::string_view kProposed = "colpnp";

[[noreturn]] void Fail(const std::string& what) {
  absl::FPrintF(stderr, "match_engines: FAILED: %s\n", what);
  std::exit(EXIT_FAILURE);
}

// SplitMix64: small, and unlike the standard distributions it yields the
// same numbers with every standard library, so traces are the same
// everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound); the modulo bias is far below anything measured.
  uint64_t Below(uint64_t bound) { return Next() % bound; }
  bool Chance(double probability) {
    return static_cast<double>(Next() >> 11) * 0x1.0p-53 < probability;
  }
  template <typename T>
  void Shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i > 1; --i) {
      std::swap(items[i - 1], items[Below(i)]);
    }
  }

 private:
  uint64_t state_;
};

// One step of a trace. A pair is one receive and the message it must match;
// both are numbered by the pair.
struct Event {
  enum class Kind : uint8_t { kPost, kArrive };
  Kind kind;
  uint32_t pair;
};
using Unit = std::vector<Event>;  // events that stay together when mixed

struct Trace {
  int ranks = 0;
  std::vector<Envelope> envelopes;  // per pair: wanted == arrived
  std::vector<TrafficKind> kinds;   // per pair
  std::vector<Event> events;
  std::vector<size_t> iteration_ends;  // event index after each iteration
};

class TraceBuilder {
 public:
  TraceBuilder(int ranks, uint64_t seed) : rng_(seed) { trace_.ranks = ranks; }

  int ranks() const { return trace_.ranks; }
  Rng& rng() { return rng_; }
  // Like a real library: every collective call takes the next number of
  // the communicator's collective sequence as its tag.
  int32_t NextCollectiveTag() { return ++collective_sequence_; }

  uint32_t AddPair(const Envelope& envelope, const TrafficKind& kind) {
    trace_.envelopes.push_back(envelope);
    trace_.kinds.push_back(kind);
    return static_cast<uint32_t>(trace_.envelopes.size() - 1);
  }
  void Append(const std::vector<Event>& events) {
    trace_.events.insert(trace_.events.end(), events.begin(), events.end());
  }
  void EndIteration() { trace_.iteration_ends.push_back(trace_.events.size()); }
  Trace Finish() { return std::move(trace_); }

 private:
  Rng rng_;
  int32_t collective_sequence_ = 0;
  Trace trace_;
};

Envelope PointToPoint(int32_t source, int32_t tag) {
  return {kPointToPointContext, source, tag};
}
Envelope CollectiveFrom(int32_t source, int32_t tag) {
  return {kCollectiveContext, source, tag};
}
Event Post(uint32_t pair) { return {Event::Kind::kPost, pair}; }
Event Arrive(uint32_t pair) { return {Event::Kind::kArrive, pair}; }

// A uniformly random interleaving of `streams` that keeps each stream's own
// order: every stream's items are labelled, the labels shuffled.
template <typename T>
std::vector<T> InterleaveRandomly(std::vector<std::vector<T>> streams,
                                  Rng& rng) {
  std::vector<uint32_t> labels;
  for (size_t s = 0; s < streams.size(); ++s) {
    labels.insert(labels.end(), streams[s].size(), static_cast<uint32_t>(s));
  }
  rng.Shuffle(labels);
  std::vector<size_t> taken(streams.size(), 0);
  std::vector<T> merged;
  merged.reserve(labels.size());
  for (uint32_t s : labels) merged.push_back(std::move(streams[s][taken[s]++]));
  return merged;
}

std::vector<Event> Flatten(const std::vector<Unit>& units) {
  std::vector<Event> events;
  for (const Unit& unit : units) {
    events.insert(events.end(), unit.begin(), unit.end());
  }
  return events;
}

// Receives for `pairs` posted together, in that order. Each message arrives
// before the posts with probability `early_chance`, else after them; on each
// side of the posts the arrivals come in random order.
Unit Exchange(const std::vector<uint32_t>& pairs, double early_chance,
              Rng& rng) {
  std::vector<uint32_t> early;
  std::vector<uint32_t> late;
  for (uint32_t pair : pairs) {
    (rng.Chance(early_chance) ? early : late).push_back(pair);
  }
  rng.Shuffle(early);
  rng.Shuffle(late);
  Unit events;
  for (uint32_t pair : early) events.push_back(Arrive(pair));
  for (uint32_t pair : pairs) events.push_back(Post(pair));
  for (uint32_t pair : late) events.push_back(Arrive(pair));
  return events;
}

// An allreduce by recursive doubling: one receive per step, from rank
// me ^ 2^step; each step is a unit (its receive is posted, its partner's
// message awaited, before the next step starts).
std::vector<Unit> AllreduceSteps(TraceBuilder& builder, uint32_t bytes) {
  const int n = builder.ranks();
  const int32_t tag = builder.NextCollectiveTag();
  const TrafficKind kind{Collective::kAllreduce, bytes,
                         static_cast<uint32_t>(n)};
  std::vector<Unit> steps;
  for (int distance = 1; distance < n; distance <<= 1) {
    const uint32_t pair =
        builder.AddPair(CollectiveFrom(kSimulatedRank ^ distance, tag), kind);
    steps.push_back(Exchange({pair}, kPeerAheadChance, builder.rng()));
  }
  return steps;
}

// A pairwise-exchange alltoall throttled to `window` receives in flight: at
// step i the simulated rank receives from rank me - i, and posts the
// receives of `window` steps at a time.
std::vector<Unit> PairwiseAlltoall(TraceBuilder& builder, uint32_t bytes,
                                   int window) {
  const int n = builder.ranks();
  const int32_t tag = builder.NextCollectiveTag();
  const TrafficKind kind{Collective::kAlltoall, bytes,
                         static_cast<uint32_t>(n)};
  std::vector<Unit> windows;
  for (int first = 1; first < n; first += window) {
    std::vector<uint32_t> pairs;
    for (int step = first; step < std::min(n, first + window); ++step) {
      pairs.push_back(builder.AddPair(
          CollectiveFrom((kSimulatedRank - step + n) % n, tag), kind));
    }
    windows.push_back(Exchange(pairs, kPeerAheadChance, builder.rng()));
  }
  return windows;
}

// The neighbours of the simulated rank in a periodic 3D grid of the n ranks
// (n = 2^e, split as evenly as possible): the 6 face neighbours, or all 26.
std::vector<int32_t> TorusNeighbours(int n, bool faces_only) {
  const int exponent = std::bit_width(static_cast<unsigned>(n)) - 1;
  const int dims[3] = {1 << ((exponent + 2) / 3), 1 << ((exponent + 1) / 3),
                       1 << (exponent / 3)};
  const int me[3] = {kSimulatedRank % dims[0],
                     (kSimulatedRank / dims[0]) % dims[1],
                     kSimulatedRank / (dims[0] * dims[1])};
  std::vector<int32_t> neighbours;
  for (int dz = -1; dz <= 1; ++dz) {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const int moved = std::abs(dx) + std::abs(dy) + std::abs(dz);
        if (moved == 0 || (faces_only && moved != 1)) continue;
        const int x = (me[0] + dx + dims[0]) % dims[0];
        const int y = (me[1] + dy + dims[1]) % dims[1];
        const int z = (me[2] + dz + dims[2]) % dims[2];
        neighbours.push_back(x + dims[0] * (y + dims[1] * z));
      }
    }
  }
  return neighbours;
}

// --- The four models (see the top of the file) ---

void GenerateRadix(TraceBuilder& builder, int iterations) {
  constexpr uint32_t kAllreduceBytes = 8;
  constexpr uint32_t kAlltoallBytes = 1024;
  constexpr int kAlltoallWindow = 4;
  constexpr int kPointToPointPercent = 5;
  constexpr int32_t kNeighbourTag = 7;
  const int n = builder.ranks();
  for (int iteration = 0; iteration < iterations; ++iteration) {
    std::vector<Unit> collective = AllreduceSteps(builder, kAllreduceBytes);
    std::vector<Unit> alltoall =
        PairwiseAlltoall(builder, kAlltoallBytes, kAlltoallWindow);
    collective.insert(collective.end(), alltoall.begin(), alltoall.end());
    size_t collective_receives = 0;
    for (const Unit& unit : collective) collective_receives += unit.size() / 2;
    // p / (c + p) = 5%: p = c * 5 / 95, rounded up.
    const size_t exchanges = (collective_receives * kPointToPointPercent +
                              (100 - kPointToPointPercent) - 1) /
                             (100 - kPointToPointPercent);
    std::vector<Unit> point_to_point;
    for (size_t i = 0; i < exchanges; ++i) {
      const int32_t neighbour = (kSimulatedRank + (i % 2 == 0 ? 1 : n - 1)) % n;
      const uint32_t pair =
          builder.AddPair(PointToPoint(neighbour, kNeighbourTag), {});
      point_to_point.push_back(
          Exchange({pair}, kPeerAheadChance, builder.rng()));
    }
    builder.Append(Flatten(InterleaveRandomly<Unit>(
        {std::move(collective), std::move(point_to_point)}, builder.rng())));
    builder.EndIteration();
  }
}

void GenerateNbody(TraceBuilder& builder, int iterations) {
  constexpr int kHeavyPartners = 7;
  constexpr int kMessagesPerPartner = 64;
  constexpr uint32_t kAllreduceBytes = 8;
  const int n = builder.ranks();
  Rng& rng = builder.rng();
  // Fixed partners, drawn once: the ranks owning neighbouring space.
  std::vector<int32_t> others;
  for (int32_t rank = 0; rank < n; ++rank) {
    if (rank != kSimulatedRank) others.push_back(rank);
  }
  rng.Shuffle(others);
  const std::vector<int32_t> heavy(others.begin(),
                                   others.begin() + kHeavyPartners);
  std::vector<int32_t> light_pool(others.begin() + kHeavyPartners,
                                  others.end());
  const size_t light_count = static_cast<size_t>(n / 8);

  for (int iteration = 0; iteration < iterations; ++iteration) {
    rng.Shuffle(light_pool);
    // One stream of pairs per sender, in its sending order.
    std::vector<std::vector<uint32_t>> senders;
    for (int32_t partner : heavy) {
      std::vector<uint32_t>& stream = senders.emplace_back();
      for (int32_t tag = 0; tag < kMessagesPerPartner; ++tag) {
        stream.push_back(builder.AddPair(PointToPoint(partner, tag), {}));
      }
    }
    for (size_t i = 0; i < light_count; ++i) {
      senders.push_back({builder.AddPair(PointToPoint(light_pool[i], 0), {})});
    }
    // Receives: sender after sender, in a random sender order.
    std::vector<size_t> posting_order(senders.size());
    for (size_t s = 0; s < senders.size(); ++s) posting_order[s] = s;
    rng.Shuffle(posting_order);
    std::vector<Event> posts;
    for (size_t s : posting_order) {
      for (uint32_t pair : senders[s]) posts.push_back(Post(pair));
    }
    std::vector<uint32_t> arrival_order = InterleaveRandomly(senders, rng);
    const size_t before_posts =
        iteration % 2 == 0 ? 0 : arrival_order.size() / 2;
    std::vector<Event> events;
    for (size_t i = 0; i < before_posts; ++i) {
      events.push_back(Arrive(arrival_order[i]));
    }
    events.insert(events.end(), posts.begin(), posts.end());
    for (size_t i = before_posts; i < arrival_order.size(); ++i) {
      events.push_back(Arrive(arrival_order[i]));
    }
    builder.Append(events);
    builder.Append(Flatten(AllreduceSteps(builder, kAllreduceBytes)));
    builder.EndIteration();
  }
}

void GenerateMiniAmr(TraceBuilder& builder, int iterations) {
  constexpr int kAllreduces = 12;
  constexpr uint32_t kSmallBytes = 8;
  constexpr uint32_t kChecksumBytes = 320;
  const std::vector<int32_t> neighbours =
      TorusNeighbours(builder.ranks(), /*faces_only=*/false);
  for (int iteration = 0; iteration < iterations; ++iteration) {
    std::vector<Event> posts;
    std::vector<Unit> halo_arrivals;
    for (size_t direction = 0; direction < neighbours.size(); ++direction) {
      const uint32_t pair = builder.AddPair(
          PointToPoint(neighbours[direction], static_cast<int32_t>(direction)),
          {});
      posts.push_back(Post(pair));
      halo_arrivals.push_back({Arrive(pair)});
    }
    std::vector<Unit> allreduces;
    for (int call = 0; call < kAllreduces; ++call) {
      std::vector<Unit> steps =
          AllreduceSteps(builder, call % 3 == 2 ? kChecksumBytes : kSmallBytes);
      allreduces.insert(allreduces.end(), steps.begin(), steps.end());
    }
    builder.Append(posts);
    builder.Append(Flatten(InterleaveRandomly<Unit>(
        {std::move(halo_arrivals), std::move(allreduces)}, builder.rng())));
    builder.EndIteration();
  }
}

void GenerateFds(TraceBuilder& builder, int iterations) {
  constexpr uint32_t kGatherBytes = 48;
  constexpr int32_t kNeighbourTag = 3;
  const int n = builder.ranks();
  const std::vector<int32_t> neighbours =
      TorusNeighbours(n, /*faces_only=*/true);
  Rng& rng = builder.rng();
  for (int iteration = 0; iteration < iterations; ++iteration) {
    std::vector<Event> neighbour_posts;
    std::vector<Event> neighbour_arrivals;
    for (int32_t neighbour : neighbours) {
      const uint32_t pair =
          builder.AddPair(PointToPoint(neighbour, kNeighbourTag), {});
      neighbour_posts.push_back(Post(pair));
      neighbour_arrivals.push_back(Arrive(pair));
    }
    rng.Shuffle(neighbour_arrivals);
    const int32_t tag = builder.NextCollectiveTag();
    const TrafficKind kind{Collective::kGather, kGatherBytes,
                           static_cast<uint32_t>(n)};
    std::vector<Event> gather_posts;
    std::vector<Event> gather_arrivals;
    for (int32_t source = 0; source < n; ++source) {
      if (source == kSimulatedRank) continue;  // the root of the gather
      const uint32_t pair = builder.AddPair(CollectiveFrom(source, tag), kind);
      gather_posts.push_back(Post(pair));
      gather_arrivals.push_back(Arrive(pair));
    }
    rng.Shuffle(gather_arrivals);
    std::vector<Event> gather;
    const bool arrivals_first = iteration % 3 == 2;
    const std::vector<Event>& first =
        arrivals_first ? gather_arrivals : gather_posts;
    const std::vector<Event>& second =
        arrivals_first ? gather_posts : gather_arrivals;
    gather.insert(gather.end(), first.begin(), first.end());
    gather.insert(gather.end(), second.begin(), second.end());
    builder.Append(neighbour_posts);
    builder.Append(InterleaveRandomly<Event>(
        {std::move(gather), std::move(neighbour_arrivals)}, rng));
    builder.EndIteration();
  }
}

struct AppModel {
  std::string_view flag;
  std::string_view title;
  void (*generate)(TraceBuilder&, int);
};

constexpr AppModel kApps[] = {
    {"radix", "Radix-like", GenerateRadix},
    {"nbody", "Nbody-like", GenerateNbody},
    {"miniamr", "MiniAMR-like", GenerateMiniAmr},
    {"fds", "FDS-like", GenerateFds},
};

// Checks that the trace is one MPI allows and that MPI pairs it as
// intended: every pair posted once and arrived once, and pairs with the
// same envelope posted in pair order and arriving in pair order (then the
// k-th receive of an envelope must match the k-th message; no receive has a
// wildcard).
void ValidateTrace(const Trace& trace, std::string_view app) {
  const size_t pairs = trace.envelopes.size();
  std::vector<uint8_t> posted(pairs, 0);
  std::vector<uint8_t> arrived(pairs, 0);
  using Key = std::tuple<int32_t, int32_t, int32_t>;
  absl::flat_hash_map<Key, std::pair<int64_t, int64_t>> last;  // post, arrive
  for (const Event& event : trace.events) {
    const Envelope& e = trace.envelopes[event.pair];
    auto [it, inserted] =
        last.try_emplace(Key{e.context, e.source, e.tag}, -1, -1);
    const bool is_post = event.kind == Event::Kind::kPost;
    int64_t& previous = is_post ? it->second.first : it->second.second;
    uint8_t& seen = is_post ? posted[event.pair] : arrived[event.pair];
    if (seen++ != 0 || static_cast<int64_t>(event.pair) <= previous) {
      Fail(absl::StrFormat("%s trace (n=%d) breaks MPI order at pair %d", app,
                           trace.ranks, event.pair));
    }
    previous = event.pair;
  }
  for (size_t pair = 0; pair < pairs; ++pair) {
    const bool collective = trace.kinds[pair].is_collective();
    const bool collective_context =
        trace.envelopes[pair].context == kCollectiveContext;
    if (posted[pair] != 1 || arrived[pair] != 1 ||
        collective != collective_context) {
      Fail(absl::StrFormat("%s trace (n=%d) is malformed at pair %d", app,
                           trace.ranks, pair));
    }
  }
}

// The caller-owned elements of one trace, reused by every replay (an engine
// leaves every element unlinked when it is done with it).
struct Elements {
  explicit Elements(const Trace& trace)
      : receives(trace.envelopes.size()), messages(trace.envelopes.size()) {
    for (size_t pair = 0; pair < trace.envelopes.size(); ++pair) {
      receives[pair].wanted = trace.envelopes[pair];
      receives[pair].traffic = trace.kinds[pair];
      messages[pair].arrived = trace.envelopes[pair];
      messages[pair].traffic = trace.kinds[pair];
    }
  }
  std::vector<PostedReceive> receives;
  std::vector<UnexpectedMessage> messages;
};

template <typename T>
size_t IndexIn(const std::vector<T>& elements, const T* element) {
  const auto address = reinterpret_cast<uintptr_t>(element);
  const auto first = reinterpret_cast<uintptr_t>(elements.data());
  if (address < first || address >= first + elements.size() * sizeof(T) ||
      (address - first) % sizeof(T) != 0) {
    return SIZE_MAX;
  }
  return (address - first) / sizeof(T);
}

// Replays the trace through `engine`, verifying every match; calls
// `at_iteration_end(iteration)` after each iteration.
template <typename AtIterationEnd>
void Replay(const Trace& trace, Elements& elements, MatchEngine& engine,
            std::string_view app, AtIterationEnd&& at_iteration_end) {
  size_t matches = 0;
  size_t event_index = 0;
  auto wrong_match = [&](uint32_t pair, size_t got) {
    const Envelope& e = trace.envelopes[pair];
    Fail(absl::StrFormat(
        "%s n=%d engine %s: pair %d (context %d, source %d, tag %d) matched "
        "element %d",
        app, trace.ranks, engine.name(), pair, e.context, e.source, e.tag,
        got == SIZE_MAX ? int64_t{-1} : static_cast<int64_t>(got)));
  };
  for (size_t iteration = 0; iteration < trace.iteration_ends.size();
       ++iteration) {
    for (; event_index < trace.iteration_ends[iteration]; ++event_index) {
      const Event event = trace.events[event_index];
      if (event.kind == Event::Kind::kPost) {
        UnexpectedMessage* message =
            engine.MatchPosted(&elements.receives[event.pair]);
        if (message == nullptr) continue;
        const size_t got = IndexIn(elements.messages, message);
        if (got != event.pair) wrong_match(event.pair, got);
        ++matches;
      } else {
        UnexpectedMessage& message = elements.messages[event.pair];
        PostedReceive* receive =
            engine.MatchArrival(message.arrived, message.traffic);
        if (receive == nullptr) {
          engine.AddUnexpected(&message);
          continue;
        }
        const size_t got = IndexIn(elements.receives, receive);
        if (got != event.pair) wrong_match(event.pair, got);
        ++matches;
      }
    }
    at_iteration_end(iteration);
  }
  if (matches != trace.envelopes.size() || engine.posted_count() != 0 ||
      engine.unexpected_count() != 0) {
    Fail(absl::StrFormat(
        "%s n=%d engine %s: %d of %d pairs matched; %d receives and %d "
        "messages left queued",
        app, trace.ranks, engine.name(), matches, trace.envelopes.size(),
        engine.posted_count(), engine.unexpected_count()));
  }
}

std::unique_ptr<MatchEngine> MakeEngine(const std::string& name, int ranks,
                                        bool time_searches) {
  MatchEngineOptions options;  // theta, kc, kp: the library's defaults
  options.ranks = ranks;
  options.time_searches = time_searches;
  auto engine = match::CreateMatchEngine(name, options);
  if (!engine.ok()) Fail(std::string(engine.status().message()));
  return *std::move(engine);
}

uint64_t SearchNs(const match::KindStats& kind) {
  return kind.posted.search_ns + kind.unexpected.search_ns;
}
uint64_t Searches(const MatchStats& stats) {
  return stats.collective.posted.searches +
         stats.collective.unexpected.searches +
         stats.point_to_point.posted.searches +
         stats.point_to_point.unexpected.searches;
}
uint64_t Traversals(const MatchStats& stats) {
  return stats.collective.posted.traversals +
         stats.collective.unexpected.traversals +
         stats.point_to_point.posted.traversals +
         stats.point_to_point.unexpected.traversals;
}
size_t DedicatedQueues(const MatchStats& stats) {
  return stats.collective.dedicated_queues +
         stats.point_to_point.dedicated_queues;
}

double AllSearchNs(const MatchStats& stats) {
  return static_cast<double>(SearchNs(stats.collective) +
                             SearchNs(stats.point_to_point));
}

// Search times of one engine, each the smallest over the timed-search
// replays: one descheduling inside a timed search would otherwise count in
// full.
struct SearchTimes {
  double collective_ns = 1e300;
  double point_to_point_ns = 1e300;
  double all_ns = 1e300;
  double after_first_iteration_ns = 1e300;  // all_ns less iteration 0's

  void KeepBest(const MatchStats& end, const MatchStats& first_iteration) {
    collective_ns =
        std::min(collective_ns, static_cast<double>(SearchNs(end.collective)));
    point_to_point_ns = std::min(
        point_to_point_ns, static_cast<double>(SearchNs(end.point_to_point)));
    all_ns = std::min(all_ns, AllSearchNs(end));
    after_first_iteration_ns =
        std::min(after_first_iteration_ns,
                 AllSearchNs(end) - AllSearchNs(first_iteration));
  }
};

struct EngineResult {
  std::string name;
  double best_replay_ns = 1e300;  // search timing off
  SearchTimes best_search;        // search timing on
  MatchStats stats;  // of the first timed-search replay (counts are the same
                     // in every replay; only search_ns varies)
  size_t peak_dedicated_queues = 0;  // over iteration ends
};

struct SizeResult {
  int ranks = 0;
  size_t pairs = 0;
  int rounds = 0;                     // repetitions done
  std::vector<EngineResult> engines;  // in MatchEngineNames() order

  const EngineResult* Find(std::string_view name) const {
    for (const EngineResult& engine : engines) {
      if (engine.name == name) return &engine;
    }
    return nullptr;
  }
  const EngineResult& Engine(std::string_view name) const {
    const EngineResult* engine = Find(name);
    if (engine == nullptr) Fail(absl::StrFormat("no result for %s", name));
    return *engine;
  }
};

size_t QueueCap(int ranks) {
  const MatchEngineOptions defaults;
  return static_cast<size_t>((defaults.kc + defaults.kp) *
                             std::sqrt(static_cast<double>(ranks)));
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

struct MeasureSettings {
  int iterations = 20;
  int repetitions = 5;
  // Short traces get more rounds than `repetitions`, until the rounds took
  // this long (at most kMaxRounds), so a best-of is not a few clock ticks.
  double min_seconds = 1.0;
  bool verbose = false;
};
constexpr int kMaxRounds = 100;

SizeResult MeasureOne(const AppModel& app, int ranks,
                      const MeasureSettings& settings,
                      const std::vector<std::string>& engine_names) {
  TraceBuilder builder(ranks, 0x6d61746368ULL * 1000003ULL +
                                  static_cast<uint64_t>(ranks) * 131ULL +
                                  static_cast<uint64_t>(&app - kApps));
  app.generate(builder, settings.iterations);
  const Trace trace = builder.Finish();
  ValidateTrace(trace, app.title);
  Elements elements(trace);

  SizeResult result;
  result.ranks = ranks;
  result.pairs = trace.envelopes.size();
  for (const std::string& name : engine_names) {
    result.engines.emplace_back().name = name;
  }
  // Rounds outermost, so a slow spell of the machine hits every engine; in
  // each round an engine's timed-search replay also warms the caches for its
  // plain one.
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0;
       round < settings.repetitions ||
       (round < kMaxRounds && SecondsSince(start) < settings.min_seconds);
       ++round) {
    for (EngineResult& engine_result : result.engines) {
      auto searched = MakeEngine(engine_result.name, ranks,
                                 /*time_searches=*/true);
      MatchStats first_iteration;
      Replay(trace, elements, *searched, app.title, [&](size_t iteration) {
        const MatchStats now = searched->stats();
        if (iteration == 0) first_iteration = now;
        engine_result.peak_dedicated_queues =
            std::max(engine_result.peak_dedicated_queues, DedicatedQueues(now));
      });
      const MatchStats end = searched->stats();
      engine_result.best_search.KeepBest(end, first_iteration);
      if (round == 0) {
        engine_result.stats = end;
        if (settings.verbose) {
          absl::FPrintF(stderr, "%s n=%d: %s", app.title, ranks,
                        match::FormatMatchStats(engine_result.name, end));
        }
      }

      auto plain = MakeEngine(engine_result.name, ranks,
                              /*time_searches=*/false);
      const auto replay_start = std::chrono::steady_clock::now();
      Replay(trace, elements, *plain, app.title, [](size_t) {});
      engine_result.best_replay_ns = std::min(engine_result.best_replay_ns,
                                              SecondsSince(replay_start) * 1e9);
    }
    result.rounds = round + 1;
  }
  return result;
}

// baseline / proposed, "-" when either side did no timed searching.
std::string Speedup(double baseline_ns, double proposed_ns) {
  if (baseline_ns <= 0 || proposed_ns <= 0) return "-";
  return absl::StrFormat("%.2f", baseline_ns / proposed_ns);
}

// Traversals per search of one queue side over both kinds of traffic.
double TraversalsPerSearch(const match::QueueStats& collective,
                           const match::QueueStats& point_to_point) {
  const uint64_t searches = collective.searches + point_to_point.searches;
  return searches == 0 ? 0.0
                       : static_cast<double>(collective.traversals +
                                             point_to_point.traversals) /
                             static_cast<double>(searches);
}

void PrintAppTables(const AppModel& app, int iterations,
                    const std::vector<SizeResult>& sizes,
                    const std::vector<std::string>& engine_names) {
  std::vector<std::string> others;
  for (const std::string& name : engine_names) {
    if (name != kBaseline) others.push_back(name);
  }
  absl::PrintF("### %s (%d iterations)\n\n", app.title, iterations);
  // Table 1: what the targets are about.
  std::string header =
      "| n | coll search speedup | p2p search speedup | all search speedup | "
      "all, after 1st iteration |";
  std::string rule = "|---:|---:|---:|---:|---:|";
  for (const std::string& name : others) {
    absl::StrAppend(&header, " ", name, "/ll time |");
    rule += "---:|";
  }
  header += " colpnp queues (bytes) | cap (kc+kp)*sqrt(n) | perpeer queues |";
  rule += "---:|---:|---:|";
  absl::PrintF("%s\n%s\n", header, rule);
  for (const SizeResult& size : sizes) {
    const EngineResult& ll = size.Engine(kBaseline);
    const EngineResult& proposed = size.Engine(kProposed);
    std::string row = absl::StrFormat(
        "| %d | %s | %s | %s | %s |", size.ranks,
        Speedup(ll.best_search.collective_ns,
                proposed.best_search.collective_ns),
        Speedup(ll.best_search.point_to_point_ns,
                proposed.best_search.point_to_point_ns),
        Speedup(ll.best_search.all_ns, proposed.best_search.all_ns),
        Speedup(ll.best_search.after_first_iteration_ns,
                proposed.best_search.after_first_iteration_ns));
    for (const std::string& name : others) {
      absl::StrAppendFormat(
          &row, " %.3f |",
          size.Engine(name).best_replay_ns / ll.best_replay_ns);
    }
    const size_t proposed_bytes =
        proposed.stats.collective.dedicated_queue_bytes +
        proposed.stats.point_to_point.dedicated_queue_bytes;
    const EngineResult* perpeer = size.Find("perpeer");
    absl::StrAppendFormat(
        &row, " %d (%d) | %d | %s |", DedicatedQueues(proposed.stats),
        proposed_bytes, QueueCap(size.ranks),
        perpeer == nullptr ? std::string("-")
                           : absl::StrCat(DedicatedQueues(perpeer->stats)));
    absl::PrintF("%s\n", row);
  }
  // Table 2: how long the lists are and how much each engine walks.
  std::string detail_header =
      "| n | pairs | rounds | ll time (ms) | ll longest PRQ / UMQ | ll trav "
      "PRQ / UMQ | colpnp trav PRQ / UMQ |";
  std::string detail_rule = "|---:|---:|---:|---:|---:|---:|---:|";
  for (const std::string& name : engine_names) {
    absl::StrAppend(&detail_header, " ", name, " trav/search |");
    detail_rule += "---:|";
  }
  absl::PrintF("\n%s\n%s\n", detail_header, detail_rule);
  auto per_side = [](const MatchStats& stats) {
    return absl::StrFormat(
        "%.2f / %.2f",
        TraversalsPerSearch(stats.collective.posted,
                            stats.point_to_point.posted),
        TraversalsPerSearch(stats.collective.unexpected,
                            stats.point_to_point.unexpected));
  };
  for (const SizeResult& size : sizes) {
    const MatchStats& ll = size.Engine(kBaseline).stats;
    std::string row = absl::StrFormat(
        "| %d | %d | %d | %.2f | %d / %d | %s | %s |", size.ranks, size.pairs,
        size.rounds, size.Engine(kBaseline).best_replay_ns / 1e6,
        std::max(ll.collective.posted.longest,
                 ll.point_to_point.posted.longest),
        std::max(ll.collective.unexpected.longest,
                 ll.point_to_point.unexpected.longest),
        per_side(ll), per_side(size.Engine(kProposed).stats));
    for (const std::string& name : engine_names) {
      const MatchStats& stats = size.Engine(name).stats;
      const uint64_t searches = Searches(stats);
      absl::StrAppendFormat(&row, " %.2f |",
                            searches == 0
                                ? 0.0
                                : static_cast<double>(Traversals(stats)) /
                                      static_cast<double>(searches));
    }
    absl::PrintF("%s\n", row);
  }
  absl::PrintF("\n");
}

struct Flags {
  bool quick = false;
  std::vector<std::string> apps = {"radix", "nbody", "miniamr", "fds"};
  std::vector<int> sizes = {256, 512, 1024, 2048, 4096};
  std::vector<std::string> engines = match::MatchEngineNames();
  MeasureSettings measure;
};

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  bool sizes_given = false, iterations_given = false, reps_given = false;
  // Debian's Abseil has its own string_view, so flags are parsed as strings.
  auto positive = [](const std::string& text, std::string_view flag) {
    int value = 0;
    if (!absl::SimpleAtoi(text, &value) || value < 1) {
      Fail(absl::StrFormat("%s wants a positive number, got '%s'", flag, text));
    }
    return value;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t equals = arg.find('=');
    const std::string flag = arg.substr(0, equals);
    const std::string value =
        equals == std::string::npos ? "" : arg.substr(equals + 1);
    if (arg == "--quick") {
      flags.quick = true;
    } else if (arg == "--verbose") {
      flags.measure.verbose = true;
    } else if (flag == "--engines") {
      flags.engines = absl::StrSplit(value, ',', absl::SkipEmpty());
      for (std::string_view needed : {kBaseline, kProposed}) {
        if (std::find(flags.engines.begin(), flags.engines.end(), needed) ==
            flags.engines.end()) {
          Fail(absl::StrFormat("--engines must include %s", needed));
        }
      }
    } else if (flag == "--apps") {
      flags.apps = absl::StrSplit(value, ',', absl::SkipEmpty());
      for (const std::string& name : flags.apps) {
        if (std::none_of(
                std::begin(kApps), std::end(kApps),
                [&](const AppModel& app) { return app.flag == name; })) {
          Fail(absl::StrFormat("unknown app '%s' (radix, nbody, miniamr, fds)",
                               name));
        }
      }
    } else if (flag == "--sizes") {
      flags.sizes.clear();
      const std::vector<std::string> texts =
          absl::StrSplit(value, ',', absl::SkipEmpty());
      for (const std::string& text : texts) {
        const int n = positive(text, "--sizes");
        if (n < 64 || !std::has_single_bit(static_cast<unsigned>(n))) {
          Fail(absl::StrFormat("--sizes: %d is not a power of two >= 64", n));
        }
        flags.sizes.push_back(n);
      }
      sizes_given = true;
    } else if (flag == "--iterations") {
      flags.measure.iterations = positive(value, "--iterations");
      iterations_given = true;
    } else if (flag == "--reps") {
      flags.measure.repetitions = positive(value, "--reps");
      reps_given = true;
    } else {
      Fail(absl::StrFormat(
          "unknown argument '%s'; usage: match_engines [--quick] "
          "[--apps=radix,nbody,miniamr,fds] [--sizes=256,...] "
          "[--engines=ll,colpnp,...] [--iterations=N] [--reps=N] "
          "[--verbose]",
          arg));
    }
  }
  if (flags.quick) {
    if (!sizes_given) flags.sizes = {256, 1024};
    if (!iterations_given) flags.measure.iterations = 4;
    if (!reps_given) flags.measure.repetitions = 1;
    flags.measure.min_seconds = 0;
  }
  return flags;
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  const std::vector<std::string>& engine_names = flags.engines;
  const auto run_start = std::chrono::steady_clock::now();
  const MatchEngineOptions defaults;
  absl::PrintF(
      "Matching engines replaying synthetic traffic of one rank of n; "
      "theta=%d kc=%d kp=%d; engines: %s.\n"
      "Search speedup = ll search_ns / colpnp search_ns (timed searches); "
      "X/ll time = whole-replay wall time (search timing off), below 1 = "
      "faster than ll. Both are the best of %d or more rounds (more for "
      "short traces: see 'rounds').\n\n",
      defaults.theta, defaults.kc, defaults.kp,
      absl::StrJoin(engine_names, ", "), flags.measure.repetitions);

  std::vector<std::pair<const AppModel*, std::vector<SizeResult>>> all;
  for (const AppModel& app : kApps) {
    if (std::find(flags.apps.begin(), flags.apps.end(), app.flag) ==
        flags.apps.end()) {
      continue;
    }
    std::vector<SizeResult> sizes;
    for (int n : flags.sizes) {
      absl::FPrintF(stderr, "match_engines: %s n=%d...\n", app.title, n);
      sizes.push_back(MeasureOne(app, n, flags.measure, engine_names));
    }
    PrintAppTables(app, flags.measure.iterations, sizes, engine_names);
    all.emplace_back(&app, std::move(sizes));
  }

  // The summary lines, one per target.
  std::string fds_line = "not measured (needs --apps with fds and n=1024)";
  double worst_ratio = 0;
  std::string worst_where = "not measured";
  bool within_cap = true;
  std::string cap_detail;
  double tightest = -1;
  for (const auto& [app, sizes] : all) {
    for (const SizeResult& size : sizes) {
      const EngineResult& ll = size.Engine(kBaseline);
      const EngineResult& proposed = size.Engine(kProposed);
      if (app->flag == "fds" && size.ranks == 1024) {
        fds_line = absl::StrFormat(
            "%s (after the first iteration: %s)",
            Speedup(ll.best_search.all_ns, proposed.best_search.all_ns),
            Speedup(ll.best_search.after_first_iteration_ns,
                    proposed.best_search.after_first_iteration_ns));
      }
      if (app->flag == "radix" || app->flag == "miniamr") {
        const double ratio = proposed.best_replay_ns / ll.best_replay_ns;
        if (ratio > worst_ratio) {
          worst_ratio = ratio;
          worst_where =
              absl::StrFormat("%.3f at %s n=%d", ratio, app->title, size.ranks);
        }
      }
      const size_t cap = QueueCap(size.ranks);
      const double used = static_cast<double>(proposed.peak_dedicated_queues) /
                          static_cast<double>(cap);
      if (proposed.peak_dedicated_queues > cap) within_cap = false;
      if (used > tightest) {
        tightest = used;
        cap_detail = absl::StrFormat("closest: %d of %d at %s n=%d",
                                     proposed.peak_dedicated_queues, cap,
                                     app->title, size.ranks);
      }
    }
  }
  absl::PrintF("### Summary\n\n");
  absl::PrintF(
      "- FDS-like n=1024: colpnp total search time speedup over ll = %s "
      "(target >= 20)\n",
      fds_line);
  absl::PrintF(
      "- Radix-like / MiniAMR-like: worst colpnp/ll total matching time = %s "
      "(target <= 1.05)\n",
      worst_where);
  absl::PrintF(
      "- dedicated queues never above k*sqrt(n): %s (colpnp, peak over "
      "iteration ends; %s)\n",
      within_cap ? "yes" : "no", cap_detail);
  absl::FPrintF(stderr, "match_engines: done in %.1f s\n",
                SecondsSince(run_start));
  return 0;
}

}  // namespace
}  // namespace minimpi::bench

int main(int argc, char** argv) { return minimpi::bench::Main(argc, argv); }
