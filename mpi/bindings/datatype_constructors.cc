// Datatype constructors (MPI-4.1 sections 5.1.2-5.1.7), their large-count
// _c forms, MPI_Type_dup, MPI_Type_commit and MPI_Type_free.
//
// Each binding checks its arguments, records them in the order
// MPI_Type_get_contents reports them (EnvelopeWriter), and hands the record
// to NewDerivedDatatype, which builds the type from it. The int and _c
// forms of a constructor share one template over the count type: they
// differ only in where the envelope keeps the counts.
#include "mpi/bindings/datatype_constructors.h"  // compat

#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/datatype_attributes.h"  // compat
#include "mpi/bindings/datatype_util.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/objects/derived_datatypes.h"

using minimpi::CheckArray;
using minimpi::CheckCount;
using minimpi::CheckDatatype;
using minimpi::CheckEntriesNotNegative;
using minimpi::CheckNotNegative;
using minimpi::CheckOutput;
using minimpi::Datatype;
using minimpi::EnvelopeWriter;
using minimpi::RaiseError;

namespace {

// The _c forms take MPI_Count counts; the int forms int.
template <typename Count>
constexpr bool kLargeCountForm = std::is_same_v<Count, MPI_Count>;

// Builds the recorded type and stores its handle in *newtype, or raises
// what the arguments could not make.
int Finish(const char* call, EnvelopeWriter& writer, MPI_Datatype* newtype) {
  absl::StatusOr<MPI_Datatype> handle =
      minimpi::NewDerivedDatatype(writer.Take());
  if (handle.ok()) [[likely]] {
    *newtype = *handle;
    return MPI_SUCCESS;
  }
  int error_class = MPI_ERR_ARG;
  switch (handle.status().code()) {
    case absl::StatusCode::kOutOfRange:
      error_class = MPI_ERR_COUNT;
      break;
    case absl::StatusCode::kResourceExhausted:
      error_class = MPI_ERR_OTHER;
      break;
    default:
      break;
  }
  return RaiseError(nullptr, call, error_class,
                    std::string(handle.status().message()));
}

int CheckOldAndNew(const char* call, MPI_Datatype oldtype,
                   MPI_Datatype* newtype, const Datatype** old) {
  if (int error = CheckDatatype(call, oldtype, "oldtype", old)) return error;
  return CheckOutput(call, newtype, "newtype");
}

template <typename Count>
int TypeContiguous(const char* call, Count count, MPI_Datatype oldtype,
                   MPI_Datatype* newtype) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* old;
  if (int error = CheckCount(call, count, "count")) return error;
  if (int error = CheckOldAndNew(call, oldtype, newtype, &old)) return error;
  EnvelopeWriter writer(MPI_COMBINER_CONTIGUOUS, kLargeCountForm<Count>);
  writer.Count(count);
  writer.Type(old);
  return Finish(call, writer, newtype);
}

// MPI_Type_vector (stride in items) and MPI_Type_create_hvector (in bytes).
template <typename Count, typename Stride>
int TypeVector(const char* call, int combiner, Count count, Count blocklength,
               Stride stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* old;
  if (int error = CheckCount(call, count, "count")) return error;
  if (int error = CheckNotNegative(call, blocklength, "blocklength")) {
    return error;
  }
  if (int error = CheckOldAndNew(call, oldtype, newtype, &old)) return error;
  EnvelopeWriter writer(combiner, kLargeCountForm<Count>);
  writer.Count(count);
  writer.Count(blocklength);
  if (combiner == MPI_COMBINER_VECTOR) {
    writer.Count(stride);
  } else {
    writer.ByteDisplacement(stride);
  }
  writer.Type(old);
  return Finish(call, writer, newtype);
}

