#include "mpi/bindings/keyval_util.h"

#include <string>

#include "absl/strings/str_format.h"
#include "mpi/bindings/datatype_util.h"
#include "mpi/bindings/error_dispatch.h"

namespace minimpi {
namespace {

const char* KindName(AttributeObjectKind kind) {
  switch (kind) {
    case AttributeObjectKind::kCommunicator:
      return "communicator";
    case AttributeObjectKind::kDatatype:
      return "datatype";
    case AttributeObjectKind::kWindow:
      return "window";
  }
  return "object";
}

int InvalidKeyval(const char* call, AttributeObjectKind kind, int keyval) {
  return RaiseError(
      nullptr, call, MPI_ERR_KEYVAL,
      keyval == MPI_KEYVAL_INVALID
          ? std::string("invalid keyval (MPI_KEYVAL_INVALID)")
          : absl::StrFormat("invalid keyval %d (freed, never created, or not "
                            "a %s keyval)",
                            keyval, KindName(kind)));
}

}  // namespace

int CreateKeyval(const char* call, const Keyval::Callbacks& callbacks,
                 int* keyval, void* extra_state) {
  if (int error = CheckOutput(call, keyval, "keyval")) return error;
  const int id = ProcessKeyvals().Create(callbacks, extra_state);
  if (id == MPI_KEYVAL_INVALID) {
    return RaiseError(nullptr, call, MPI_ERR_OTHER, "no keyvals left");
  }
  *keyval = id;
  return MPI_SUCCESS;
}

int FreeKeyval(const char* call, AttributeObjectKind kind, int* keyval) {
  if (int error = CheckOutput(call, keyval, "keyval")) return error;
  if (ProcessKeyvals().Free(*keyval, kind) ==
      KeyvalRegistry::FreeResult::kInvalid) {
    return InvalidKeyval(call, kind, *keyval);
  }
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int AcquireKeyval(const char* call, AttributeObjectKind kind, int keyval,
                  Keyval** acquired) {
  *acquired = ProcessKeyvals().Acquire(keyval, kind);
  if (*acquired != nullptr) [[likely]]
    return MPI_SUCCESS;
  return InvalidKeyval(call, kind, keyval);
}

}  // namespace minimpi
