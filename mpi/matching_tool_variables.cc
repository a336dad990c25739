#include "mpi/matching_tool_variables.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "mpi/objects/comm.h"
#include "mpi/match/context_counters.h"
#include "mpi/match/match_engine.h"
#include "mpi/match/search_stats.h"
#include "mpi/p2p/point_to_point.h"
#include "mpi/tool/registry.h"

namespace minimpi {
namespace {

using match::ContextCounters;
using match::MatchEngine;
using Field = uint64_t (*)(const ContextCounters&);

enum class Combine { kSum, kMax };

uint64_t Combined(Combine combine, uint64_t a, uint64_t b) {
  return combine == Combine::kSum ? a + b : std::max(a, b);
}

// The engine that matches `comm`'s contexts, or nullptr.
const MatchEngine* EngineOf(const Communicator& comm) {
  const p2p::PointToPoint* p2p = p2p::ShownToTools();
  return p2p == nullptr ? nullptr : p2p->EngineAt(comm.vci);
}

// Which of a communicator's contexts a variable looks at. Queue lengths and
// their marks look at one (COL+PNP keeps the two kinds of traffic in queues
// of their own, and a mark of a sum cannot be rebuilt from two marks);
// counters and timers add both.
enum class Traffic { kPointToPoint, kCollective, kBoth };

// `field` over the communicator's contexts that `traffic` names.
uint64_t CommValue(const void* object, Field field, Combine combine,
                   Traffic traffic = Traffic::kBoth) {
  const auto* comm = static_cast<const Communicator*>(object);
  if (comm == nullptr) return 0;
  const MatchEngine* engine = EngineOf(*comm);
  if (engine == nullptr) return 0;
  uint64_t value = 0;
  for (int32_t context :
       {comm->point_to_point_context(), comm->collective_context()}) {
    const bool collective = context == comm->collective_context();
    if ((traffic == Traffic::kPointToPoint && collective) ||
        (traffic == Traffic::kCollective && !collective)) {
      continue;
    }
    if (const ContextCounters* counters = engine->contexts().Find(context)) {
      value = Combined(combine, value, field(*counters));
    }
  }
  return value;
}

// `per_engine` over every VCI's engine.
template <typename PerEngine>
uint64_t OverEngines(Combine combine, PerEngine per_engine) {
  const p2p::PointToPoint* p2p = p2p::ShownToTools();
  if (p2p == nullptr) return 0;
  uint64_t value = 0;
  for (int v = 0; v < p2p->vci_capacity(); ++v) {
    if (const MatchEngine* engine = p2p->EngineAt(v)) {
      value = Combined(combine, value, per_engine(*engine));
    }
  }
  return value;
}

// `field` summed over every context of the process that carries `traffic`.
uint64_t ProcessSum(Field field, Traffic traffic = Traffic::kBoth) {
  return OverEngines(Combine::kSum, [field,
                                     traffic](const MatchEngine& engine) {
    uint64_t total = 0;
    engine.contexts().ForEach([&](int32_t, const ContextCounters& counters) {
      const bool collective =
          counters.collective.load(std::memory_order_relaxed);
      if (traffic == Traffic::kBoth ||
          collective == (traffic == Traffic::kCollective)) {
        total += field(counters);
      }
    });
    return total;
  });
}

double TicksToSeconds(uint64_t ticks) {
  return ticks == 0
             ? 0.0
             : static_cast<double>(ticks) * match::NanosecondsPerTick() * 1e-9;
}

// Timing costs two clock reads per search: on while any handle on a
// matching timer is started.
std::atomic<int> started_timers{0};
void EnableTiming(bool on) {
  const int now =
      on ? started_timers.fetch_add(1) + 1 : started_timers.fetch_sub(1) - 1;
  match::SetSearchTiming(now > 0);
}

tool::PerformanceVariable Variable(std::string name, std::string description,
                                   int var_class) {
  tool::PerformanceVariable variable;
  variable.name = std::move(name);
  variable.description = std::move(description);
  variable.category = "matching";
  variable.var_class = var_class;
  return variable;
}

// The per-communicator variable `name` and its process-wide twin.
void RegisterPair(const std::string& name, const std::string& description,
                  int var_class, Field field, Combine comm_combine,
                  Traffic traffic = Traffic::kBoth) {
  tool::PerformanceVariable comm =
      Variable(name, description + " Per communicator.", var_class);
  comm.binding = tool::Binding::kComm;
  comm.read = [field, comm_combine, traffic](const void* object, void* values) {
    *static_cast<uint64_t*>(values) =
        CommValue(object, field, comm_combine, traffic);
  };
  tool::PerformanceVariable process = Variable(
      name + "_process", description + " Summed over the process.", var_class);
  process.read = [field, traffic](const void*, void* values) {
    *static_cast<uint64_t*>(values) = ProcessSum(field, traffic);
  };
  tool::RegisterPerformanceVariable(std::move(comm));
  tool::RegisterPerformanceVariable(std::move(process));
}

// A high-water mark per communicator, and the most one VCI held per kind of
// traffic for the process.
void RegisterWatermarks(const std::string& name, const std::string& what,
                        bool posted, Traffic traffic) {
  const Field field =
      posted ? +[](const ContextCounters&
                       c) { return c.posted.high_watermark.Read(); }
             : +[](const ContextCounters& c) {
                 return c.unexpected.high_watermark.Read();
               };
  const bool collective = traffic == Traffic::kCollective;
  tool::PerformanceVariable comm =
      Variable(name,
               "The most " + what + " a communicator's " +
                   (collective ? "collective" : "point-to-point") +
                   " queue held at once since it was made or the handle reset.",
               MPI_T_PVAR_CLASS_HIGHWATERMARK);
  comm.binding = tool::Binding::kComm;
  comm.read = [field, traffic](const void* object, void* values) {
    *static_cast<uint64_t*>(values) =
        CommValue(object, field, Combine::kMax, traffic);
  };
  comm.readonly = false;  // MPI_T_pvar_reset restarts a handle's mark
  comm.reset_mark = [collective](const void* object) {
    const auto* c = static_cast<const Communicator*>(object);
    const p2p::PointToPoint* p2p = p2p::ShownToTools();
    if (c == nullptr || p2p == nullptr) return;
    p2p->RestartHighWatermarks(c->vci, collective
                                           ? c->collective_context()
                                           : c->point_to_point_context());
  };
  tool::PerformanceVariable process =
      Variable(name + "_process",
               "The most " + what + " one VCI's engine held at once in " +
                   (collective ? "collective" : "point-to-point") +
                   " queues in this process.",
               MPI_T_PVAR_CLASS_HIGHWATERMARK);
  process.read = [posted, collective](const void*, void* values) {
    *static_cast<uint64_t*>(values) = OverEngines(
        Combine::kMax, [posted, collective](const MatchEngine& engine) {
          return engine.longest(collective, posted);
        });
  };
  tool::RegisterPerformanceVariable(std::move(comm));
  tool::RegisterPerformanceVariable(std::move(process));
}

void RegisterTimers() {
  const Field ticks = [](const ContextCounters& c) {
    return c.posted.search_ticks.Read() + c.unexpected.search_ticks.Read();
  };
  const std::string description =
      "Seconds spent searching the posted and unexpected queues, counted "
      "while a handle on a matching timer is started (or always under "
      "MINIMPI_MATCH_STATS): timing costs two clock reads per search.";
  tool::PerformanceVariable comm =
      Variable("time_matching", description + " Per communicator.",
               MPI_T_PVAR_CLASS_TIMER);
  comm.type = tool::ValueType::kDouble;
  comm.binding = tool::Binding::kComm;
  comm.continuous = false;
  comm.enable = EnableTiming;
  comm.read = [ticks](const void* object, void* values) {
    *static_cast<double*>(values) =
        TicksToSeconds(CommValue(object, ticks, Combine::kSum));
  };
  tool::PerformanceVariable process = Variable(
      "time_matching_process", description + " Summed over the process.",
      MPI_T_PVAR_CLASS_TIMER);
  process.type = tool::ValueType::kDouble;
  process.continuous = false;
  process.enable = EnableTiming;
  process.read = [ticks](const void*, void* values) {
    *static_cast<double*>(values) = TicksToSeconds(ProcessSum(ticks));
  };
  tool::RegisterPerformanceVariable(std::move(comm));
  tool::RegisterPerformanceVariable(std::move(process));
}

// Collective kinds 1..kNumTrafficKinds-1 (0 is point-to-point).
constexpr int kCollectiveKinds = match::kNumTrafficKinds - 1;

void ReadArrivals(const ContextCounters& counters, uint64_t* values) {
  for (int k = 0; k < kCollectiveKinds; ++k) {
    values[k] += counters.arrivals_by_kind[k + 1].Read();
  }
}

void RegisterCollectiveProfile() {
  const std::string description =
      "Messages arrived per collective kind: barrier, bcast, reduce, "
      "allreduce, gather, scatter, allgather, alltoall, reduce_scatter, "
      "scan, comm_create (communicator construction's exchanges); the "
      "profile COL sizes its collective queues by.";
  tool::PerformanceVariable comm =
      Variable("collective_messages_by_kind",
               description + " Per communicator.", MPI_T_PVAR_CLASS_COUNTER);
  comm.binding = tool::Binding::kComm;
  comm.count = kCollectiveKinds;
  comm.read = [](const void* object, void* values) {
    auto* out = static_cast<uint64_t*>(values);
    std::fill(out, out + kCollectiveKinds, 0);
    const auto* c = static_cast<const Communicator*>(object);
    const MatchEngine* engine = c == nullptr ? nullptr : EngineOf(*c);
    if (engine == nullptr) return;
    for (int32_t context :
         {c->point_to_point_context(), c->collective_context()}) {
      if (const ContextCounters* counters = engine->contexts().Find(context)) {
        ReadArrivals(*counters, out);
      }
    }
  };
  tool::PerformanceVariable process = Variable(
      "collective_messages_by_kind_process",
      description + " Summed over the process.", MPI_T_PVAR_CLASS_COUNTER);
  process.count = kCollectiveKinds;
  process.read = [](const void*, void* values) {
    auto* out = static_cast<uint64_t*>(values);
    std::fill(out, out + kCollectiveKinds, 0);
    const p2p::PointToPoint* p2p = p2p::ShownToTools();
    if (p2p == nullptr) return;
    for (int v = 0; v < p2p->vci_capacity(); ++v) {
      if (const MatchEngine* engine = p2p->EngineAt(v)) {
        engine->contexts().ForEach(
            [&](int32_t, const ContextCounters& counters) {
              ReadArrivals(counters, out);
            });
      }
    }
  };
  tool::RegisterPerformanceVariable(std::move(comm));
  tool::RegisterPerformanceVariable(std::move(process));
}

}  // namespace

void RegisterMatchingToolVariables() {
  // Queue lengths and their marks, once for the program's point-to-point
  // traffic and once (prefixed "collective_") for the library's collective
  // traffic on the same communicator: the two never share a queue.
  for (const Traffic traffic : {Traffic::kPointToPoint, Traffic::kCollective}) {
    const bool collective = traffic == Traffic::kCollective;
    const std::string prefix = collective ? "collective_" : "";
    const std::string kind = collective ? " (collective traffic)" : "";
    RegisterPair(
        prefix + "posted_recvq_length",
        "Receives posted and not yet matched (the posted receive queue's "
        "length)" +
            kind + ".",
        MPI_T_PVAR_CLASS_LEVEL,
        [](const ContextCounters& c) { return c.posted.length.Read(); },
        Combine::kSum, traffic);
    RegisterPair(
        prefix + "unexpected_recvq_length",
        "Messages arrived before a matching receive and not yet received "
        "(the unexpected message queue's length)" +
            kind + ".",
        MPI_T_PVAR_CLASS_LEVEL,
        [](const ContextCounters& c) { return c.unexpected.length.Read(); },
        Combine::kSum, traffic);
    RegisterWatermarks(prefix + "posted_recvq_length_hwm", "posted receives",
                       /*posted=*/true, traffic);
    RegisterWatermarks(prefix + "unexpected_recvq_length_hwm",
                       "unexpected messages", /*posted=*/false, traffic);
  }
  RegisterPair(
      "posted_recvq_match_attempts",
      "Searches of the posted receive queue (one per arriving message).",
      MPI_T_PVAR_CLASS_COUNTER,
      [](const ContextCounters& c) { return c.posted.searches.Read(); },
      Combine::kSum);
  RegisterPair(
      "unexpected_recvq_match_attempts",
      "Searches of the unexpected message queue (one per posted receive "
      "and per probe).",
      MPI_T_PVAR_CLASS_COUNTER,
      [](const ContextCounters& c) { return c.unexpected.searches.Read(); },
      Combine::kSum);
  RegisterPair(
      "posted_recvq_elements_searched",
      "Posted receives inspected by searches of the posted receive queue.",
      MPI_T_PVAR_CLASS_COUNTER,
      [](const ContextCounters& c) { return c.posted.traversals.Read(); },
      Combine::kSum);
  RegisterPair(
      "unexpected_recvq_elements_searched",
      "Unexpected messages inspected by searches of the unexpected message "
      "queue.",
      MPI_T_PVAR_CLASS_COUNTER,
      [](const ContextCounters& c) { return c.unexpected.traversals.Read(); },
      Combine::kSum);
  RegisterTimers();
  RegisterCollectiveProfile();
  tool::PerformanceVariable promotions = Variable(
      "partner_promotions_process",
      "Senders the PNP structure promoted to partners with a queue of their "
      "own (engines colpnp and ll+pnp; 0 for the others), over the process.",
      MPI_T_PVAR_CLASS_COUNTER);
  promotions.read = [](const void*, void* values) {
    *static_cast<uint64_t*>(values) = OverEngines(
        Combine::kSum,
        [](const MatchEngine& engine) { return engine.partner_promotions(); });
  };
  tool::RegisterPerformanceVariable(std::move(promotions));
  p2p::RegisterPointToPointToolEvents();
}

}  // namespace minimpi
