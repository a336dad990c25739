// The committed description of one datatype: its bounds, its signature and
// the data of one item as a short flat list of runs of equal memory blocks.
//
// Every derived datatype is flattened once, when it is constructed, into
// runs in typemap order (the order MPI packs in). Packing, unpacking, the
// transport's I/O vectors and external32 all read that one list, so none of
// them ever walks the tree of constructor calls. A layout is immutable and
// reference counted: a pending nonblocking operation keeps the layout it
// started with alive after the user frees the datatype.
//
// The cost of flattening is memory: 32 bytes a run. Regular types stay a
// handful of runs whatever their size (blocks that abut merge, regular
// repetition is one run with a count), but an item of N irregular blocks
// (an hindexed with N scattered displacements, a contiguous of N structs
// with holes) holds up to N runs.
//
// Bounds follow MPI-4.1 section 5.1.6 ("Lower-Bound and Upper-Bound
// Markers") to the letter: lb is the least displacement and ub the
// greatest end of the data in the typemap, unless the typemap holds
// explicit bound markers (MPI_Type_create_resized puts them there; subarray
// and darray types have them by definition), in which case only the
// markers count, also inside a struct that mixes marked and unmarked
// members. Like MPICH, the alignment padding the standard calls epsilon is
// added to a struct's extent only (rounded up to the largest alignment of
// its members' basic types), never to a type with markers. A typemap with
// no entry at all (a count of 0, all blocklengths 0) has lb = ub = true_lb
// = true_ub = 0, as MPICH reports it.
//
// Owned by: mpi/datatype. Called by: the MPI_Type_* bindings (construction,
// MPI_Type_size / get_extent / get_true_extent, MPI_Get_elements), p2p and
// collectives (through pack.h and the runs), external32.cc.
#ifndef MINIMPI_MPI_DATATYPE_LAYOUT_H_
#define MINIMPI_MPI_DATATYPE_LAYOUT_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mpi/datatype/predefined.h"
#include "mpi/mpi.h"

namespace minimpi::datatype {

// `count` blocks of `length` bytes: block k covers
// [offset + k * stride, offset + k * stride + length), relative to the
// buffer pointer (so offsets may be negative, and absolute addresses work
// with MPI_BOTTOM). Invariants kept by the builder: length > 0, count > 0;
// a run of one block has stride 0; a run of several blocks never has
// stride == length (that would be one block).
struct Run {
  int64_t offset = 0;
  int64_t length = 0;
  int64_t count = 1;
  int64_t stride = 0;

  int64_t bytes() const { return length * count; }
  friend bool operator==(const Run&, const Run&) = default;
};

// `count` consecutive basic elements of the predefined type `basic` in the
// type signature. Pair types (MPI_DOUBLE_INT, ...) stay whole: one entry is
// one pair, which holds two basic elements.
struct SignatureRun {
  MPI_Datatype basic = MPI_DATATYPE_NULL;
  int64_t count = 0;
  friend bool operator==(const SignatureRun&, const SignatureRun&) = default;
};

class Layout;

// Holds one reference to a layout; copying takes another, destruction gives
// it back. Empty (null) when default-constructed or moved from.
class LayoutRef {
 public:
  LayoutRef() = default;
  // Takes over a reference the caller already owns.
  static LayoutRef Adopt(const Layout* layout) { return LayoutRef(layout); }
  // Takes a new reference to a layout someone else keeps alive.
  static LayoutRef Share(const Layout* layout);

  LayoutRef(const LayoutRef& other);
  LayoutRef& operator=(const LayoutRef& other);
  LayoutRef(LayoutRef&& other) noexcept : layout_(other.layout_) {
    other.layout_ = nullptr;
  }
  LayoutRef& operator=(LayoutRef&& other) noexcept;
  ~LayoutRef();

  const Layout* get() const { return layout_; }
  const Layout& operator*() const { return *layout_; }
  const Layout* operator->() const { return layout_; }
  explicit operator bool() const { return layout_ != nullptr; }
  // Hands the reference to the caller (e.g. to store it behind an MPI
  // handle); the caller must Release() it.
  const Layout* release() {
    const Layout* layout = layout_;
    layout_ = nullptr;
    return layout;
  }

