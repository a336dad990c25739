// The MPI_T calls (MPI-4.1 chapter 15) over the catalogue in mpi/tool.
//
// MPI_T calls return their error class and never call an error handler
// (15.3.2). They may run before MPI_Init and after MPI_Finalize, on any
// thread: one mutex serializes them (they are no data path). Every handle a
// tool passes is looked up among the live ones before it is used, so a
// freed, stale or garbage handle is MPI_T_ERR_INVALID_HANDLE, never a
// dereference.
//
// Control variables are the MINIMPI_* settings (runtime/settings), in
// DescribeSettings' order. A write before the runtime starts is kept as an
// override that MPI_Init reads; after, only a setting that registered a
// writer (tool::RegisterControlVariableWriter) accepts one.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/window_object.h"
#include "mpi/coll/algorithms.h"
#include "mpi/instance/choice_lists.h"
#include "mpi/instance/instance.h"
#include "mpi/mpi.h"
#include "mpi/tool/catalogue.h"
#include "mpi/tool/events.h"
#include "mpi/tool/pvar_session.h"
#include "mpi/tool/registry.h"
#include "runtime/settings.h"

namespace minimpi {
namespace {

using tool::PvarHandle;
using tool::PvarSession;

// Characters a string control variable reads into (its count).
constexpr int kStringCvarCount = 256;

// A control variable: one MINIMPI_* setting.
struct ControlVariable {
  std::string name;
  std::string description;
  std::string default_value;
  bool is_int = false;  // MPI_INT (integers, booleans), else MPI_CHAR
  int scope = MPI_T_SCOPE_LOCAL;
  int verbosity = MPI_T_VERBOSITY_TUNER_DETAIL;
};

struct CvarHandle {
  int index;
};

// An MPI_T_enum: a state variable's items.
struct EnumType {
  std::string name;
  std::vector<std::pair<int, std::string>> items;
};

// What every MPI_T call shares, under `mutex`.
struct ToolState {
  std::mutex mutex;
  int init_count = 0;
  std::vector<ControlVariable> cvars;
  std::set<CvarHandle*> cvar_handles;
  std::set<PvarSession*> sessions;
  std::map<tool::EventRegistration*, std::shared_ptr<tool::EventRegistration>>
      registrations;
  // One per state variable with items, made on first ask, never freed (an
  // enum handle stays valid for the life of the process).
  std::map<int, std::unique_ptr<EnumType>> enums;
  // Values written through MPI_T after the runtime read its settings (by a
  // setting's writer): what a read then answers.
  std::map<std::string, std::string> written;
  // Values written before the runtime started (kept as overrides for
  // MPI_Init), so a refused write can put the earlier one back.
  std::map<std::string, std::string> written_before_init;
  // The library's own variables' values.
  std::atomic<uint64_t> pvar_reads{0};
  std::atomic<uint64_t> sessions_live{0};
};

ToolState& State() {
  static ToolState* state = new ToolState;
  return *state;
}

// Settings every process must give the same value (they decide protocols
// both sides follow).
bool MustBeEqualEverywhere(const std::string& name) {
  for (const char* prefix :
       {"MINIMPI_TRANSPORT", "MINIMPI_NODE_SPLIT", "MINIMPI_EAGER_MAX",
        "MINIMPI_TCP_EAGER_MAX", "MINIMPI_RNDV_SPLIT_MIN", "MINIMPI_COLL_",
        "MINIMPI_PART_AGGR", "MINIMPI_PART_BACKEND", "MINIMPI_MATCH"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The settings a user reaches for first; the rest are tuning.
bool IsBasicSetting(const std::string& name) {
  for (const char* basic :
       {"MINIMPI_TRANSPORT", "MINIMPI_VERBOSE", "MINIMPI_NUM_VCIS",
        "MINIMPI_MATCH", "MINIMPI_MATCH_STATS", "MINIMPI_PART_AGGR",
        "MINIMPI_PART_STATS", "MINIMPI_WAIT_POLICY"}) {
    if (name == basic) return true;
  }
  return false;
}

bool IsIntegerText(const std::string& text) {
  int value;
  return absl::SimpleAtoi(text, &value);
}

// The settings as they stand: those MPI_Init read while the runtime runs,
// else what it would read now (environment and overrides).
std::vector<runtime::SettingInfo> CurrentSettings() {
  if (Instance::state() == LibraryState::kInitialized) {
    return runtime::DescribeSettings(Instance::Get().settings(),
                                     LibraryChoiceLists());
  }
  absl::StatusOr<runtime::Settings> settings =
      runtime::Settings::FromEnvironment(LibraryChoiceLists());
  return runtime::DescribeSettings(
      settings.ok() ? *settings : runtime::Settings(), LibraryChoiceLists());
}

void BuildControlVariables(ToolState& s) {
  if (!s.cvars.empty()) return;
  for (const runtime::SettingInfo& info :
       runtime::DescribeSettings(runtime::Settings(), LibraryChoiceLists())) {
    ControlVariable& cvar = s.cvars.emplace_back();
    cvar.name = info.name;
    cvar.description = info.description;
    cvar.default_value = info.default_value;
    cvar.is_int = IsIntegerText(info.default_value);
    cvar.scope = MustBeEqualEverywhere(info.name) ? MPI_T_SCOPE_ALL_EQ
                                                  : MPI_T_SCOPE_LOCAL;
    cvar.verbosity = IsBasicSetting(info.name) ? MPI_T_VERBOSITY_USER_BASIC
                                               : MPI_T_VERBOSITY_TUNER_DETAIL;
    tool::AddControlVariableToCategory("settings",
                                       static_cast<int>(s.cvars.size()) - 1);
  }
}

// The library's own two variables: how many pvar sessions are open and how
// many pvar reads tools made, process-wide.
void RegisterInterfaceVariables() {
  tool::PerformanceVariable sessions;
  sessions.name = "mpit_sessions_live";
  sessions.description =
      "MPI_T performance-variable sessions this process has open";
  sessions.category = "mpit";
  sessions.var_class = MPI_T_PVAR_CLASS_LEVEL;
  sessions.read = [](const void*, void* values) {
    static_cast<uint64_t*>(values)[0] =
        State().sessions_live.load(std::memory_order_relaxed);
  };
  tool::RegisterPerformanceVariable(std::move(sessions));
  tool::PerformanceVariable reads;
  reads.name = "mpit_pvar_reads";
  reads.description =
      "MPI_T_pvar_read and MPI_T_pvar_readreset calls that succeeded in this "
      "process (the one being made not counted)";
  reads.category = "mpit";
  reads.var_class = MPI_T_PVAR_CLASS_COUNTER;
  reads.continuous = false;
  reads.readonly = false;
  reads.atomic = true;
  reads.read = [](const void*, void* values) {
    static_cast<uint64_t*>(values)[0] =
        State().pvar_reads.load(std::memory_order_relaxed);
  };
  tool::RegisterPerformanceVariable(std::move(reads));
}

// The settings that may change while running. MINIMPI_COLL_<NAME>: every
// collective call reads its algorithm choice (coll::ChosenAlgorithm), so
// the next call runs the algorithm written. MINIMPI_MATCH_STATS: whether
// MPI_Finalize prints the matching statistics. MINIMPI_MPIT_EVENT_QUEUE:
// the bound on queued events. The other settings choose things made once
// at MPI_Init (transports, VCIs, engines, tables) and stay fixed.
void RegisterSettingWriters() {
  for (const char* collective : runtime::kCollectiveNames) {
    tool::ControlVariableWriter writer;
    writer.name =
        absl::AsciiStrToUpper(absl::StrCat("MINIMPI_COLL_", collective));
    writer.write = [collective](const std::string& value) {
      return coll::ConfigureAlgorithms({{collective, value}}).ok();
    };
    tool::RegisterControlVariableWriter(std::move(writer));
  }
  // MPI_Finalize reads it to print the matching statistics.
  tool::ControlVariableWriter match_stats;
  match_stats.name = "MINIMPI_MATCH_STATS";
  match_stats.write = [](const std::string& value) {
    if (value != "0" && value != "1") return false;
    if (Instance::state() == LibraryState::kInitialized) {
      Instance::Get().set_match_stats(value == "1");
    }
    return true;
  };
  tool::RegisterControlVariableWriter(std::move(match_stats));
  // Each queued event reads the bound, so a new one holds for the next.
  tool::ControlVariableWriter queue;
  queue.name = "MINIMPI_MPIT_EVENT_QUEUE";
  queue.write = [](const std::string& value) {
    int limit = 0;
    if (!absl::SimpleAtoi(value, &limit) || limit < 1 || limit > (1 << 24)) {
      return false;
    }
    tool::SetEventQueueLimit(static_cast<size_t>(limit));
    return true;
  };
  tool::RegisterControlVariableWriter(std::move(queue));
}

void RegisterEverything() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterInterfaceVariables();
    RegisterSettingWriters();
    tool::RegisterAllToolVariables();
  });
}

// Copies `from` as MPI_T returns strings (15.3.3): with a null buffer or a
// zero length only the length needed (with the terminator) comes back.
void ReturnString(const std::string& from, char* to, int* length) {
  if (length == nullptr) return;
  if (to == nullptr || *length <= 0) {
    *length = static_cast<int>(from.size()) + 1;
    return;
  }
  const size_t n = std::min(from.size(), static_cast<size_t>(*length - 1));
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
  *length = static_cast<int>(n) + 1;
}

template <typename T>
void Set(T* out, T value) {
  if (out != nullptr) *out = value;
}

MPI_Datatype TypeOf(tool::ValueType type) {
  switch (type) {
    case tool::ValueType::kDouble:
      return MPI_DOUBLE;
    case tool::ValueType::kInt:
      return MPI_INT;
    case tool::ValueType::kUnsignedLongLong:
      break;
  }
  return MPI_UNSIGNED_LONG_LONG;
}

// The library object behind a tool's obj_handle for a binding, or nullptr
// when the handle names none (MPI_T_ERR_INVALID_HANDLE).
const void* BoundObject(tool::Binding binding, const void* obj_handle) {
  switch (binding) {
    case tool::Binding::kNoObject:
      return nullptr;
    case tool::Binding::kComm:
      return ToCommunicator(*static_cast<const MPI_Comm*>(obj_handle));
    case tool::Binding::kRequest:
      return ToRequest(*static_cast<const MPI_Request*>(obj_handle));
    case tool::Binding::kWin: {
      WindowObject* window =
          LookupWindow(*static_cast<const MPI_Win*>(obj_handle));
      return window == nullptr ? nullptr : window->window;
    }
  }
  return nullptr;
}

MPI_T_enum EnumOf(ToolState& s, int pvar_index,
                  const tool::PerformanceVariable& variable) {
  if (variable.enum_items.empty()) return MPI_T_ENUM_NULL;
  std::unique_ptr<EnumType>& made = s.enums[pvar_index];
  if (made == nullptr) {
    made = std::make_unique<EnumType>(
        EnumType{variable.enum_name, variable.enum_items});
  }
  return reinterpret_cast<MPI_T_enum>(made.get());
}

const EnumType* LookupEnum(ToolState& s, MPI_T_enum handle) {
  for (const auto& [index, made] : s.enums) {
    if (reinterpret_cast<MPI_T_enum>(made.get()) == handle) return made.get();
  }
  return nullptr;
}

PvarSession* LookupSession(ToolState& s, MPI_T_pvar_session handle) {
  auto* session = reinterpret_cast<PvarSession*>(handle);
  return s.sessions.count(session) ? session : nullptr;
}

tool::EventRegistration* LookupRegistration(ToolState& s,
                                            MPI_T_event_registration handle) {
  auto* registration = reinterpret_cast<tool::EventRegistration*>(handle);
  return s.registrations.count(registration) ? registration : nullptr;
}

// Frees every session, handle and registration: the last MPI_T_finalize
// makes them all invalid.
void ReleaseAll(ToolState& s) {
  for (PvarSession* session : s.sessions) delete session;
  s.sessions.clear();
  s.sessions_live.store(0, std::memory_order_relaxed);
  for (CvarHandle* handle : s.cvar_handles) delete handle;
  s.cvar_handles.clear();
  for (auto& [raw, registration] : s.registrations) {
    tool::RemoveEventRegistration(registration);
  }
  s.registrations.clear();
}

// Entry of every MPI_T call that needs initialization: delivers queued
// events (outside the lock, so their callbacks may call MPI_T), then
// takes the lock.
class ToolCall {
 public:
  ToolCall() : state_(State()) {
    tool::DeliverPendingEvents();
    lock_ = std::unique_lock<std::mutex>(state_.mutex);
  }
  bool initialized() const { return state_.init_count > 0; }
  ToolState& state() { return state_; }

