// Datatype queries: size, extent and true extent in their int, _x and _c
// forms; counts in a status; names; MPI_Type_match_size and
// MPI_Type_get_value_index; addresses (MPI_Get_address, MPI_Aint_add,
// MPI_Aint_diff).
//
// The int forms report MPI_UNDEFINED for a value an int cannot hold, as
// the standard says for MPI_Type_size and MPI_Get_count/elements; the
// MPI_Aint and MPI_Count forms report every value.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/datatype_util.h"

using minimpi::CheckDatatype;
using minimpi::CheckOutput;
using minimpi::ClampToInt;
using minimpi::Datatype;
using minimpi::RaiseError;

namespace {

// MPI_Get_count: whole items of `type` in the status's bytes; MPI_UNDEFINED
// when the bytes end inside an item. A zero-size type counts 0 items, as
// MPICH reports it.
int64_t CountOf(const MPI_Status* status, const Datatype& type) {
  const uint64_t bytes = minimpi::StatusBytes(status);
  if (type.size() == 0) return 0;
  if (bytes % type.size() != 0) return MPI_UNDEFINED;
  return static_cast<int64_t>(bytes / type.size());
}

// MPI_Get_elements: basic elements in the status's bytes; MPI_UNDEFINED when
// the bytes end inside a basic element.
int64_t ElementsOf(const MPI_Status* status, const Datatype& type) {
  const int64_t elements = type.layout().ElementsIn(
      static_cast<int64_t>(minimpi::StatusBytes(status)));
  return elements < 0 ? int64_t{MPI_UNDEFINED} : elements;
}

// The checks every query of one datatype shares.
template <typename Out>
int QueryType(const char* call, MPI_Datatype handle, Out* out,
              const char* out_name, const Datatype** type) {
  if (int error = CheckDatatype(call, handle, "datatype", type)) return error;
  return CheckOutput(call, out, out_name);
}

template <typename Out>
int QueryStatus(const char* call, const MPI_Status* status, MPI_Datatype handle,
                Out* count, const Datatype** type) {
  if (status == MPI_STATUS_IGNORE) {
    return RaiseError(nullptr, call, MPI_ERR_ARG,
                      "status is MPI_STATUS_IGNORE (a null pointer)");
  }
  return QueryType(call, handle, count, "count", type);
}

// Int forms keep MPI_UNDEFINED as it is and clamp what does not fit.
int ToIntCount(int64_t value) {
  return value == MPI_UNDEFINED ? MPI_UNDEFINED : ClampToInt(value);
}

template <typename Out>
int TypeSize(const char* call, MPI_Datatype datatype, Out* size) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* type;
  if (int error = QueryType(call, datatype, size, "size", &type)) {
    return error;
  }
  if constexpr (std::is_same_v<Out, int>) {
    *size = ClampToInt(type->size());
  } else {
    *size = type->size();
  }
  return MPI_SUCCESS;
}

// MPI_Type_get_extent / get_true_extent in every form: `true_bounds` picks
// which bounds.
template <typename Out>
int TypeExtent(const char* call, bool true_bounds, MPI_Datatype datatype,
               Out* lb, Out* extent) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* type;
  if (int error = QueryType(call, datatype, lb, true_bounds ? "true_lb" : "lb",
                            &type)) {
    return error;
  }
  if (int error =
          CheckOutput(call, extent, true_bounds ? "true_extent" : "extent")) {
    return error;
  }
  const minimpi::datatype::Layout& layout = type->layout();
  *lb = true_bounds ? layout.true_lb() : layout.lb();
  *extent = true_bounds ? layout.true_extent() : layout.extent();
  return MPI_SUCCESS;
}

template <typename Out>
int GetCount(const char* call, const MPI_Status* status, MPI_Datatype datatype,
             Out* count) {
  MINIMPI_REQUIRE_INIT(call);
  // A receiver may ask about every message of a window (OSU's and ep_rate's
  // checks do): the checks run inline, and only a bad argument goes through
  // QueryStatus, which finds and raises what was wrong.
  const Datatype* type = minimpi::LookupDatatype(datatype);
  if (status == MPI_STATUS_IGNORE || type == nullptr || count == nullptr)
      [[unlikely]] {
    return QueryStatus(call, status, datatype, count, &type);
  }
  const int64_t items = CountOf(status, *type);
  if constexpr (std::is_same_v<Out, int>) {
    *count = ToIntCount(items);
  } else {
    *count = items;
  }
  return MPI_SUCCESS;
}