 private:
  explicit LayoutRef(const Layout* adopted) : layout_(adopted) {}
  const Layout* layout_ = nullptr;
};

class Layout {
 public:
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;

  // Reference counting. Predefined layouts are immortal: counting them would
  // make every thread that sends an MPI_INT write one shared cache line.
  void Retain() const;
  void Release() const;

  // MPI_Type_size: bytes of data in one item.
  int64_t size() const { return size_; }
  // MPI_Type_get_extent.
  int64_t lb() const { return lb_; }
  int64_t ub() const { return ub_; }
  int64_t extent() const { return ub_ - lb_; }
  // MPI_Type_get_true_extent: the bytes the data really touches.
  int64_t true_lb() const { return true_lb_; }
  int64_t true_ub() const { return true_ub_; }
  int64_t true_extent() const { return true_ub_ - true_lb_; }
  // Whether the bounds come from explicit markers (a resized, subarray or
  // darray type, or one built from such types).
  bool has_explicit_bounds() const { return has_explicit_bounds_; }
  // The largest alignment of the basic types in the data (1 when empty);
  // what a struct's extent is rounded up to.
  int64_t alignment() const { return alignment_; }

  // The data of one item, in typemap order. Item i of a buffer is the same
  // runs shifted by i * extent().
  std::span<const Run> runs() const { return runs_; }

  // The bytes `count` items touch, relative to the buffer: [low, high),
  // from the lowest byte of any item to the highest (a negative extent
  // puts later items lower). What a registration or a range check covers.
  std::pair<int64_t, int64_t> TouchedBytes(int64_t count) const {
    const int64_t last_item = (count - 1) * extent();
    return {true_lb_ + std::min<int64_t>(0, last_item),
            true_ub_ + std::max<int64_t>(0, last_item)};
  }
  // Cost hints: contiguous blocks in one item (the sum of the runs' counts;
  // an upper bound on the I/O vector entries one item needs).
  int64_t num_blocks() const { return num_blocks_; }
  // Packed offset, within one item, at which each run starts; one more
  // entry than runs() holds size(). For seeking into the packed stream.
  std::span<const int64_t> run_packed_starts() const {
    return run_packed_starts_;
  }

  // Whether `count` items form one contiguous range of bytes; it then
  // starts at buffer + true_lb() and is count * size() long.
  bool IsContiguous(int64_t count) const;
  // When the items of a buffer continue the single run of one item (a
  // contiguous type, a vector whose count * stride equals its extent, ...),
  // the one run that `count` items form; otherwise nullopt. Lets a mover
  // walk many items as one run.
  std::optional<Run> RunOfItems(int64_t count) const;

  // The type signature of one item, run-length encoded: a vector of a
  // million doubles is one entry.
  std::span<const SignatureRun> signature() const { return signature_; }
  // Basic elements in one item (a pair counts as two).
  int64_t basic_elements() const { return basic_elements_; }
  // MPI_Get_elements: the basic elements in the first `packed_bytes` bytes
  // of the packed form of any number of items, or -1 when that prefix ends
  // inside a basic element (the caller reports MPI_UNDEFINED).
  int64_t ElementsIn(int64_t packed_bytes) const;

  // The one predefined type every basic element belongs to (a pair type
  // kept whole), and how many of those one item holds; MPI_DATATYPE_NULL
  // and 0 when the type mixes predefined types or holds no data.
  // Predefined reduction operations on a derived type apply to these items.
  MPI_Datatype reduction_base() const { return reduction_base_; }
  int64_t reduction_base_count() const { return reduction_base_count_; }

  // Bytes of one item in the external32 representation.
  int64_t external32_size() const { return external32_size_; }
  // The predefined type this layout describes, or nullptr if derived.
  const PredefinedType* predefined() const { return predefined_; }

  // One line for logs and test failures: bounds, runs and signature.
  std::string DebugString() const;

 private:
  friend class LayoutBuilder;  // the only way to make one
  Layout() = default;
  ~Layout() = default;
  // Fills the fields that follow from runs_ and signature_.
  void ComputeDerivedFields();

