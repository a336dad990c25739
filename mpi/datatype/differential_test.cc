// The engine against the reference typemaps (typemap_reference.h) on
// random nested types: every constructor, negative displacements and
// strides, resized bounds smaller and larger than the data, zero-size
// parts, counts 0 to 3. Checked: bounds, signatures, element counts,
// reduction bases, packing and unpacking whole and in pieces (every byte
// of the buffer, guard bytes included), typed copies between two random
// types, segment walks and their pairing.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "mpi/datatype/layout.h"
#include "mpi/datatype/pack.h"
#include "mpi/datatype/predefined.h"
#include "mpi/datatype/typemap_reference.h"

namespace minimpi::datatype {
namespace {

using testing::Expand;
using testing::SpecPtr;
using testing::Typemap;
using Bytes = std::vector<unsigned char>;

constexpr int64_t kGuard = 64;
constexpr int64_t kMaxSpan = 1 << 20;

// Memory for `count` items: every byte the typemap touches, plus guard
// bytes on both sides, all filled with random bytes.
class Buffer {
 public:
  Buffer(const std::vector<int64_t>& offsets, std::mt19937_64& random) {
    int64_t low = 0;
    int64_t high = 0;
    if (!offsets.empty()) {
      low = *std::min_element(offsets.begin(), offsets.end());
      high = *std::max_element(offsets.begin(), offsets.end()) + 1;
    }
    origin_ = kGuard - low;
    bytes_.resize(high - low + 2 * kGuard);
    for (unsigned char& byte : bytes_) byte = random() & 0xff;
  }
  unsigned char* pointer() { return bytes_.data() + origin_; }
  unsigned char& at(int64_t offset) { return bytes_[origin_ + offset]; }
  const Bytes& bytes() const { return bytes_; }
  Bytes& bytes() { return bytes_; }

