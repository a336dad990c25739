#include "mpi/bindings/error_dispatch.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mpi/bindings/session_util.h"
#include "mpi/instance/instance.h"

namespace minimpi {

const char* ErrorClassDescription(int error_class) {
  switch (error_class) {
    case MPI_SUCCESS:
      return "MPI_SUCCESS: no error";
    case MPI_ERR_BUFFER:
      return "MPI_ERR_BUFFER: invalid buffer pointer";
    case MPI_ERR_COUNT:
      return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE:
      return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG:
      return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM:
      return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK:
      return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_REQUEST:
      return "MPI_ERR_REQUEST: invalid request";
    case MPI_ERR_ROOT:
      return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP:
      return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP:
      return "MPI_ERR_OP: invalid operation";
    case MPI_ERR_TOPOLOGY:
      return "MPI_ERR_TOPOLOGY: invalid topology";
    case MPI_ERR_DIMS:
      return "MPI_ERR_DIMS: invalid dimension argument";
    case MPI_ERR_ARG:
      return "MPI_ERR_ARG: invalid argument";
    case MPI_ERR_UNKNOWN:
      return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE:
      return "MPI_ERR_TRUNCATE: message truncated";
    case MPI_ERR_OTHER:
      return "MPI_ERR_OTHER: other error";
    case MPI_ERR_INTERN:
      return "MPI_ERR_INTERN: internal error";
    case MPI_ERR_PENDING:
      return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_IN_STATUS:
      return "MPI_ERR_IN_STATUS: error code in status";
    case MPI_ERR_ACCESS:
      return "MPI_ERR_ACCESS: permission denied";
    case MPI_ERR_AMODE:
      return "MPI_ERR_AMODE: invalid file access mode";
    case MPI_ERR_ASSERT:
      return "MPI_ERR_ASSERT: invalid assert argument";
    case MPI_ERR_BAD_FILE:
      return "MPI_ERR_BAD_FILE: invalid file name";
    case MPI_ERR_BASE:
      return "MPI_ERR_BASE: invalid base";
    case MPI_ERR_CONVERSION:
      return "MPI_ERR_CONVERSION: conversion error";
    case MPI_ERR_DISP:
      return "MPI_ERR_DISP: invalid displacement";
    case MPI_ERR_DUP_DATAREP:
      return "MPI_ERR_DUP_DATAREP: data representation already defined";
    case MPI_ERR_FILE_EXISTS:
      return "MPI_ERR_FILE_EXISTS: file exists";
    case MPI_ERR_FILE_IN_USE:
      return "MPI_ERR_FILE_IN_USE: file in use";
    case MPI_ERR_FILE:
      return "MPI_ERR_FILE: invalid file handle";
    case MPI_ERR_INFO_KEY:
      return "MPI_ERR_INFO_KEY: invalid info key";
    case MPI_ERR_INFO_NOKEY:
      return "MPI_ERR_INFO_NOKEY: info key not found";
    case MPI_ERR_INFO_VALUE:
      return "MPI_ERR_INFO_VALUE: invalid info value";
    case MPI_ERR_INFO:
      return "MPI_ERR_INFO: invalid info object";
    case MPI_ERR_IO:
      return "MPI_ERR_IO: I/O error";
    case MPI_ERR_KEYVAL:
      return "MPI_ERR_KEYVAL: invalid attribute key";
    case MPI_ERR_LOCKTYPE:
      return "MPI_ERR_LOCKTYPE: invalid lock type";
    case MPI_ERR_NAME:
      return "MPI_ERR_NAME: invalid service name";
    case MPI_ERR_NO_MEM:
      return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_NOT_SAME:
      return "MPI_ERR_NOT_SAME: arguments not identical";
    case MPI_ERR_NO_SPACE:
      return "MPI_ERR_NO_SPACE: not enough space";
    case MPI_ERR_NO_SUCH_FILE:
      return "MPI_ERR_NO_SUCH_FILE: no such file";
    case MPI_ERR_PORT:
      return "MPI_ERR_PORT: invalid port name";
    case MPI_ERR_PROC_ABORTED:
      return "MPI_ERR_PROC_ABORTED: process aborted";
    case MPI_ERR_QUOTA:
      return "MPI_ERR_QUOTA: quota exceeded";
    case MPI_ERR_READ_ONLY:
      return "MPI_ERR_READ_ONLY: read-only file";
    case MPI_ERR_RMA_ATTACH:
      return "MPI_ERR_RMA_ATTACH: cannot attach memory";
    case MPI_ERR_RMA_CONFLICT:
      return "MPI_ERR_RMA_CONFLICT: conflicting access";
    case MPI_ERR_RMA_RANGE:
      return "MPI_ERR_RMA_RANGE: target out of range";
    case MPI_ERR_RMA_SHARED:
      return "MPI_ERR_RMA_SHARED: memory not shareable";
    case MPI_ERR_RMA_SYNC:
      return "MPI_ERR_RMA_SYNC: wrong synchronization";
    case MPI_ERR_RMA_FLAVOR:
      return "MPI_ERR_RMA_FLAVOR: wrong window flavor";
    case MPI_ERR_SERVICE:
      return "MPI_ERR_SERVICE: invalid service";
    case MPI_ERR_SESSION:
      return "MPI_ERR_SESSION: invalid session";
    case MPI_ERR_SIZE:
      return "MPI_ERR_SIZE: invalid size";
    case MPI_ERR_SPAWN:
      return "MPI_ERR_SPAWN: spawn failed";
    case MPI_ERR_UNSUPPORTED_DATAREP:
      return "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation";
    case MPI_ERR_UNSUPPORTED_OPERATION:
      return "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation";
    case MPI_ERR_VALUE_TOO_LARGE:
      return "MPI_ERR_VALUE_TOO_LARGE: value too large";
    case MPI_ERR_WIN:
      return "MPI_ERR_WIN: invalid window";
    case MPI_ERR_ERRHANDLER:
      return "MPI_ERR_ERRHANDLER: invalid error handler";
    case MPI_ERR_ABI:
      return "MPI_ERR_ABI: not supported by this ABI";
    case MPI_ERR_LASTCODE:
      return "MPI_ERR_LASTCODE: last error code";
    default:
      return nullptr;
  }
}

namespace {

constexpr int kClassBits = 14;
constexpr int kClassMask = (1 << kClassBits) - 1;
constexpr int kMessageSlots = 4096;  // recent errors whose text is kept
// What a program adds lies above MPI_ERR_LASTCODE (MPI-4.1 9.5), in values
// with this bit set; bits 0..13 of them hold a class slot (a predefined
// class, or kFirstUserSlot and up for the program's own classes).
constexpr int kUserFlag = 1 << 30;
static_assert(kUserFlag > MPI_ERR_LASTCODE);
constexpr int kFirstUserSlot = MPI_ERR_ABI + 1;  // the last predefined
constexpr int kLastUserSlot = kClassMask - 1;    // kClassMask is LASTCODE's
static_assert(kClassMask == MPI_ERR_LASTCODE);
constexpr int kMaxUserCodes = (1 << 16) - 1;

// A program's class in its slot `slot`, and back.
constexpr int UserClassValue(int slot) { return kUserFlag | slot; }
// The class a user code's slot names.
constexpr int ClassOfSlot(int slot) {
  return slot < kFirstUserSlot ? slot : UserClassValue(slot);
}
constexpr int SlotOfClass(int error_class) { return error_class & kClassMask; }
constexpr int UserCodeValue(int number, int error_class) {
  return kUserFlag | (number << kClassBits) | SlotOfClass(error_class);
}

// Everything an error code can point to, under one mutex: errors are rare,
// and a program may raise them from many threads.
struct ErrorRegistry {
  std::mutex mutex;
  // The ring of recent messages; `codes[slot]` is the code that owns the
  // slot now, so a reused slot is not mistaken for an older code's.
  std::vector<std::string> messages;
  std::vector<int> codes;
  uint32_t next_slot = 0;
  // MPI_Add_error_class / _code / _string and their removal: which user
  // classes exist (by slot - kFirstUserSlot), the class of each user code
  // (by number - 1; -1 when removed), and the strings a program gave.
  std::vector<bool> user_classes;
  std::vector<int> user_code_classes;
  std::map<int, std::string> user_strings;  // class or code -> text
};

ErrorRegistry& Registry() {
  static ErrorRegistry* registry = new ErrorRegistry();  // never destroyed
  return *registry;
}

int MakeErrorCode(int error_class, const std::string& message) {
  ErrorRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (registry.messages.empty()) {
    registry.messages.resize(kMessageSlots);
    registry.codes.assign(kMessageSlots, 0);
  }
  const uint32_t slot = registry.next_slot;
  registry.next_slot = (slot + 1) % kMessageSlots;
  const int code = static_cast<int>(((slot + 1) << kClassBits) | error_class);
  registry.messages[slot] = message;
  registry.codes[slot] = code;
  return code;
}

bool IsUserClass(int error_class, const ErrorRegistry& registry) {
  if ((error_class & ~kClassMask) != kUserFlag) return false;
  const int index = SlotOfClass(error_class) - kFirstUserSlot;
  return index >= 0 && index < static_cast<int>(registry.user_classes.size()) &&
         registry.user_classes[index];
}

// The class of `code`, with the registry locked; -1 if it is none.
int ClassOfLocked(int code, const ErrorRegistry& registry) {
  if (code < 0) return -1;
  if (code & kUserFlag) {
    const int number = (code & ~kUserFlag) >> kClassBits;
    if (number == 0) return IsUserClass(code, registry) ? code : -1;
    if (number > static_cast<int>(registry.user_code_classes.size())) {
      return -1;
    }
    const int error_class = registry.user_code_classes[number - 1];
    return error_class >= 0 && ClassOfSlot(SlotOfClass(code)) == error_class
               ? error_class
               : -1;
  }
  const int error_class = code & kClassMask;
  return ErrorClassDescription(error_class) != nullptr ? error_class : -1;
}

}  // namespace

int ErrorClassOf(int code) {
  ErrorRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return ClassOfLocked(code, registry);
}

bool ErrorStringOf(int code, std::string* text) {
  ErrorRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  const int error_class = ClassOfLocked(code, registry);
  if (error_class < 0) return false;
  if (auto it = registry.user_strings.find(code);
      it != registry.user_strings.end()) {
    *text = it->second;
    return true;
  }
  // What the program added says "" until MPI_Add_error_string names that
  // very class or code (MPI-4.1 section 9.5): a code does not borrow its
  // class's string.
  if (code & kUserFlag) {
    text->clear();
    return true;
  }
  const std::string class_text = ErrorClassDescription(error_class);
  const int slot = (code >> kClassBits) - 1;
  if (slot >= 0 && slot < kMessageSlots && !registry.codes.empty() &&
      registry.codes[slot] == code) {
    *text = absl::StrCat(class_text, ": ", registry.messages[slot]);
  } else {
    *text = class_text;
  }
  return true;
}

int AddErrorClass() {
  ErrorRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto& classes = registry.user_classes;
  size_t index = 0;
  while (index < classes.size() && classes[index]) ++index;
  if (kFirstUserSlot + static_cast<int>(index) > kLastUserSlot) return -1;
  if (index == classes.size()) classes.push_back(false);
  classes[index] = true;
  return UserClassValue(kFirstUserSlot + static_cast<int>(index));
}

int AddErrorCode(int error_class) {
  ErrorRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  // MPI_ERR_LASTCODE is a bound, not a class a code can belong to.
  if (error_class == MPI_ERR_LASTCODE ||
      ClassOfLocked(error_class, registry) != error_class) {
    return -1;
  }
  auto& classes = registry.user_code_classes;
  size_t index = 0;
  while (index < classes.size() && classes[index] >= 0) ++index;
  if (index == kMaxUserCodes) return -1;
  if (index == classes.size()) classes.push_back(-1);
  classes[index] = error_class;
  return UserCodeValue(static_cast<int>(index) + 1, error_class);
}

bool AddErrorString(int code, const std::string& text) {
  ErrorRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  const int error_class = ClassOfLocked(code, registry);
  if (error_class < 0) return false;
  // Only what a program added may be named; predefined classes keep the
  // standard's words.
  if ((code & kUserFlag) == 0) return false;
  registry.user_strings[code] = text;
  return true;
}

bool RemoveErrorClass(int error_class) {
  ErrorRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (!IsUserClass(error_class, registry)) return false;
  for (int code_class : registry.user_code_classes) {
    if (code_class == error_class) return false;  // codes still use it
  }
  registry.user_classes[SlotOfClass(error_class) - kFirstUserSlot] = false;
  registry.user_strings.erase(error_class);
  return true;
}

bool RemoveErrorCode(int code) {
  ErrorRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  const int number = (code & ~kUserFlag) >> kClassBits;
  if ((code & kUserFlag) == 0 || number == 0 ||
      ClassOfLocked(code, registry) < 0) {
    return false;
  }
  registry.user_code_classes[number - 1] = -1;
  registry.user_strings.erase(code);
  return true;
}

bool RemoveErrorString(int code) {
  ErrorRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.user_strings.erase(code) > 0;
}

int LastUsedCode() {
  ErrorRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  // The largest class or code the program has added and not removed.
  int last = MPI_ERR_LASTCODE;
  for (size_t i = 0; i < registry.user_classes.size(); ++i) {
    if (registry.user_classes[i]) {
      last =
          std::max(last, UserClassValue(kFirstUserSlot + static_cast<int>(i)));
    }
  }
  for (size_t i = 0; i < registry.user_code_classes.size(); ++i) {
    const int error_class = registry.user_code_classes[i];
    if (error_class >= 0) {
      last =
          std::max(last, UserCodeValue(static_cast<int>(i) + 1, error_class));
    }
  }
  return last;
}

namespace {

// Hands `code` (of `error_class`, described by `line`) to `comm`'s error
// handler; an error tied to no communicator goes where RaiseError says.
int DispatchOnWindow(Errhandler* handler, MPI_Win window, int code,
                     int error_class, const std::string& line);

int Dispatch(Communicator* comm, int code, int error_class,
             const std::string& line) {
  Instance& instance = Instance::Get();
  if (comm == nullptr && !Instance::world_active()) {
    // Only sessions are live: the newest session's handler (a session
    // handler has a window handler's shape).
    MPI_Session session;
    Errhandler* handler = AcquireLatestSessionErrhandler(&session);
    const int result = DispatchOnWindow(
        handler, reinterpret_cast<MPI_Win>(session), code, error_class, line);
    handler->Release();
    return result;
  }
  if (comm == nullptr) {
    Communicator* self = instance.self();
    comm = self->errhandler_set_by_user.load(std::memory_order_acquire)
               ? self
               : instance.world();
  }
  Errhandler* handler = comm->AcquireErrhandler();
  switch (handler->action()) {
    case Errhandler::Action::kReturn:
      handler->Release();
      return code;
    case Errhandler::Action::kUser: {
      MPI_Comm handle = comm->handle;
      handler->function()(&handle, &code);
      handler->Release();
      return code;
    }
    case Errhandler::Action::kFatal:
    case Errhandler::Action::kAbort:
      break;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  // The class becomes the exit status; a program's classes lie above
  // MPI_ERR_LASTCODE, whose low byte may be 0 (success to a shell).
  instance.bootstrap().Abort(
      error_class > MPI_ERR_LASTCODE ? MPI_ERR_OTHER : error_class, line);
  std::abort();  // Abort does not return; this keeps compilers sure of it
}

std::string ErrorLine(const char* call, const std::string& problem) {
  return absl::StrCat(call, "(rank ", Instance::Get().world_rank(),
                      "): ", problem);
}

}  // namespace

int RaiseError(Communicator* comm, const char* call, int error_class,
               const std::string& problem) {
  const std::string line = ErrorLine(call, problem);
  // A program's class (MPI_Comm_call_errhandler raises them) has no room
  // for a message slot: the code is the class itself.
  const int code = error_class > MPI_ERR_LASTCODE
                       ? error_class
                       : MakeErrorCode(error_class, line);
  return Dispatch(comm, code, error_class, line);
}

namespace {

// Hands `code` (of `error_class`, described by `line`) to a window's
// handler, as Dispatch does to a communicator's.
int DispatchOnWindow(Errhandler* handler, MPI_Win window, int code,
                     int error_class, const std::string& line) {
  switch (handler->action()) {
    case Errhandler::Action::kReturn:
      return code;
    case Errhandler::Action::kUser: {
      // Stored as the communicator kind; both take (handle*, int*, ...).
      auto* function =
          reinterpret_cast<MPI_Win_errhandler_function*>(handler->function());
      MPI_Win handle = window;
      function(&handle, &code);
      return code;
    }
    case Errhandler::Action::kFatal:
    case Errhandler::Action::kAbort:
      break;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  Instance::Get().bootstrap().Abort(
      error_class > MPI_ERR_LASTCODE || error_class < 0 ? MPI_ERR_OTHER
                                                        : error_class,
      line);
  std::abort();
}

}  // namespace

int RaiseWindowError(Errhandler* handler, MPI_Win window, const char* call,
                     int error_class, const std::string& problem) {
  const std::string line = ErrorLine(call, problem);
  const int code = error_class > MPI_ERR_LASTCODE
                       ? error_class
                       : MakeErrorCode(error_class, line);
  return DispatchOnWindow(handler, window, code, error_class, line);
}

int RaiseWindowErrorCode(Errhandler* handler, MPI_Win window, const char* call,
                         int code, const std::string& problem) {
  return DispatchOnWindow(handler, window, code, ErrorClassOf(code),
                          ErrorLine(call, problem));
}

int RaiseErrorCode(Communicator* comm, const char* call, int code,
                   const std::string& problem) {
  const int error_class = ErrorClassOf(code);
  if (error_class <= 0) {
    return RaiseError(comm, call, MPI_ERR_OTHER,
                      absl::StrCat(problem, " (not an MPI error code)"));
  }
  return Dispatch(comm, code, error_class, ErrorLine(call, problem));
}

int RaiseNotInitialized(const char* call) {
  const bool finalized = Instance::state() == LibraryState::kFinalized;
  std::fprintf(stderr, "%s: called %s\n", call,
               finalized ? "after MPI_Finalize (and every session's end)"
                         : "before MPI_Init or MPI_Session_init");
  std::fflush(stderr);
  std::exit(1);
}

}  // namespace minimpi