 private:
  ToolState& state_;
  std::unique_lock<std::mutex> lock_;
};

#define MINIMPI_TOOL_CALL(call_state)                              \
  ::minimpi::ToolCall call_state;                                  \
  if (!call_state.initialized()) return MPI_T_ERR_NOT_INITIALIZED; \
  ::minimpi::ToolState& s = call_state.state();                    \
  (void)s

// False when the object a handle is bound to has been freed since (its
// MPI handle no longer names it): the module's read would touch freed
// memory.
bool BoundObjectAlive(const PvarHandle& handle) {
  const tool::Binding binding = handle.variable().binding;
  if (binding == tool::Binding::kNoObject) return true;
  void* user_handle = handle.user_handle();
  return BoundObject(binding, &user_handle) == handle.object();
}

int StartStopOrReset(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                     int (PvarHandle::*operation)()) {
  MINIMPI_TOOL_CALL(call);
  PvarSession* owner = LookupSession(s, session);
  if (owner == nullptr) return MPI_T_ERR_INVALID_SESSION;
  if (handle == MPI_T_PVAR_ALL_HANDLES) {
    // Applies to every handle it may apply to; the others are skipped
    // (15.3.7: continuous or read-only ones are ignored), and so are
    // handles whose object is gone.
    for (const auto& each : owner->handles()) {
      if (BoundObjectAlive(*each)) (each.get()->*operation)();
    }
    return MPI_SUCCESS;
  }
  if (!owner->Owns(handle)) return MPI_T_ERR_INVALID_HANDLE;
  auto* found = reinterpret_cast<PvarHandle*>(handle);
  if (!BoundObjectAlive(*found)) return MPI_T_ERR_INVALID_HANDLE;
  return (found->*operation)();
}

// The owning session's handle, or the error class for a bad pair
// (MPI_T_PVAR_ALL_HANDLES included: read and write take one handle).
int LookupPvarHandle(ToolState& s, MPI_T_pvar_session session,
                     MPI_T_pvar_handle handle, PvarHandle** found) {
  PvarSession* owner = LookupSession(s, session);
  if (owner == nullptr) return MPI_T_ERR_INVALID_SESSION;
  if (!owner->Owns(handle)) return MPI_T_ERR_INVALID_HANDLE;
  *found = reinterpret_cast<PvarHandle*>(handle);
  return MPI_SUCCESS;
}

// The same for a handle about to be read or written: its object must live.
int LookupLivePvarHandle(ToolState& s, MPI_T_pvar_session session,
                         MPI_T_pvar_handle handle, PvarHandle** found) {
  const int error = LookupPvarHandle(s, session, handle, found);
  if (error != MPI_SUCCESS) return error;
  return BoundObjectAlive(**found) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

// The category at `index`, or false (MPI_T_ERR_INVALID_INDEX).
bool CategoryAt(int index, tool::Category* category) {
  if (index < 0 || index >= tool::NumCategories()) return false;
  *category = tool::CategoryAt(index);
  return true;
}

int ReturnIndices(int cat_index, int len, int indices[],
                  std::vector<int> tool::Category::*list) {
  MINIMPI_TOOL_CALL(call);
  tool::Category category;
  if (!minimpi::CategoryAt(cat_index, &category))
    return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && indices == nullptr)) return MPI_ERR_ARG;
  const std::vector<int>& members = category.*list;
  const int n = std::min(len, static_cast<int>(members.size()));
  std::copy(members.begin(), members.begin() + n, indices);
  return MPI_SUCCESS;
}

}  // namespace

}  // namespace minimpi

