// The MPI_T calls (MPI-4.1 chapter 15) over the catalogue in mpi/tool:
// initialization, enumerations, control and performance variables,
// categories here; event sources and events in tool_events.cc.
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
#include "mpi/bindings/tool_state.h"
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

namespace minimpi::mpit {

ToolState& State() {
  static ToolState* state = new ToolState;
  return *state;
}

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

tool::EventRegistration* LookupRegistration(ToolState& s,
                                            MPI_T_event_registration handle) {
  auto* registration = reinterpret_cast<tool::EventRegistration*>(handle);
  return s.registrations.count(registration) ? registration : nullptr;
}

}  // namespace minimpi::mpit

namespace minimpi {
namespace {

using tool::PvarHandle;
using tool::PvarSession;

using mpit::BoundObject;
using mpit::ControlVariable;
using mpit::CvarHandle;
using mpit::EnumType;
using mpit::kStringCvarCount;
using mpit::LookupRegistration;
using mpit::ReturnString;
using mpit::Set;
using mpit::State;
using mpit::ToolState;

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

// The control variable a live handle names, about to be read or written
// through `buf`.
int LookupCvarForAccess(ToolState& s, MPI_T_cvar_handle handle, const void* buf,
                        const ControlVariable** cvar) {
  auto* found = reinterpret_cast<CvarHandle*>(handle);
  if (s.cvar_handles.count(found) == 0) return MPI_T_ERR_INVALID_HANDLE;
  if (buf == nullptr) return MPI_ERR_ARG;
  *cvar = &s.cvars[found->index];
  return MPI_SUCCESS;
}

const EnumType* LookupEnum(ToolState& s, MPI_T_enum handle) {
  for (const auto& [index, made] : s.enums) {
    if (reinterpret_cast<MPI_T_enum>(made.get()) == handle) return made.get();
  }
  return nullptr;
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

}  // namespace

}  // namespace minimpi

using minimpi::mpit::CvarHandle;
using minimpi::mpit::ToolState;
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
  const minimpi::ControlVariable* found;
  if (int error = minimpi::LookupCvarForAccess(s, handle, buf, &found)) {
    return error;
  }
  const minimpi::ControlVariable& cvar = *found;
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
  const minimpi::ControlVariable* found;
  if (int error = minimpi::LookupCvarForAccess(s, handle, buf, &found)) {
    return error;
  }
  const minimpi::ControlVariable& cvar = *found;
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

}  // extern "C"
