// External32 is the packed stream (pack.h) with each number converted: the
// native stream is produced chunk by chunk of whole elements into a small
// buffer on the stack, and the signature (layout.h) says which predefined
// type every element of the chunk is.
#include "mpi/datatype/external32.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mpi/datatype/layout.h"
#include "mpi/datatype/pack.h"
#include "mpi/datatype/predefined.h"

namespace minimpi::datatype {
namespace {

using Byte = unsigned char;

// The x87 80-bit extended value occupies the low 10 of its 16 bytes.
constexpr int kX87ValueBytes = 10;
// Bytes of native packed data converted per step.
constexpr int64_t kChunkBytes = 4096;

// Integers and IEEE floats: little-endian native to big-endian external.
// With fewer external bytes the low-order ones are kept.
void ReverseLowBytes(const Byte* native, Byte* external, int external_size) {
  for (int i = 0; i < external_size; ++i) {
    external[i] = native[external_size - 1 - i];
  }
}

void ToExternal(NumberKind kind, int native_size, int external_size,
                const Byte* native, Byte* external) {
  switch (kind) {
    case NumberKind::kRawByte:
      std::memcpy(external, native, external_size);
      return;
    case NumberKind::kBool:
      external[0] = native[0] != 0 ? 1 : 0;
      return;
    case NumberKind::kX87LongDouble: {
      long double value;
      std::memcpy(&value, native, sizeof(value));
      // binary128 has the x87 format's 15-bit exponent and a wider
      // fraction, so this conversion is exact.
      const __float128 wide = value;
      Byte bytes[sizeof(wide)];
      std::memcpy(bytes, &wide, sizeof(wide));
      ReverseLowBytes(bytes, external, external_size);
      return;
    }
    case NumberKind::kLogical:
    case NumberKind::kSignedInteger:
    case NumberKind::kUnsignedInteger:
    case NumberKind::kIeeeFloat:
      ReverseLowBytes(native, external, std::min(native_size, external_size));
      return;
  }
}

void FromExternal(NumberKind kind, int native_size, int external_size,
                  const Byte* external, Byte* native) {
  switch (kind) {
    case NumberKind::kRawByte:
      std::memcpy(native, external, native_size);
      return;
    case NumberKind::kBool:
      native[0] = external[0] != 0 ? 1 : 0;
      return;
    case NumberKind::kLogical: {
      // Every byte decides (section 15.5.2); true is 1, as gfortran has it.
      bool any = false;
      for (int i = 0; i < external_size; ++i) any = any || external[i] != 0;
      std::memset(native, 0, native_size);
      native[0] = any ? 1 : 0;
      return;
    }
    case NumberKind::kX87LongDouble: {
      __float128 wide;
      Byte bytes[sizeof(wide)];
      ReverseLowBytes(external, bytes, sizeof(wide));
      std::memcpy(&wide, bytes, sizeof(wide));
      const long double value = static_cast<long double>(wide);
      // The padding bytes get zeros rather than whatever the stack held.
      std::memset(native, 0, native_size);
      std::memcpy(native, &value, kX87ValueBytes);
      return;
    }
    case NumberKind::kSignedInteger:
    case NumberKind::kUnsignedInteger:
    case NumberKind::kIeeeFloat: {
      ReverseLowBytes(external, native, external_size);
      // Extend a shorter external integer: with its sign if signed.
      const bool negative =
          kind == NumberKind::kSignedInteger && (external[0] & 0x80) != 0;
      std::memset(native + external_size, negative ? 0xff : 0,
                  native_size - external_size);
      return;
    }
  }
}

// Converts `elements` consecutive elements of `type` between their packed
// native form (members back to back) and external32.
template <bool kToExternal>
void ConvertElements(const PredefinedType& type, int64_t elements, Byte* native,
                     Byte* external) {
  for (int64_t e = 0; e < elements; ++e) {
    for (int m = 0; m < type.member_count; ++m) {
      const NumberMember& member = type.members[m];
      for (int c = 0; c < member.components; ++c) {
        if constexpr (kToExternal) {
          ToExternal(member.kind, member.native_size, member.external32_size,
                     native, external);
        } else {
          FromExternal(member.kind, member.native_size, member.external32_size,
                       external, native);
        }
        native += member.native_size;
        external += member.external32_size;
      }
    }
  }
}

// Walks the elements of (buffer, count, layout) in packed order, a chunk
// of elements of one predefined type at a time, converting each chunk
// between the native stream and `external` (advanced). One function for
// both directions, so the const of each side's pointer is the caller's
// promise: packing only reads `buffer`, unpacking only reads `external`.
template <bool kToExternal>
void ConvertStream(const void* buffer, int64_t count, const Layout& layout,
                   Byte* external) {
  alignas(16) Byte native[kChunkBytes];
  int64_t native_offset = 0;
  // Moves `elements` elements of `type` starting at native_offset.
  auto convert_run = [&](const PredefinedType& type, int64_t elements) {
    const int64_t per_chunk = kChunkBytes / type.size;
    while (elements > 0) {
      const int64_t chunk = std::min(elements, per_chunk);
      const int64_t bytes = chunk * type.size;
      if constexpr (kToExternal) {
        Pack(buffer, count, &layout, native_offset, native, bytes);
        ConvertElements<true>(type, chunk, native, external);
      } else {
        ConvertElements<false>(type, chunk, native, external);
        Unpack(native, bytes, const_cast<void*>(buffer), count, &layout,
               native_offset);
      }
      native_offset += bytes;
      external += chunk * type.external32_size;
      elements -= chunk;
    }
  };
  const auto signature = layout.signature();
  if (signature.size() == 1) {  // one type throughout: all items at once
    convert_run(*FindPredefined(signature[0].basic),
                signature[0].count * count);
    return;
  }
  for (int64_t item = 0; item < count; ++item) {
    for (const SignatureRun& entry : signature) {
      convert_run(*FindPredefined(entry.basic), entry.count);
    }
  }
}

absl::Status CheckRoom(int64_t size, int64_t position, int64_t needed,
                       const char* what) {
  if (position < 0 || position > size || size - position < needed) {
    return absl::OutOfRangeError(
        absl::StrCat("external32 data needs ", needed, " bytes at position ",
                     position, " of a ", what, " of ", size, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t External32Size(const Layout* layout, int64_t count) {
  return layout == nullptr ? count : count * layout->external32_size();
}

absl::Status PackExternal32(const void* buffer, int64_t count,
                            const Layout* layout, void* out, int64_t out_size,
                            int64_t* position) {
  const int64_t needed = External32Size(layout, count);
  if (absl::Status status =
          CheckRoom(out_size, *position, needed, "output buffer");
      !status.ok()) {
    return status;
  }
  Byte* external = static_cast<Byte*>(out) + *position;
  if (layout == nullptr) {
    std::memcpy(external, buffer, count);
  } else if (needed > 0) {
    ConvertStream<true>(buffer, count, *layout, external);
  }
  *position += needed;
  return absl::OkStatus();
}

absl::Status UnpackExternal32(const void* in, int64_t in_size,
                              int64_t* position, void* buffer, int64_t count,
                              const Layout* layout) {
  const int64_t needed = External32Size(layout, count);
  if (absl::Status status = CheckRoom(in_size, *position, needed, "input");
      !status.ok()) {
    return status;
  }
  // Only read (see ConvertStream).
  Byte* external = const_cast<Byte*>(static_cast<const Byte*>(in)) + *position;
  if (layout == nullptr) {
    std::memcpy(buffer, external, count);
  } else if (needed > 0) {
    ConvertStream<false>(buffer, count, *layout, external);
  }
  *position += needed;
  return absl::OkStatus();
}

}  // namespace minimpi::datatype
