// What the MPI_T bindings (tool.cc: initialization, enumerations, control
// and performance variables, categories; tool_events.cc: event sources and
// events) share: the one state every MPI_T call works on under its mutex,
// the entry every call that needs initialization makes (MINIMPI_TOOL_CALL),
// and how MPI_T hands strings and optional values back.
#ifndef MINIMPI_MPI_BINDINGS_TOOL_STATE_H_
#define MINIMPI_MPI_BINDINGS_TOOL_STATE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mpi/mpi.h"
#include "mpi/tool/events.h"
#include "mpi/tool/pvar_session.h"
#include "mpi/tool/registry.h"

namespace minimpi::mpit {

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
  std::set<tool::PvarSession*> sessions;
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

ToolState& State();

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
  ::minimpi::mpit::ToolCall call_state;                            \
  if (!call_state.initialized()) return MPI_T_ERR_NOT_INITIALIZED; \
  ::minimpi::mpit::ToolState& s = call_state.state();              \
  (void)s

// Copies `from` as MPI_T returns strings (15.3.3): with a null buffer or a
// zero length only the length needed (with the terminator) comes back.
void ReturnString(const std::string& from, char* to, int* length);

// An optional output: written where the tool passed a place for it.
template <typename T>
void Set(T* out, T value) {
  if (out != nullptr) *out = value;
}

// The library object behind a tool's obj_handle for a binding, or nullptr
// when the handle names none (MPI_T_ERR_INVALID_HANDLE).
const void* BoundObject(tool::Binding binding, const void* obj_handle);

// The live registration a handle names, or nullptr.
tool::EventRegistration* LookupRegistration(ToolState& s,
                                            MPI_T_event_registration handle);

}  // namespace minimpi::mpit

#endif  // MINIMPI_MPI_BINDINGS_TOOL_STATE_H_
