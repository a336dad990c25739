// Every engine is driven with random post/arrive/probe/cancel traffic and
// compared, operation by operation, with a reference that is correct by
// inspection: two plain vectors searched from the front.
#include "mpi/match/match_engine.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "mpi/match/queue_search.h"

namespace minimpi::match {
namespace {

// The reference: posted receives and unexpected messages in arrival order.
class ReferenceEngine {
 public:
  // Returns the id of the matched posted receive, or -1 (queued).
  int Arrive(int id, const Envelope& e) {
    for (size_t i = 0; i < posted_.size(); ++i) {
      if (Matches(posted_[i].second, e)) {
        int matched = posted_[i].first;
        posted_.erase(posted_.begin() + i);
        return matched;
      }
    }
    unexpected_.push_back({id, e});
    return -1;
  }
  int Post(int id, const Envelope& wanted) {
    int found = Probe(wanted);
    if (found >= 0) {
      Remove(found);
      return found;
    }
    posted_.push_back({id, wanted});
    return -1;
  }
  int Probe(const Envelope& wanted) const {
    for (const auto& [id, e] : unexpected_) {
      if (Matches(wanted, e)) return id;
    }
    return -1;
  }
  void Remove(int id) {
    unexpected_.erase(
        std::find_if(unexpected_.begin(), unexpected_.end(),
                     [id](const auto& entry) { return entry.first == id; }));
  }
  bool Cancel(int id) {
    auto it =
        std::find_if(posted_.begin(), posted_.end(),
                     [id](const auto& entry) { return entry.first == id; });
    if (it == posted_.end()) return false;
    posted_.erase(it);
    return true;
  }
  size_t posted() const { return posted_.size(); }
  size_t unexpected() const { return unexpected_.size(); }

