// The predefined datatypes of mpi/mpi.h (handles in [0x200, 0x300)): what
// one item of each is in memory, in a packed message and in the external32
// representation, and what kind of number it holds.
//
// These are the leaves of every layout: layout.cc builds the layout of a
// predefined type from its entry here, external32.cc converts numbers by
// their NumberKind, and the MPI_Type_* bindings read names and sizes.
//
// Owned by: mpi/datatype. Called by: layout.cc, external32.cc, the bindings.
#ifndef MINIMPI_MPI_DATATYPE_PREDEFINED_H_
#define MINIMPI_MPI_DATATYPE_PREDEFINED_H_

#include <array>
#include <cstdint>
#include <vector>

#include "mpi/mpi.h"

namespace minimpi::datatype {

// How the bytes of one number are read, for the conversions to and from
// external32 (MPI-4.1 section 15.5.2, "External Data Representation").
enum class NumberKind : uint8_t {
  kRawByte,          // moved as it is: characters, MPI_BYTE, MPI_PACKED,
                     // 8-bit integers
  kBool,             // C _Bool, C++ bool: zero is false, anything else true
  kLogical,          // Fortran LOGICAL: zero is false, anything else true
  kSignedInteger,    // two's complement
  kUnsignedInteger,  // also MPI_WCHAR (a Unicode code unit)
  kIeeeFloat,        // IEEE binary32 or binary64
  kX87LongDouble,    // x86's 80-bit extended format stored in 16 bytes;
                     // IEEE binary128 in external32
};

// One number inside an item. A pair type ({value; index;}) has two members;
// a complex number is one member with two components (real, imaginary).
struct NumberMember {
  int32_t offset = 0;           // bytes from the start of the item
  int32_t native_size = 0;      // bytes of one component in memory
  int32_t external32_size = 0;  // bytes of one component in external32
  int32_t components = 1;       // 2 for complex numbers
  NumberKind kind = NumberKind::kRawByte;
};

struct PredefinedType {
  MPI_Datatype handle = nullptr;
  const char* name = nullptr;  // as the standard spells it: "MPI_DOUBLE_INT"
  int64_t size = 0;            // MPI_Type_size: the bytes of the members
  int64_t extent = 0;          // sizeof the C type (a pair: with padding)
  int64_t alignment = 1;       // alignof the C type (struct extent padding)
  int64_t external32_size = 0;
  // MPI_FLOAT_INT, MPI_DOUBLE_INT, ... MPI_2INTEGER: a C struct
  // {value; index;} whose basic elements are its two members.
  bool is_pair = false;
  int32_t member_count = 1;
  std::array<NumberMember, 2> members{};

  // What kind of number the (value) member is.
  NumberKind kind() const { return members[0].kind; }
  // Basic elements in one item, as MPI_Get_elements counts them.
  int64_t basic_elements() const { return is_pair ? 2 : 1; }
};

namespace predefined_internal {
// Predefined handles are small integers in [0x200, 0x300) (the standard
// ABI), so the table is indexed by handle - kFirstHandle. It is filled when
// the library loads: nothing looks a type up before main().
inline constexpr uintptr_t kFirstHandle = 0x200;
inline constexpr uintptr_t kHandleCount = 0x100;
extern const std::array<PredefinedType, kHandleCount> kTable;
}  // namespace predefined_internal

// The predefined type a handle names, or nullptr for any other value
// (MPI_DATATYPE_NULL, a derived type's handle, garbage).
inline const PredefinedType* FindPredefined(MPI_Datatype handle) {
  using predefined_internal::kFirstHandle;
  using predefined_internal::kHandleCount;
  const uintptr_t index = reinterpret_cast<uintptr_t>(handle) - kFirstHandle;
  if (index >= kHandleCount) return nullptr;  // also below kFirstHandle
  const PredefinedType* type = &predefined_internal::kTable[index];
  return type->name != nullptr ? type : nullptr;
}

// Every predefined type, in handle order (for tests and tools).
std::vector<const PredefinedType*> AllPredefined();

}  // namespace minimpi::datatype

#endif  // MINIMPI_MPI_DATATYPE_PREDEFINED_H_