// MPI_Type_indexed (displacements in items) and MPI_Type_create_hindexed
// (in bytes).
template <typename Count, typename Displacement>
int TypeIndexed(const char* call, int combiner, Count count,
                const Count blocklengths[], const Displacement displacements[],
                MPI_Datatype oldtype, MPI_Datatype* newtype) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* old;
  if (int error = CheckCount(call, count, "count")) return error;
  if (int error =
          CheckArray(call, blocklengths, count, "array_of_blocklengths")) {
    return error;
  }
  if (int error =
          CheckArray(call, displacements, count, "array_of_displacements")) {
    return error;
  }
  if (int error = CheckEntriesNotNegative(call, blocklengths, count,
                                          "array_of_blocklengths")) {
    return error;
  }
  if (int error = CheckOldAndNew(call, oldtype, newtype, &old)) return error;
  EnvelopeWriter writer(combiner, kLargeCountForm<Count>);
  writer.Count(count);
  for (Count i = 0; i < count; ++i) writer.Count(blocklengths[i]);
  for (Count i = 0; i < count; ++i) {
    if (combiner == MPI_COMBINER_INDEXED) {
      writer.Count(displacements[i]);
    } else {
      writer.ByteDisplacement(displacements[i]);
    }
  }
  writer.Type(old);
  return Finish(call, writer, newtype);
}

// MPI_Type_create_indexed_block (displacements in items) and
// MPI_Type_create_hindexed_block (in bytes).
template <typename Count, typename Displacement>
int TypeIndexedBlock(const char* call, int combiner, Count count,
                     Count blocklength, const Displacement displacements[],
                     MPI_Datatype oldtype, MPI_Datatype* newtype) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* old;
  if (int error = CheckCount(call, count, "count")) return error;
  if (int error = CheckNotNegative(call, blocklength, "blocklength")) {
    return error;
  }
  if (int error =
          CheckArray(call, displacements, count, "array_of_displacements")) {
    return error;
  }
  if (int error = CheckOldAndNew(call, oldtype, newtype, &old)) return error;
  EnvelopeWriter writer(combiner, kLargeCountForm<Count>);
  writer.Count(count);
  writer.Count(blocklength);
  for (Count i = 0; i < count; ++i) {
    if (combiner == MPI_COMBINER_INDEXED_BLOCK) {
      writer.Count(displacements[i]);
    } else {
      writer.ByteDisplacement(displacements[i]);
    }
  }
  writer.Type(old);
  return Finish(call, writer, newtype);
}

template <typename Count, typename Displacement>
int TypeStruct(const char* call, Count count, const Count blocklengths[],
               const Displacement displacements[], const MPI_Datatype types[],
               MPI_Datatype* newtype) {
  MINIMPI_REQUIRE_INIT(call);
  if (int error = CheckCount(call, count, "count")) return error;
  if (int error =
          CheckArray(call, blocklengths, count, "array_of_blocklengths")) {
    return error;
  }
  if (int error =
          CheckArray(call, displacements, count, "array_of_displacements")) {
    return error;
  }
  if (int error = CheckArray(call, types, count, "array_of_types")) {
    return error;
  }
  if (int error = CheckEntriesNotNegative(call, blocklengths, count,
                                          "array_of_blocklengths")) {
    return error;
  }
  if (int error = CheckOutput(call, newtype, "newtype")) return error;
  EnvelopeWriter writer(MPI_COMBINER_STRUCT, kLargeCountForm<Count>);
  writer.Count(count);
  for (Count i = 0; i < count; ++i) writer.Count(blocklengths[i]);
  for (Count i = 0; i < count; ++i) writer.ByteDisplacement(displacements[i]);
  for (Count i = 0; i < count; ++i) {
    const Datatype* type;
    const std::string what = absl::StrCat("array_of_types[", i, "]");
    if (int error = CheckDatatype(call, types[i], what.c_str(), &type)) {
      return error;
    }
    writer.Type(type);
  }
  return Finish(call, writer, newtype);
}

// The checks that need no loop; the layout engine checks the rest
// (sizes, subsizes, starts, order) and names what is wrong.
template <typename Count>
int TypeSubarray(const char* call, int ndims, const Count sizes[],
                 const Count subsizes[], const Count starts[], int order,
                 MPI_Datatype oldtype, MPI_Datatype* newtype) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* old;
  if (ndims < 1) {
    return RaiseError(
        nullptr, call, MPI_ERR_ARG,
        absl::StrCat("invalid ndims ", ndims, " (must be positive)"));
  }
  if (int error = CheckArray(call, sizes, ndims, "array_of_sizes")) {
    return error;
  }
  if (int error = CheckArray(call, subsizes, ndims, "array_of_subsizes")) {
    return error;
  }
  if (int error = CheckArray(call, starts, ndims, "array_of_starts")) {
    return error;
  }
  if (int error = CheckOldAndNew(call, oldtype, newtype, &old)) return error;
  EnvelopeWriter writer(MPI_COMBINER_SUBARRAY, kLargeCountForm<Count>);
  writer.Integer(ndims);
  for (int i = 0; i < ndims; ++i) writer.Count(sizes[i]);
  for (int i = 0; i < ndims; ++i) writer.Count(subsizes[i]);
  for (int i = 0; i < ndims; ++i) writer.Count(starts[i]);
  writer.Integer(order);
  writer.Type(old);
  return Finish(call, writer, newtype);
}

