// Datatypes: sizes and extents, counts in a status.
#include <climits>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"

using minimpi::Datatype;
using minimpi::RaiseError;

namespace {

// The datatype a handle names for a query call, or an error.
int QueryType(const char* call, MPI_Datatype handle, const Datatype** type) {
  *type = minimpi::LookupDatatype(handle);
  if (*type != nullptr) return MPI_SUCCESS;
  return RaiseError(nullptr, call, MPI_ERR_TYPE,
                    handle == MPI_DATATYPE_NULL
                        ? "invalid datatype (MPI_DATATYPE_NULL)"
                        : "invalid datatype (freed, or never a datatype)");
}

// A 64-bit result into an int output, MPI_UNDEFINED when it does not fit.
int ClampToInt(int64_t value) {
  return value > INT_MAX ? MPI_UNDEFINED : static_cast<int>(value);
}

// MPI_Get_count: whole items of `type` in the status's bytes.
int64_t CountOf(const MPI_Status* status, const Datatype& type) {
  const uint64_t bytes = minimpi::StatusBytes(status);
  if (type.size() == 0) return bytes == 0 ? 0 : MPI_UNDEFINED;
  if (bytes % type.size() != 0) return MPI_UNDEFINED;
  return static_cast<int64_t>(bytes / type.size());
}

// MPI_Get_elements: basic elements in the status's bytes.
int64_t ElementsOf(const MPI_Status* status, const Datatype& type) {
  const int64_t elements = type.layout().ElementsIn(
      static_cast<int64_t>(minimpi::StatusBytes(status)));
  return elements < 0 ? MPI_UNDEFINED : elements;
}

}  // namespace

extern "C" {

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  constexpr const char* kCall = "MPI_Type_size";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  if (int error = QueryType(kCall, datatype, &type)) return error;
  *size = ClampToInt(type->size());
  return MPI_SUCCESS;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb,
                         MPI_Aint* extent) {
  constexpr const char* kCall = "MPI_Type_get_extent";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  if (int error = QueryType(kCall, datatype, &type)) return error;
  *lb = type->layout().lb();
  *extent = type->extent();
  return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype,
                   int* count) {
  constexpr const char* kCall = "MPI_Get_count";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  if (int error = QueryType(kCall, datatype, &type)) return error;
  const int64_t items = CountOf(status, *type);
  *count = items == MPI_UNDEFINED ? MPI_UNDEFINED : ClampToInt(items);
  return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype,
                      int* count) {
  constexpr const char* kCall = "MPI_Get_elements";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  if (int error = QueryType(kCall, datatype, &type)) return error;
  const int64_t elements = ElementsOf(status, *type);
  *count = elements == MPI_UNDEFINED ? MPI_UNDEFINED : ClampToInt(elements);
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Type_size)
MINIMPI_EXPORT(Type_get_extent)
MINIMPI_EXPORT(Get_count)
MINIMPI_EXPORT(Get_elements)