 private:
  Bytes bytes_;
  int64_t origin_ = 0;
};

Bytes RandomBytes(size_t n, std::mt19937_64& random) {
  Bytes bytes(n);
  for (unsigned char& byte : bytes) byte = random() & 0xff;
  return bytes;
}

int64_t Pick(std::mt19937_64& random, int64_t low, int64_t high) {
  return std::uniform_int_distribution<int64_t>(low, high)(random);
}

// A random spec whose buffers stay small.
SpecPtr SmallRandomSpec(std::mt19937_64& random, int depth) {
  while (true) {
    SpecPtr spec = testing::RandomSpec(random, depth);
    const Typemap typemap = Expand(*spec);
    const std::vector<int64_t> offsets = testing::PackedByteOffsets(typemap, 3);
    if (offsets.size() > 4096) continue;
    if (!offsets.empty()) {
      const auto [low, high] =
          std::minmax_element(offsets.begin(), offsets.end());
      if (*high - *low > kMaxSpan) continue;
    }
    return spec;
  }
}

void CheckDescription(const Layout& layout, const Typemap& typemap) {
  ASSERT_EQ(layout.size(), typemap.size());
  ASSERT_EQ(layout.lb(), typemap.lb());
  ASSERT_EQ(layout.ub(), typemap.ub());
  ASSERT_EQ(layout.extent(), typemap.extent());
  ASSERT_EQ(layout.true_lb(), typemap.true_lb());
  ASSERT_EQ(layout.true_ub(), typemap.true_ub());
  ASSERT_EQ(layout.basic_elements(), typemap.basic_elements());
  ASSERT_EQ(layout.external32_size(), typemap.external32_size());
  ASSERT_EQ(layout.has_explicit_bounds(), !typemap.lb_marks.empty());

  // The signature, run-length decoded, is the typemap's list of types.
  std::vector<MPI_Datatype> signature;
  for (const SignatureRun& entry : layout.signature()) {
    ASSERT_GT(entry.count, 0);
    signature.insert(signature.end(), entry.count, entry.basic);
  }
  std::vector<MPI_Datatype> expected;
  for (const testing::Entry& entry : typemap.entries) {
    expected.push_back(entry.basic);
  }
  ASSERT_EQ(signature, expected);
  for (size_t i = 1; i < layout.signature().size(); ++i) {
    ASSERT_NE(layout.signature()[i].basic, layout.signature()[i - 1].basic);
  }

  MPI_Datatype base = MPI_DATATYPE_NULL;
  int64_t base_count = 0;
  if (!expected.empty() &&
      std::all_of(expected.begin(), expected.end(),
                  [&](MPI_Datatype t) { return t == expected[0]; })) {
    base = expected[0];
    base_count = expected.size();
  }
  ASSERT_EQ(layout.reduction_base(), base);
  ASSERT_EQ(layout.reduction_base_count(), base_count);

  // The runs keep their invariants and add up to the size.
  int64_t bytes = 0;
  int64_t blocks = 0;
  for (const Run& run : layout.runs()) {
    ASSERT_GT(run.length, 0);
    ASSERT_GT(run.count, 0);
    if (run.count == 1) {
      ASSERT_EQ(run.stride, 0);
    } else {
      ASSERT_NE(run.stride, run.length);
    }
    bytes += run.bytes();
    blocks += run.count;
  }
  ASSERT_EQ(bytes, layout.size());
  ASSERT_EQ(blocks, layout.num_blocks());
  // No two neighbouring runs could have been merged.
  for (size_t i = 1; i < layout.runs().size(); ++i) {
    ASSERT_FALSE(MergedRun(layout.runs()[i - 1], layout.runs()[i]).has_value())
        << i;
  }
}

void CheckElements(const Layout& layout, const Typemap& typemap,
                   int64_t count) {
  const std::vector<int64_t> sizes = testing::ElementSizes(typemap, count);
  int64_t end = 0;
  int64_t elements = 0;
  size_t next = 0;
  for (int64_t bytes = 0; bytes <= count * layout.size(); ++bytes) {
    while (next < sizes.size() && end + sizes[next] <= bytes) {
      end += sizes[next++];
      ++elements;
    }
    const int64_t expected = end == bytes ? elements : -1;
    ASSERT_EQ(layout.ElementsIn(bytes), expected) << bytes;
  }
}

void CheckPack(const Layout& layout, const std::vector<int64_t>& offsets,
               int64_t count, std::mt19937_64& random) {
  const int64_t total = offsets.size();
  ASSERT_EQ(PackedSize(count, &layout), total);
  Buffer memory(offsets, random);
  Bytes expected(total);
  for (int64_t p = 0; p < total; ++p) expected[p] = memory.at(offsets[p]);

  Bytes packed(total + 1, 0xee);
  ASSERT_EQ(Pack(memory.pointer(), count, &layout, 0, packed.data(), total + 5),
            total);
  ASSERT_EQ(Bytes(packed.begin(), packed.end() - 1), expected);
  ASSERT_EQ(packed[total], 0xee);

  // Pieces: every (offset, length) of a short stream, random ones of a
  // long one.
  auto check_piece = [&](int64_t offset, int64_t length) {
    Bytes piece(length + 1, 0xee);
    const int64_t want =
        std::max<int64_t>(0, std::min<int64_t>(length, total - offset));
    ASSERT_EQ(
        Pack(memory.pointer(), count, &layout, offset, piece.data(), length),
        want)
        << offset << "+" << length;
    for (int64_t i = 0; i < want; ++i) {
      ASSERT_EQ(piece[i], expected[offset + i]) << offset << "+" << i;
    }
    ASSERT_EQ(piece[want], 0xee);
  };
  if (total <= 40) {
    for (int64_t offset = 0; offset <= total; ++offset) {
      for (int64_t length = 0; offset + length <= total + 1; ++length) {
        check_piece(offset, length);
      }
    }
  } else {
    for (int i = 0; i < 20; ++i) {
      const int64_t offset = Pick(random, 0, total);
      check_piece(offset, Pick(random, 0, total - offset + 1));
    }
  }
}

// Applies `packed` to the buffer the slow way: byte p to offsets[p], in
// order (later bytes win where a receive type overlaps itself).
void ReferenceUnpack(const Bytes& packed, const std::vector<int64_t>& offsets,
                     int64_t from, int64_t bytes, Buffer& memory) {
  for (int64_t p = from; p < from + bytes; ++p) {
    memory.at(offsets[p]) = packed[p];
  }
}

void CheckUnpack(const Layout& layout, const std::vector<int64_t>& offsets,
                 int64_t count, std::mt19937_64& random) {
  const int64_t total = offsets.size();
  const Bytes packed = RandomBytes(total, random);
  Buffer expected(offsets, random);  // random guard contents
  Buffer actual = expected;
  ReferenceUnpack(packed, offsets, 0, total, expected);
  ASSERT_EQ(Unpack(packed.data(), total, actual.pointer(), count, &layout, 0),
            total);
  ASSERT_EQ(actual.bytes(), expected.bytes());

  // In random pieces, which may end anywhere.
  Buffer pieces(offsets, random);
  Buffer pieces_expected = pieces;
  int64_t at = 0;
  while (at < total) {
    const int64_t length = Pick(random, 1, std::max<int64_t>(1, total / 3));
    const int64_t moved = Unpack(packed.data() + at, length, pieces.pointer(),
                                 count, &layout, at);
    ASSERT_EQ(moved, std::min(length, total - at));
    ReferenceUnpack(packed, offsets, at, moved, pieces_expected);
    at += moved;
  }
  ASSERT_EQ(pieces.bytes(), pieces_expected.bytes());
  // A stream longer than the data is cut at the data's end.
  Buffer untouched = actual;
  ASSERT_EQ(Unpack(packed.data(), 0, actual.pointer(), count, &layout, 0), 0);
  ASSERT_EQ(actual.bytes(), untouched.bytes());
}

// Expands segments into the byte offsets they cover.
void AppendSegmentBytes(const Segment* segments, int n, unsigned char* base,
                        std::vector<int64_t>& out) {
  for (int i = 0; i < n; ++i) {
    const int64_t start =
        static_cast<unsigned char*>(segments[i].address) - base;
    for (int64_t b = 0; b < segments[i].length; ++b) out.push_back(start + b);
  }
}

void CheckSegments(const Layout& layout, const std::vector<int64_t>& offsets,
                   int64_t count, std::mt19937_64& random) {
  const int64_t total = offsets.size();
  Buffer memory(offsets, random);
  const int64_t start = Pick(random, 0, total);
  SegmentCursor cursor(memory.pointer(), count, &layout, start);
  ASSERT_EQ(cursor.total_bytes(), total);
  std::vector<int64_t> walked;
  Segment segments[5];
  while (!cursor.done()) {
    const int max_segments = static_cast<int>(Pick(random, 1, 5));
    const int64_t max_bytes = Pick(random, 1, 24);
    const int64_t before = cursor.position();
    const int n = cursor.Fill(segments, max_segments, max_bytes);
    ASSERT_GT(n, 0);
    ASSERT_LE(n, max_segments);
    int64_t bytes = 0;
    for (int i = 0; i < n; ++i) {
      ASSERT_GT(segments[i].length, 0);
      bytes += segments[i].length;
      if (i > 0) {  // adjacent segments would have been coalesced
        ASSERT_NE(static_cast<unsigned char*>(segments[i - 1].address) +
                      segments[i - 1].length,
                  segments[i].address);
      }
    }
    ASSERT_LE(bytes, max_bytes);
    ASSERT_EQ(cursor.position(), before + bytes);
    AppendSegmentBytes(segments, n, memory.pointer(), walked);
  }
  ASSERT_EQ(walked,
            std::vector<int64_t>(offsets.begin() + start, offsets.end()));
  ASSERT_EQ(cursor.Fill(segments, 5, 100), 0);
}

// Two random types: a typed copy of the source's stream into the
// destination's, and the same copy done as process_vm_readv batches of
// paired segments.
void CheckCopies(const testing::TypeSpec& source_spec,
                 const testing::TypeSpec& destination_spec,
                 std::mt19937_64& random) {
  const LayoutRef source = testing::BuildLayout(source_spec);
  const LayoutRef destination = testing::BuildLayout(destination_spec);
  const Typemap source_map = Expand(source_spec);
  const Typemap destination_map = Expand(destination_spec);
  const int64_t source_count = Pick(random, 0, 3);
  const int64_t destination_count = Pick(random, 0, 3);
  const std::vector<int64_t> from =
      testing::PackedByteOffsets(source_map, source_count);
  const std::vector<int64_t> to =
      testing::PackedByteOffsets(destination_map, destination_count);
  const int64_t most = std::min(from.size(), to.size());
  const int64_t bytes = Pick(random, 0, most + 2);
  const int64_t copied = std::min(bytes, most);

  Buffer source_memory(from, random);
  Buffer expected(to, random);
  Buffer actual = expected;
  for (int64_t p = 0; p < copied; ++p) {
    expected.at(to[p]) = source_memory.at(from[p]);
  }
  ASSERT_EQ(
      TypedCopy(source_memory.pointer(), source_count, source.get(),
                actual.pointer(), destination_count, destination.get(), bytes),
      copied);
  ASSERT_EQ(actual.bytes(), expected.bytes());

  // The destination reads the source in batches: local = destination.
  Buffer batched = expected;
  for (int64_t p = 0; p < copied; ++p) {
    batched.at(to[p]) = ~expected.at(to[p]);
  }
  const int64_t start = Pick(random, 0, most);
  for (int64_t p = 0; p < start; ++p) {
    batched.at(to[p]) = expected.at(to[p]);
  }
  SegmentCursor local(batched.pointer(), destination_count, destination.get(),
                      start);
  SegmentCursor remote(source_memory.pointer(), source_count, source.get(),
                       start);
  Segment local_segments[4];
  Segment remote_segments[4];
  int64_t moved = start;
  while (moved < copied) {
    const int max_segments = static_cast<int>(Pick(random, 1, 4));
    const int64_t max_bytes = Pick(random, 1, 40);
    const SegmentPairing pairing =
        PairSegments(local, remote, local_segments, remote_segments,
                     max_segments, std::min(max_bytes, copied - moved));
    ASSERT_GT(pairing.bytes, 0);
    ASSERT_LE(pairing.bytes, max_bytes);
    ASSERT_LE(pairing.local_segments, max_segments);
    ASSERT_LE(pairing.remote_segments, max_segments);
    std::vector<int64_t> local_bytes;
    std::vector<int64_t> remote_bytes;
    AppendSegmentBytes(local_segments, pairing.local_segments,
                       batched.pointer(), local_bytes);
    AppendSegmentBytes(remote_segments, pairing.remote_segments,
                       source_memory.pointer(), remote_bytes);
    ASSERT_EQ(static_cast<int64_t>(local_bytes.size()), pairing.bytes);
    ASSERT_EQ(static_cast<int64_t>(remote_bytes.size()), pairing.bytes);
    for (size_t i = 0; i < local_bytes.size(); ++i) {
      batched.at(local_bytes[i]) = source_memory.at(remote_bytes[i]);
    }
    moved += pairing.bytes;
    ASSERT_EQ(local.position(), moved);
    ASSERT_EQ(remote.position(), moved);
  }
  ASSERT_EQ(batched.bytes(), expected.bytes());
}

class DifferentialTest : public ::testing::TestWithParam<int> {};

TEST_P(DifferentialTest, EngineMatchesReferenceTypemaps) {
  const int depth = GetParam();
  for (uint64_t seed = 1; seed <= 3000; ++seed) {
    std::mt19937_64 random(seed * 1000 + depth);
    const SpecPtr spec = SmallRandomSpec(random, depth);
    SCOPED_TRACE(absl::StrCat("seed ", seed, ": ", spec->Describe()));
    const LayoutRef layout = testing::BuildLayout(*spec);
    const Typemap typemap = Expand(*spec);
    SCOPED_TRACE(layout->DebugString());
    ASSERT_NO_FATAL_FAILURE(CheckDescription(*layout, typemap));
    for (int64_t count = 0; count <= 3; ++count) {
      SCOPED_TRACE(absl::StrCat("count ", count));
      const std::vector<int64_t> offsets =
          testing::PackedByteOffsets(typemap, count);
      ASSERT_NO_FATAL_FAILURE(CheckElements(*layout, typemap, count));
      ASSERT_NO_FATAL_FAILURE(CheckPack(*layout, offsets, count, random));
      ASSERT_NO_FATAL_FAILURE(CheckUnpack(*layout, offsets, count, random));
      ASSERT_NO_FATAL_FAILURE(CheckSegments(*layout, offsets, count, random));
    }
    const SpecPtr other = SmallRandomSpec(random, depth);
    SCOPED_TRACE(absl::StrCat("other: ", other->Describe()));
    ASSERT_NO_FATAL_FAILURE(CheckCopies(*spec, *other, random));
    ASSERT_NO_FATAL_FAILURE(CheckCopies(*spec, *spec, random));
  }
}

INSTANTIATE_TEST_SUITE_P(Depths, DifferentialTest,
                         ::testing::Values(1, 2, 3, 4));

}  // namespace
}  // namespace minimpi::datatype
