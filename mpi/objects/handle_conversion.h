// The integers MPI_<Kind>_c2f gives for handles, and MPI_<Kind>_f2c's way
// back (MPI_Fint is int). Pure arithmetic, so it is tested alone.
//
// A predefined handle is one of the standard ABI's constants, all below
// 0x1000, and converts to that very value (MPI_COMM_WORLD is 0x101 either
// way). Any other handle is a slot index and a generation (see
// mpi/objects/handle_table.h); its integer keeps the index and as many low bits of
// the generation as fit:
//
//   bit 31                     0, so the integer is positive
//   bit 30                     1: an object handle
//   bits 29 .. index_bits      low bits of the slot's generation
//   bits index_bits-1 .. 0     slot index
//
// Objects in a HandleTable have 22-bit indices (4 Mi slots), which leaves 8
// bits of generation; requests have 28 (a 6-bit VCI and a 22-bit index in
// that VCI's pool), which leaves 2. Converting back looks the slot up and
// accepts the integer only if the slot holds a live object whose generation
// ends in those bits; otherwise the result is an invalid handle (one that no
// call accepts). So the integer of a freed handle gives an invalid handle,
// unless the slot has since been reused by a newer object whose generation
// ends in the same bits (every 256th reuse of a table slot, every 4th of a
// request slot): then it names that newer object. Such an integer is
// erroneous in MPI, as is the freed handle itself.
//
// Owned by: mpi/. Called by: bindings/handle_conversion.cc.
#ifndef MINIMPI_MPI_OBJECTS_HANDLE_CONVERSION_H_
#define MINIMPI_MPI_OBJECTS_HANDLE_CONVERSION_H_

#include <cstdint>
#include <optional>

#include "mpi/mpi.h"

namespace minimpi::handle_conversion {

inline constexpr int kTableIndexBits = 22;
inline constexpr int kRequestIndexBits = 28;
inline constexpr uint32_t kLargestPredefined = 0xfff;
// What c2f gives for a handle that is neither predefined nor of the kind
// converted (garbage); f2c turns it into an invalid handle.
inline constexpr MPI_Fint kNotAHandle = -1;

namespace internal {
inline constexpr uint32_t kObjectFlag = uint32_t{1} << 30;
inline constexpr uint32_t GenerationMask(int index_bits) {
  return (uint32_t{1} << (30 - index_bits)) - 1;
}
}  // namespace internal

inline bool IsPredefined(MPI_Fint value) {
  return value >= 0 && static_cast<uint32_t>(value) <= kLargestPredefined;
}

// The integer of the object in slot `index` at `generation`; kNotAHandle
// when the index does not fit in `index_bits`.
inline MPI_Fint EncodeSlot(uint32_t index, uint32_t generation,
                           int index_bits) {
  if (index >= (uint32_t{1} << index_bits)) return kNotAHandle;
  const uint32_t generation_bits =
      generation & internal::GenerationMask(index_bits);
  return static_cast<MPI_Fint>(internal::kObjectFlag |
                               (generation_bits << index_bits) | index);
}

struct Slot {
  uint32_t index;
  uint32_t generation_bits;  // the low bits of the generation
};

// The slot an integer names; nullopt for a predefined value or one that
// no object handle converts to.
inline std::optional<Slot> DecodeSlot(MPI_Fint value, int index_bits) {
  const uint32_t bits = static_cast<uint32_t>(value);
  if (value < 0 || (bits & internal::kObjectFlag) == 0) return std::nullopt;
  return Slot{bits & ((uint32_t{1} << index_bits) - 1),
              (bits & ~internal::kObjectFlag) >> index_bits};
}

// Whether a slot now at `generation` is the one the integer was made for
// (as far as its low bits tell).
inline bool GenerationMatches(uint32_t generation, const Slot& slot,
                              int index_bits) {
  return (generation & internal::GenerationMask(index_bits)) ==
         slot.generation_bits;
}

}  // namespace minimpi::handle_conversion

#endif  // MINIMPI_MPI_OBJECTS_HANDLE_CONVERSION_H_