template <typename Count>
int TypeDarray(const char* call, int size, int rank, int ndims,
               const Count gsizes[], const int distribs[], const int dargs[],
               const int psizes[], int order, MPI_Datatype oldtype,
               MPI_Datatype* newtype) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* old;
  if (size < 1) {
    return RaiseError(
        nullptr, call, MPI_ERR_ARG,
        absl::StrCat("invalid size ", size, " (must be positive)"));
  }
  if (rank < 0 || rank >= size) {
    return RaiseError(
        nullptr, call, MPI_ERR_ARG,
        absl::StrCat("invalid rank ", rank, " (size ", size, ")"));
  }
  if (ndims < 1) {
    return RaiseError(
        nullptr, call, MPI_ERR_ARG,
        absl::StrCat("invalid ndims ", ndims, " (must be positive)"));
  }
  if (int error = CheckArray(call, gsizes, ndims, "array_of_gsizes")) {
    return error;
  }
  if (int error = CheckArray(call, distribs, ndims, "array_of_distribs")) {
    return error;
  }
  if (int error = CheckArray(call, dargs, ndims, "array_of_dargs")) {
    return error;
  }
  if (int error = CheckArray(call, psizes, ndims, "array_of_psizes")) {
    return error;
  }
  if (int error = CheckOldAndNew(call, oldtype, newtype, &old)) return error;
  EnvelopeWriter writer(MPI_COMBINER_DARRAY, kLargeCountForm<Count>);
  writer.Integer(size);
  writer.Integer(rank);
  writer.Integer(ndims);
  for (int i = 0; i < ndims; ++i) writer.Count(gsizes[i]);
  for (int i = 0; i < ndims; ++i) writer.Integer(distribs[i]);
  for (int i = 0; i < ndims; ++i) writer.Integer(dargs[i]);
  for (int i = 0; i < ndims; ++i) writer.Integer(psizes[i]);
  writer.Integer(order);
  writer.Type(old);
  return Finish(call, writer, newtype);
}

// MPI_Aint and MPI_Count are one type on this ABI, so the form cannot be
// deduced from the argument types: the binding says which it is.
int TypeResized(const char* call, bool large_count_form, MPI_Datatype oldtype,
                int64_t lb, int64_t extent, MPI_Datatype* newtype) {
  MINIMPI_REQUIRE_INIT(call);
  const Datatype* old;
  if (int error = CheckOldAndNew(call, oldtype, newtype, &old)) return error;
  EnvelopeWriter writer(MPI_COMBINER_RESIZED, large_count_form);
  writer.ByteDisplacement(lb);
  writer.ByteDisplacement(extent);
  writer.Type(old);
  return Finish(call, writer, newtype);
}

}  // namespace

// compat: shared with the MPI-1 names (removed_mpi1.cc).
namespace minimpi {

int TypeCreateHvector(const char* call, int count, int blocklength,
                      MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
  return TypeVector(call, MPI_COMBINER_HVECTOR, count, blocklength, stride,
                    oldtype, newtype);
}

int TypeCreateHindexed(const char* call, int count, const int blocklengths[],
                       const MPI_Aint displacements[], MPI_Datatype oldtype,
                       MPI_Datatype* newtype) {
  return TypeIndexed(call, MPI_COMBINER_HINDEXED, count, blocklengths,
                     displacements, oldtype, newtype);
}

int TypeCreateStruct(const char* call, int count, const int blocklengths[],
                     const MPI_Aint displacements[], const MPI_Datatype types[],
                     MPI_Datatype* newtype) {
  return TypeStruct(call, count, blocklengths, displacements, types, newtype);
}

}  // namespace minimpi

