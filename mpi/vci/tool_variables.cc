#include "mpi/vci/tool_variables.h"

#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mpi/vci/vci_set.h"
#include "runtime/settings.h"

namespace minimpi::vci {
namespace {

constexpr char kCategory[] = "vci";

std::atomic<VciSet*> shown{nullptr};
std::atomic<tool::Event*> slept_event{nullptr};
std::atomic<tool::Event*> woke_event{nullptr};

// Elements per variable: the VCIs this process may have, fixed at the
// first ask so that every handle and every read agree (a read never writes
// past the count its handle was given). Before MPI_Init (a tool may
// allocate handles right after MPI_T_init_thread) the settings the runtime
// will read say how many there will be; VCIs past the count are not shown.
int NumVciSlots() {
  static const int slots = [] {
    if (const VciSet* vcis = shown.load(std::memory_order_acquire)) {
      return vcis->capacity();
    }
    // Only the counts matter here: the choices' names are left unchecked
    // (mpi/vci cannot see their owners' tables; MPI_Init checks them).
    absl::StatusOr<runtime::Settings> settings =
        runtime::Settings::FromEnvironment(runtime::ChoiceLists());
    const runtime::Settings chosen =
        settings.ok() ? *settings : runtime::Settings();
    return chosen.num_vcis + chosen.endpoint_vcis;
  }();
  return slots;
}

// Registers one per-VCI variable whose element for VCI v is read(vcis, v);
// VCIs not made yet (and every VCI before MPI_Init) read 0.
void RegisterPerVci(std::string name, std::string description, int var_class,
                    std::function<uint64_t(const VciSet&, int)> read) {
  tool::PerformanceVariable variable;
  variable.name = std::move(name);
  variable.description = std::move(description);
  variable.category = kCategory;
  variable.var_class = var_class;
  variable.verbosity = MPI_T_VERBOSITY_USER_DETAIL;
  variable.binding = tool::Binding::kNoObject;
  variable.count_for = [](const void*) { return NumVciSlots(); };
  const bool seconds = var_class == MPI_T_PVAR_CLASS_TIMER;
  variable.type =
      seconds ? tool::ValueType::kDouble : tool::ValueType::kUnsignedLongLong;
  variable.read = [read = std::move(read), seconds](const void*, void* values) {
    const VciSet* vcis = shown.load(std::memory_order_acquire);
    const int count = NumVciSlots();
    for (int v = 0; v < count; ++v) {
      const uint64_t value =
          vcis != nullptr && vcis->Exists(v) ? read(*vcis, v) : 0;
      if (seconds) {
        static_cast<double*>(values)[v] = static_cast<double>(value) * 1e-9;
      } else {
        static_cast<uint64_t*>(values)[v] = value;
      }
    }
  };
  tool::RegisterPerformanceVariable(std::move(variable));
}

}  // namespace

void ShowToTools(VciSet* vcis) { shown.store(vcis, std::memory_order_release); }

void StopShowingToTools(VciSet* vcis) {
  shown.compare_exchange_strong(vcis, nullptr, std::memory_order_acq_rel);
}

void RaiseWaiterSlept(int vci) {
  const tool::Event* event = slept_event.load(std::memory_order_acquire);
  if (event == nullptr || !event->active()) [[likely]] {
    return;
  }
  const WaiterSleptPayload payload{vci};
  event->Raise(nullptr, &payload);
}

void RaiseWaiterWoke(int vci, int64_t slept_ns) {
  const tool::Event* event = woke_event.load(std::memory_order_acquire);
  if (event == nullptr || !event->active()) [[likely]] {
    return;
  }
  WaiterWokePayload payload;
  payload.vci = vci;
  payload.microseconds = static_cast<uint64_t>(slept_ns / 1000);
  event->Raise(nullptr, &payload);
}

void RegisterVciToolVariables() {
  for (int l = 0; l < net::kNumLinks; ++l) {
    const net::Link link = static_cast<net::Link>(l);
    const std::string name = net::LinkName(link);
    RegisterPerVci(absl::StrCat("vci_", name, "_messages_sent"),
                   absl::StrCat("Messages this process sent over ", name,
                                ", per VCI (every protocol's, collectives' and "
                                "one-sided notices included)."),
                   MPI_T_PVAR_CLASS_COUNTER, [link](const VciSet& vcis, int v) {
                     return vcis.outbox(v).counters().messages_sent.Read(link);
                   });
    RegisterPerVci(
        absl::StrCat("vci_", name, "_bytes_sent"),
        absl::StrCat("Payload bytes of the messages this process sent over ",
                     name,
                     ", per VCI (headers excluded; rendezvous, partitioned "
                     "and one-sided data moved by RDMA are not messages)."),
        MPI_T_PVAR_CLASS_COUNTER, [link](const VciSet& vcis, int v) {
          return vcis.outbox(v).counters().bytes_sent.Read(link);
        });
    RegisterPerVci(absl::StrCat("vci_", name, "_messages_received"),
                   absl::StrCat("Messages this process received over ", name,
                                ", per VCI."),
                   MPI_T_PVAR_CLASS_COUNTER, [link](const VciSet& vcis, int v) {
                     return vcis.counters(v).messages_received.Read(link);
                   });
  }
  RegisterPerVci(
      "vci_posts_refused",
      "Sends the transport refused for now (its ring or send queue to the "
      "peer was full), per VCI; a message may be refused again at each "
      "retry.",
      MPI_T_PVAR_CLASS_COUNTER, [](const VciSet& vcis, int v) {
        return vcis.outbox(v).counters().refused.Read();
      });
  RegisterPerVci(
      "vci_messages_queued",
      "Messages put in the VCI's outbox for its progress to send later "
      "(refused, or behind others waiting for the same peer), per VCI.",
      MPI_T_PVAR_CLASS_COUNTER, [](const VciSet& vcis, int v) {
        return vcis.outbox(v).counters().queued.Read();
      });
  RegisterPerVci(
      "vci_waiter_sleeps",
      "Times a thread waiting on the VCI slept on its doorbell (the wait "
      "policy's spin was over, or an MPI_Parrived loop on one partition "
      "napped), per VCI.",
      MPI_T_PVAR_CLASS_COUNTER,
      [](const VciSet& vcis, int v) { return vcis.counters(v).sleeps.Read(); });
  RegisterPerVci(
      "vci_waiter_wakeups",
      "Sleeps on the VCI's doorbell that ended before their time limit, "
      "per VCI: rung by a peer's message or a thread of this process (or "
      "cut into slices where a VCI has both node and network traffic).",
      MPI_T_PVAR_CLASS_COUNTER, [](const VciSet& vcis, int v) {
        return vcis.counters(v).wakeups.Read();
      });
  RegisterPerVci("vci_waiter_sleep_time",
                 "Seconds waiters spent asleep on the VCI's doorbell, per VCI.",
                 MPI_T_PVAR_CLASS_TIMER, [](const VciSet& vcis, int v) {
                   return vcis.counters(v).asleep_ns.Read();
                 });

  tool::EventType slept;
  slept.name = "waiter_slept";
  slept.description =
      "A thread waiting on a VCI goes to sleep on its doorbell (an "
      "MPI_Parrived loop on one partition's naps included). Payload: the "
      "VCI.";
  slept.category = kCategory;
  slept.verbosity = MPI_T_VERBOSITY_USER_DETAIL;
  slept.elements = {{MPI_INT, offsetof(WaiterSleptPayload, vci), "vci"}};
  slept.payload_bytes = sizeof(WaiterSleptPayload);
  slept_event.store(tool::RegisterEventType(std::move(slept)),
                    std::memory_order_release);

  tool::EventType woke;
  woke.name = "waiter_woke";
  woke.description =
      "A thread asleep on a VCI's doorbell woke (rung, or at its time "
      "limit). Payload: the VCI, and the microseconds it slept.";
  woke.category = kCategory;
  woke.verbosity = MPI_T_VERBOSITY_USER_DETAIL;
  woke.elements = {{MPI_INT, offsetof(WaiterWokePayload, vci), "vci"},
                   {MPI_UNSIGNED_LONG_LONG,
                    offsetof(WaiterWokePayload, microseconds), "microseconds"}};
  woke.payload_bytes = sizeof(WaiterWokePayload);
  woke_event.store(tool::RegisterEventType(std::move(woke)),
                   std::memory_order_release);
}

}  // namespace minimpi::vci
