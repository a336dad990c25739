// What a program asks of or attaches to a window: keyvals and attributes
// (the predefined MPI_WIN_BASE, _SIZE, _DISP_UNIT, _CREATE_FLAVOR and
// _MODEL answered from the window itself), names, error handlers, its
// group, info. Windows are made and freed in windows.cc.
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/errhandler_util.h"
#include "mpi/bindings/keyval_util.h"
#include "mpi/bindings/window_object.h"
#include "mpi/objects/errhandler.h"
#include "mpi/objects/info.h"

using minimpi::AttributeFailure;
using minimpi::AttributeObjectKind;
using minimpi::Errhandler;
using minimpi::Instance;
using minimpi::Keyval;
using minimpi::RaiseError;
using minimpi::RaiseOnWindow;
using minimpi::WindowObject;

extern "C" {

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                           MPI_Win_delete_attr_function* win_delete_attr_fn,
                           int* win_keyval, void* extra_state) {
  constexpr const char* kCall = "MPI_Win_create_keyval";
  MINIMPI_REQUIRE_INIT(kCall);
  return minimpi::CreateKeyval(
      kCall, Keyval::ForWindows(win_copy_attr_fn, win_delete_attr_fn),
      win_keyval, extra_state);
}

int PMPI_Win_free_keyval(int* win_keyval) {
  constexpr const char* kCall = "MPI_Win_free_keyval";
  MINIMPI_REQUIRE_INIT(kCall);
  if (win_keyval != nullptr && *win_keyval >= MPI_WIN_BASE &&
      *win_keyval <= MPI_WIN_MODEL) {
    return RaiseError(nullptr, kCall, MPI_ERR_KEYVAL,
                      absl::StrFormat("keyval %d is predefined and cannot be "
                                      "freed",
                                      *win_keyval));
  }
  return minimpi::FreeKeyval(kCall, AttributeObjectKind::kWindow, win_keyval);
}

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  constexpr const char* kCall = "MPI_Win_set_attr";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (win_keyval >= MPI_WIN_BASE && win_keyval <= MPI_WIN_MODEL) {
    return RaiseOnWindow(w, kCall, MPI_ERR_KEYVAL,
                         absl::StrFormat("keyval %d is predefined and read "
                                         "only",
                                         win_keyval));
  }
  Keyval* key;
  if (int error = minimpi::AcquireKeyval(kCall, AttributeObjectKind::kWindow,
                                         win_keyval, &key)) {
    return error;
  }
  const AttributeFailure failure =
      w->attributes.Set(minimpi::HandleValue(win), key, attribute_val);
  minimpi::ProcessKeyvals().Release(key);
  if (!failure.ok()) {
    return minimpi::RaiseAttributeFailure(kCall, nullptr, failure, "delete");
  }
  return MPI_SUCCESS;
}

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val,
                      int* flag) {
  constexpr const char* kCall = "MPI_Win_get_attr";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (attribute_val == nullptr || flag == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_ARG, "null output argument");
  }
  // The predefined attributes point at values the window keeps (MPI-4.1
  // 12.2.6): the base itself, and the others' addresses.
  static thread_local MPI_Aint size_value;
  static thread_local int int_value;
  void* value = nullptr;
  switch (win_keyval) {
    case MPI_WIN_BASE:
      value = w->base;
      break;
    case MPI_WIN_SIZE:
      size_value = static_cast<MPI_Aint>(w->size);
      value = &size_value;
      break;
    case MPI_WIN_DISP_UNIT:
      int_value = w->disp_unit;
      value = &int_value;
      break;
    case MPI_WIN_CREATE_FLAVOR:
      int_value = w->create_flavor;
      value = &int_value;
      break;
    case MPI_WIN_MODEL:
      int_value = MPI_WIN_UNIFIED;
      value = &int_value;
      break;
    default: {
      Keyval* key;
      if (int error = minimpi::AcquireKeyval(
              kCall, AttributeObjectKind::kWindow, win_keyval, &key)) {
        return error;
      }
      *flag = w->attributes.Get(key, &value) ? 1 : 0;
      if (*flag) *static_cast<void**>(attribute_val) = value;
      minimpi::ProcessKeyvals().Release(key);
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  *static_cast<void**>(attribute_val) = value;
  return MPI_SUCCESS;
}

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  constexpr const char* kCall = "MPI_Win_delete_attr";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  Keyval* key;
  if (int error = minimpi::AcquireKeyval(kCall, AttributeObjectKind::kWindow,
                                         win_keyval, &key)) {
    return error;
  }
  const AttributeFailure failure =
      w->attributes.Delete(minimpi::HandleValue(win), key);
  minimpi::ProcessKeyvals().Release(key);
  if (!failure.ok()) {
    return minimpi::RaiseAttributeFailure(kCall, nullptr, failure, "delete");
  }
  return MPI_SUCCESS;
}