extern "C" {

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype,
                         MPI_Datatype* newtype) {
  return TypeContiguous("MPI_Type_contiguous", count, oldtype, newtype);
}

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype,
                           MPI_Datatype* newtype) {
  return TypeContiguous("MPI_Type_contiguous_c", count, oldtype, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride,
                     MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return TypeVector("MPI_Type_vector", MPI_COMBINER_VECTOR, count, blocklength,
                    stride, oldtype, newtype);
}

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return TypeVector("MPI_Type_vector_c", MPI_COMBINER_VECTOR, count,
                    blocklength, stride, oldtype, newtype);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                             MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return TypeVector("MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, count,
                    blocklength, stride, oldtype, newtype);
}

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength,
                               MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype* newtype) {
  return TypeVector("MPI_Type_create_hvector_c", MPI_COMBINER_HVECTOR, count,
                    blocklength, stride, oldtype, newtype);
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
  return TypeIndexed("MPI_Type_indexed", MPI_COMBINER_INDEXED, count,
                     array_of_blocklengths, array_of_displacements, oldtype,
                     newtype);
}

int PMPI_Type_indexed_c(MPI_Count count,
                        const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[],
                        MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return TypeIndexed("MPI_Type_indexed_c", MPI_COMBINER_INDEXED, count,
                     array_of_blocklengths, array_of_displacements, oldtype,
                     newtype);
}

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return TypeIndexed("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count,
                     array_of_blocklengths, array_of_displacements, oldtype,
                     newtype);
}

int PMPI_Type_create_hindexed_c(MPI_Count count,
                                const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[],
                                MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return TypeIndexed("MPI_Type_create_hindexed_c", MPI_COMBINER_HINDEXED, count,
                     array_of_blocklengths, array_of_displacements, oldtype,
                     newtype);
}

int PMPI_Type_create_indexed_block(int count, int blocklength,
                                   const int array_of_displacements[],
                                   MPI_Datatype oldtype,
                                   MPI_Datatype* newtype) {
  return TypeIndexedBlock("MPI_Type_create_indexed_block",
                          MPI_COMBINER_INDEXED_BLOCK, count, blocklength,
                          array_of_displacements, oldtype, newtype);
}

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype,
                                     MPI_Datatype* newtype) {
  return TypeIndexedBlock("MPI_Type_create_indexed_block_c",
                          MPI_COMBINER_INDEXED_BLOCK, count, blocklength,
                          array_of_displacements, oldtype, newtype);
}

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[],
                                    MPI_Datatype oldtype,
                                    MPI_Datatype* newtype) {
  return TypeIndexedBlock("MPI_Type_create_hindexed_block",
                          MPI_COMBINER_HINDEXED_BLOCK, count, blocklength,
                          array_of_displacements, oldtype, newtype);
}

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype,
                                      MPI_Datatype* newtype) {
  return TypeIndexedBlock("MPI_Type_create_hindexed_block_c",
                          MPI_COMBINER_HINDEXED_BLOCK, count, blocklength,
                          array_of_displacements, oldtype, newtype);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[],
                            MPI_Datatype* newtype) {
  return TypeStruct("MPI_Type_create_struct", count, array_of_blocklengths,
                    array_of_displacements, array_of_types, newtype);
}

int PMPI_Type_create_struct_c(MPI_Count count,
                              const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[],
                              MPI_Datatype* newtype) {
  return TypeStruct("MPI_Type_create_struct_c", count, array_of_blocklengths,
                    array_of_displacements, array_of_types, newtype);
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                              const int array_of_subsizes[],
                              const int array_of_starts[], int order,
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return TypeSubarray("MPI_Type_create_subarray", ndims, array_of_sizes,
                      array_of_subsizes, array_of_starts, order, oldtype,
                      newtype);
}

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order,
                                MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return TypeSubarray("MPI_Type_create_subarray_c", ndims, array_of_sizes,
                      array_of_subsizes, array_of_starts, order, oldtype,
                      newtype);
}

int PMPI_Type_create_darray(int size, int rank, int ndims,
                            const int array_of_gsizes[],
                            const int array_of_distribs[],
                            const int array_of_dargs[],
                            const int array_of_psizes[], int order,
                            MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return TypeDarray("MPI_Type_create_darray", size, rank, ndims,
                    array_of_gsizes, array_of_distribs, array_of_dargs,
                    array_of_psizes, order, oldtype, newtype);
}

