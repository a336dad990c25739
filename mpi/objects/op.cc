// Predefined reductions are one kernel per (operation, datatype) pair: a
// plain loop over one C++ type that the compiler vectorizes. Which kernel
// runs is decided by a table indexed by (operation, datatype handle), filled
// once when the library loads, so applying an operation costs one lookup
// and one indirect call, never a per-element branch on the type.
#include "mpi/objects/op.h"

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace minimpi {
namespace {

// Predefined operation handles lie in [0x20, 0x40) in the standard ABI.
constexpr uintptr_t kFirstOpHandle = 0x20;
constexpr uintptr_t kOpHandleCount = 0x20;
// Below this value a handle is a predefined constant, never an object (the
// bindings use the same bound for every handle kind).
constexpr uintptr_t kLargestPredefinedHandle = 0xfff;

enum OpKind : int {
  kSum,
  kProd,
  kMax,
  kMin,
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kMinLoc,
  kMaxLoc,
  kReplace,
  kNoOp,
  kOpKindCount
};

// The datatype groups of the standard's table "Predefined reduction
// operations" (MPI-4.1 section 6.9.2), plus the pair types of MINLOC and
// MAXLOC and the types no arithmetic applies to (MPI_WCHAR, MPI_PACKED),
// which only MPI_REPLACE and MPI_NO_OP accept.
//
// Beyond the table, minimpi accepts what both MPICH and Open MPI accept,
// because programs rely on it: every integer operation on MPI_CHAR and
// MPI_CHARACTER (used as small integers), and the logical operations on
// the Fortran integers and on MPI_AINT, MPI_OFFSET and MPI_COUNT.
enum class TypeGroup {
  kCInteger,
  kFortranInteger,
  kFloatingPoint,
  kLogical,
  kComplex,
  kByte,
  kMultiLanguage,  // MPI_AINT, MPI_OFFSET, MPI_COUNT
  kValueIndexPair,
  kNoArithmetic,
};

// The layout of the MINLOC/MAXLOC pair types, as mpi/datatype.cc defines
// their extent: the C struct {value; index;} with its padding.
template <typename Value, typename Index>
struct ValueIndex {
  Value value;
  Index index;
};

// Integer arithmetic wraps around (two's complement) as users expect from
// MPI_SUM on ints, without the undefined behavior of signed overflow: it is
// done in the unsigned type of at least int's width, then converted back
// (a modular conversion since C++20).
template <typename T>
struct UnsignedOf {
  using type = std::make_unsigned_t<T>;
};
template <>
struct UnsignedOf<__int128> {
  using type = unsigned __int128;
};
template <typename T>
using WrappingOf = decltype(typename UnsignedOf<T>::type{} + 0u);

template <typename T>
constexpr bool kIsInteger =
    std::is_integral_v<T> || std::is_same_v<T, __int128>;
template <typename T>
constexpr bool kIsComplex = false;
template <typename T>
constexpr bool kIsComplex<std::complex<T>> = true;
template <typename T>
constexpr bool kIsPair = false;
template <typename Value, typename Index>
constexpr bool kIsPair<ValueIndex<Value, Index>> = true;
// What < and + mean on: numbers, bool excluded.
template <typename T>
constexpr bool kIsOrdered =
    (kIsInteger<T> && !std::is_same_v<T, bool>) || std::is_floating_point_v<T>;
template <typename T>
constexpr bool kIsArithmetic = kIsOrdered<T> || kIsComplex<T>;

template <typename T>
T Add(T in, T inout) {
  if constexpr (kIsInteger<T>) {
    using W = WrappingOf<T>;
    return static_cast<T>(static_cast<W>(in) + static_cast<W>(inout));
  } else {
    return in + inout;
  }
}

template <typename T>
T Multiply(T in, T inout) {
  if constexpr (kIsInteger<T>) {
    using W = WrappingOf<T>;
    return static_cast<T>(static_cast<W>(in) * static_cast<W>(inout));
  } else {
    return in * inout;
  }
}

// The textbook complex product. std::complex's operator* also repairs
// infinities and NaNs through a library call, which keeps the loop from
// vectorizing; MPI leaves those cases to the implementation.
template <typename T>
std::complex<T> Multiply(std::complex<T> in, std::complex<T> inout) {
  return {in.real() * inout.real() - in.imag() * inout.imag(),
          in.real() * inout.imag() + in.imag() * inout.real()};
}

// One functor per operation: Combine(in, inout) is the new inout.
struct SumOf {
  template <typename T>
  static T Combine(T in, T inout) {
    return Add(in, inout);
  }
};
struct ProductOf {
  template <typename T>
  static T Combine(T in, T inout) {
    return Multiply(in, inout);
  }
};
// Written as selects so they become vector max/min instructions.
struct MaximumOf {
  template <typename T>
  static T Combine(T in, T inout) {
    return in > inout ? in : inout;
  }
};
struct MinimumOf {
  template <typename T>
  static T Combine(T in, T inout) {
    return in < inout ? in : inout;
  }
};
// Logical results are 1 or 0 in the operands' type (C's && and Fortran's
// .AND. on the usual representation of .TRUE.).
struct LogicalAndOf {
  template <typename T>
  static T Combine(T in, T inout) {
    return static_cast<T>((in != 0) & (inout != 0));
  }
};
struct LogicalOrOf {
  template <typename T>
  static T Combine(T in, T inout) {
    return static_cast<T>((in != 0) | (inout != 0));
  }
};
struct LogicalXorOf {
  template <typename T>
  static T Combine(T in, T inout) {
    return static_cast<T>((in != 0) ^ (inout != 0));
  }
};
struct BitwiseAndOf {
  template <typename T>
  static T Combine(T in, T inout) {
    return static_cast<T>(in & inout);
  }
};
struct BitwiseOrOf {
  template <typename T>
  static T Combine(T in, T inout) {
    return static_cast<T>(in | inout);
  }
};
struct BitwiseXorOf {
  template <typename T>
  static T Combine(T in, T inout) {
    return static_cast<T>(in ^ inout);
  }
};
// MINLOC and MAXLOC: the better value wins; on equal values the smaller
// index does, so the result does not depend on the reduction order.
struct MinimumWithIndexOf {
  template <typename Pair>
  static Pair Combine(Pair in, Pair inout) {
    if (in.value < inout.value) return in;
    if (in.value == inout.value && in.index < inout.index) {
      inout.index = in.index;
    }
    return inout;
  }
};
struct MaximumWithIndexOf {
  template <typename Pair>
  static Pair Combine(Pair in, Pair inout) {
    if (in.value > inout.value) return in;
    if (in.value == inout.value && in.index < inout.index) {
      inout.index = in.index;
    }
    return inout;
  }
};

using Kernel = void (*)(const void* in, void* inout, int64_t count);

// At -O2, GCC vectorizes only loops that need neither a runtime check that
// the buffers do not overlap nor a scalar remainder loop. So the bulk goes
// in fixed-size blocks through parameters declared not to alias
// (__restrict, which GCC honours on parameters), and only the last partial
// block runs item by item. Buffers that overlap (MPI does not allow it, but
// an internal caller might pass one buffer twice) take the item-by-item
// loop, in order, so __restrict never lies. Measured on the 2-core machine,
// sums of doubles: 3.3x faster in L1 (32 KiB: 0.68 against 2.24 us) and
// 2.8x in L2 (512 KiB: 12.8 against 36 us) than staging each block through
// local arrays, the previous kernel (itself 3x faster than the plain loop).
template <typename T, typename Operation, int kItems>
inline void CombineBlock(const T* __restrict in, T* __restrict inout) {
  for (int i = 0; i < kItems; ++i) {
    inout[i] = Operation::Combine(in[i], inout[i]);
  }
}

template <typename T, typename Operation>
void ElementwiseKernel(const void* in, void* inout, int64_t count) {
  constexpr int kBlockItems = std::max<int>(1, 256 / sizeof(T));
  const T* in_items = static_cast<const T*>(in);
  T* inout_items = static_cast<T*>(inout);
  int64_t done = 0;
  // Compared as addresses: `<` between pointers into different objects is
  // unspecified in C++.
  const uintptr_t in_at = reinterpret_cast<uintptr_t>(in);
  const uintptr_t inout_at = reinterpret_cast<uintptr_t>(inout);
  const uintptr_t bytes = static_cast<uintptr_t>(count) * sizeof(T);
  const bool disjoint = in_at + bytes <= inout_at || inout_at + bytes <= in_at;
  if (disjoint) [[likely]] {
    for (; done + kBlockItems <= count; done += kBlockItems) {
      CombineBlock<T, Operation, kBlockItems>(in_items + done,
                                              inout_items + done);
    }
  }
  for (; done < count; ++done) {
    inout_items[done] = Operation::Combine(in_items[done], inout_items[done]);
  }
}

template <typename T>
void ReplaceKernel(const void* in, void* inout, int64_t count) {
  std::memmove(inout, in, sizeof(T) * static_cast<size_t>(count));
}

void NoOpKernel(const void*, void*, int64_t) {}

using datatype::predefined_internal::kFirstHandle;
using datatype::predefined_internal::kHandleCount;

class KernelTable {
 public:
  Kernel Find(OpKind op, MPI_Datatype type) const {
    const uintptr_t index = reinterpret_cast<uintptr_t>(type) - kFirstHandle;
    if (index >= kHandleCount) return nullptr;  // also below kFirstHandle
    return kernels_[op][index];
  }

  // Registers every operation the standard defines on `group` for `type`,
  // whose items are C++ values of type T.
  template <typename T>
  void AddType(MPI_Datatype type, TypeGroup group) {
    const bool max_min = group == TypeGroup::kCInteger ||
                         group == TypeGroup::kFortranInteger ||
                         group == TypeGroup::kFloatingPoint ||
                         group == TypeGroup::kMultiLanguage;
    const bool sum_product = max_min || group == TypeGroup::kComplex;
    const bool logical = group == TypeGroup::kCInteger ||
                         group == TypeGroup::kLogical ||
                         group == TypeGroup::kFortranInteger ||
                         group == TypeGroup::kMultiLanguage;
    const bool bitwise =
        group == TypeGroup::kCInteger || group == TypeGroup::kFortranInteger ||
        group == TypeGroup::kByte || group == TypeGroup::kMultiLanguage;
    const bool with_index = group == TypeGroup::kValueIndexPair;

    // `if constexpr` keeps each kernel from being instantiated for types it
    // does not compile on (no < on complex, no & on floating point); the
    // runtime flags then pick among the ones that exist.
    if constexpr (kIsArithmetic<T>) {
      if (sum_product) {
        Set(kSum, type, &ElementwiseKernel<T, SumOf>);
        Set(kProd, type, &ElementwiseKernel<T, ProductOf>);
      }
    }
    if constexpr (kIsOrdered<T>) {
      if (max_min) {
        Set(kMax, type, &ElementwiseKernel<T, MaximumOf>);
        Set(kMin, type, &ElementwiseKernel<T, MinimumOf>);
      }
    }
    if constexpr (kIsInteger<T>) {
      if (logical) {
        Set(kLogicalAnd, type, &ElementwiseKernel<T, LogicalAndOf>);
        Set(kLogicalOr, type, &ElementwiseKernel<T, LogicalOrOf>);
        Set(kLogicalXor, type, &ElementwiseKernel<T, LogicalXorOf>);
      }
      if (bitwise) {
        Set(kBitwiseAnd, type, &ElementwiseKernel<T, BitwiseAndOf>);
        Set(kBitwiseOr, type, &ElementwiseKernel<T, BitwiseOrOf>);
        Set(kBitwiseXor, type, &ElementwiseKernel<T, BitwiseXorOf>);
      }
    }
    if constexpr (kIsPair<T>) {
      if (with_index) {
        Set(kMinLoc, type, &ElementwiseKernel<T, MinimumWithIndexOf>);
        Set(kMaxLoc, type, &ElementwiseKernel<T, MaximumWithIndexOf>);
      }
    }
    // One-sided accumulate accepts these two on every predefined type.
    Set(kReplace, type, &ReplaceKernel<T>);
    Set(kNoOp, type, &NoOpKernel);
  }

 private:
  void Set(OpKind op, MPI_Datatype type, Kernel kernel) {
    kernels_[op][reinterpret_cast<uintptr_t>(type) - kFirstHandle] = kernel;
  }

  std::array<std::array<Kernel, kHandleCount>, kOpKindCount> kernels_{};
};

KernelTable BuildKernelTable() {
  using G = TypeGroup;
  KernelTable t;
  t.AddType<short>(MPI_SHORT, G::kCInteger);
  t.AddType<int>(MPI_INT, G::kCInteger);
  t.AddType<long>(MPI_LONG, G::kCInteger);
  t.AddType<long long>(MPI_LONG_LONG, G::kCInteger);
  t.AddType<unsigned short>(MPI_UNSIGNED_SHORT, G::kCInteger);
  t.AddType<unsigned>(MPI_UNSIGNED, G::kCInteger);
  t.AddType<unsigned long>(MPI_UNSIGNED_LONG, G::kCInteger);
  t.AddType<unsigned long long>(MPI_UNSIGNED_LONG_LONG, G::kCInteger);
  t.AddType<signed char>(MPI_SIGNED_CHAR, G::kCInteger);
  t.AddType<unsigned char>(MPI_UNSIGNED_CHAR, G::kCInteger);
  t.AddType<int8_t>(MPI_INT8_T, G::kCInteger);
  t.AddType<uint8_t>(MPI_UINT8_T, G::kCInteger);
  t.AddType<int16_t>(MPI_INT16_T, G::kCInteger);
  t.AddType<uint16_t>(MPI_UINT16_T, G::kCInteger);
  t.AddType<int32_t>(MPI_INT32_T, G::kCInteger);
  t.AddType<uint32_t>(MPI_UINT32_T, G::kCInteger);
  t.AddType<int64_t>(MPI_INT64_T, G::kCInteger);
  t.AddType<uint64_t>(MPI_UINT64_T, G::kCInteger);

  t.AddType<int32_t>(MPI_INTEGER, G::kFortranInteger);
  t.AddType<int8_t>(MPI_INTEGER1, G::kFortranInteger);
  t.AddType<int16_t>(MPI_INTEGER2, G::kFortranInteger);
  t.AddType<int32_t>(MPI_INTEGER4, G::kFortranInteger);
  t.AddType<int64_t>(MPI_INTEGER8, G::kFortranInteger);
  t.AddType<__int128>(MPI_INTEGER16, G::kFortranInteger);

  t.AddType<float>(MPI_FLOAT, G::kFloatingPoint);
  t.AddType<double>(MPI_DOUBLE, G::kFloatingPoint);
  t.AddType<long double>(MPI_LONG_DOUBLE, G::kFloatingPoint);
  t.AddType<float>(MPI_REAL, G::kFloatingPoint);
  t.AddType<double>(MPI_DOUBLE_PRECISION, G::kFloatingPoint);
  t.AddType<float>(MPI_REAL4, G::kFloatingPoint);
  t.AddType<double>(MPI_REAL8, G::kFloatingPoint);
  t.AddType<long double>(MPI_REAL16, G::kFloatingPoint);

  t.AddType<int32_t>(MPI_LOGICAL, G::kLogical);
  t.AddType<int8_t>(MPI_LOGICAL1, G::kLogical);
  t.AddType<int16_t>(MPI_LOGICAL2, G::kLogical);
  t.AddType<int32_t>(MPI_LOGICAL4, G::kLogical);
  t.AddType<int64_t>(MPI_LOGICAL8, G::kLogical);
  t.AddType<__int128>(MPI_LOGICAL16, G::kLogical);
  t.AddType<bool>(MPI_C_BOOL, G::kLogical);
  t.AddType<bool>(MPI_CXX_BOOL, G::kLogical);

  t.AddType<std::complex<float>>(MPI_C_FLOAT_COMPLEX, G::kComplex);
  t.AddType<std::complex<float>>(MPI_CXX_FLOAT_COMPLEX, G::kComplex);
  t.AddType<std::complex<double>>(MPI_C_DOUBLE_COMPLEX, G::kComplex);
  t.AddType<std::complex<double>>(MPI_CXX_DOUBLE_COMPLEX, G::kComplex);
  t.AddType<std::complex<long double>>(MPI_C_LONG_DOUBLE_COMPLEX, G::kComplex);
  t.AddType<std::complex<long double>>(MPI_CXX_LONG_DOUBLE_COMPLEX,
                                       G::kComplex);
  t.AddType<std::complex<float>>(MPI_COMPLEX, G::kComplex);
  t.AddType<std::complex<double>>(MPI_DOUBLE_COMPLEX, G::kComplex);
  t.AddType<std::complex<float>>(MPI_COMPLEX8, G::kComplex);
  t.AddType<std::complex<double>>(MPI_COMPLEX16, G::kComplex);
  t.AddType<std::complex<long double>>(MPI_COMPLEX32, G::kComplex);

  t.AddType<unsigned char>(MPI_BYTE, G::kByte);

  t.AddType<MPI_Aint>(MPI_AINT, G::kMultiLanguage);
  t.AddType<MPI_Offset>(MPI_OFFSET, G::kMultiLanguage);
  t.AddType<MPI_Count>(MPI_COUNT, G::kMultiLanguage);

  t.AddType<ValueIndex<float, int>>(MPI_FLOAT_INT, G::kValueIndexPair);
  t.AddType<ValueIndex<double, int>>(MPI_DOUBLE_INT, G::kValueIndexPair);
  t.AddType<ValueIndex<long, int>>(MPI_LONG_INT, G::kValueIndexPair);
  t.AddType<ValueIndex<int, int>>(MPI_2INT, G::kValueIndexPair);
  t.AddType<ValueIndex<short, int>>(MPI_SHORT_INT, G::kValueIndexPair);
  t.AddType<ValueIndex<long double, int>>(MPI_LONG_DOUBLE_INT,
                                          G::kValueIndexPair);
  t.AddType<ValueIndex<float, float>>(MPI_2REAL, G::kValueIndexPair);
  t.AddType<ValueIndex<double, double>>(MPI_2DOUBLE_PRECISION,
                                        G::kValueIndexPair);
  t.AddType<ValueIndex<int32_t, int32_t>>(MPI_2INTEGER, G::kValueIndexPair);

  t.AddType<char>(MPI_CHAR, G::kCInteger);
  t.AddType<char>(MPI_CHARACTER, G::kCInteger);
  t.AddType<wchar_t>(MPI_WCHAR, G::kNoArithmetic);
  t.AddType<char>(MPI_PACKED, G::kNoArithmetic);
  return t;
}

// Filled when the library loads, like the datatype table: nothing can apply
// an operation before MPI_Init.
const KernelTable kKernels = BuildKernelTable();

class PredefinedOp final : public Op {
 public:
  PredefinedOp(const char* name, OpKind kind) : name_(name), kind_(kind) {}

  const char* name() const override { return name_; }
  // MPI_REPLACE keeps `in` and MPI_NO_OP keeps `inout`: order matters for
  // both. Every other predefined operation commutes.
  bool commutative() const override {
    return kind_ != kReplace && kind_ != kNoOp;
  }
  bool predefined() const override { return true; }
  bool Supports(MPI_Datatype type) const override {
    return kKernels.Find(kind_, type) != nullptr;
  }
  void Apply(const void* in, void* inout, int64_t count,
             MPI_Datatype type) const override {
    kKernels.Find(kind_, type)(in, inout, count);
  }

 private:
  const char* name_;
  OpKind kind_;
};

// Installed by the bindings (SetUserOpExtentResolver).
std::atomic<DatatypeExtentResolver> extent_resolver{nullptr};

class UserOp final : public Op {
 public:
  UserOp(MPI_User_function* function, bool commutative)
      : function_(function), commutative_(commutative) {}
  UserOp(MPI_User_function_c* function, bool commutative)
      : large_count_function_(function), commutative_(commutative) {}

  const char* name() const override { return "user-defined operation"; }
  bool commutative() const override { return commutative_; }
  bool predefined() const override { return false; }
  // The user function decides what it accepts; MPI checks nothing.
  bool Supports(MPI_Datatype) const override { return true; }
  void Apply(const void* in, void* inout, int64_t count,
             MPI_Datatype type) const override {
    // The C signature has a non-const invec for historical reasons; the
    // standard forbids the function to modify it.
    MPI_Datatype type_argument = type;
    if (large_count_function_ != nullptr) {
      MPI_Count length = count;
      large_count_function_(const_cast<void*>(in), inout, &length,
                            &type_argument);
      return;
    }
    if (count <= kMaxIntLength) [[likely]] {
      int length = static_cast<int>(count);
      function_(const_cast<void*>(in), inout, &length, &type_argument);
      return;
    }
    // An int length cannot say more than INT_MAX items: the operation is
    // item by item, so the items go over in pieces (as a _c collective or
    // MPI_Reduce_local_c may ask of an MPI_Op_create function).
    const int64_t extent = ExtentOf(type);
    auto* in_bytes = static_cast<std::byte*>(const_cast<void*>(in));
    auto* inout_bytes = static_cast<std::byte*>(inout);
    for (int64_t done = 0; done < count;) {
      int length = static_cast<int>(std::min(count - done, kMaxIntLength));
      function_(in_bytes + done * extent, inout_bytes + done * extent, &length,
                &type_argument);
      done += length;
    }
  }

 private:
  static constexpr int64_t kMaxIntLength = std::numeric_limits<int>::max();

  static int64_t ExtentOf(MPI_Datatype type) {
    if (const Datatype* predefined = Datatype::FindPredefined(type)) {
      return predefined->extent();
    }
    DatatypeExtentResolver resolver =
        extent_resolver.load(std::memory_order_acquire);
    return resolver != nullptr ? resolver(type) : 0;
  }

  MPI_User_function* function_ = nullptr;
  MPI_User_function_c* large_count_function_ = nullptr;
  bool commutative_;
};

struct PredefinedOps {
  PredefinedOp sum{"MPI_SUM", kSum};
  PredefinedOp prod{"MPI_PROD", kProd};
  PredefinedOp max{"MPI_MAX", kMax};
  PredefinedOp min{"MPI_MIN", kMin};
  PredefinedOp land{"MPI_LAND", kLogicalAnd};
  PredefinedOp lor{"MPI_LOR", kLogicalOr};
  PredefinedOp lxor{"MPI_LXOR", kLogicalXor};
  PredefinedOp band{"MPI_BAND", kBitwiseAnd};
  PredefinedOp bor{"MPI_BOR", kBitwiseOr};
  PredefinedOp bxor{"MPI_BXOR", kBitwiseXor};
  PredefinedOp minloc{"MPI_MINLOC", kMinLoc};
  PredefinedOp maxloc{"MPI_MAXLOC", kMaxLoc};
  PredefinedOp replace{"MPI_REPLACE", kReplace};
  PredefinedOp no_op{"MPI_NO_OP", kNoOp};

  // By handle - kFirstOpHandle; nullptr for MPI_OP_NULL and unused values.
  std::array<const Op*, kOpHandleCount> by_handle{};

  PredefinedOps() {
    Add(MPI_SUM, sum);
    Add(MPI_PROD, prod);
    Add(MPI_MAX, max);
    Add(MPI_MIN, min);
    Add(MPI_LAND, land);
    Add(MPI_LOR, lor);
    Add(MPI_LXOR, lxor);
    Add(MPI_BAND, band);
    Add(MPI_BOR, bor);
    Add(MPI_BXOR, bxor);
    Add(MPI_MINLOC, minloc);
    Add(MPI_MAXLOC, maxloc);
    Add(MPI_REPLACE, replace);
    Add(MPI_NO_OP, no_op);
  }
  void Add(MPI_Op handle, const Op& op) {
    by_handle[reinterpret_cast<uintptr_t>(handle) - kFirstOpHandle] = &op;
  }
};

const PredefinedOps kPredefinedOps;

}  // namespace

const Op* LookupPredefinedOp(MPI_Op handle) {
  const uintptr_t value = reinterpret_cast<uintptr_t>(handle);
  if (value - kFirstOpHandle < kOpHandleCount) {
    return kPredefinedOps.by_handle[value - kFirstOpHandle];
  }
  return nullptr;
}

bool MayNameUserOp(MPI_Op handle) {
  return reinterpret_cast<uintptr_t>(handle) > kLargestPredefinedHandle;
}

void SetUserOpExtentResolver(DatatypeExtentResolver resolver) {
  extent_resolver.store(resolver, std::memory_order_release);
}

Op* NewUserOp(MPI_User_function* function, bool commutative) {
  return new UserOp(function, commutative);
}

Op* NewUserOp(MPI_User_function_c* function, bool commutative) {
  return new UserOp(function, commutative);
}

void Op::Retain() const {
  if (!predefined()) references_.fetch_add(1, std::memory_order_relaxed);
}

void Op::Release() const {
  if (predefined()) return;
  if (references_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

}  // namespace minimpi
