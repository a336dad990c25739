#include "mpi/objects/datatype.h"

#include <array>
#include <memory>
#include <utility>

namespace minimpi {

namespace {

bool IsDense(const datatype::Layout& layout) {
  // Two items, so that the extent counts: one item can be contiguous while
  // the next starts after a gap.
  return layout.true_lb() == 0 && layout.size() == layout.extent() &&
         layout.IsContiguous(2);
}

}  // namespace

// One immortal object per predefined handle.
class PredefinedDatatypes {
 public:
  PredefinedDatatypes() {
    for (const datatype::PredefinedType* type : datatype::AllPredefined()) {
      auto* object = new Datatype(datatype::Predefined(type->handle),
                                  /*predefined=*/true);
      object->handle_ = type->handle;
      object->name_ = NameOf(*type);
      object->committed_.store(true, std::memory_order_relaxed);
      by_index_[Index(type->handle)] = object;
    }
  }

  const Datatype* const* table() const { return by_index_.data(); }

 private:
  // MPI_Type_get_name's answer. Two handles have two standard names each;
  // they answer with the name MPI-4.1's table of C types lists first
  // (MPI_LONG_LONG_INT, MPI_C_COMPLEX; the others are "synonyms"), which is
  // also what MPICH answers and what programs written for it compare with.
  static const char* NameOf(const datatype::PredefinedType& type) {
    if (type.handle == MPI_LONG_LONG) return "MPI_LONG_LONG_INT";
    if (type.handle == MPI_C_FLOAT_COMPLEX) return "MPI_C_COMPLEX";
    return type.name;
  }

  static uintptr_t Index(MPI_Datatype handle) {
    return reinterpret_cast<uintptr_t>(handle) -
           datatype::predefined_internal::kFirstHandle;
  }

  std::array<const Datatype*, datatype::predefined_internal::kHandleCount>
      by_index_{};
};

namespace {
// Built on first use (see Datatype::PredefinedByIndex).
const PredefinedDatatypes& Predefined() {
  static const PredefinedDatatypes* table = new PredefinedDatatypes();
  return *table;
}
}  // namespace

Datatype::Datatype(datatype::LayoutRef layout, bool predefined)
    : layout_(std::move(layout)),
      size_(layout_->size()),
      extent_(layout_->extent()),
      dense_(IsDense(*layout_)),
      predefined_(predefined) {}

Datatype::~Datatype() {
  for (const Datatype* type : envelope_.types) type->Release();
}

Datatype* Datatype::NewDerived(datatype::LayoutRef layout, Envelope envelope) {
  auto* type = new Datatype(std::move(layout), /*predefined=*/false);
  for (const Datatype* member : envelope.types) member->Retain();
  type->envelope_ = std::move(envelope);
  return type;
}

const Datatype* const* Datatype::BuildPredefinedTable() {
  return Predefined().table();
}

std::string Datatype::name() const {
  std::lock_guard<std::mutex> lock(name_mutex_);
  return name_;
}

void Datatype::set_name(const std::string& name) const {
  std::lock_guard<std::mutex> lock(name_mutex_);
  name_ = name;
}

void Datatype::Retain() const {
  if (!predefined_) references_.fetch_add(1, std::memory_order_relaxed);
}

void Datatype::Release() const {
  if (predefined_) return;
  if (references_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

}  // namespace minimpi
