// The MPI-1 calls MPI-3.0 removed (MPI-3.0 section 16.2), kept because old
// programs and MPICH's test helpers (dtpools, util/dtypes.c) still call
// them. Each is its MPI-2 replacement under its old name and signature, and
// an error names the call the program made:
//
//   MPI_Type_hvector     MPI_Type_create_hvector
//   MPI_Type_hindexed    MPI_Type_create_hindexed
//   MPI_Type_struct      MPI_Type_create_struct
//   MPI_Address          MPI_Get_address
//   MPI_Type_extent      MPI_Type_get_extent (the extent)
//   MPI_Type_lb          MPI_Type_get_extent (the lower bound)
//   MPI_Type_ub          MPI_Type_get_extent (lb + extent)
//   MPI_Errhandler_create, _set, _get
//                        MPI_Comm_create_errhandler, _set_, _get_
//
// From C, MPI_Type_hvector and MPI_Type_hindexed take byte strides as
// MPI_Aint, exactly as their MPI-2 forms do, so MPI_Type_get_envelope
// reports MPI_COMBINER_HVECTOR and MPI_COMBINER_HINDEXED for them (the
// _INTEGER combiners were Fortran's). The MPI_LB and MPI_UB marker types are
// not provided: a program sets bounds with MPI_Type_create_resized.
#include "absl/strings/str_cat.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/datatype_constructors.h"
#include "mpi/bindings/datatype_util.h"
#include "mpi/bindings/errhandler_util.h"

using minimpi::Datatype;

namespace {

// One bound of a type (MPI_Type_extent, _lb, _ub).
enum class Bound { kExtent, kLower, kUpper };

int TypeBound(const char* call, MPI_Datatype datatype, Bound bound,
              MPI_Aint* value) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* type;
  if (int error = minimpi::CheckDatatype(call, datatype, "datatype", &type)) {
    return error;
  }
  if (int error = minimpi::CheckOutput(
          call, value, bound == Bound::kExtent ? "extent" : "displacement")) {
    return error;
  }
  const minimpi::datatype::Layout& layout = type->layout();
  switch (bound) {
    case Bound::kExtent:
      *value = layout.extent();
      break;
    case Bound::kLower:
      *value = layout.lb();
      break;
    case Bound::kUpper:
      *value = layout.lb() + layout.extent();
      break;
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride,
                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return minimpi::TypeCreateHvector("MPI_Type_hvector", count, blocklength,
                                    stride, oldtype, newtype);
}

int PMPI_Type_hindexed(int count, const int array_of_blocklengths[],
                       const MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return minimpi::TypeCreateHindexed("MPI_Type_hindexed", count,
                                     array_of_blocklengths,
                                     array_of_displacements, oldtype, newtype);
}

int PMPI_Type_struct(int count, const int array_of_blocklengths[],
                     const MPI_Aint array_of_displacements[],
                     const MPI_Datatype array_of_types[],
                     MPI_Datatype* newtype) {
  return minimpi::TypeCreateStruct(
      "MPI_Type_struct", count, array_of_blocklengths, array_of_displacements,
      array_of_types, newtype);
}

int PMPI_Address(const void* location, MPI_Aint* address) {
  // Pure arithmetic, like MPI_Get_address: only an error needs the library.
  if (address == nullptr) [[unlikely]] {
    MINIMPI_REQUIRE_INIT("MPI_Address");
    return minimpi::NullPointerError("MPI_Address", "address");
  }
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  return TypeBound("MPI_Type_extent", datatype, Bound::kExtent, extent);
}

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  return TypeBound("MPI_Type_lb", datatype, Bound::kLower, displacement);
}

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  return TypeBound("MPI_Type_ub", datatype, Bound::kUpper, displacement);
}

int PMPI_Errhandler_create(MPI_Handler_function* function,
                           MPI_Errhandler* errhandler) {
  return minimpi::CreateCommErrhandler("MPI_Errhandler_create", function,
                                       errhandler);
}

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
  return minimpi::SetCommErrhandler("MPI_Errhandler_set", comm, errhandler);
}

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return minimpi::GetCommErrhandler("MPI_Errhandler_get", comm, errhandler);
}

}  // extern "C"

MINIMPI_EXPORT(Type_hvector)
MINIMPI_EXPORT(Type_hindexed)
MINIMPI_EXPORT(Type_struct)
MINIMPI_EXPORT(Address)
MINIMPI_EXPORT(Type_extent)
MINIMPI_EXPORT(Type_lb)
MINIMPI_EXPORT(Type_ub)
MINIMPI_EXPORT(Errhandler_create)
MINIMPI_EXPORT(Errhandler_set)
MINIMPI_EXPORT(Errhandler_get)