using minimpi::CvarHandle;
using minimpi::ToolState;
using minimpi::tool::PvarHandle;
using minimpi::tool::PvarSession;

extern "C" {

// ---- Initialization (15.3.4) ----

int PMPI_T_init_thread(int required, int* provided) {
  minimpi::RegisterEverything();
  ToolState& s = minimpi::State();
  std::lock_guard<std::mutex> lock(s.mutex);
  minimpi::BuildControlVariables(s);
  if (s.init_count++ == 0 && s.written.count("MINIMPI_MPIT_EVENT_QUEUE") == 0) {
    // The queue bound as the environment (or a write before MPI_Init) says.
    for (const auto& info : minimpi::CurrentSettings()) {
      int limit = 0;
      if (info.name == "MINIMPI_MPIT_EVENT_QUEUE" &&
          absl::SimpleAtoi(info.value, &limit)) {
        minimpi::tool::SetEventQueueLimit(static_cast<size_t>(limit));
      }
    }
  }
  if (provided != nullptr) {
    // MPI_T calls are serialized inside: any level the program asks for.
    *provided = required >= MPI_THREAD_MULTIPLE     ? MPI_THREAD_MULTIPLE
                : required >= MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED
                : required >= MPI_THREAD_FUNNELED   ? MPI_THREAD_FUNNELED
                                                    : MPI_THREAD_SINGLE;
  }
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_init_thread)

int PMPI_T_finalize(void) {
  MINIMPI_TOOL_CALL(call);
  if (--s.init_count == 0) minimpi::ReleaseAll(s);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_finalize)

// ---- Enumerations (15.3.5) ----

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name,
                         int* name_len) {
  MINIMPI_TOOL_CALL(call);
  const minimpi::EnumType* found = minimpi::LookupEnum(s, enumtype);
  if (found == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (num == nullptr) return MPI_ERR_ARG;
  *num = static_cast<int>(found->items.size());
  minimpi::ReturnString(found->name, name, name_len);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_enum_get_info)

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int* value, char* name,
                         int* name_len) {
  MINIMPI_TOOL_CALL(call);
  const minimpi::EnumType* found = minimpi::LookupEnum(s, enumtype);
  if (found == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (index < 0 || index >= static_cast<int>(found->items.size())) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  if (value == nullptr) return MPI_ERR_ARG;
  *value = found->items[index].first;
  minimpi::ReturnString(found->items[index].second, name, name_len);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_enum_get_item)

// ---- Control variables (15.3.6) ----

int PMPI_T_cvar_get_num(int* num_cvar) {
  MINIMPI_TOOL_CALL(call);
  if (num_cvar == nullptr) return MPI_ERR_ARG;
  *num_cvar = static_cast<int>(s.cvars.size());
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_cvar_get_num)

int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len,
                         int* verbosity, MPI_Datatype* datatype,
                         MPI_T_enum* enumtype, char* desc, int* desc_len,
                         int* bind, int* scope) {
  MINIMPI_TOOL_CALL(call);
  if (cvar_index < 0 || cvar_index >= static_cast<int>(s.cvars.size())) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  const minimpi::ControlVariable& cvar = s.cvars[cvar_index];
  minimpi::ReturnString(cvar.name, name, name_len);
  minimpi::Set(verbosity, cvar.verbosity);
  minimpi::Set(datatype, cvar.is_int ? MPI_INT : MPI_CHAR);
  minimpi::Set(enumtype, MPI_T_ENUM_NULL);
  std::string described = cvar.description;
  const bool writable_running =
      minimpi::tool::FindControlVariableWriter(cvar.name) != nullptr;
  absl::StrAppend(&described, " (default ", cvar.default_value,
                  writable_running ? "; may be changed while running)"
                                   : "; set before MPI_Init)");
  minimpi::ReturnString(described, desc, desc_len);
  minimpi::Set(bind, static_cast<int>(MPI_T_BIND_NO_OBJECT));
  minimpi::Set(scope, cvar.scope);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_cvar_get_info)