 private:
  std::vector<std::pair<int, Envelope>> posted_;
  std::vector<std::pair<int, Envelope>> unexpected_;
};

struct Receive : PostedReceive {
  int id = 0;
};
struct Message : UnexpectedMessage {
  int id = 0;
};

class MatchEngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<MatchEngine> NewEngine() {
    auto engine = CreateMatchEngine(GetParam());
    EXPECT_TRUE(engine.ok()) << engine.status();
    return std::move(engine).value();
  }
};

TEST_P(MatchEngineTest, PostedReceivesMatchInPostingOrder) {
  auto engine = NewEngine();
  Receive specific, wildcard;
  specific.wanted = {0, 1, 5};
  wildcard.wanted = {0, kAnySource, kAnyTag};
  EXPECT_EQ(engine->MatchPosted(&specific), nullptr);
  EXPECT_EQ(engine->MatchPosted(&wildcard), nullptr);
  EXPECT_EQ(engine->MatchArrival({0, 1, 5}, {}), &specific);
  EXPECT_EQ(engine->MatchArrival({0, 1, 5}, {}), &wildcard);
  EXPECT_EQ(engine->posted_count(), 0u);
}

TEST_P(MatchEngineTest, UnexpectedMessagesMatchInArrivalOrder) {
  auto engine = NewEngine();
  Message a, b, c;
  a.arrived = {3, 2, 7};
  b.arrived = {3, 1, 7};
  c.arrived = {3, 2, 7};
  for (Message* m : {&a, &b, &c}) {
    EXPECT_EQ(engine->MatchArrival(m->arrived, m->traffic), nullptr);
    engine->AddUnexpected(m);
  }
  Receive any;
  any.wanted = {3, kAnySource, 7};
  EXPECT_EQ(engine->MatchPosted(&any), &a);
  Receive from2;
  from2.wanted = {3, 2, kAnyTag};
  EXPECT_EQ(engine->MatchPosted(&from2), &c);
  Receive other_context;
  other_context.wanted = {4, kAnySource, kAnyTag};
  EXPECT_EQ(engine->MatchPosted(&other_context), nullptr);
  EXPECT_TRUE(engine->CancelPosted(&other_context));
  EXPECT_FALSE(engine->CancelPosted(&other_context));
  EXPECT_EQ(engine->Probe({3, kAnySource, kAnyTag}), &b);
}

// How the random traffic leans: receives mostly posted before their
// messages arrive (expected), mostly after (unexpected), or either.
enum class Mode { kExpected, kUnexpected, kMixed };

struct RandomTrafficCase {
  std::string engine;
  Mode mode;
  // Small thresholds and budgets make PNP promote partners and COL open
  // levels all the time, so structure changes happen under full queues.
  bool churn;
  // Tags drawn from 0..tags-1: few make wildcards and collisions common;
  // many make long PNP queues hold runs of other envelopes, so their
  // index (IndexedQueue) opens and erases chains all the time.
  int tags = 3;
};

std::string CaseName(const ::testing::TestParamInfo<RandomTrafficCase>& info) {
  std::string name;
  for (char c : info.param.engine) name += std::isalnum(c) ? c : '_';
  name += info.param.mode == Mode::kExpected     ? "_expected"
          : info.param.mode == Mode::kUnexpected ? "_unexpected"
                                                 : "_mixed";
  return name + (info.param.churn ? "_churn" : "") +
         (info.param.tags != 3 ? "_" + std::to_string(info.param.tags) + "tags"
                               : "");
}

class RandomTrafficTest : public ::testing::TestWithParam<RandomTrafficCase> {};

// A million random operations per case over a few contexts, sources and
// tags (few values, so wildcards and collisions are common), compared with
// the reference after every step. Odd contexts carry collective traffic
// with random hints (a message and its receive may disagree on the size,
// as in a count mismatch); even ones point-to-point. Sources are skewed, so
// some are heavy enough to become partners.
TEST_P(RandomTrafficTest, AgreesWithReference) {
  const RandomTrafficCase& test_case = GetParam();
  MatchEngineOptions options;
  options.ranks = 64;
  if (test_case.churn) {
    options.theta = 6;
    options.kc = 2;
    options.kp = 2;
  }
  auto created = CreateMatchEngine(test_case.engine, options);
  ASSERT_TRUE(created.ok()) << created.status();
  std::unique_ptr<MatchEngine> engine = std::move(created).value();
  ReferenceEngine reference;
  std::mt19937_64 random(12345 + static_cast<int>(test_case.mode));
  std::deque<Receive> receives;  // deque: stable addresses
  std::deque<Message> messages;
  std::vector<int> queued_receives;
  constexpr int kOperations = 1000000;
  constexpr size_t kLongest = 400;
  auto pick = [&](int n) {
    return static_cast<int>(random() % static_cast<uint64_t>(n));
  };
  auto kind_for = [&](int context) {
    TrafficKind kind;
    if (context % 2 == 1) {
      kind.collective = static_cast<TrafficKind::Collective>(1 + pick(3));
      kind.message_size = 8u << pick(3);
      kind.comm_size = 16;
    }
    return kind;
  };
  // Sources 0..15; source 0 and 1 send a third of everything.
  auto source = [&] { return pick(3) == 0 ? pick(2) : pick(16); };
  // Per-context counts kept beside the reference, compared with the
  // engine's ContextCounters: what MPI_T shows per communicator.
  constexpr int kContexts = 4;
  struct ReferenceCounts {
    uint64_t posted = 0, posted_high = 0, unexpected = 0, unexpected_high = 0;
    uint64_t posted_searches = 0, unexpected_searches = 0;
    uint64_t arrivals_by_kind[kNumTrafficKinds] = {};
  };
  ReferenceCounts counts[kContexts];
  auto queued = [](uint64_t& length, uint64_t& high) {
    high = std::max(high, ++length);
  };
  const int arrive_weight = test_case.mode == Mode::kExpected     ? 3
                            : test_case.mode == Mode::kUnexpected ? 6
                                                                  : 4;
  for (int step = 0; step < kOperations; ++step) {
    int op = pick(10);
    Envelope e{pick(4), source(), pick(test_case.tags)};
    const bool arrive = op < arrive_weight;
    const bool post = !arrive && op < 8;
    if (arrive && engine->unexpected_count() < kLongest) {
      Message& m = messages.emplace_back();
      m.id = static_cast<int>(messages.size()) - 1;
      m.arrived = e;
      m.traffic = kind_for(e.context);
      PostedReceive* got = engine->MatchArrival(m.arrived, m.traffic);
      if (got == nullptr) engine->AddUnexpected(&m);
      int expected = reference.Arrive(m.id, e);
      ReferenceCounts& count = counts[e.context];
      ++count.posted_searches;
      ++count.arrivals_by_kind[static_cast<int>(m.traffic.collective)];
      if (expected < 0) {
        queued(count.unexpected, count.unexpected_high);
      } else {
        --count.posted;
      }
      ASSERT_EQ(got ? static_cast<Receive*>(got)->id : -1, expected)
          << "step " << step;
    } else if (post && engine->posted_count() < kLongest) {
      if (pick(4) == 0) e.source = kAnySource;
      if (pick(3) == 0) e.tag = kAnyTag;
      Receive& r = receives.emplace_back();
      r.id = static_cast<int>(receives.size()) - 1;
      r.wanted = e;
      r.traffic = kind_for(e.context);
      UnexpectedMessage* got = engine->MatchPosted(&r);
      int expected = reference.Post(r.id, e);
      ReferenceCounts& count = counts[e.context];
      ++count.unexpected_searches;
      if (expected < 0) {
        queued(count.posted, count.posted_high);
      } else {
        --count.unexpected;
      }
      ASSERT_EQ(got ? static_cast<Message*>(got)->id : -1, expected)
          << "step " << step;
      if (expected < 0) queued_receives.push_back(r.id);
    } else if (op == 8) {  // probe, and sometimes take it (mprobe)
      if (pick(2) == 0) e.source = kAnySource;
      if (pick(2) == 0) e.tag = kAnyTag;
      UnexpectedMessage* got = engine->Probe(e, kind_for(e.context));
      int expected = reference.Probe(e);
      ASSERT_EQ(got ? static_cast<Message*>(got)->id : -1, expected)
          << "step " << step;
      ++counts[e.context].unexpected_searches;
      if (got != nullptr && pick(2) == 0) {
        engine->RemoveUnexpected(got);
        reference.Remove(expected);
        --counts[e.context].unexpected;
      }
    } else if (op == 9 && !queued_receives.empty()) {  // cancel
      size_t index = pick(static_cast<int>(queued_receives.size()));
      int id = queued_receives[index];
      queued_receives[index] = queued_receives.back();
      queued_receives.pop_back();
      const bool cancelled = reference.Cancel(id);
      ASSERT_EQ(engine->CancelPosted(&receives[id]), cancelled)
          << "step " << step;
      if (cancelled) --counts[receives[id].wanted.context].posted;
    }
    ASSERT_EQ(engine->posted_count(), reference.posted());
    ASSERT_EQ(engine->unexpected_count(), reference.unexpected());
    for (int c = 0; c < kContexts; ++c) {
      const ContextCounters* counters = engine->contexts().Find(c);
      ASSERT_EQ(counters ? counters->posted.length.Read() : 0, counts[c].posted)
          << "context " << c << " step " << step;
      ASSERT_EQ(counters ? counters->unexpected.length.Read() : 0,
                counts[c].unexpected)
          << "context " << c << " step " << step;
    }
    // Free memory now and then, once nothing is queued; long-lived entries
    // still exist in between.
    if (messages.size() > 50000 && engine->unexpected_count() == 0 &&
        engine->posted_count() == 0) {
      messages.clear();
      receives.clear();
      queued_receives.clear();
    }
  }
  uint64_t point_to_point_searches = 0;
  for (int c = 0; c < kContexts; ++c) {
    const ContextCounters* counters = engine->contexts().Find(c);
    ASSERT_NE(counters, nullptr);
    EXPECT_EQ(counters->collective.load(), c % 2 == 1) << "context " << c;
    EXPECT_EQ(counters->posted.high_watermark.Read(), counts[c].posted_high)
        << "context " << c;
    EXPECT_EQ(counters->unexpected.high_watermark.Read(),
              counts[c].unexpected_high)
        << "context " << c;
    EXPECT_EQ(counters->posted.searches.Read(), counts[c].posted_searches)
        << "context " << c;
    EXPECT_EQ(counters->unexpected.searches.Read(),
              counts[c].unexpected_searches)
        << "context " << c;
    for (int k = 0; k < kNumTrafficKinds; ++k) {
      EXPECT_EQ(counters->arrivals_by_kind[k].Read(),
                counts[c].arrivals_by_kind[k])
          << "context " << c << " kind " << k;
    }
    if (c % 2 == 0) {
      point_to_point_searches +=
          counts[c].posted_searches + counts[c].unexpected_searches;
    }
  }
  const MatchStats stats = engine->stats();
  EXPECT_EQ(stats.point_to_point.posted.searches +
                stats.point_to_point.unexpected.searches,
            point_to_point_searches);
  if (test_case.churn &&
      (test_case.engine == "colpnp" || test_case.engine == "ll+pnp")) {
    EXPECT_EQ(engine->partner_promotions(), stats.point_to_point.partners);
  }
  const size_t cap_pnp = QueueBudget(options.kp, options.ranks).limit();
  const size_t cap_col = QueueBudget(options.kc, options.ranks).limit();
  if (test_case.engine == "colpnp" || test_case.engine == "ll+pnp") {
    EXPECT_LE(stats.point_to_point.dedicated_queues, cap_pnp);
    if (test_case.churn) {
      EXPECT_GT(stats.point_to_point.partners, 0u) << "no promotion happened";
      EXPECT_GT(stats.point_to_point.levels, 0u);
    }
  }
  if (test_case.engine == "colpnp" || test_case.engine == "col+ll") {
    EXPECT_LE(stats.collective.dedicated_queues, cap_col);
    EXPECT_GT(stats.collective.levels, 0u) << "no key finished profiling";
  }
  const uint64_t searches = stats.point_to_point.posted.searches +
                            stats.point_to_point.unexpected.searches +
                            stats.collective.posted.searches +
                            stats.collective.unexpected.searches;
  EXPECT_GT(searches, static_cast<uint64_t>(kOperations) / 2);
}

std::vector<RandomTrafficCase> AllRandomTrafficCases() {
  std::vector<RandomTrafficCase> cases;
  for (const std::string& engine : MatchEngineNames()) {
    for (Mode mode : {Mode::kExpected, Mode::kUnexpected, Mode::kMixed}) {
      cases.push_back({engine, mode, false});
    }
    cases.push_back({engine, Mode::kMixed, true});
    cases.push_back({engine, Mode::kMixed, true, 40});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllEngines, RandomTrafficTest,
                         ::testing::ValuesIn(AllRandomTrafficCases()),
                         CaseName);

TEST_P(MatchEngineTest, PopAnyUnexpectedDrainsEveryContext) {
  auto engine = NewEngine();
  std::vector<Message> messages(6);
  for (int i = 0; i < 6; ++i) {
    messages[i].arrived = {i % 3, i, i};
    ASSERT_EQ(engine->MatchArrival(messages[i].arrived, {}), nullptr);
    engine->AddUnexpected(&messages[i]);
  }
  std::set<UnexpectedMessage*> drained;
  while (UnexpectedMessage* message = engine->PopAnyUnexpected()) {
    EXPECT_TRUE(drained.insert(message).second);
  }
  EXPECT_EQ(drained.size(), 6u);
  EXPECT_EQ(engine->unexpected_count(), 0u);
}

TEST(MatchEngineFactoryTest, UnknownNameIsAnError) {
  auto engine = CreateMatchEngine("nonsense");
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().message(),
            "unknown matching engine 'nonsense'; known: " +
                absl::StrJoin(MatchEngineNames(), ", "));
}

// Every entry of the table makes an engine of its name and describes it
// (mpi/instance/choice_lists_test.cc checks the names are unique and that
// the settings take them).
TEST(MatchEngineFactoryTest, EveryTableEntryMakesItsEngine) {
  for (const MatchEngineChoice& choice : MatchEngineChoices()) {
    EXPECT_EQ(MatchEngineDescription(choice.name), choice.description);
    auto engine = CreateMatchEngine(choice.name);
    ASSERT_TRUE(engine.ok()) << engine.status();
    EXPECT_EQ((*engine)->name(), choice.name);
  }
}

INSTANTIATE_TEST_SUITE_P(AllEngines, MatchEngineTest,
                         ::testing::ValuesIn(MatchEngineNames()));

}  // namespace
}  // namespace minimpi::match
