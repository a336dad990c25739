// A trivially correct model of MPI datatypes for the tests: a type is
// expanded into its explicit typemap, one (displacement, predefined type)
// entry per basic item plus its bound markers, built recursively from the
// constructor arguments with no runs and no merging; packing is byte by
// byte from it. The engine (layout.h, pack.h, external32.h) is compared
// against this on hand-picked and random types.
//
// The bounds rules are the standard's (MPI-4.1 section 5.1.6), written
// over explicit markers: explicit lb/ub markers (from resized, subarray,
// darray) decide when present; otherwise the data does, and a struct's
// alignment padding is a "soft" ub marker, as MPICH pads only structs.
// Darray is modelled independently of the standard's cyclic() code: an
// element belongs to a process when its block, dealt round robin, does.
//
// Owned by: mpi/datatype (tests only). Called by: mpi/datatype/*_test.cc.
#ifndef MINIMPI_MPI_DATATYPE_TYPEMAP_REFERENCE_H_
#define MINIMPI_MPI_DATATYPE_TYPEMAP_REFERENCE_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mpi/datatype/layout.h"
#include "mpi/datatype/predefined.h"
#include "mpi/mpi.h"

namespace minimpi::datatype::testing {

// A datatype as the constructor calls that make it.
struct TypeSpec {
  enum class Kind {
    kPredefined,
    kContiguous,
    kVector,
    kHvector,
    kIndexed,
    kHindexed,
    kIndexedBlock,
    kHindexedBlock,
    kStruct,
    kSubarray,
    kDarray,
    kResized,
  };
  Kind kind = Kind::kPredefined;
  MPI_Datatype handle = MPI_DATATYPE_NULL;  // kPredefined
  // count, blocklength, stride (items for kVector, bytes for kHvector).
  int64_t count = 0;
  int64_t blocklength = 0;
  int64_t stride = 0;
  // Indexed kinds and struct (displacements in items or bytes).
  std::vector<int64_t> blocklengths;
  std::vector<int64_t> displacements;
  // The old type(s): one, or one per struct block.
  std::vector<std::shared_ptr<const TypeSpec>> olds;
  // Subarray and darray.
  std::vector<int64_t> sizes, subsizes, starts;
  int order = MPI_ORDER_C;
  int64_t comm_size = 1;
  int64_t rank = 0;
  std::vector<int> distribs;
  std::vector<int64_t> dargs, psizes;
  // Resized.
  int64_t lb = 0;
  int64_t extent = 0;

  // The calls, as text, for failure messages.
  std::string Describe() const;
};

using SpecPtr = std::shared_ptr<const TypeSpec>;

// Shorthands for writing specs in tests.
SpecPtr PredefinedSpec(MPI_Datatype handle);
SpecPtr ContiguousSpec(int64_t count, SpecPtr old);
SpecPtr VectorSpec(int64_t count, int64_t blocklength, int64_t stride,
                   SpecPtr old);
SpecPtr HvectorSpec(int64_t count, int64_t blocklength, int64_t stride,
                    SpecPtr old);
SpecPtr IndexedSpec(std::vector<int64_t> blocklengths,
                    std::vector<int64_t> displacements, SpecPtr old);
SpecPtr HindexedSpec(std::vector<int64_t> blocklengths,
                     std::vector<int64_t> displacements, SpecPtr old);
SpecPtr IndexedBlockSpec(int64_t blocklength,
                         std::vector<int64_t> displacements, SpecPtr old);
SpecPtr HindexedBlockSpec(int64_t blocklength,
                          std::vector<int64_t> displacements, SpecPtr old);
SpecPtr StructSpec(std::vector<int64_t> blocklengths,
                   std::vector<int64_t> displacements,
                   std::vector<SpecPtr> olds);
SpecPtr SubarraySpec(std::vector<int64_t> sizes, std::vector<int64_t> subsizes,
                     std::vector<int64_t> starts, int order, SpecPtr old);
SpecPtr DarraySpec(int64_t comm_size, int64_t rank, std::vector<int64_t> gsizes,
                   std::vector<int> distribs, std::vector<int64_t> dargs,
                   std::vector<int64_t> psizes, int order, SpecPtr old);
SpecPtr ResizedSpec(SpecPtr old, int64_t lb, int64_t extent);

// The engine's layout for a spec (array constructors must succeed).
LayoutRef BuildLayout(const TypeSpec& spec);

// A random spec of at most `depth` nested constructors; arrays stay small
// so a buffer of a few items is at most some kilobytes.
SpecPtr RandomSpec(std::mt19937_64& random, int depth);

// One typemap entry: a predefined item at a byte displacement.
struct Entry {
  int64_t displacement = 0;
  MPI_Datatype basic = MPI_DATATYPE_NULL;
};

struct Typemap {
  std::vector<Entry> entries;     // in typemap order
  std::vector<int64_t> lb_marks;  // explicit lower-bound markers
  std::vector<int64_t> ub_marks;  // explicit upper-bound markers
  std::vector<int64_t> soft_ubs;  // alignment padding of unmarked types

  int64_t lb() const;
  int64_t ub() const;
  int64_t extent() const { return ub() - lb(); }
  int64_t true_lb() const;
  int64_t true_ub() const;
  int64_t size() const;
  int64_t basic_elements() const;
  int64_t external32_size() const;
};

Typemap Expand(const TypeSpec& spec);

// The byte offsets, relative to the buffer, of every data byte of `count`
// items, in packed order: packed byte p is buffer[offsets[p]].
std::vector<int64_t> PackedByteOffsets(const Typemap& typemap, int64_t count);

// For each basic element of `count` items in packed order, its size in the
// packed stream (a pair contributes its value's and its index's).
std::vector<int64_t> ElementSizes(const Typemap& typemap, int64_t count);

// The external32 bytes of `count` items of the typemap read from `buffer`,
// converted number by number by arithmetic (shifts), not byte reversal.
std::vector<unsigned char> ReferenceExternal32(const Typemap& typemap,
                                               int64_t count,
                                               const unsigned char* buffer);

}  // namespace minimpi::datatype::testing

#endif  // MINIMPI_MPI_DATATYPE_TYPEMAP_REFERENCE_H_