int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
  MINIMPI_TOOL_CALL(call);
  if (name == nullptr || cvar_index == nullptr) return MPI_ERR_ARG;
  for (size_t i = 0; i < s.cvars.size(); ++i) {
    if (s.cvars[i].name == name) {
      *cvar_index = static_cast<int>(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
MINIMPI_EXPORT(T_cvar_get_index)

int PMPI_T_cvar_handle_alloc(int cvar_index, void* /*obj_handle*/,
                             MPI_T_cvar_handle* handle, int* count) {
  MINIMPI_TOOL_CALL(call);
  if (cvar_index < 0 || cvar_index >= static_cast<int>(s.cvars.size())) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  if (handle == nullptr || count == nullptr) return MPI_ERR_ARG;
  auto* made = new CvarHandle{cvar_index};
  s.cvar_handles.insert(made);
  *handle = reinterpret_cast<MPI_T_cvar_handle>(made);
  *count = s.cvars[cvar_index].is_int ? 1 : minimpi::kStringCvarCount;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_cvar_handle_alloc)

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  MINIMPI_TOOL_CALL(call);
  if (handle == nullptr) return MPI_ERR_ARG;
  auto* found = reinterpret_cast<CvarHandle*>(*handle);
  if (s.cvar_handles.erase(found) == 0) return MPI_T_ERR_INVALID_HANDLE;
  delete found;
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_cvar_handle_free)

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  MINIMPI_TOOL_CALL(call);
  auto* found = reinterpret_cast<CvarHandle*>(handle);
  if (s.cvar_handles.count(found) == 0) return MPI_T_ERR_INVALID_HANDLE;
  if (buf == nullptr) return MPI_ERR_ARG;
  const minimpi::ControlVariable& cvar = s.cvars[found->index];
  std::string value;
  if (auto it = s.written.find(cvar.name); it != s.written.end()) {
    value = it->second;
  } else {
    for (const auto& info : minimpi::CurrentSettings()) {
      if (info.name == cvar.name) value = info.value;
    }
  }
  if (cvar.is_int) {
    int number = 0;
    if (!absl::SimpleAtoi(value, &number)) number = 0;
    *static_cast<int*>(buf) = number;
  } else {
    char* text = static_cast<char*>(buf);
    const size_t n = std::min(
        value.size(), static_cast<size_t>(minimpi::kStringCvarCount - 1));
    std::memcpy(text, value.data(), n);
    text[n] = '\0';
  }
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_cvar_read)

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
  MINIMPI_TOOL_CALL(call);
  auto* found = reinterpret_cast<CvarHandle*>(handle);
  if (s.cvar_handles.count(found) == 0) return MPI_T_ERR_INVALID_HANDLE;
  if (buf == nullptr) return MPI_ERR_ARG;
  const minimpi::ControlVariable& cvar = s.cvars[found->index];
  std::string value;
  if (cvar.is_int) {
    value = absl::StrCat(*static_cast<const int*>(buf));
  } else {
    const char* text = static_cast<const char*>(buf);
    value.assign(text, strnlen(text, minimpi::kStringCvarCount - 1));
  }
  if (minimpi::Instance::state() == minimpi::LibraryState::kNotInitialized &&
      minimpi::Instance::world_state() ==
          minimpi::LibraryState::kNotInitialized) {
    // Before MPI_Init: kept for it, checked now as MPI_Init will check it.
    minimpi::runtime::SetSettingOverride(cvar.name, value);
    if (!minimpi::runtime::Settings::FromEnvironment(
             minimpi::LibraryChoiceLists())
             .ok()) {
      // Refused: the earlier write (or the environment) stands.
      auto earlier = s.written_before_init.find(cvar.name);
      if (earlier != s.written_before_init.end()) {
        minimpi::runtime::SetSettingOverride(cvar.name, earlier->second);
      } else {
        minimpi::runtime::ClearSettingOverride(cvar.name);
      }
      return MPI_ERR_ARG;
    }
    s.written_before_init[cvar.name] = value;
    // A setting that also changes while running takes the value now.
    if (const minimpi::tool::ControlVariableWriter* writer =
            minimpi::tool::FindControlVariableWriter(cvar.name)) {
      writer->write(value);
    }
    return MPI_SUCCESS;
  }
  const minimpi::tool::ControlVariableWriter* writer =
      minimpi::tool::FindControlVariableWriter(cvar.name);
  if (writer == nullptr) return MPI_T_ERR_CVAR_SET_NOT_NOW;
  if (!writer->write(value)) return MPI_ERR_ARG;
  s.written[cvar.name] = value;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_cvar_write)

