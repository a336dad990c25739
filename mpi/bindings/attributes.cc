// Attribute caching on communicators: keyvals, set/get/delete, the MPI-1
// names old programs still call (MPI_Keyval_create, MPI_Attr_put, ...), and
// the predefined attributes of MPI-4.1 section 11.2.7. The store itself is
// mpi/objects/attributes.h.
//
// Predefined attributes answer on every communicator (as MPICH does; MPI
// attaches them to MPI_COMM_WORLD), their value a pointer to an int the
// library owns. They cannot be set, deleted or freed.
#include <atomic>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "mpi/bindings/comm_util.h"
#include "runtime/dynamic_processes.h"

using minimpi::AttributeObjectKind;
using minimpi::Communicator;
using minimpi::Keyval;
using minimpi::KeyvalRegistry;
using minimpi::RaiseError;

namespace {

// The standard ABI numbers MPI_COMM_WORLD's keys 501..507, MPI_TAG_UB
// first and MPI_LASTUSEDCODE last.
constexpr int kFirstPredefinedKey = MPI_TAG_UB;
constexpr int kLastPredefinedKey = MPI_LASTUSEDCODE;
static_assert(kLastPredefinedKey - kFirstPredefinedKey == 6 &&
              MPI_IO > kFirstPredefinedKey && MPI_HOST > kFirstPredefinedKey &&
              MPI_WTIME_IS_GLOBAL > kFirstPredefinedKey &&
              MPI_APPNUM < kLastPredefinedKey &&
              MPI_UNIVERSE_SIZE < kLastPredefinedKey);

bool IsPredefinedKey(int keyval) {
  return keyval >= kFirstPredefinedKey && keyval <= kLastPredefinedKey;
}

// The value of a predefined attribute, in storage that stays put: MPI says
// the attribute value is the address of the int. Programs read it without
// the library, so the library writes it only when the value changes (only
// MPI_LASTUSEDCODE can, when a program adds error codes); the others are
// set once.
int* PredefinedValue(int keyval) {
  static int* values = [] {
    static int storage[kLastPredefinedKey - kFirstPredefinedKey + 1];
    minimpi::Instance& instance = minimpi::Instance::Get();
    storage[MPI_TAG_UB - MPI_TAG_UB] = MINIMPI_TAG_UB;
    storage[MPI_HOST - MPI_TAG_UB] = MPI_PROC_NULL;  // no host process
    // Every rank can do I/O, so each names itself.
    storage[MPI_IO - MPI_TAG_UB] = instance.world_rank();
    storage[MPI_WTIME_IS_GLOBAL - MPI_TAG_UB] = 0;
    // Which command of MPI_Comm_spawn_multiple started this process.
    storage[MPI_APPNUM - MPI_TAG_UB] =
        minimpi::runtime::AppNumber(instance.bootstrap());
    storage[MPI_LASTUSEDCODE - MPI_TAG_UB] = minimpi::LastUsedCode();
    storage[MPI_UNIVERSE_SIZE - MPI_TAG_UB] =
        minimpi::runtime::UniverseSize(instance.bootstrap());
    return storage;
  }();
  int* slot = &values[keyval - MPI_TAG_UB];
  if (keyval == MPI_LASTUSEDCODE) {
    const int last = minimpi::LastUsedCode();
    std::atomic_ref<int> shared(*slot);
    if (shared.load(std::memory_order_relaxed) != last) {
      shared.store(last, std::memory_order_relaxed);
    }
  }
  return slot;
}

int CreateKeyval(const char* call, MPI_Comm_copy_attr_function* copy,
                 MPI_Comm_delete_attr_function* destroy, int* keyval,
                 void* extra_state) {
  if (keyval == nullptr) return minimpi::NullArgument(call, nullptr, "keyval");
  const int id = minimpi::ProcessKeyvals().Create(
      Keyval::ForCommunicators(copy, destroy), extra_state);
  if (id == MPI_KEYVAL_INVALID) {
    return RaiseError(nullptr, call, MPI_ERR_OTHER, "no keyvals left");
  }
  *keyval = id;
  return MPI_SUCCESS;
}

int FreeKeyval(const char* call, int* keyval) {
  if (keyval == nullptr) return minimpi::NullArgument(call, nullptr, "keyval");
  if (IsPredefinedKey(*keyval)) {
    return RaiseError(nullptr, call, MPI_ERR_KEYVAL,
                      absl::StrFormat("keyval %d is predefined and cannot be "
                                      "freed",
                                      *keyval));
  }
  const KeyvalRegistry::FreeResult result = minimpi::ProcessKeyvals().Free(
      *keyval, AttributeObjectKind::kCommunicator);
  if (result == KeyvalRegistry::FreeResult::kInvalid) {
    return RaiseError(nullptr, call, MPI_ERR_KEYVAL,
                      absl::StrFormat("invalid keyval %d (freed, never "
                                      "created, or not a communicator keyval)",
                                      *keyval));
  }
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

// The communicator keyval `keyval`, retained; MPI_ERR_KEYVAL (raised on
// `comm`) if there is none. Predefined keys are the caller's business.
int AcquireKeyval(const char* call, Communicator* comm, int keyval,
                  Keyval** acquired) {
  *acquired = minimpi::ProcessKeyvals().Acquire(
      keyval, AttributeObjectKind::kCommunicator);
  if (*acquired != nullptr) return MPI_SUCCESS;
  return RaiseError(comm, call, MPI_ERR_KEYVAL,
                    keyval == MPI_KEYVAL_INVALID
                        ? std::string("invalid keyval (MPI_KEYVAL_INVALID)")
                        : absl::StrFormat("invalid keyval %d (freed, never "
                                          "created, or not a communicator "
                                          "keyval)",
                                          keyval));
}

int PredefinedIsReadOnly(const char* call, Communicator* comm, int keyval) {
  return RaiseError(comm, call, MPI_ERR_KEYVAL,
                    absl::StrFormat("keyval %d is a predefined attribute and "
                                    "cannot be set or deleted",
                                    keyval));
}

int SetAttribute(const char* call, MPI_Comm comm, int keyval, void* value) {
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(call, comm, &c)) return error;
  if (IsPredefinedKey(keyval)) return PredefinedIsReadOnly(call, c, keyval);
  Keyval* key;
  if (int error = AcquireKeyval(call, c, keyval, &key)) return error;
  const minimpi::AttributeFailure failure =
      c->attributes.Set(minimpi::HandleValue(c->handle), key, value);
  minimpi::ProcessKeyvals().Release(key);
  if (!failure.ok()) {
    return minimpi::RaiseAttributeFailure(call, c, failure, "delete");
  }
  return MPI_SUCCESS;
}

int GetAttribute(const char* call, MPI_Comm comm, int keyval,
                 void* attribute_val, int* flag) {
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(call, comm, &c)) return error;
  if (attribute_val == nullptr) {
    return minimpi::NullArgument(call, c, "attribute_val");
  }
  if (flag == nullptr) return minimpi::NullArgument(call, c, "flag");
  // attribute_val is really the address of a void*.
  void** out = static_cast<void**>(attribute_val);
  if (IsPredefinedKey(keyval)) {
    *out = PredefinedValue(keyval);
    *flag = 1;
    return MPI_SUCCESS;
  }
  Keyval* key;
  if (int error = AcquireKeyval(call, c, keyval, &key)) return error;
  void* value = nullptr;
  *flag = c->attributes.Get(key, &value) ? 1 : 0;
  if (*flag) *out = value;
  minimpi::ProcessKeyvals().Release(key);
  return MPI_SUCCESS;
}

