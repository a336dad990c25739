// Derived datatypes made from their constructor calls.
//
// A derived type is described once, by its envelope: the combiner and the
// arguments of the constructor call, laid out exactly as
// MPI_Type_get_contents returns them (MPI-4.1 section 5.1.13). The C
// bindings check the arguments and record them with an EnvelopeWriter;
// BuildDerivedDatatype builds the layout from that record alone. So what a
// program decodes from a type is, by construction, what the type was built
// from, and decoding a type and calling the constructors again rebuilds it.
//
// References: every handle to a derived type holds one (the handles are the
// bindings', mpi/bindings/object_handles.h), and a type named in another
// type's envelope stays alive through that envelope's reference after the
// program frees it.
//
// Owned by: mpi/datatype. Called by: the MPI_Type_* bindings. MPI_Finalize
// (Instance::Finalize) gives back what the handles still open hold.
#ifndef MINIMPI_MPI_OBJECTS_DERIVED_DATATYPES_H_
#define MINIMPI_MPI_OBJECTS_DERIVED_DATATYPES_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "mpi/objects/datatype.h"
#include "mpi/datatype/layout.h"
#include "mpi/mpi.h"

namespace minimpi {

// Records a constructor's arguments in the order and arrays of
// MPI_Type_get_contents. The int forms of the constructors keep counts (and
// displacements counted in items) in `integers` and byte displacements in
// `addresses`; the large-count (_c) forms keep both kinds in
// `large_counts`. A few arguments are an int in both forms: ndims, order,
// and darray's size, rank, distribs, dargs and psizes.
class EnvelopeWriter {
 public:
  EnvelopeWriter(int combiner, bool large_count_form);

  // A count, a blocklength, a size, or a displacement in items.
  void Count(int64_t value);
  // A displacement, stride, lower bound or extent in bytes.
  void ByteDisplacement(int64_t value);
  // An argument that is an int in both forms.
  void Integer(int value);
  void Type(const Datatype* type);

  Datatype::Envelope Take() { return std::move(envelope_); }

 private:
  bool large_count_form_;
  Datatype::Envelope envelope_;
};

// Whether an envelope records a large-count (_c) constructor call: every
// one of them has at least one large count, no other call has any.
inline bool IsLargeCountEnvelope(const Datatype::Envelope& envelope) {
  return !envelope.large_counts.empty();
}

// The layout the constructor call `envelope` describes. Fails with
//   INVALID_ARGUMENT   arguments that make no type (an inconsistent
//                      subarray or darray, a truncated envelope);
//   OUT_OF_RANGE       a type whose size or byte offsets would not fit in
//                      62 bits;
//   RESOURCE_EXHAUSTED a type whose flat description (layout.h) would need
//                      more than kMaxLayoutRuns runs.
// The message names the argument.
absl::StatusOr<datatype::LayoutRef> BuildLayout(
    const Datatype::Envelope& envelope);

// The most runs (and signature entries) one derived type may flatten into:
// 16 Mi, about 640 MiB. Types beyond it are refused instead of exhausting
// memory; regular types stay a handful of runs whatever their size.
inline constexpr int64_t kMaxLayoutRuns = int64_t{1} << 24;

// Builds the type `envelope` describes, holding one reference (the
// bindings give it a handle: mpi/bindings/object_handles.h). A duplicate
// (MPI_COMBINER_DUP) is committed when its original is, as MPI_Type_dup
// requires.
absl::StatusOr<Datatype*> BuildDerivedDatatype(Datatype::Envelope envelope);

}  // namespace minimpi

#endif  // MINIMPI_MPI_OBJECTS_DERIVED_DATATYPES_H_