template <typename Out>
int GetElements(const char* call, const MPI_Status* status,
                MPI_Datatype datatype, Out* count) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* type;
  if (int error = QueryStatus(call, status, datatype, count, &type)) {
    return error;
  }
  const int64_t elements = ElementsOf(status, *type);
  if constexpr (std::is_same_v<Out, int>) {
    *count = ToIntCount(elements);
  } else {
    *count = elements;
  }
  return MPI_SUCCESS;
}

// MPI_Type_match_size's candidates: the size-specific Fortran types (the
// standard's MPI_REALn, MPI_INTEGERn, MPI_COMPLEXn), which are predefined
// named types a program may not free. The one whose size matches wins.
const MPI_Datatype kIntegerClass[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
                                      MPI_INTEGER8, MPI_INTEGER16};
const MPI_Datatype kRealClass[] = {MPI_REAL4, MPI_REAL8, MPI_REAL16};
// MPI-5.0's ABI names the LOGICAL class (MPIX_TYPECLASS_LOGICAL).
const MPI_Datatype kLogicalClass[] = {MPI_LOGICAL1, MPI_LOGICAL2, MPI_LOGICAL4,
                                      MPI_LOGICAL8, MPI_LOGICAL16};
const MPI_Datatype kComplexClass[] = {MPI_COMPLEX8, MPI_COMPLEX16,
                                      MPI_COMPLEX32};

// The predefined pair types of MPI_MINLOC and MPI_MAXLOC (MPI-4.1 section
// 6.9.4), by their value and index types.
struct PairType {
  MPI_Datatype value;
  MPI_Datatype index;
  MPI_Datatype pair;
};
const PairType kPairTypes[] = {
    {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
    {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
    {MPI_LONG, MPI_INT, MPI_LONG_INT},
    {MPI_INT, MPI_INT, MPI_2INT},
    {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
    {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
    {MPI_REAL, MPI_REAL, MPI_2REAL},
    {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
    {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
};

}  // namespace

extern "C" {

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  return TypeSize("MPI_Type_size", datatype, size);
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  return TypeSize("MPI_Type_size_x", datatype, size);
}

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size) {
  return TypeSize("MPI_Type_size_c", datatype, size);
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb,
                         MPI_Aint* extent) {
  return TypeExtent("MPI_Type_get_extent", /*true_bounds=*/false, datatype, lb,
                    extent);
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb,
                           MPI_Count* extent) {
  return TypeExtent("MPI_Type_get_extent_x", /*true_bounds=*/false, datatype,
                    lb, extent);
}

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb,
                           MPI_Count* extent) {
  return TypeExtent("MPI_Type_get_extent_c", /*true_bounds=*/false, datatype,
                    lb, extent);
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb,
                              MPI_Aint* true_extent) {
  return TypeExtent("MPI_Type_get_true_extent", /*true_bounds=*/true, datatype,
                    true_lb, true_extent);
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb,
                                MPI_Count* true_extent) {
  return TypeExtent("MPI_Type_get_true_extent_x", /*true_bounds=*/true,
                    datatype, true_lb, true_extent);
}

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb,
                                MPI_Count* true_extent) {
  return TypeExtent("MPI_Type_get_true_extent_c", /*true_bounds=*/true,
                    datatype, true_lb, true_extent);
}

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype,
                   int* count) {
  return GetCount("MPI_Get_count", status, datatype, count);
}

int PMPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype,
                     MPI_Count* count) {
  return GetCount("MPI_Get_count_c", status, datatype, count);
}

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype,
                      int* count) {
  return GetElements("MPI_Get_elements", status, datatype, count);
}

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype,
                        MPI_Count* count) {
  return GetElements("MPI_Get_elements_x", status, datatype, count);
}