// ---- Performance variables (15.3.7) ----

int PMPI_T_pvar_get_num(int* num_pvar) {
  MINIMPI_TOOL_CALL(call);
  if (num_pvar == nullptr) return MPI_ERR_ARG;
  *num_pvar = minimpi::tool::NumPerformanceVariables();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_get_num)

int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len,
                         int* verbosity, int* var_class, MPI_Datatype* datatype,
                         MPI_T_enum* enumtype, char* desc, int* desc_len,
                         int* bind, int* readonly, int* continuous,
                         int* atomic) {
  MINIMPI_TOOL_CALL(call);
  if (pvar_index < 0 ||
      pvar_index >= minimpi::tool::NumPerformanceVariables()) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  const minimpi::tool::PerformanceVariable& v =
      minimpi::tool::PerformanceVariableAt(pvar_index);
  minimpi::ReturnString(v.name, name, name_len);
  minimpi::Set(verbosity, v.verbosity);
  minimpi::Set(var_class, v.var_class);
  minimpi::Set(datatype, minimpi::TypeOf(v.type));
  minimpi::Set(enumtype, minimpi::EnumOf(s, pvar_index, v));
  minimpi::ReturnString(v.description, desc, desc_len);
  minimpi::Set(bind, static_cast<int>(v.binding));
  minimpi::Set(readonly, v.readonly ? 1 : 0);
  minimpi::Set(continuous, v.continuous ? 1 : 0);
  minimpi::Set(atomic, v.atomic ? 1 : 0);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_get_info)

int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  MINIMPI_TOOL_CALL(call);
  if (name == nullptr || pvar_index == nullptr) return MPI_ERR_ARG;
  const int found = minimpi::tool::FindPerformanceVariable(name, var_class);
  if (found < 0) return MPI_T_ERR_INVALID_NAME;
  *pvar_index = found;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_get_index)

int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  MINIMPI_TOOL_CALL(call);
  if (session == nullptr) return MPI_ERR_ARG;
  auto* made = new PvarSession;
  s.sessions.insert(made);
  s.sessions_live.store(s.sessions.size(), std::memory_order_relaxed);
  *session = reinterpret_cast<MPI_T_pvar_session>(made);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_session_create)

