// Errors and error handlers: MPI_Error_string, MPI_Error_class, the
// handlers of communicators (predefined and user-made), and the classes,
// codes and strings a program adds (MPI_Add_error_* / MPI_Remove_error_*,
// MPI-4.1; MPICH 4.0 called the removals MPIX_Delete_error_*).
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/errhandler_util.h"  // compat
#include "mpi/objects/errhandler.h"

using minimpi::Communicator;
using minimpi::Errhandler;
using minimpi::Instance;
using minimpi::LibraryState;
using minimpi::RaiseError;

namespace {

void CopyString(const std::string& from, char* to, int capacity, int* length) {
  const size_t n = std::min(from.size(), static_cast<size_t>(capacity - 1));
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
  *length = static_cast<int>(n);
}

// MPI_Error_string and MPI_Error_class may be called at any time, also
// before MPI_Init, when there is no handler to raise an error on.
int BadErrorCode(const char* call, int code) {
  if (Instance::state() == LibraryState::kInitialized) {
    return RaiseError(nullptr, call, MPI_ERR_ARG,
                      absl::StrFormat("invalid error code %d", code));
  }
  return MPI_ERR_ARG;
}

int InvalidErrhandler(const char* call, Communicator* comm,
                      MPI_Errhandler handle) {
  return RaiseError(comm, call, MPI_ERR_ARG,
                    handle == MPI_ERRHANDLER_NULL
                        ? "invalid error handler (MPI_ERRHANDLER_NULL)"
                        : "invalid error handler (freed, or not one)");
}

}  // namespace

namespace minimpi {

Errhandler* LookupErrhandler(MPI_Errhandler handle) {
  if (handle == MPI_ERRORS_ARE_FATAL) return Errhandler::Fatal();
  if (handle == MPI_ERRORS_RETURN) return Errhandler::Return();
  if (handle == MPI_ERRORS_ABORT) return Errhandler::Abort();
  if (IsPredefinedHandle(handle)) return nullptr;
  return Instance::Get().errhandlers().Lookup(HandleValue(handle));
}

}  // namespace minimpi

using minimpi::LookupErrhandler;

// Shared with the MPI-1 names (compat: MPI_Errhandler_set/get/create), so
// each error names the call the program made.
namespace minimpi {

int SetCommErrhandler(const char* call, MPI_Comm comm,
                      MPI_Errhandler errhandler) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(call, comm, &c)) return error;
  Errhandler* handler = LookupErrhandler(errhandler);
  if (handler == nullptr) return InvalidErrhandler(call, c, errhandler);
  handler->Retain();  // the communicator's reference
  c->SetErrhandler(handler);
  c->errhandler_set_by_user.store(true, std::memory_order_release);
  return MPI_SUCCESS;
}

int GetCommErrhandler(const char* call, MPI_Comm comm,
                      MPI_Errhandler* errhandler) {
  MINIMPI_REQUIRE_INIT(call);
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(call, comm, &c)) return error;
  if (errhandler == nullptr) {
    return RaiseError(c, call, MPI_ERR_ARG, "null output argument");
  }
  // The returned handle holds a reference of its own, which the program
  // gives back with MPI_Errhandler_free.
  *errhandler = c->AcquireErrhandler()->handle();
  return MPI_SUCCESS;
}

int CreateCommErrhandler(const char* call,
                         MPI_Comm_errhandler_function* function,
                         MPI_Errhandler* errhandler) {
  MINIMPI_REQUIRE_INIT(call);
  if (function == nullptr) {
    return RaiseError(nullptr, call, MPI_ERR_ARG, "null handler function");
  }
  if (errhandler == nullptr) {
    return RaiseError(nullptr, call, MPI_ERR_ARG, "null output argument");
  }
  Errhandler* handler = Errhandler::NewUser(function);
  const uintptr_t handle = Instance::Get().errhandlers().Insert(handler);
  handler->set_handle(reinterpret_cast<MPI_Errhandler>(handle));
  *errhandler = handler->handle();
  return MPI_SUCCESS;
}

}  // namespace minimpi

extern "C" {

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  constexpr const char* kCall = "MPI_Error_string";
  std::string text;
  if (!minimpi::ErrorStringOf(errorcode, &text)) {
    return BadErrorCode(kCall, errorcode);
  }
  if (string == nullptr || resultlen == nullptr) {
    if (Instance::state() != LibraryState::kInitialized) return MPI_ERR_ARG;
    return RaiseError(nullptr, kCall, MPI_ERR_ARG, "null output argument");
  }
  CopyString(text, string, MPI_MAX_ERROR_STRING, resultlen);
  return MPI_SUCCESS;
}