  mutable std::atomic<int64_t> references_{1};
  bool immortal_ = false;
  bool has_explicit_bounds_ = false;
  int64_t size_ = 0;
  int64_t lb_ = 0;
  int64_t ub_ = 0;
  int64_t true_lb_ = 0;
  int64_t true_ub_ = 0;
  int64_t alignment_ = 1;
  int64_t num_blocks_ = 0;
  int64_t basic_elements_ = 0;
  int64_t external32_size_ = 0;
  MPI_Datatype reduction_base_ = MPI_DATATYPE_NULL;
  int64_t reduction_base_count_ = 0;
  const PredefinedType* predefined_ = nullptr;
  std::vector<Run> runs_;
  std::vector<int64_t> run_packed_starts_;
  std::vector<SignatureRun> signature_;
  // Per signature run: packed bytes and basic elements before it (one more
  // entry than signature_), for ElementsIn's binary search.
  std::vector<int64_t> signature_byte_starts_;
  std::vector<int64_t> signature_element_starts_;
};

// The run that `second`, appended after `first` in typemap order, forms
// with it, if they form one: two blocks that abut, or two arithmetic
// sequences of equal blocks where the second continues the first.
std::optional<Run> MergedRun(const Run& first, const Run& second);

// The run that `copies` copies of `run`, each `distance` bytes after the
// previous one, form together, if they form one; nullopt otherwise.
std::optional<Run> RunOfCopies(const Run& run, int64_t copies,
                               int64_t distance);

// ---- Constructors. Counts, blocklengths and displacements are int64 (the
// bindings also offer MPI-4's large-count _c forms); counts and blocklengths
// must be non-negative (the bindings report MPI_ERR_COUNT / MPI_ERR_ARG).
// Displacements "in items" are multiplied by the old type's extent.

// The layout of a predefined type (shared, immortal), or an empty ref when
// `handle` is not a predefined datatype.
LayoutRef Predefined(MPI_Datatype handle);
// The same without touching a reference count; nullptr when not predefined.
const Layout* PredefinedLayout(MPI_Datatype handle);

// MPI_Type_contiguous.
LayoutRef Contiguous(int64_t count, const Layout& old);
// MPI_Type_vector: `stride` in items of `old`.
LayoutRef Vector(int64_t count, int64_t blocklength, int64_t stride,
                 const Layout& old);
// MPI_Type_create_hvector: `stride_bytes` in bytes.
LayoutRef Hvector(int64_t count, int64_t blocklength, int64_t stride_bytes,
                  const Layout& old);
// MPI_Type_indexed: displacements in items. The spans have equal sizes.
LayoutRef Indexed(std::span<const int64_t> blocklengths,
                  std::span<const int64_t> displacements, const Layout& old);
// MPI_Type_create_hindexed: displacements in bytes.
LayoutRef Hindexed(std::span<const int64_t> blocklengths,
                   std::span<const int64_t> displacements_bytes,
                   const Layout& old);
// MPI_Type_create_indexed_block: displacements in items.
LayoutRef IndexedBlock(int64_t blocklength,
                       std::span<const int64_t> displacements,
                       const Layout& old);
// MPI_Type_create_hindexed_block: displacements in bytes.
LayoutRef HindexedBlock(int64_t blocklength,
                        std::span<const int64_t> displacements_bytes,
                        const Layout& old);
// MPI_Type_create_struct: displacements in bytes, one old layout per block.
LayoutRef Struct(std::span<const int64_t> blocklengths,
                 std::span<const int64_t> displacements_bytes,
                 std::span<const Layout* const> olds);
// MPI_Type_create_resized: the same data with lb and ub = lb + extent.
LayoutRef Resized(const Layout& old, int64_t lb, int64_t extent);

// A layout that only moves bytes: one item is `runs`, items lie `extent`
// bytes apart, and the signature is plain bytes. For the side of a
// transfer that knows another process's memory layout (sent in a message)
// but not its datatypes: enough for a SegmentCursor over that memory.
LayoutRef RunsOnly(std::span<const Run> runs, int64_t extent);

}  // namespace minimpi::datatype

#endif  // MINIMPI_MPI_DATATYPE_LAYOUT_H_