int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  MINIMPI_TOOL_CALL(call);
  if (session == nullptr) return MPI_ERR_ARG;
  PvarSession* found = minimpi::LookupSession(s, *session);
  if (found == nullptr) return MPI_T_ERR_INVALID_SESSION;
  s.sessions.erase(found);
  s.sessions_live.store(s.sessions.size(), std::memory_order_relaxed);
  delete found;
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_session_free)

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index,
                             void* obj_handle, MPI_T_pvar_handle* handle,
                             int* count) {
  MINIMPI_TOOL_CALL(call);
  PvarSession* owner = minimpi::LookupSession(s, session);
  if (owner == nullptr) return MPI_T_ERR_INVALID_SESSION;
  if (pvar_index < 0 ||
      pvar_index >= minimpi::tool::NumPerformanceVariables()) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  if (handle == nullptr || count == nullptr) return MPI_ERR_ARG;
  const minimpi::tool::PerformanceVariable& v =
      minimpi::tool::PerformanceVariableAt(pvar_index);
  const void* object = nullptr;
  if (v.binding != minimpi::tool::Binding::kNoObject) {
    if (obj_handle == nullptr) return MPI_ERR_ARG;
    object = minimpi::BoundObject(v.binding, obj_handle);
    if (object == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  }
  PvarHandle* made = owner->AddHandle(pvar_index, &v, object);
  if (made == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (object != nullptr)
    made->set_user_handle(*static_cast<void**>(obj_handle));
  *handle = reinterpret_cast<MPI_T_pvar_handle>(made);
  *count = made->count();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_handle_alloc)

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session,
                            MPI_T_pvar_handle* handle) {
  MINIMPI_TOOL_CALL(call);
  if (handle == nullptr) return MPI_ERR_ARG;
  PvarHandle* found = nullptr;
  const int error = minimpi::LookupPvarHandle(s, session, *handle, &found);
  if (error != MPI_SUCCESS) return error;
  minimpi::LookupSession(s, session)->FreeHandle(found);
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_pvar_handle_free)

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return minimpi::StartStopOrReset(session, handle, &PvarHandle::Start);
}
MINIMPI_EXPORT(T_pvar_start)

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return minimpi::StartStopOrReset(session, handle, &PvarHandle::Stop);
}
MINIMPI_EXPORT(T_pvar_stop)

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return minimpi::StartStopOrReset(session, handle, &PvarHandle::Reset);
}
MINIMPI_EXPORT(T_pvar_reset)

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                     void* buf) {
  MINIMPI_TOOL_CALL(call);
  PvarHandle* found = nullptr;
  const int error = minimpi::LookupLivePvarHandle(s, session, handle, &found);
  if (error != MPI_SUCCESS) return error;
  if (buf == nullptr && found->count() > 0) return MPI_ERR_ARG;
  const int result = found->Read(buf);
  if (result == MPI_SUCCESS) s.pvar_reads.fetch_add(1);
  return result;
}
MINIMPI_EXPORT(T_pvar_read)

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                      const void* buf) {
  MINIMPI_TOOL_CALL(call);
  PvarHandle* found = nullptr;
  const int error = minimpi::LookupLivePvarHandle(s, session, handle, &found);
  if (error != MPI_SUCCESS) return error;
  if (buf == nullptr && found->count() > 0) return MPI_ERR_ARG;
  return found->Write(buf);
}
MINIMPI_EXPORT(T_pvar_write)

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                          void* buf) {
  MINIMPI_TOOL_CALL(call);
  PvarHandle* found = nullptr;
  const int error = minimpi::LookupLivePvarHandle(s, session, handle, &found);
  if (error != MPI_SUCCESS) return error;
  if (buf == nullptr && found->count() > 0) return MPI_ERR_ARG;
  const int result = found->ReadReset(buf);
  if (result == MPI_SUCCESS) s.pvar_reads.fetch_add(1);
  return result;
}
MINIMPI_EXPORT(T_pvar_readreset)

// ---- Categories (15.3.9) ----

int PMPI_T_category_get_num(int* num_cat) {
  MINIMPI_TOOL_CALL(call);
  if (num_cat == nullptr) return MPI_ERR_ARG;
  *num_cat = minimpi::tool::NumCategories();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_category_get_num)

int PMPI_T_category_get_info(int cat_index, char* name, int* name_len,
                             char* desc, int* desc_len, int* num_cvars,
                             int* num_pvars, int* num_categories) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::Category category;
  if (!minimpi::CategoryAt(cat_index, &category))
    return MPI_T_ERR_INVALID_INDEX;
  minimpi::ReturnString(category.name, name, name_len);
  minimpi::ReturnString(category.description, desc, desc_len);
  minimpi::Set(num_cvars, static_cast<int>(category.control_variables.size()));
  minimpi::Set(num_pvars,
               static_cast<int>(category.performance_variables.size()));
  minimpi::Set(num_categories, 0);  // categories hold no categories
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_category_get_info)

int PMPI_T_category_get_num_events(int cat_index, int* num_events) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::Category category;
  if (!minimpi::CategoryAt(cat_index, &category))
    return MPI_T_ERR_INVALID_INDEX;
  if (num_events == nullptr) return MPI_ERR_ARG;
  *num_events = static_cast<int>(category.events.size());
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_category_get_num_events)

int PMPI_T_category_get_index(const char* name, int* cat_index) {
  MINIMPI_TOOL_CALL(call);
  if (name == nullptr || cat_index == nullptr) return MPI_ERR_ARG;
  const int found = minimpi::tool::FindCategory(name);
  if (found < 0) return MPI_T_ERR_INVALID_NAME;
  *cat_index = found;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_category_get_index)

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  return minimpi::ReturnIndices(cat_index, len, indices,
                                &minimpi::tool::Category::control_variables);
}
MINIMPI_EXPORT(T_category_get_cvars)

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  return minimpi::ReturnIndices(
      cat_index, len, indices, &minimpi::tool::Category::performance_variables);
}
MINIMPI_EXPORT(T_category_get_pvars)