int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  constexpr const char* kCall = "MPI_Win_set_name";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (win_name == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_ARG, "null win_name");
  }
  std::lock_guard<std::mutex> lock(w->mutex);
  w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  constexpr const char* kCall = "MPI_Win_get_name";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (win_name == nullptr || resultlen == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_ARG, "null output argument");
  }
  std::lock_guard<std::mutex> lock(w->mutex);
  std::memcpy(win_name, w->name.c_str(), w->name.size() + 1);
  *resultlen = static_cast<int>(w->name.size());
  return MPI_SUCCESS;
}

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                               MPI_Errhandler* errhandler) {
  constexpr const char* kCall = "MPI_Win_create_errhandler";
  MINIMPI_REQUIRE_INIT(kCall);
  if (win_errhandler_fn == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG, "null handler function");
  }
  if (errhandler == nullptr) {
    return minimpi::NullArgument(kCall, nullptr, "errhandler");
  }
  // Both handler types take (handle*, int*, ...); a window's error calls it
  // with the window (RaiseWindowError).
  Errhandler* handler = Errhandler::NewUser(
      reinterpret_cast<MPI_Comm_errhandler_function*>(win_errhandler_fn));
  const uintptr_t handle = Instance::Get().errhandlers().Insert(handler);
  if (handle == 0) {
    handler->Release();
    return RaiseError(nullptr, kCall, MPI_ERR_OTHER,
                      "too many error handlers exist");
  }
  handler->set_handle(reinterpret_cast<MPI_Errhandler>(handle));
  *errhandler = handler->handle();
  return MPI_SUCCESS;
}

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  constexpr const char* kCall = "MPI_Win_set_errhandler";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  Errhandler* handler = minimpi::LookupErrhandler(errhandler);
  if (handler == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_ARG,
                         "invalid error handler (freed, or not one)");
  }
  handler->Retain();
  Errhandler* previous;
  {
    std::lock_guard<std::mutex> lock(w->mutex);
    previous = w->errhandler;
    w->errhandler = handler;
  }
  previous->Release();
  return MPI_SUCCESS;
}

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  constexpr const char* kCall = "MPI_Win_get_errhandler";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (errhandler == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_ARG, "null output argument");
  }
  std::lock_guard<std::mutex> lock(w->mutex);
  w->errhandler->Retain();  // the returned handle's reference
  *errhandler = w->errhandler->handle();
  return MPI_SUCCESS;
}

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  constexpr const char* kCall = "MPI_Win_call_errhandler";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  Errhandler* handler;
  {
    std::lock_guard<std::mutex> lock(w->mutex);
    handler = w->errhandler;
    handler->Retain();
  }
  // The handler gets `errorcode` itself, not a code made for its class
  // (MPICH's rma/wincall checks for MPI_ERR_OTHER exactly). A user handler
  // that returns, or MPI_ERRORS_RETURN, makes the call succeed.
  std::string text;
  if (!minimpi::ErrorStringOf(errorcode, &text)) {
    text = absl::StrFormat("error code %d", errorcode);
  }
  minimpi::RaiseWindowErrorCode(handler, w->handle, kCall, errorcode,
                                absl::StrFormat("user-raised error: %s", text));
  handler->Release();
  return MPI_SUCCESS;
}

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  constexpr const char* kCall = "MPI_Win_get_group";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (group == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_ARG, "null output argument");
  }
  *group = minimpi::NewGroupHandle(w->comm->world_ranks);
  return MPI_SUCCESS;
}

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  constexpr const char* kCall = "MPI_Win_set_info";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  minimpi::Info* hints = minimpi::LookupInfo(info);
  if (hints == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_INFO, "invalid info object");
  }
  std::lock_guard<std::mutex> lock(w->mutex);
  for (const auto& [key, value] : hints->Entries()) {
    bool replaced = false;
    for (auto& entry : w->info) {
      if (entry.first == key) {
        entry.second = value;
        replaced = true;
      }
    }
    if (!replaced) w->info.emplace_back(key, value);
  }
  return MPI_SUCCESS;
}

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  constexpr const char* kCall = "MPI_Win_get_info";
  MINIMPI_REQUIRE_INIT(kCall);
  WindowObject* w;
  if (int error = minimpi::CheckWindow(kCall, win, &w)) return error;
  if (info_used == nullptr) {
    return RaiseOnWindow(w, kCall, MPI_ERR_ARG, "null output argument");
  }
  std::vector<minimpi::Info::Entry> entries;
  {
    std::lock_guard<std::mutex> lock(w->mutex);
    entries = w->info;
  }
  // What the window does whatever the hints: accumulates are ordered and
  // may use any op; no assertion about locks is relied on.
  auto set_default = [&](const char* key, const char* value) {
    for (const auto& entry : entries) {
      if (entry.first == key) return;
    }
    entries.emplace_back(key, value);
  };
  set_default("no_locks", "false");
  set_default("accumulate_ordering", "rar,raw,war,waw");
  set_default("accumulate_ops", "same_op_no_op");
  set_default("same_size", "false");
  set_default("same_disp_unit", "false");
  *info_used = minimpi::NewInfoHandle(
      std::make_unique<minimpi::Info>(std::move(entries)));
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Win_create_keyval)
MINIMPI_EXPORT(Win_free_keyval)
MINIMPI_EXPORT(Win_set_attr)
MINIMPI_EXPORT(Win_get_attr)
MINIMPI_EXPORT(Win_delete_attr)
MINIMPI_EXPORT(Win_set_name)
MINIMPI_EXPORT(Win_get_name)
MINIMPI_EXPORT(Win_create_errhandler)
MINIMPI_EXPORT(Win_set_errhandler)
MINIMPI_EXPORT(Win_get_errhandler)
MINIMPI_EXPORT(Win_call_errhandler)
MINIMPI_EXPORT(Win_get_group)
MINIMPI_EXPORT(Win_set_info)
MINIMPI_EXPORT(Win_get_info)
