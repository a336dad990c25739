// Attribute caching (MPI-4.1 section 7.7), generic over the kind of object
// that carries the attributes: communicators and datatypes (each has an
// AttributeStore), and windows (their keyvals exist; windows themselves are
// later work).
//
//   Keyval          a key made by MPI_Comm_create_keyval (or the datatype
//                   and window forms): the object kind it belongs to, the
//                   copy and delete callbacks as the program gave them
//                   (MPI_*_NULL_COPY_FN / MPI_*_DUP_FN / _NULL_DELETE_FN are
//                   recognized, never called), and extra_state.
//   KeyvalRegistry  the keyvals of a process, by the int the program holds.
//                   Ids are never reused, so a freed or made-up id is found
//                   to be invalid. A keyval the program freed lives on while
//                   attributes still use it (MPI-4.1 7.7.2); freeing it
//                   again meanwhile is tolerated, as MPICH does (its
//                   keyval_double_free tests free one from inside its own
//                   delete callback and then again).
//   AttributeStore  the attributes of one object, in the order they were
//                   set: copied (MPI_Comm_dup) in that order, deleted
//                   (MPI_Comm_free, MPI_Finalize on MPI_COMM_SELF) in the
//                   reverse order.
//
// Callbacks are user code that may call MPI, including attribute calls on
// the same object, so no lock is held while one runs. A callback's error
// stops the operation: a replaced or deleted attribute whose delete
// callback fails stays; a copy that fails leaves the caller to undo what
// was copied. The failing code and keyval are returned for the caller to
// raise.
//
// Owned by: mpi/. Called by: the attribute, communicator, datatype and
// window bindings.
#ifndef MINIMPI_MPI_OBJECTS_ATTRIBUTES_H_
#define MINIMPI_MPI_OBJECTS_ATTRIBUTES_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "mpi/mpi.h"

namespace minimpi {

enum class AttributeObjectKind : uint8_t { kCommunicator, kDatatype, kWindow };

class Keyval {
 public:
  // Callbacks of one object kind, as the program passed them.
  struct Callbacks {
    AttributeObjectKind kind = AttributeObjectKind::kCommunicator;
    MPI_Comm_copy_attr_function* comm_copy = nullptr;
    MPI_Comm_delete_attr_function* comm_delete = nullptr;
    MPI_Type_copy_attr_function* type_copy = nullptr;
    MPI_Type_delete_attr_function* type_delete = nullptr;
    MPI_Win_copy_attr_function* win_copy = nullptr;
    MPI_Win_delete_attr_function* win_delete = nullptr;
  };
  static Callbacks ForCommunicators(MPI_Comm_copy_attr_function* copy,
                                    MPI_Comm_delete_attr_function* destroy);
  static Callbacks ForDatatypes(MPI_Type_copy_attr_function* copy,
                                MPI_Type_delete_attr_function* destroy);
  static Callbacks ForWindows(MPI_Win_copy_attr_function* copy,
                              MPI_Win_delete_attr_function* destroy);

  Keyval(int id, const Callbacks& callbacks, void* extra_state)
      : id_(id), callbacks_(callbacks), extra_state_(extra_state) {}

  int id() const { return id_; }
  AttributeObjectKind kind() const { return callbacks_.kind; }

  // Runs the copy callback for an attribute of `object` (the handle of the
  // object being copied). Returns the callback's code; *keep says whether
  // the new object gets the attribute, with value *value_out.
  int Copy(uintptr_t object, void* value_in, void** value_out,
           bool* keep) const;
  // Runs the delete callback; returns its code.
  int Delete(uintptr_t object, void* value) const;

 private:
  friend class KeyvalRegistry;
  const int id_;
  const Callbacks callbacks_;
  void* const extra_state_;
  // The program's reference (until it frees the keyval) plus one per
  // attribute. Guarded by the registry's mutex.
  int references_ = 1;
  bool freed_by_program_ = false;
};

class KeyvalRegistry {
 public:
  KeyvalRegistry() = default;
  ~KeyvalRegistry();
  KeyvalRegistry(const KeyvalRegistry&) = delete;
  KeyvalRegistry& operator=(const KeyvalRegistry&) = delete;

  using Callbacks = Keyval::Callbacks;

  // A new keyval; returns its id, or MPI_KEYVAL_INVALID when ids ran out.
  int Create(const Callbacks& callbacks, void* extra_state);

  // The live keyval `id` of `kind`, retained for the caller (who releases
  // it); nullptr for an id never issued, gone, or of another kind.
  Keyval* Acquire(int id, AttributeObjectKind kind);
  void Retain(Keyval* keyval);
  void Release(Keyval* keyval);

  enum class FreeResult { kFreed, kAlreadyFreed, kInvalid };
  // MPI_Comm_free_keyval: drops the program's reference.
  FreeResult Free(int id, AttributeObjectKind kind);

  // How many keyvals are alive (tests).
  size_t live() const;

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<int, Keyval*> keyvals_;  // guarded by mutex_
  // First id handed out: far above the predefined attribute keys.
  int next_id_ = 1 << 20;  // guarded by mutex_
};

// The keyvals of this process. Never destroyed, so attribute stores of
// objects a program never freed can release theirs at any time.
KeyvalRegistry& ProcessKeyvals();

// A callback's failure, for the caller to raise.
struct AttributeFailure {
  int code = MPI_SUCCESS;  // what the callback returned
  int keyval = 0;
  bool ok() const { return code == MPI_SUCCESS; }
};

class AttributeStore {
 public:
  explicit AttributeStore(KeyvalRegistry* registry) : registry_(registry) {}
  // Releases the keyvals still held, without calling delete callbacks:
  // the owner runs DeleteAll first where MPI says callbacks run.
  ~AttributeStore();
  AttributeStore(const AttributeStore&) = delete;
  AttributeStore& operator=(const AttributeStore&) = delete;

  // Sets `keyval` to `value` on `object`; a previous value is deleted first
  // (its delete callback runs; if that fails, the old value stays). The
  // attribute counts as set now (it moves to the end of the order).
  AttributeFailure Set(uintptr_t object, Keyval* keyval, void* value);
  // Whether `keyval` is set, and its value.
  bool Get(const Keyval* keyval, void** value) const;
  // Deletes the attribute (delete callback first; kept if it fails). Not
  // being set is no error.
  AttributeFailure Delete(uintptr_t object, Keyval* keyval);
  // Copies every attribute into `target` (MPI_Comm_dup), in set order,
  // running copy callbacks with `object` as the old object's handle. On a
  // failure, `target` keeps what was copied before it.
  AttributeFailure CopyTo(uintptr_t object, AttributeStore& target) const;
  // Deletes every attribute, the most recently set first. On a failure the
  // failing attribute and those set before it stay.
  AttributeFailure DeleteAll(uintptr_t object);

  bool empty() const;
  // Keyval ids in set order (tests).
  std::vector<int> Order() const;

 private:
  struct Attribute {
    Keyval* keyval;  // one reference held by this entry
    void* value;
  };
  // Adds or replaces without callbacks (the value was copied or its
  // predecessor deleted already).
  void Put(Keyval* keyval, void* value);

  KeyvalRegistry* const registry_;
  mutable std::mutex mutex_;
  std::vector<Attribute> attributes_;  // guarded by mutex_; set order
};

}  // namespace minimpi

#endif  // MINIMPI_MPI_OBJECTS_ATTRIBUTES_H_