int PMPI_T_category_get_events(int cat_index, int len, int indices[]) {
  return minimpi::ReturnIndices(cat_index, len, indices,
                                &minimpi::tool::Category::events);
}
MINIMPI_EXPORT(T_category_get_events)

int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::Category category;
  if (!minimpi::CategoryAt(cat_index, &category))
    return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && indices == nullptr)) return MPI_ERR_ARG;
  return MPI_SUCCESS;  // no subcategories
}
MINIMPI_EXPORT(T_category_get_categories)

int PMPI_T_category_changed(int* update_number) {
  MINIMPI_TOOL_CALL(call);
  if (update_number == nullptr) return MPI_ERR_ARG;
  *update_number = minimpi::tool::CategoryStamp();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_category_changed)

// ---- Event sources (15.3.8): one, the steady clock ----

int PMPI_T_source_get_num(int* num_sources) {
  MINIMPI_TOOL_CALL(call);
  if (num_sources == nullptr) return MPI_ERR_ARG;
  *num_sources = 1;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_source_get_num)

int PMPI_T_source_get_info(int source_index, char* name, int* name_len,
                           char* desc, int* desc_len,
                           MPI_T_source_order* ordering,
                           MPI_Count* ticks_per_second, MPI_Count* max_ticks,
                           MPI_Info* info) {
  MINIMPI_TOOL_CALL(call);
  if (source_index != 0) return MPI_T_ERR_INVALID_INDEX;
  minimpi::ReturnString("steady_clock", name, name_len);
  minimpi::ReturnString(
      "the process's monotonic clock in nanoseconds; every event of this "
      "process is stamped by it",
      desc, desc_len);
  minimpi::Set(ordering, MPI_T_SOURCE_ORDERED);
  minimpi::Set(ticks_per_second, static_cast<MPI_Count>(1000000000));
  minimpi::Set(max_ticks, static_cast<MPI_Count>(INT64_MAX));
  minimpi::Set(info, MPI_INFO_NULL);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_source_get_info)

int PMPI_T_source_get_timestamp(int source_index, MPI_Count* timestamp) {
  MINIMPI_TOOL_CALL(call);
  if (source_index != 0) return MPI_T_ERR_INVALID_INDEX;
  if (timestamp == nullptr) return MPI_ERR_ARG;
  *timestamp = minimpi::tool::EventTimestampNow();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_source_get_timestamp)

// ---- Events (15.3.8) ----

int PMPI_T_event_get_num(int* num_events) {
  MINIMPI_TOOL_CALL(call);
  if (num_events == nullptr) return MPI_ERR_ARG;
  *num_events = minimpi::tool::NumEventTypes();
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_get_num)

int PMPI_T_event_get_info(int event_index, char* name, int* name_len,
                          int* verbosity, MPI_Datatype array_of_datatypes[],
                          MPI_Aint array_of_displacements[], int* num_elements,
                          MPI_T_enum* enumtype, MPI_Info* info, char* desc,
                          int* desc_len, int* bind) {
  MINIMPI_TOOL_CALL(call);
  if (event_index < 0 || event_index >= minimpi::tool::NumEventTypes()) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  const minimpi::tool::EventType& type =
      minimpi::tool::EventTypeAt(event_index);
  minimpi::ReturnString(type.name, name, name_len);
  minimpi::Set(verbosity, type.verbosity);
  // num_elements is in (the arrays' room) and out (the element count).
  const int elements = static_cast<int>(type.elements.size());
  if (num_elements != nullptr) {
    const int room = std::min(*num_elements, elements);
    for (int i = 0; i < room; ++i) {
      if (array_of_datatypes != nullptr) {
        array_of_datatypes[i] = type.elements[i].type;
      }
      if (array_of_displacements != nullptr) {
        array_of_displacements[i] =
            static_cast<MPI_Aint>(type.elements[i].offset);
      }
    }
    *num_elements = elements;
  }
  minimpi::Set(enumtype, MPI_T_ENUM_NULL);
  minimpi::Set(info, MPI_INFO_NULL);
  std::string described = type.description;
  for (const auto& element : type.elements) {
    absl::StrAppend(&described, described == type.description ? " [" : ", ",
                    element.name);
  }
  if (!type.elements.empty()) described += "]";
  minimpi::ReturnString(described, desc, desc_len);
  minimpi::Set(bind, static_cast<int>(type.binding));
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_get_info)

int PMPI_T_event_get_index(const char* name, int* event_index) {
  MINIMPI_TOOL_CALL(call);
  if (name == nullptr || event_index == nullptr) return MPI_ERR_ARG;
  const int found = minimpi::tool::FindEventType(name);
  if (found < 0) return MPI_T_ERR_INVALID_NAME;
  *event_index = found;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_get_index)

