#include "mpi/bindings/object_handles.h"

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "mpi/objects/derived_datatypes.h"
#include "mpi/instance/instance.h"

namespace minimpi {

const Datatype* LookupDerivedDatatype(MPI_Datatype handle) {
  if (reinterpret_cast<uintptr_t>(handle) <= 0xfff ||
      Instance::state() != LibraryState::kInitialized) {
    return nullptr;
  }
  return Instance::Get().datatypes().Lookup(
      reinterpret_cast<uintptr_t>(handle));
}

namespace {

// A user operation from MPI_Op_create steps through a count past INT_MAX by
// the extent of the datatype; derived types are found through our tables.
int64_t DerivedDatatypeExtent(MPI_Datatype handle) {
  const Datatype* type = LookupDerivedDatatype(handle);
  return type != nullptr ? type->extent() : 0;
}

[[maybe_unused]] const bool kUserOpExtentResolverInstalled = [] {
  SetUserOpExtentResolver(&DerivedDatatypeExtent);
  return true;
}();

}  // namespace

absl::StatusOr<MPI_Datatype> NewDerivedDatatype(Datatype::Envelope envelope) {
  absl::StatusOr<Datatype*> type = BuildDerivedDatatype(std::move(envelope));
  if (!type.ok()) return type.status();
  const uintptr_t handle = Instance::Get().datatypes().Insert(*type);
  if (handle == 0) {
    (*type)->Release();
    return absl::ResourceExhaustedError("too many datatypes exist");
  }
  (*type)->set_handle(reinterpret_cast<MPI_Datatype>(handle));
  (*type)->AddHandle();
  return reinterpret_cast<MPI_Datatype>(handle);
}

MPI_Datatype NewHandle(const Datatype* type) {
  type->Retain();
  const uintptr_t handle =
      Instance::Get().datatypes().Insert(const_cast<Datatype*>(type));
  if (handle == 0) {
    type->Release();
    return MPI_DATATYPE_NULL;
  }
  type->AddHandle();
  return reinterpret_cast<MPI_Datatype>(handle);
}

bool FreeHandle(MPI_Datatype handle) {
  Datatype* type =
      Instance::Get().datatypes().Remove(reinterpret_cast<uintptr_t>(handle));
  if (type == nullptr) return false;
  type->Release();
  return true;
}

const Op* LookupOp(MPI_Op handle) {
  if (const Op* predefined = LookupPredefinedOp(handle)) return predefined;
  if (!MayNameUserOp(handle)) return nullptr;
  return Instance::Get().ops().Lookup(reinterpret_cast<uintptr_t>(handle));
}

MPI_Op RegisterUserOp(Op* op) {
  return reinterpret_cast<MPI_Op>(Instance::Get().ops().Insert(op));
}

bool FreeUserOp(MPI_Op handle) {
  // Every copy of the handle stops working now; schedules still using the
  // operation keep it alive until they finish.
  Op* op = Instance::Get().ops().Remove(reinterpret_cast<uintptr_t>(handle));
  if (op == nullptr) return false;
  op->Release();
  return true;
}

}  // namespace minimpi