int PMPI_Type_create_darray_c(int size, int rank, int ndims,
                              const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[],
                              const int array_of_dargs[],
                              const int array_of_psizes[], int order,
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return TypeDarray("MPI_Type_create_darray_c", size, rank, ndims,
                    array_of_gsizes, array_of_distribs, array_of_dargs,
                    array_of_psizes, order, oldtype, newtype);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype* newtype) {
  return TypeResized("MPI_Type_create_resized", /*large_count_form=*/false,
                     oldtype, lb, extent, newtype);
}

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb,
                               MPI_Count extent, MPI_Datatype* newtype) {
  return TypeResized("MPI_Type_create_resized_c", /*large_count_form=*/true,
                     oldtype, lb, extent, newtype);
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  constexpr const char* kCall = "MPI_Type_dup";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* old;
  if (int error = CheckOldAndNew(kCall, oldtype, newtype, &old)) return error;
  EnvelopeWriter writer(MPI_COMBINER_DUP, /*large_count_form=*/false);
  writer.Type(old);
  if (int error = Finish(kCall, writer, newtype)) return error;
  // compat: the copy callbacks decide which attributes the duplicate gets.
  return minimpi::CopyTypeAttributesOrUndo(kCall, old, oldtype, newtype);
}

int PMPI_Type_commit(MPI_Datatype* datatype) {
  constexpr const char* kCall = "MPI_Type_commit";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  if (int error = CheckOutput(kCall, datatype, "datatype")) return error;
  if (int error = CheckDatatype(kCall, *datatype, "datatype", &type)) {
    return error;
  }
  // The layout was flattened when the type was built; committing only
  // allows communication with it. Committing twice is harmless.
  type->Commit();
  return MPI_SUCCESS;
}

int PMPI_Type_free(MPI_Datatype* datatype) {
  constexpr const char* kCall = "MPI_Type_free";
  MINIMPI_REQUIRE_INIT(kCall);
  const Datatype* type;
  if (int error = CheckOutput(kCall, datatype, "datatype")) return error;
  if (int error = CheckDatatype(kCall, *datatype, "datatype", &type)) {
    return error;
  }
  if (type->predefined()) {
    return RaiseError(
        nullptr, kCall, MPI_ERR_TYPE,
        absl::StrCat("cannot free the predefined datatype ", type->name()));
  }
  // compat: freeing the program's last handle runs the attributes' delete
  // callbacks; one that fails keeps the type.
  if (int error = minimpi::DeleteTypeAttributesOnFree(kCall, type, *datatype)) {
    return error;
  }
  // Pending operations keep their layouts, and types built from this one
  // keep it through their envelopes: both hold references of their own.
  if (!minimpi::FreeHandle(*datatype)) {
    return RaiseError(nullptr, kCall, MPI_ERR_TYPE,
                      "invalid datatype (freed, or never a datatype)");
  }
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Type_contiguous)
MINIMPI_EXPORT(Type_contiguous_c)
MINIMPI_EXPORT(Type_vector)
MINIMPI_EXPORT(Type_vector_c)
MINIMPI_EXPORT(Type_create_hvector)
MINIMPI_EXPORT(Type_create_hvector_c)
MINIMPI_EXPORT(Type_indexed)
MINIMPI_EXPORT(Type_indexed_c)
MINIMPI_EXPORT(Type_create_hindexed)
MINIMPI_EXPORT(Type_create_hindexed_c)
MINIMPI_EXPORT(Type_create_indexed_block)
MINIMPI_EXPORT(Type_create_indexed_block_c)
MINIMPI_EXPORT(Type_create_hindexed_block)
MINIMPI_EXPORT(Type_create_hindexed_block_c)
MINIMPI_EXPORT(Type_create_struct)
MINIMPI_EXPORT(Type_create_struct_c)
MINIMPI_EXPORT(Type_create_subarray)
MINIMPI_EXPORT(Type_create_subarray_c)
MINIMPI_EXPORT(Type_create_darray)
MINIMPI_EXPORT(Type_create_darray_c)
MINIMPI_EXPORT(Type_create_resized)
MINIMPI_EXPORT(Type_create_resized_c)
MINIMPI_EXPORT(Type_dup)
MINIMPI_EXPORT(Type_commit)
MINIMPI_EXPORT(Type_free)
