#include "mpi/objects/attributes.h"

#include <algorithm>
#include <limits>

namespace minimpi {
namespace {

// The predefined callbacks of the standard ABI are sentinel addresses.
constexpr uintptr_t kNullCopy = 0x0;
constexpr uintptr_t kDupCopy = 0x1;

template <typename Function>
uintptr_t Address(Function* function) {
  return reinterpret_cast<uintptr_t>(function);
}

// The shared part of Copy for every object kind: the sentinels, then the
// program's callback (`call` runs it with the right handle type).
template <typename Call>
int CopyWith(uintptr_t function, void* value_in, void** value_out, bool* keep,
             Call call) {
  if (function == kNullCopy) {
    *keep = false;
    return MPI_SUCCESS;
  }
  if (function == kDupCopy) {
    *value_out = value_in;
    *keep = true;
    return MPI_SUCCESS;
  }
  int flag = 0;
  void* out = nullptr;
  const int code = call(&out, &flag);
  *keep = code == MPI_SUCCESS && flag != 0;
  if (*keep) *value_out = out;
  return code;
}

}  // namespace

Keyval::Callbacks Keyval::ForCommunicators(
    MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* destroy) {
  Callbacks callbacks;
  callbacks.kind = AttributeObjectKind::kCommunicator;
  callbacks.comm_copy = copy;
  callbacks.comm_delete = destroy;
  return callbacks;
}

Keyval::Callbacks Keyval::ForDatatypes(MPI_Type_copy_attr_function* copy,
                                       MPI_Type_delete_attr_function* destroy) {
  Callbacks callbacks;
  callbacks.kind = AttributeObjectKind::kDatatype;
  callbacks.type_copy = copy;
  callbacks.type_delete = destroy;
  return callbacks;
}

Keyval::Callbacks Keyval::ForWindows(MPI_Win_copy_attr_function* copy,
                                     MPI_Win_delete_attr_function* destroy) {
  Callbacks callbacks;
  callbacks.kind = AttributeObjectKind::kWindow;
  callbacks.win_copy = copy;
  callbacks.win_delete = destroy;
  return callbacks;
}

int Keyval::Copy(uintptr_t object, void* value_in, void** value_out,
                 bool* keep) const {
  switch (callbacks_.kind) {
    case AttributeObjectKind::kCommunicator:
      return CopyWith(Address(callbacks_.comm_copy), value_in, value_out, keep,
                      [&](void** out, int* flag) {
                        return callbacks_.comm_copy(
                            reinterpret_cast<MPI_Comm>(object), id_,
                            extra_state_, value_in, out, flag);
                      });
    case AttributeObjectKind::kDatatype:
      return CopyWith(Address(callbacks_.type_copy), value_in, value_out, keep,
                      [&](void** out, int* flag) {
                        return callbacks_.type_copy(
                            reinterpret_cast<MPI_Datatype>(object), id_,
                            extra_state_, value_in, out, flag);
                      });
    case AttributeObjectKind::kWindow:
      return CopyWith(Address(callbacks_.win_copy), value_in, value_out, keep,
                      [&](void** out, int* flag) {
                        return callbacks_.win_copy(
                            reinterpret_cast<MPI_Win>(object), id_,
                            extra_state_, value_in, out, flag);
                      });
  }
  return MPI_ERR_INTERN;
}

int Keyval::Delete(uintptr_t object, void* value) const {
  switch (callbacks_.kind) {
    case AttributeObjectKind::kCommunicator:
      if (callbacks_.comm_delete == nullptr) return MPI_SUCCESS;
      return callbacks_.comm_delete(reinterpret_cast<MPI_Comm>(object), id_,
                                    value, extra_state_);
    case AttributeObjectKind::kDatatype:
      if (callbacks_.type_delete == nullptr) return MPI_SUCCESS;
      return callbacks_.type_delete(reinterpret_cast<MPI_Datatype>(object), id_,
                                    value, extra_state_);
    case AttributeObjectKind::kWindow:
      if (callbacks_.win_delete == nullptr) return MPI_SUCCESS;
      return callbacks_.win_delete(reinterpret_cast<MPI_Win>(object), id_,
                                   value, extra_state_);
  }
  return MPI_ERR_INTERN;
}

KeyvalRegistry::~KeyvalRegistry() {
  for (auto& [id, keyval] : keyvals_) delete keyval;
}

int KeyvalRegistry::Create(const Callbacks& callbacks, void* extra_state) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (next_id_ == std::numeric_limits<int>::max()) return MPI_KEYVAL_INVALID;
  const int id = next_id_++;
  keyvals_.emplace(id, new Keyval(id, callbacks, extra_state));
  return id;
}

Keyval* KeyvalRegistry::Acquire(int id, AttributeObjectKind kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = keyvals_.find(id);
  if (it == keyvals_.end() || it->second->kind() != kind) return nullptr;
  ++it->second->references_;
  return it->second;
}

