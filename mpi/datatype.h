// Datatypes. This issue covers the predefined ones only, all contiguous:
// a message of `count` items is count * extent bytes, copied as they lie.
//
// Owned by: mpi/. Called by: the bindings (argument checks, byte counts).
#ifndef MINIMPI_MPI_DATATYPE_H_
#define MINIMPI_MPI_DATATYPE_H_

#include <array>
#include <cstdint>

#include "mpi/mpi.h"

namespace minimpi {

struct Datatype {
  const char* name = nullptr;
  int size = 0;               // MPI_Type_size: bytes of data, padding excluded
  MPI_Aint extent = 0;        // bytes one item occupies in a buffer
  int basic_elements = 1;     // 2 for the pair types (value, index)
  int first_member_size = 0;  // pair types: size of the value member
};

namespace datatype_internal {
// Predefined handles are small integers in [0x200, 0x300) (standard ABI);
// the table is filled when the library loads, so a lookup is one index.
inline constexpr uintptr_t kFirstHandle = 0x200;
inline constexpr uintptr_t kHandleCount = 0x100;
extern const std::array<Datatype, kHandleCount> kPredefined;
}  // namespace datatype_internal

// The datatype a handle names, or nullptr when the handle names none.
inline const Datatype* LookupDatatype(MPI_Datatype handle) {
  using namespace datatype_internal;
  const uintptr_t index = reinterpret_cast<uintptr_t>(handle) - kFirstHandle;
  if (index >= kHandleCount) return nullptr;  // also below kFirstHandle
  const Datatype* type = &kPredefined[index];
  return type->name != nullptr ? type : nullptr;
}

}  // namespace minimpi

#endif  // MINIMPI_MPI_DATATYPE_H_
