// Decoding a datatype (MPI-4.1 section 5.1.13): MPI_Type_get_envelope and
// MPI_Type_get_contents, and their large-count _c forms.
//
// The envelope is the one the constructor binding recorded. A type built by
// a _c constructor keeps its counts among the large counts; the int forms
// cannot report those, and MPI-4.1 makes calling them on such a type an
// error of class MPI_ERR_TYPE. Datatypes in the contents are the
// predefined handles as they are, and new handles to the very objects for
// derived ones, which the program frees.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/datatype_util.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/objects/derived_datatypes.h"

using minimpi::CheckDatatype;
using minimpi::CheckOutput;
using minimpi::Datatype;
using minimpi::RaiseError;

namespace {

int NeedsLargeCountForm(const char* call, const char* large_call) {
  return RaiseError(
      nullptr, call, MPI_ERR_TYPE,
      absl::StrCat("the datatype was built by a large-count constructor; its "
                   "counts can only be decoded with ",
                   large_call));
}

// `num_large_counts` is null for the int form, which has no such output.
template <typename Count>
int GetEnvelope(const char* call, MPI_Datatype datatype, Count* num_integers,
                Count* num_addresses, Count* num_large_counts,
                Count* num_datatypes, int* combiner) {
  MINIMPI_REQUIRE_INIT(call);
  constexpr bool kLargeCountForm = std::is_same_v<Count, MPI_Count>;
  const Datatype* type;
  if (int error = CheckDatatype(call, datatype, "datatype", &type)) {
    return error;
  }
  if (int error = CheckOutput(call, num_integers, "num_integers")) {
    return error;
  }
  if (int error = CheckOutput(call, num_addresses, "num_addresses")) {
    return error;
  }
  if (kLargeCountForm) {
    if (int error = CheckOutput(call, num_large_counts, "num_large_counts")) {
      return error;
    }
  }
  if (int error = CheckOutput(call, num_datatypes, "num_datatypes")) {
    return error;
  }
  if (int error = CheckOutput(call, combiner, "combiner")) return error;
  if (type->predefined()) {
    *num_integers = *num_addresses = *num_datatypes = 0;
    if (kLargeCountForm) *num_large_counts = 0;
    *combiner = MPI_COMBINER_NAMED;
    return MPI_SUCCESS;
  }
  const Datatype::Envelope& envelope = type->envelope();
  if (!kLargeCountForm && minimpi::IsLargeCountEnvelope(envelope)) {
    return NeedsLargeCountForm(call, "MPI_Type_get_envelope_c");
  }
  *num_integers = static_cast<Count>(envelope.integers.size());
  *num_addresses = static_cast<Count>(envelope.addresses.size());
  if (kLargeCountForm) {
    *num_large_counts = static_cast<Count>(envelope.large_counts.size());
  }
  *num_datatypes = static_cast<Count>(envelope.types.size());
  *combiner = envelope.combiner;
  return MPI_SUCCESS;
}

// One output array of MPI_Type_get_contents: room for what the envelope
// holds, and a pointer when it holds anything.
int CheckContentsArray(const char* call, int64_t max, size_t needed,
                       const void* array, const char* max_name,
                       const char* array_name) {
  if (max < static_cast<int64_t>(needed)) {
    return RaiseError(
        nullptr, call, MPI_ERR_ARG,
        absl::StrFormat("%s is %d, but the datatype's envelope has %d "
                        "(see MPI_Type_get_envelope)",
                        max_name, max, needed));
  }
  return minimpi::CheckArray(call, array, static_cast<int64_t>(needed),
                             array_name);
}

// `large_counts` is null for the int form, which has no such array.
template <typename Count>
int GetContents(const char* call, MPI_Datatype datatype, Count max_integers,
                Count max_addresses, Count max_large_counts,
                Count max_datatypes, int integers[], MPI_Aint addresses[],
                MPI_Count large_counts[], MPI_Datatype types[]) {
  MINIMPI_REQUIRE_INIT(call);
  constexpr bool kLargeCountForm = std::is_same_v<Count, MPI_Count>;
  const Datatype* type;
  if (int error = CheckDatatype(call, datatype, "datatype", &type)) {
    return error;
  }
  if (type->predefined()) {
    return RaiseError(
        nullptr, call, MPI_ERR_TYPE,
        absl::StrCat(type->name(),
                     " is a named predefined datatype (combiner "
                     "MPI_COMBINER_NAMED): it has no contents to decode"));
  }
  const Datatype::Envelope& envelope = type->envelope();
  if (!kLargeCountForm && minimpi::IsLargeCountEnvelope(envelope)) {
    return NeedsLargeCountForm(call, "MPI_Type_get_contents_c");
  }
  if (int error =
          CheckContentsArray(call, max_integers, envelope.integers.size(),
                             integers, "max_integers", "array_of_integers")) {
    return error;
  }
  if (int error = CheckContentsArray(call, max_addresses,
                                     envelope.addresses.size(), addresses,
                                     "max_addresses", "array_of_addresses")) {
    return error;
  }
  if (kLargeCountForm) {
    if (int error = CheckContentsArray(
            call, max_large_counts, envelope.large_counts.size(), large_counts,
            "max_large_counts", "array_of_large_counts")) {
      return error;
    }
  }
  if (int error =
          CheckContentsArray(call, max_datatypes, envelope.types.size(), types,
                             "max_datatypes", "array_of_datatypes")) {
    return error;
  }
  // Handles first, so that a full handle table leaves nothing half done.
  std::vector<MPI_Datatype> handles;
  for (const Datatype* member : envelope.types) {
    const MPI_Datatype handle =
        member->predefined() ? member->handle() : minimpi::NewHandle(member);
    if (handle == MPI_DATATYPE_NULL) {
      for (size_t i = 0; i < handles.size(); ++i) {
        if (!envelope.types[i]->predefined()) minimpi::FreeHandle(handles[i]);
      }
      return RaiseError(nullptr, call, MPI_ERR_INTERN,
                        "no handle left for a datatype of the contents");
    }
    handles.push_back(handle);
  }
  std::copy(envelope.integers.begin(), envelope.integers.end(), integers);
  std::copy(envelope.addresses.begin(), envelope.addresses.end(), addresses);
  if (kLargeCountForm) {
    std::copy(envelope.large_counts.begin(), envelope.large_counts.end(),
              large_counts);
  }
  std::copy(handles.begin(), handles.end(), types);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers,
                           int* num_addresses, int* num_datatypes,
                           int* combiner) {
  return GetEnvelope<int>("MPI_Type_get_envelope", datatype, num_integers,
                          num_addresses, nullptr, num_datatypes, combiner);
}

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers,
                             MPI_Count* num_addresses,
                             MPI_Count* num_large_counts,
                             MPI_Count* num_datatypes, int* combiner) {
  return GetEnvelope<MPI_Count>("MPI_Type_get_envelope_c", datatype,
                                num_integers, num_addresses, num_large_counts,
                                num_datatypes, combiner);
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers,
                           int max_addresses, int max_datatypes,
                           int array_of_integers[],
                           MPI_Aint array_of_addresses[],
                           MPI_Datatype array_of_datatypes[]) {
  return GetContents<int>("MPI_Type_get_contents", datatype, max_integers,
                          max_addresses, 0, max_datatypes, array_of_integers,
                          array_of_addresses, nullptr, array_of_datatypes);
}

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                             MPI_Count max_addresses,
                             MPI_Count max_large_counts,
                             MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[],
                             MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[]) {
  return GetContents<MPI_Count>(
      "MPI_Type_get_contents_c", datatype, max_integers, max_addresses,
      max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
      array_of_large_counts, array_of_datatypes);
}

}  // extern "C"

MINIMPI_EXPORT(Type_get_envelope)
MINIMPI_EXPORT(Type_get_envelope_c)
MINIMPI_EXPORT(Type_get_contents)
MINIMPI_EXPORT(Type_get_contents_c)