void KeyvalRegistry::Retain(Keyval* keyval) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++keyval->references_;
}

void KeyvalRegistry::Release(Keyval* keyval) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--keyval->references_ > 0) return;
  // Freed by the program and used by no attribute: the id is gone for good.
  keyvals_.erase(keyval->id());
  delete keyval;
}

KeyvalRegistry::FreeResult KeyvalRegistry::Free(int id,
                                                AttributeObjectKind kind) {
  Keyval* keyval;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = keyvals_.find(id);
    if (it == keyvals_.end() || it->second->kind() != kind) {
      return FreeResult::kInvalid;
    }
    keyval = it->second;
    if (keyval->freed_by_program_) return FreeResult::kAlreadyFreed;
    keyval->freed_by_program_ = true;
  }
  Release(keyval);
  return FreeResult::kFreed;
}

KeyvalRegistry& ProcessKeyvals() {
  static auto* registry = new KeyvalRegistry();
  return *registry;
}

size_t KeyvalRegistry::live() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return keyvals_.size();
}

AttributeStore::~AttributeStore() {
  for (const Attribute& attribute : attributes_) {
    registry_->Release(attribute.keyval);
  }
}

void AttributeStore::Put(Keyval* keyval, void* value) {
  Keyval* replaced = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(
        attributes_.begin(), attributes_.end(),
        [&](const Attribute& attribute) { return attribute.keyval == keyval; });
    if (it != attributes_.end()) {
      replaced = it->keyval;  // the entry's reference, replaced below
      attributes_.erase(it);
    }
    registry_->Retain(keyval);
    attributes_.push_back({keyval, value});
  }
  if (replaced != nullptr) registry_->Release(replaced);
}

AttributeFailure AttributeStore::Set(uintptr_t object, Keyval* keyval,
                                     void* value) {
  void* old_value = nullptr;
  bool had_value = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Attribute& attribute : attributes_) {
      if (attribute.keyval == keyval) {
        old_value = attribute.value;
        had_value = true;
        break;
      }
    }
  }
  if (had_value) {
    const int code = keyval->Delete(object, old_value);
    if (code != MPI_SUCCESS) return {code, keyval->id()};
  }
  Put(keyval, value);
  return {};
}

bool AttributeStore::Get(const Keyval* keyval, void** value) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Attribute& attribute : attributes_) {
    if (attribute.keyval == keyval) {
      *value = attribute.value;
      return true;
    }
  }
  return false;
}

AttributeFailure AttributeStore::Delete(uintptr_t object, Keyval* keyval) {
  void* value = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(
        attributes_.begin(), attributes_.end(),
        [&](const Attribute& attribute) { return attribute.keyval == keyval; });
    if (it == attributes_.end()) return {};
    value = it->value;
  }
  const int code = keyval->Delete(object, value);
  if (code != MPI_SUCCESS) return {code, keyval->id()};
  bool removed = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(
        attributes_.begin(), attributes_.end(),
        [&](const Attribute& attribute) { return attribute.keyval == keyval; });
    // The callback itself may have deleted or reset the attribute; only
    // the value it was called for is removed.
    if (it != attributes_.end() && it->value == value) {
      attributes_.erase(it);
      removed = true;
    }
  }
  if (removed) registry_->Release(keyval);
  return {};
}

AttributeFailure AttributeStore::CopyTo(uintptr_t object,
                                        AttributeStore& target) const {
  std::vector<Attribute> snapshot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    snapshot = attributes_;
    for (const Attribute& attribute : snapshot) {
      registry_->Retain(attribute.keyval);
    }
  }
  AttributeFailure failure;
  for (const Attribute& attribute : snapshot) {
    if (!failure.ok()) break;
    void* copied = nullptr;
    bool keep = false;
    const int code =
        attribute.keyval->Copy(object, attribute.value, &copied, &keep);
    if (code != MPI_SUCCESS) {
      failure = {code, attribute.keyval->id()};
    } else if (keep) {
      target.Put(attribute.keyval, copied);
    }
  }
  for (const Attribute& attribute : snapshot) {
    registry_->Release(attribute.keyval);
  }
  return failure;
}

AttributeFailure AttributeStore::DeleteAll(uintptr_t object) {
  for (;;) {
    Attribute last;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (attributes_.empty()) return {};
      last = attributes_.back();
    }
    const AttributeFailure failure = Delete(object, last.keyval);
    if (!failure.ok()) return failure;
  }
}

bool AttributeStore::empty() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return attributes_.empty();
}

std::vector<int> AttributeStore::Order() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<int> ids;
  for (const Attribute& attribute : attributes_) {
    ids.push_back(attribute.keyval->id());
  }
  return ids;
}

}  // namespace minimpi