int DeleteAttribute(const char* call, MPI_Comm comm, int keyval) {
  Communicator* c;
  if (int error = minimpi::CheckLocalCommunicator(call, comm, &c)) return error;
  if (IsPredefinedKey(keyval)) return PredefinedIsReadOnly(call, c, keyval);
  Keyval* key;
  if (int error = AcquireKeyval(call, c, keyval, &key)) return error;
  const minimpi::AttributeFailure failure =
      c->attributes.Delete(minimpi::HandleValue(c->handle), key);
  minimpi::ProcessKeyvals().Release(key);
  if (!failure.ok()) {
    return minimpi::RaiseAttributeFailure(call, c, failure, "delete");
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                            int* comm_keyval, void* extra_state) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_create_keyval");
  return CreateKeyval("MPI_Comm_create_keyval", comm_copy_attr_fn,
                      comm_delete_attr_fn, comm_keyval, extra_state);
}

int PMPI_Comm_free_keyval(int* comm_keyval) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_free_keyval");
  return FreeKeyval("MPI_Comm_free_keyval", comm_keyval);
}

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_set_attr");
  return SetAttribute("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val,
                       int* flag) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_get_attr");
  return GetAttribute("MPI_Comm_get_attr", comm, comm_keyval, attribute_val,
                      flag);
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  MINIMPI_REQUIRE_INIT("MPI_Comm_delete_attr");
  return DeleteAttribute("MPI_Comm_delete_attr", comm, comm_keyval);
}

int PMPI_Keyval_create(MPI_Copy_function* copy_fn,
                       MPI_Delete_function* delete_fn, int* keyval,
                       void* extra_state) {
  MINIMPI_REQUIRE_INIT("MPI_Keyval_create");
  return CreateKeyval("MPI_Keyval_create", copy_fn, delete_fn, keyval,
                      extra_state);
}

int PMPI_Keyval_free(int* keyval) {
  MINIMPI_REQUIRE_INIT("MPI_Keyval_free");
  return FreeKeyval("MPI_Keyval_free", keyval);
}

int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  MINIMPI_REQUIRE_INIT("MPI_Attr_put");
  return SetAttribute("MPI_Attr_put", comm, keyval, attribute_val);
}

int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  MINIMPI_REQUIRE_INIT("MPI_Attr_get");
  return GetAttribute("MPI_Attr_get", comm, keyval, attribute_val, flag);
}

int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
  MINIMPI_REQUIRE_INIT("MPI_Attr_delete");
  return DeleteAttribute("MPI_Attr_delete", comm, keyval);
}

}  // extern "C"

MINIMPI_EXPORT(Comm_create_keyval)
MINIMPI_EXPORT(Comm_free_keyval)
MINIMPI_EXPORT(Comm_set_attr)
MINIMPI_EXPORT(Comm_get_attr)
MINIMPI_EXPORT(Comm_delete_attr)
MINIMPI_EXPORT(Keyval_create)
MINIMPI_EXPORT(Keyval_free)
MINIMPI_EXPORT(Attr_put)
MINIMPI_EXPORT(Attr_get)
MINIMPI_EXPORT(Attr_delete)
