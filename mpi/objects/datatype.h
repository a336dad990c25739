// Datatypes as MPI objects: what a datatype handle names. The layout of the
// data (bounds, runs, signature) is mpi/datatype's datatype::Layout; this
// object adds what MPI attaches to a handle: a name, the constructor call
// that made it (MPI_Type_get_envelope/contents), whether it is committed,
// its attributes, and a reference count.
//
// Predefined datatypes are one immortal object per predefined handle, found
// by one index. Derived ones live in the instance's handle table.
//
// The fast path of a send or receive needs three facts, kept in the object
// so that no second pointer is followed: the size of one item, its extent,
// and whether items lie back to back with nothing between them ("dense":
// count items are count * size bytes from the buffer pointer, copied as
// they lie).
//
// Owned by: mpi/datatype. Called by: the bindings (argument checks, every
// MPI_Type_* call), mpi/objects/op.cc.
#ifndef MINIMPI_MPI_OBJECTS_DATATYPE_H_
#define MINIMPI_MPI_OBJECTS_DATATYPE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "mpi/objects/attributes.h"
#include "mpi/datatype/layout.h"
#include "mpi/datatype/predefined.h"
#include "mpi/mpi.h"

namespace minimpi {

class Datatype {
 public:
  // The constructor call that made a derived type, as
  // MPI_Type_get_envelope / MPI_Type_get_contents report it. `types` hold a
  // reference each (see Retain).
  struct Envelope {
    int combiner = MPI_COMBINER_NAMED;
    std::vector<int> integers;
    std::vector<MPI_Aint> addresses;
    std::vector<MPI_Count> large_counts;  // the _c constructors' counts
    std::vector<const Datatype*> types;
  };

  // A derived type with one reference (its handle's), not yet committed.
  // Takes a reference to each type in `envelope.types`.
  static Datatype* NewDerived(datatype::LayoutRef layout, Envelope envelope);

  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;

  // The handle that names this type: the predefined constant, or what the
  // handle table issued (set by the binding that created it).
  MPI_Datatype handle() const { return handle_; }
  void set_handle(MPI_Datatype handle) { handle_ = handle; }

  bool predefined() const { return predefined_; }
  bool committed() const { return committed_.load(std::memory_order_acquire); }
  // Const, like Retain: commit state and name are metadata a program may
  // change through any handle that names the object (typebind).
  void Commit() const { committed_.store(true, std::memory_order_release); }

  const datatype::Layout& layout() const { return *layout_; }
  const datatype::Layout* layout_pointer() const { return layout_.get(); }
  int64_t size() const { return size_; }
  int64_t extent() const { return extent_; }
  // Items lie back to back from the buffer pointer with no gap: count items
  // are the count * size() bytes at the buffer.
  bool dense() const { return dense_; }

  std::string name() const;
  void set_name(const std::string& name) const;

  const Envelope& envelope() const { return envelope_; }

  // Derived types are reference counted: the handle holds one reference,
  // and so does every derived type whose envelope names this one (so that
  // MPI_Type_get_contents can still return it after the program freed it).
  // Predefined types ignore both.
  void Retain() const;
  void Release() const;

  // The predefined type `handle` names, or nullptr. Inline: every call
  // that moves data looks its datatype up.
  static const Datatype* FindPredefined(MPI_Datatype handle) {
    const uintptr_t index = reinterpret_cast<uintptr_t>(handle) -
                            datatype::predefined_internal::kFirstHandle;
    if (index >= datatype::predefined_internal::kHandleCount) return nullptr;
    return PredefinedByIndex()[index];
  }

  // --- compat: attributes (MPI_Type_set_attr). They belong to the object,
  // so every handle naming it sees them (MPI_Type_get_contents hands out
  // more handles to one object); predefined types carry them too. Metadata
  // like the name, so reachable through a const type.
  AttributeStore& attributes() const { return attributes_; }
  // The handles a program holds to a derived type. Freeing the last one is
  // what runs the attributes' delete callbacks (MPI_Type_free); references
  // the library keeps (envelopes, pending operations) do not delay them.
  void AddHandle() const { handles_.fetch_add(1, std::memory_order_relaxed); }
  // Returns how many handles are left.
  int DropHandle() const {
    return handles_.fetch_sub(1, std::memory_order_acq_rel) - 1;
  }

 private:
  // Predefined types by handle - kFirstHandle (nullptr where no type is),
  // built on first use: a function-local static, as the tables it reads are
  // themselves built when mpi/datatype loads, in an order no other file can
  // rely on. Afterwards a lookup costs the guard's load and the entry's.
  static const Datatype* const* PredefinedByIndex() {
    static const Datatype* const* const table = BuildPredefinedTable();
    return table;
  }
  static const Datatype* const* BuildPredefinedTable();

  friend class PredefinedDatatypes;
  Datatype(datatype::LayoutRef layout, bool predefined);
  ~Datatype();

  datatype::LayoutRef layout_;
  const int64_t size_;
  const int64_t extent_;
  const bool dense_;
  const bool predefined_;
  MPI_Datatype handle_ = MPI_DATATYPE_NULL;
  mutable std::atomic<bool> committed_{false};
  mutable std::atomic<int> references_{1};
  mutable std::mutex name_mutex_;
  mutable std::string name_;  // guarded by name_mutex_
  Envelope envelope_;
  mutable AttributeStore attributes_{&ProcessKeyvals()};  // compat
  mutable std::atomic<int> handles_{0};                   // compat
};

}  // namespace minimpi

#endif  // MINIMPI_MPI_OBJECTS_DATATYPE_H_