int PMPI_T_event_handle_alloc(int event_index, void* obj_handle,
                              MPI_Info /*info*/,
                              MPI_T_event_registration* event_registration) {
  MINIMPI_TOOL_CALL(call);
  if (event_index < 0 || event_index >= minimpi::tool::NumEventTypes()) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  if (event_registration == nullptr) return MPI_ERR_ARG;
  const minimpi::tool::EventType& type =
      minimpi::tool::EventTypeAt(event_index);
  const void* object = nullptr;
  if (type.binding != minimpi::tool::Binding::kNoObject) {
    if (obj_handle == nullptr) return MPI_ERR_ARG;
    object = minimpi::BoundObject(type.binding, obj_handle);
    if (object == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  }
  auto made = minimpi::tool::AddEventRegistration(event_index, object);
  s.registrations[made.get()] = made;
  *event_registration = reinterpret_cast<MPI_T_event_registration>(made.get());
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_handle_alloc)

// No info keys are defined for registrations or callbacks: set_info
// accepts any info and get_info returns an empty one.
int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration,
                                 MPI_Info /*info*/) {
  MINIMPI_TOOL_CALL(call);
  if (minimpi::LookupRegistration(s, event_registration) == nullptr) {
    return MPI_T_ERR_INVALID_HANDLE;
  }
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_handle_set_info)

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration,
                                 MPI_Info* info_used) {
  MINIMPI_TOOL_CALL(call);
  if (minimpi::LookupRegistration(s, event_registration) == nullptr) {
    return MPI_T_ERR_INVALID_HANDLE;
  }
  if (info_used == nullptr) return MPI_ERR_ARG;
  return PMPI_Info_create(info_used);
}
MINIMPI_EXPORT(T_event_handle_get_info)

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info /*info*/,
                                   void* user_data,
                                   MPI_T_event_cb_function* event_cb_function) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::EventRegistration* found =
      minimpi::LookupRegistration(s, event_registration);
  if (found == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (!found->SetCallback(cb_safety, event_cb_function, user_data)) {
    return MPI_ERR_ARG;
  }
  minimpi::tool::UpdateEventListeners(found->event_index());
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_register_callback)

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety,
                                   MPI_Info /*info*/) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::EventRegistration* found =
      minimpi::LookupRegistration(s, event_registration);
  if (found == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (minimpi::tool::SafetySlot(cb_safety) < 0) return MPI_ERR_ARG;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_callback_set_info)

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety,
                                   MPI_Info* info_used) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::EventRegistration* found =
      minimpi::LookupRegistration(s, event_registration);
  if (found == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (minimpi::tool::SafetySlot(cb_safety) < 0 || info_used == nullptr) {
    return MPI_ERR_ARG;
  }
  return PMPI_Info_create(info_used);
}
MINIMPI_EXPORT(T_event_callback_get_info)

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration,
                             void* user_data,
                             MPI_T_event_free_cb_function* free_cb_function) {
  std::shared_ptr<minimpi::tool::EventRegistration> freed;
  {
    MINIMPI_TOOL_CALL(call);
    auto it = s.registrations.find(
        reinterpret_cast<minimpi::tool::EventRegistration*>(
            event_registration));
    if (it == s.registrations.end()) return MPI_T_ERR_INVALID_HANDLE;
    freed = std::move(it->second);
    s.registrations.erase(it);
  }
  // Outside the lock: the free callback (run when the last reference
  // goes, here unless a callback is running) may call MPI_T.
  freed->SetFreeCallback(free_cb_function, user_data);
  minimpi::tool::RemoveEventRegistration(freed);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_handle_free)

int PMPI_T_event_set_dropped_handler(
    MPI_T_event_registration event_registration,
    MPI_T_event_dropped_cb_function* dropped_cb_function) {
  MINIMPI_TOOL_CALL(call);
  minimpi::tool::EventRegistration* found =
      minimpi::LookupRegistration(s, event_registration);
  if (found == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  found->SetDroppedHandler(dropped_cb_function);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_set_dropped_handler)

// The instance calls are valid only inside the callback given the
// instance, on its thread: no lock (a thread-safe callback may run with a
// data path's locks held), only this thread's list of running instances.
int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index,
                      void* buffer) {
  const minimpi::tool::EventInstance* instance =
      minimpi::tool::CurrentEventInstance(event_instance);
  if (instance == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  const minimpi::tool::EventType& type =
      minimpi::tool::EventTypeAt(instance->event_index);
  if (element_index < 0 ||
      element_index >= static_cast<int>(type.elements.size())) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  if (buffer == nullptr) return MPI_ERR_ARG;
  const minimpi::tool::EventElement& element = type.elements[element_index];
  std::memcpy(buffer, instance->payload + element.offset,
              minimpi::tool::ElementSize(element.type));
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_read)

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void* buffer) {
  const minimpi::tool::EventInstance* instance =
      minimpi::tool::CurrentEventInstance(event_instance);
  if (instance == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (buffer == nullptr) return MPI_ERR_ARG;
  std::memcpy(buffer, instance->payload,
              minimpi::tool::EventTypeAt(instance->event_index).payload_bytes);
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_copy)

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance,
                               MPI_Count* event_timestamp) {
  const minimpi::tool::EventInstance* instance =
      minimpi::tool::CurrentEventInstance(event_instance);
  if (instance == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (event_timestamp == nullptr) return MPI_ERR_ARG;
  *event_timestamp = instance->timestamp_ns;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_get_timestamp)

int PMPI_T_event_get_source(MPI_T_event_instance event_instance,
                            int* source_index) {
  const minimpi::tool::EventInstance* instance =
      minimpi::tool::CurrentEventInstance(event_instance);
  if (instance == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  if (source_index == nullptr) return MPI_ERR_ARG;
  *source_index = 0;
  return MPI_SUCCESS;
}
MINIMPI_EXPORT(T_event_get_source)

}  // extern "C"