int PMPI_Error_class(int errorcode, int* errorclass) {
  const int error_class = minimpi::ErrorClassOf(errorcode);
  if (error_class < 0) return BadErrorCode("MPI_Error_class", errorcode);
  *errorclass = error_class;
  return MPI_SUCCESS;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  return minimpi::SetCommErrhandler("MPI_Comm_set_errhandler", comm,
                                    errhandler);
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return minimpi::GetCommErrhandler("MPI_Comm_get_errhandler", comm,
                                    errhandler);
}

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  constexpr const char* kCall = "MPI_Errhandler_free";
  MINIMPI_REQUIRE_INIT(kCall);
  if (errhandler == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG, "null handler pointer");
  }
  Errhandler* handler = LookupErrhandler(*errhandler);
  if (handler == nullptr) return InvalidErrhandler(kCall, nullptr, *errhandler);
  // Drops this handle's reference. The handler (and its handle value) lives
  // on while communicators use it or the program holds other references
  // from MPI_Comm_get_errhandler.
  handler->Release();
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function,
                                MPI_Errhandler* errhandler) {
  return minimpi::CreateCommErrhandler("MPI_Comm_create_errhandler", function,
                                       errhandler);
}

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  constexpr const char* kCall = "MPI_Comm_call_errhandler";
  MINIMPI_REQUIRE_INIT(kCall);
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(kCall, comm, &c))
    return error;
  std::string text;
  if (!minimpi::ErrorStringOf(errorcode, &text)) {
    text = absl::StrFormat("error code %d", errorcode);
  }
  const int error_class = minimpi::ErrorClassOf(errorcode);
  Errhandler* handler = c->AcquireErrhandler();
  if (handler->action() == Errhandler::Action::kUser) {
    MPI_Comm handle = c->handle;
    int code = errorcode;
    handler->function()(&handle, &code);
    handler->Release();
    return MPI_SUCCESS;
  }
  handler->Release();
  // A predefined handler: raise it the usual way (a fatal one prints the
  // error's own text and ends the job; MPI_ERRORS_RETURN returns).
  RaiseError(c, kCall, error_class < 0 ? MPI_ERR_OTHER : error_class,
             absl::StrFormat("user-raised error: %s", text));
  return MPI_SUCCESS;
}

int PMPI_Add_error_class(int* errorclass) {
  constexpr const char* kCall = "MPI_Add_error_class";
  MINIMPI_REQUIRE_INIT(kCall);
  const int added = minimpi::AddErrorClass();
  if (added < 0) {
    return RaiseError(nullptr, kCall, MPI_ERR_OTHER, "no error class left");
  }
  *errorclass = added;
  return MPI_SUCCESS;
}

int PMPI_Add_error_code(int errorclass, int* errorcode) {
  constexpr const char* kCall = "MPI_Add_error_code";
  MINIMPI_REQUIRE_INIT(kCall);
  const int added = minimpi::AddErrorCode(errorclass);
  if (added < 0) {
    return RaiseError(
        nullptr, kCall, MPI_ERR_ARG,
        absl::StrFormat("invalid error class %d (or no code left)",
                        errorclass));
  }
  *errorcode = added;
  return MPI_SUCCESS;
}

int PMPI_Add_error_string(int errorcode, const char* string) {
  constexpr const char* kCall = "MPI_Add_error_string";
  MINIMPI_REQUIRE_INIT(kCall);
  if (string == nullptr) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG, "null string");
  }
  if (std::strlen(string) >= MPI_MAX_ERROR_STRING) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG,
                      absl::StrFormat("string longer than MPI_MAX_ERROR_STRING "
                                      "- 1 (%d) characters",
                                      MPI_MAX_ERROR_STRING - 1));
  }
  if (!minimpi::AddErrorString(errorcode, string)) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG,
                      absl::StrFormat("error code %d was not added by the "
                                      "program (predefined ones keep their "
                                      "strings)",
                                      errorcode));
  }
  return MPI_SUCCESS;
}

int PMPI_Remove_error_class(int errorclass) {
  constexpr const char* kCall = "MPI_Remove_error_class";
  MINIMPI_REQUIRE_INIT(kCall);
  if (!minimpi::RemoveErrorClass(errorclass)) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG,
                      absl::StrFormat("error class %d was not added by the "
                                      "program, or still has codes",
                                      errorclass));
  }
  return MPI_SUCCESS;
}

int PMPI_Remove_error_code(int errorcode) {
  constexpr const char* kCall = "MPI_Remove_error_code";
  MINIMPI_REQUIRE_INIT(kCall);
  if (!minimpi::RemoveErrorCode(errorcode)) {
    return RaiseError(
        nullptr, kCall, MPI_ERR_ARG,
        absl::StrFormat("error code %d was not added by the program",
                        errorcode));
  }
  return MPI_SUCCESS;
}

int PMPI_Remove_error_string(int errorcode) {
  constexpr const char* kCall = "MPI_Remove_error_string";
  MINIMPI_REQUIRE_INIT(kCall);
  if (!minimpi::RemoveErrorString(errorcode)) {
    return RaiseError(nullptr, kCall, MPI_ERR_ARG,
                      absl::StrFormat("error code %d has no string the "
                                      "program added",
                                      errorcode));
  }
  return MPI_SUCCESS;
}

// MPICH 4.0's names for the removals, which its test suite still uses.
int PMPIX_Delete_error_class(int errorclass) {
  return PMPI_Remove_error_class(errorclass);
}
int PMPIX_Delete_error_code(int errorcode) {
  return PMPI_Remove_error_code(errorcode);
}
int PMPIX_Delete_error_string(int errorcode) {
  return PMPI_Remove_error_string(errorcode);
}

}  // extern "C"

MINIMPI_EXPORT(Error_string)
MINIMPI_EXPORT(Error_class)
MINIMPI_EXPORT(Comm_set_errhandler)
MINIMPI_EXPORT(Comm_get_errhandler)
MINIMPI_EXPORT(Errhandler_free)
MINIMPI_EXPORT(Comm_create_errhandler)
MINIMPI_EXPORT(Comm_call_errhandler)
MINIMPI_EXPORT(Add_error_class)
MINIMPI_EXPORT(Add_error_code)
MINIMPI_EXPORT(Add_error_string)
MINIMPI_EXPORT(Remove_error_class)
MINIMPI_EXPORT(Remove_error_code)
MINIMPI_EXPORT(Remove_error_string)
MINIMPIX_EXPORT(Delete_error_class)
MINIMPIX_EXPORT(Delete_error_code)
MINIMPIX_EXPORT(Delete_error_string)