int PMPI_Get_elements_c(const MPI_Status* status, MPI_Datatype datatype,
                        MPI_Count* count) {
  return GetElements("MPI_Get_elements_c", status, datatype, count);
}

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  constexpr const char* kCall = "MPI_Type_get_name";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  if (int error = QueryType(kCall, datatype, type_name, "type_name", &type)) {
    return error;
  }
  if (int error = CheckOutput(kCall, resultlen, "resultlen")) return error;
  // Names are stored truncated (MPI_Type_set_name), so the copy always
  // fits with its terminating null.
  const std::string name = type->name();
  std::memcpy(type_name, name.c_str(), name.size() + 1);
  *resultlen = static_cast<int>(name.size());
  return MPI_SUCCESS;
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  constexpr const char* kCall = "MPI_Type_set_name";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  if (int error = QueryType(kCall, datatype, type_name, "type_name", &type)) {
    return error;
  }
  // Longer names are truncated, as MPI-4.1 section 7.8 says for every
  // object name; a predefined type may be renamed too.
  type->set_name(
      std::string(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1)));
  return MPI_SUCCESS;
}

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  constexpr const char* kCall = "MPI_Type_match_size";
  MINIMPI_REQUIRE_INIT(kCall);
  if (int error = CheckOutput(kCall, datatype, "datatype")) return error;
  std::span<const MPI_Datatype> candidates;
  const char* class_name = "";
  switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
      candidates = kIntegerClass;
      class_name = "MPI_TYPECLASS_INTEGER";
      break;
    case MPI_TYPECLASS_REAL:
      candidates = kRealClass;
      class_name = "MPI_TYPECLASS_REAL";
      break;
    case MPI_TYPECLASS_COMPLEX:
      candidates = kComplexClass;
      class_name = "MPI_TYPECLASS_COMPLEX";
      break;
    case MPIX_TYPECLASS_LOGICAL:
      candidates = kLogicalClass;
      class_name = "MPIX_TYPECLASS_LOGICAL";
      break;
    default:
      return RaiseError(
          nullptr, kCall, MPI_ERR_ARG,
          absl::StrFormat("invalid typeclass %d (must be MPI_TYPECLASS_"
                          "INTEGER, _REAL, _COMPLEX or MPIX_TYPECLASS_LOGICAL)",
                          typeclass));
  }
  for (const MPI_Datatype candidate : candidates) {
    if (Datatype::FindPredefined(candidate)->size() == size) {
      *datatype = candidate;
      return MPI_SUCCESS;
    }
  }
  return RaiseError(nullptr, kCall, MPI_ERR_ARG,
                    absl::StrFormat("no predefined type of %s has size %d",
                                    class_name, size));
}

int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype* pair_type) {
  constexpr const char* kCall = "MPI_Type_get_value_index";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* value;
  const Datatype* index;
  if (int error = CheckDatatype(kCall, value_type, "value_type", &value)) {
    return error;
  }
  if (int error = CheckDatatype(kCall, index_type, "index_type", &index)) {
    return error;
  }
  if (int error = CheckOutput(kCall, pair_type, "pair_type")) return error;
  // MPI-4.1: the predefined pair type when one exists, else
  // MPI_DATATYPE_NULL (no error).
  *pair_type = MPI_DATATYPE_NULL;
  for (const PairType& pair : kPairTypes) {
    if (pair.value == value_type && pair.index == index_type) {
      *pair_type = pair.pair;
      break;
    }
  }
  return MPI_SUCCESS;
}

int PMPI_Get_address(const void* location, MPI_Aint* address) {
  // Pure arithmetic: valid before MPI_Init too, as in MPICH. Only an error
  // needs the library, to reach an error handler.
  if (address == nullptr) [[unlikely]] {
    MINIMPI_REQUIRE_INIT("MPI_Get_address");
    return minimpi::NullPointerError("MPI_Get_address", "address");
  }
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

// Address arithmetic on the flat address space: MPI_BOTTOM is 0, so
// absolute addresses and displacements are the same integers. Computed
// unsigned, so that wrapping is defined.
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<uintptr_t>(base) +
                               static_cast<uintptr_t>(disp));
}

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<uintptr_t>(addr1) -
                               static_cast<uintptr_t>(addr2));
}

}  // extern "C"

MINIMPI_EXPORT(Type_size)
MINIMPI_EXPORT(Type_size_x)
MINIMPI_EXPORT(Type_size_c)
MINIMPI_EXPORT(Type_get_extent)
MINIMPI_EXPORT(Type_get_extent_x)
MINIMPI_EXPORT(Type_get_extent_c)
MINIMPI_EXPORT(Type_get_true_extent)
MINIMPI_EXPORT(Type_get_true_extent_x)
MINIMPI_EXPORT(Type_get_true_extent_c)
MINIMPI_EXPORT(Get_count)
MINIMPI_EXPORT(Get_count_c)
MINIMPI_EXPORT(Get_elements)
MINIMPI_EXPORT(Get_elements_x)
MINIMPI_EXPORT(Get_elements_c)
MINIMPI_EXPORT(Type_get_name)
MINIMPI_EXPORT(Type_set_name)
MINIMPI_EXPORT(Type_match_size)
MINIMPI_EXPORT(Type_get_value_index)
MINIMPI_EXPORT(Get_address)
MINIMPI_EXPORT(Aint_add)
MINIMPI_EXPORT(Aint_diff)
