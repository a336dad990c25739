// Attribute caching on datatypes: MPI_Type_create_keyval,
// MPI_Type_free_keyval, MPI_Type_set_attr, MPI_Type_get_attr,
// MPI_Type_delete_attr, and the copy and delete callbacks MPI_Type_dup and
// MPI_Type_free run. The store is the Datatype object's (mpi/datatype.h), so
// attributes set through one handle are seen through every handle of the
// same type, predefined types included.
#include "mpi/bindings/datatype_attributes.h"

#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/datatype_util.h"
#include "mpi/bindings/keyval_util.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/objects/derived_datatypes.h"

using minimpi::AttributeFailure;
using minimpi::AttributeObjectKind;
using minimpi::Datatype;
using minimpi::Keyval;

namespace minimpi {

int CopyTypeAttributesOrUndo(const char* call, const Datatype* old,
                             MPI_Datatype old_handle, MPI_Datatype* newtype) {
  const Datatype* created = LookupDatatype(*newtype);
  const AttributeFailure failure =
      old->attributes().CopyTo(HandleValue(old_handle), created->attributes());
  if (failure.ok()) return MPI_SUCCESS;
  // What was copied goes as it would at MPI_Type_free; a second failure
  // there changes nothing about the one reported.
  created->attributes().DeleteAll(HandleValue(*newtype));
  created->DropHandle();
  FreeHandle(*newtype);
  *newtype = MPI_DATATYPE_NULL;
  return RaiseAttributeFailure(call, nullptr, failure, "copy");
}

int DeleteTypeAttributesOnFree(const char* call, const Datatype* type,
                               MPI_Datatype handle) {
  if (type->predefined() || type->DropHandle() > 0) return MPI_SUCCESS;
  const AttributeFailure failure =
      type->attributes().DeleteAll(HandleValue(handle));
  if (failure.ok()) return MPI_SUCCESS;
  type->AddHandle();  // the handle stays valid: the type is not freed
  return RaiseAttributeFailure(call, nullptr, failure, "delete");
}

}  // namespace minimpi

namespace {

// The datatype and its keyval, for the three attribute calls; the keyval is
// retained (release it with ProcessKeyvals().Release).
int PrepareAttributeCall(const char* call, MPI_Datatype datatype, int keyval,
                         const Datatype** type, Keyval** key) {
  if (int error = minimpi::CheckDatatype(call, datatype, "datatype", type)) {
    return error;
  }
  return minimpi::AcquireKeyval(call, AttributeObjectKind::kDatatype, keyval,
                                key);
}

}  // namespace

extern "C" {

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                            MPI_Type_delete_attr_function* type_delete_attr_fn,
                            int* type_keyval, void* extra_state) {
  constexpr const char* kCall = "MPI_Type_create_keyval";
  MINIMPI_REQUIRE_INIT(kCall);
  return minimpi::CreateKeyval(
      kCall, Keyval::ForDatatypes(type_copy_attr_fn, type_delete_attr_fn),
      type_keyval, extra_state);
}

int PMPI_Type_free_keyval(int* type_keyval) {
  constexpr const char* kCall = "MPI_Type_free_keyval";
  MINIMPI_REQUIRE_INIT(kCall);
  return minimpi::FreeKeyval(kCall, AttributeObjectKind::kDatatype,
                             type_keyval);
}

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval,
                       void* attribute_val) {
  constexpr const char* kCall = "MPI_Type_set_attr";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  Keyval* key;
  if (int error =
          PrepareAttributeCall(kCall, datatype, type_keyval, &type, &key)) {
    return error;
  }
  const AttributeFailure failure = type->attributes().Set(
      minimpi::HandleValue(datatype), key, attribute_val);
  minimpi::ProcessKeyvals().Release(key);
  if (!failure.ok()) {
    return minimpi::RaiseAttributeFailure(kCall, nullptr, failure, "delete");
  }
  return MPI_SUCCESS;
}

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval,
                       void* attribute_val, int* flag) {
  constexpr const char* kCall = "MPI_Type_get_attr";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  if (int error = minimpi::CheckDatatype(kCall, datatype, "datatype", &type)) {
    return error;
  }
  if (int error = minimpi::CheckOutput(kCall, attribute_val, "attribute_val")) {
    return error;
  }
  if (int error = minimpi::CheckOutput(kCall, flag, "flag")) return error;
  Keyval* key;
  if (int error = minimpi::AcquireKeyval(kCall, AttributeObjectKind::kDatatype,
                                         type_keyval, &key)) {
    return error;
  }
  // attribute_val is really the address of a void*.
  void* value = nullptr;
  *flag = type->attributes().Get(key, &value) ? 1 : 0;
  if (*flag) *static_cast<void**>(attribute_val) = value;
  minimpi::ProcessKeyvals().Release(key);
  return MPI_SUCCESS;
}

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  constexpr const char* kCall = "MPI_Type_delete_attr";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  Keyval* key;
  if (int error =
          PrepareAttributeCall(kCall, datatype, type_keyval, &type, &key)) {
    return error;
  }
  const AttributeFailure failure =
      type->attributes().Delete(minimpi::HandleValue(datatype), key);
  minimpi::ProcessKeyvals().Release(key);
  if (!failure.ok()) {
    return minimpi::RaiseAttributeFailure(kCall, nullptr, failure, "delete");
  }
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Type_create_keyval)
MINIMPI_EXPORT(Type_free_keyval)
MINIMPI_EXPORT(Type_set_attr)
MINIMPI_EXPORT(Type_get_attr)
MINIMPI_EXPORT(Type_delete_attr)
