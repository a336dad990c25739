// Hand-checked layouts: bounds of every constructor (the standard's own
// examples among them), the shape of the run lists, signatures, element
// counts and reduction bases. The random comparison against the reference
// typemaps is in differential_test.cc.
#include "mpi/datatype/layout.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "mpi/datatype/array_layouts.h"
#include "mpi/mpi.h"

namespace minimpi::datatype {
namespace {

const Layout& Int() { return *PredefinedLayout(MPI_INT); }
const Layout& Double() { return *PredefinedLayout(MPI_DOUBLE); }
const Layout& Char() { return *PredefinedLayout(MPI_CHAR); }

struct Bounds {
  int64_t size, lb, ub, true_lb, true_ub;
};

void ExpectBounds(const Layout& layout, Bounds expected) {
  SCOPED_TRACE(layout.DebugString());
  EXPECT_EQ(layout.size(), expected.size);
  EXPECT_EQ(layout.lb(), expected.lb);
  EXPECT_EQ(layout.ub(), expected.ub);
  EXPECT_EQ(layout.extent(), expected.ub - expected.lb);
  EXPECT_EQ(layout.true_lb(), expected.true_lb);
  EXPECT_EQ(layout.true_ub(), expected.true_ub);
  EXPECT_EQ(layout.true_extent(), expected.true_ub - expected.true_lb);
}

using Runs = std::vector<Run>;

Runs RunsOf(const Layout& layout) {
  return Runs(layout.runs().begin(), layout.runs().end());
}

// The MPI-4.1 section 5.1.2 examples' oldtype: {(double, 0), (char, 8)},
// extent 16.
LayoutRef DoubleChar() {
  const std::vector<const Layout*> types = {&Double(), &Char()};
  return Struct(std::vector<int64_t>{1, 1}, std::vector<int64_t>{0, 8}, types);
}

TEST(LayoutTest, PredefinedLayouts) {
  ExpectBounds(Int(), {4, 0, 4, 0, 4});
  EXPECT_EQ(RunsOf(Int()), (Runs{{0, 4, 1, 0}}));
  EXPECT_TRUE(Int().IsContiguous(100));
  EXPECT_EQ(Int().predefined()->handle, MPI_INT);
  EXPECT_EQ(Int().reduction_base(), MPI_INT);
  EXPECT_EQ(Int().reduction_base_count(), 1);

  // Pairs: the members' bytes, the struct's extent.
  const Layout& short_int = *PredefinedLayout(MPI_SHORT_INT);
  ExpectBounds(short_int, {6, 0, 8, 0, 8});
  EXPECT_EQ(RunsOf(short_int), (Runs{{0, 2, 1, 0}, {4, 4, 1, 0}}));
  EXPECT_EQ(short_int.basic_elements(), 2);
  EXPECT_FALSE(short_int.IsContiguous(1));

  const Layout& double_int = *PredefinedLayout(MPI_DOUBLE_INT);
  ExpectBounds(double_int, {12, 0, 16, 0, 12});
  EXPECT_EQ(RunsOf(double_int), (Runs{{0, 12, 1, 0}}));
  EXPECT_TRUE(double_int.IsContiguous(1));
  EXPECT_FALSE(double_int.IsContiguous(2));  // 4 bytes of padding between

  EXPECT_EQ(PredefinedLayout(MPI_DATATYPE_NULL), nullptr);
  EXPECT_FALSE(Predefined(MPI_DATATYPE_NULL));
  EXPECT_EQ(Predefined(MPI_INT).get(), &Int());
}

TEST(LayoutTest, StandardExampleStructExtentIsPadded) {
  const LayoutRef type = DoubleChar();
  ExpectBounds(*type, {9, 0, 16, 0, 9});
  EXPECT_EQ(type->alignment(), 8);
  EXPECT_FALSE(type->has_explicit_bounds());
}

TEST(LayoutTest, StandardExampleContiguous) {
  // {(double,0),(char,8),(double,16),(char,24),(double,32),(char,40)}.
  const LayoutRef type = Contiguous(3, *DoubleChar());
  ExpectBounds(*type, {27, 0, 48, 0, 41});
  EXPECT_EQ(RunsOf(*type), (Runs{{0, 9, 3, 16}}));
}

TEST(LayoutTest, StandardExampleVector) {
  // MPI_TYPE_VECTOR(2, 3, 4, oldtype): blocks at 0 and 64 of three items.
  const LayoutRef type = Vector(2, 3, 4, *DoubleChar());
  ExpectBounds(*type, {54, 0, 112, 0, 105});
  EXPECT_EQ(RunsOf(*type), (Runs{{0, 9, 3, 16}, {64, 9, 3, 16}}));
  EXPECT_EQ(type->num_blocks(), 6);
}

TEST(LayoutTest, StandardExampleVectorWithNegativeStride) {
  // MPI_TYPE_VECTOR(3, 1, -2, oldtype):
  // {(double,0),(char,8),(double,-32),(char,-24),(double,-64),(char,-56)}.
  const LayoutRef type = Vector(3, 1, -2, *DoubleChar());
  ExpectBounds(*type, {27, -64, 16, -64, 9});
  EXPECT_EQ(RunsOf(*type), (Runs{{0, 9, 3, -32}}));
}

TEST(LayoutTest, StandardExampleIndexed) {
  // B = (3, 1), D = (4, 0): {(double,64),(char,72),...,(char,104),
  // (double,0),(char,8)}.
  const LayoutRef type = Indexed(std::vector<int64_t>{3, 1},
                                 std::vector<int64_t>{4, 0}, *DoubleChar());
  ExpectBounds(*type, {36, 0, 112, 0, 105});
  EXPECT_EQ(RunsOf(*type), (Runs{{64, 9, 3, 16}, {0, 9, 1, 0}}));
}

TEST(LayoutTest, StandardExampleStruct) {
  // B = (2, 1, 3), D = (0, 16, 26), T = (MPI_FLOAT, oldtype, MPI_CHAR):
  // {(float,0),(float,4),(double,16),(char,24),(char,26),(char,27),
  // (char,28)}; the extent is padded to the double's alignment.
  const LayoutRef double_char = DoubleChar();
  const std::vector<const Layout*> types = {PredefinedLayout(MPI_FLOAT),
                                            double_char.get(), &Char()};
  const LayoutRef type = Struct(std::vector<int64_t>{2, 1, 3},
                                std::vector<int64_t>{0, 16, 26}, types);
  ExpectBounds(*type, {20, 0, 32, 0, 29});
  EXPECT_EQ(RunsOf(*type), (Runs{{0, 8, 1, 0}, {16, 9, 1, 0}, {26, 3, 1, 0}}));
  const std::vector<SignatureRun> signature = {
      {MPI_FLOAT, 2}, {MPI_DOUBLE, 1}, {MPI_CHAR, 4}};
  EXPECT_EQ(std::vector<SignatureRun>(type->signature().begin(),
                                      type->signature().end()),
            signature);
  EXPECT_EQ(type->reduction_base(), MPI_DATATYPE_NULL);
}

// Like MPICH, only a struct's extent is rounded up to its alignment: an
// hvector of ints 5 bytes apart spans 9 bytes, not 12.
TEST(LayoutTest, OnlyStructsArePadded) {
  ExpectBounds(*Hvector(2, 1, 5, Int()), {8, 0, 9, 0, 9});
  const std::vector<const Layout*> types = {&Int(), &Int()};
  ExpectBounds(
      *Struct(std::vector<int64_t>{1, 1}, std::vector<int64_t>{0, 5}, types),
      {8, 0, 12, 0, 9});
  // A struct's padding survives replication, and an hvector of it keeps
  // the struct's extent per copy.
  ExpectBounds(*Hvector(2, 1, 20, *DoubleChar()), {18, 0, 36, 0, 29});
}

TEST(LayoutTest, RegularRepetitionIsOneRun) {
  // A vector of a thousand single doubles is one run.
  const LayoutRef column = Vector(1000, 1, 2, Double());
  EXPECT_EQ(RunsOf(*column), (Runs{{0, 8, 1000, 16}}));
  EXPECT_EQ(column->num_blocks(), 1000);
  EXPECT_EQ(column->signature().size(), 1u);
  EXPECT_EQ(column->signature()[0].count, 1000);

  // Blocks that abut are one block.
  const LayoutRef dense = Vector(4, 2, 2, Int());
  EXPECT_EQ(RunsOf(*dense), (Runs{{0, 32, 1, 0}}));
  EXPECT_TRUE(dense->IsContiguous(7));
  const LayoutRef abutting =
      Indexed(std::vector<int64_t>{2, 3}, std::vector<int64_t>{0, 2}, Int());
  EXPECT_EQ(RunsOf(*abutting), (Runs{{0, 20, 1, 0}}));
  EXPECT_EQ(RunsOf(*Contiguous(1000, Double())), (Runs{{0, 8000, 1, 0}}));

  // Single blocks in descending order are a run with a negative stride.
  const LayoutRef descending = Hindexed(std::vector<int64_t>{1, 1, 1},
                                        std::vector<int64_t>{16, 8, 0}, Int());
  EXPECT_EQ(RunsOf(*descending), (Runs{{16, 4, 3, -8}}));

  // Zero-length blocks leave no run and no bound.
  const LayoutRef holes = Indexed(std::vector<int64_t>{0, 1, 0},
                                  std::vector<int64_t>{-100, 2, 50}, Int());
  EXPECT_EQ(RunsOf(*holes), (Runs{{8, 4, 1, 0}}));
  ExpectBounds(*holes, {4, 8, 12, 8, 12});
}

// The faces of a 3-D array of doubles, as a stencil code exchanges them.
TEST(LayoutTest, SubarrayFacesAreAFewRuns) {
  const std::vector<int64_t> sizes = {10, 10, 10};
  auto face = [&](std::vector<int64_t> subsizes) {
    return *Subarray(sizes, subsizes, std::vector<int64_t>{0, 0, 0},
                     MPI_ORDER_C, Double());
  };
  EXPECT_EQ(RunsOf(*face({1, 10, 10})), (Runs{{0, 800, 1, 0}}));
  EXPECT_EQ(RunsOf(*face({10, 1, 10})), (Runs{{0, 80, 10, 800}}));
  EXPECT_EQ(RunsOf(*face({10, 10, 1})), (Runs{{0, 8, 100, 80}}));
  ExpectBounds(*face({10, 10, 1}), {800, 0, 8000, 0, 7928});

  // With a ghost layer the rows of a face no longer continue each other:
  // one run per row.
  const LayoutRef ghosted = *Subarray(
      std::vector<int64_t>{12, 12, 12}, std::vector<int64_t>{10, 10, 1},
      std::vector<int64_t>{1, 1, 0}, MPI_ORDER_C, Double());
  ASSERT_EQ(ghosted->runs().size(), 10u);
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(ghosted->runs()[i],
              (datatype::Run{(1 + i) * 1152 + 96, 8, 10, 96}));
  }
}

TEST(LayoutTest, SubarrayOrders) {
  const std::vector<int64_t> sizes = {4, 6};
  const std::vector<int64_t> subsizes = {2, 3};
  const std::vector<int64_t> starts = {1, 2};
  // C: rows 1-2, columns 2-4 of a 4x6 array.
  const LayoutRef c = *Subarray(sizes, subsizes, starts, MPI_ORDER_C, Double());
  ExpectBounds(*c, {48, 0, 192, 64, 136});
  EXPECT_TRUE(c->has_explicit_bounds());
  EXPECT_EQ(RunsOf(*c), (Runs{{64, 24, 2, 48}}));
  // Fortran: the first index varies fastest.
  const LayoutRef fortran =
      *Subarray(sizes, subsizes, starts, MPI_ORDER_FORTRAN, Double());
  ExpectBounds(*fortran, {48, 0, 192, 72, 152});
  EXPECT_EQ(RunsOf(*fortran), (Runs{{72, 16, 3, 32}}));
  EXPECT_EQ(fortran->reduction_base(), MPI_DOUBLE);
  EXPECT_EQ(fortran->reduction_base_count(), 6);

  // An empty subarray still spans the whole array.
  const LayoutRef empty =
      *Subarray(sizes, std::vector<int64_t>{0, 3}, starts, MPI_ORDER_C, Int());
  ExpectBounds(*empty, {0, 0, 96, 0, 0});
}

TEST(LayoutTest, SubarrayRejectsInconsistentArguments) {
  const std::vector<int64_t> sizes = {4, 6};
  auto status = [&](std::vector<int64_t> subsizes, std::vector<int64_t> starts,
                    int order) {
    return Subarray(sizes, subsizes, starts, order, Int()).status();
  };
  EXPECT_TRUE(status({4, 6}, {0, 0}, MPI_ORDER_C).ok());
  EXPECT_EQ(status({5, 6}, {0, 0}, MPI_ORDER_C).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status({2, 2}, {3, 0}, MPI_ORDER_C).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status({2, 2}, {-1, 0}, MPI_ORDER_C).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status({2, 2}, {0, 0}, 3).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status({2}, {0}, MPI_ORDER_C).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(Subarray(std::vector<int64_t>{0}, std::vector<int64_t>{0},
                        std::vector<int64_t>{0}, MPI_ORDER_C, Int())
                   .ok());
}

// MPI-4.1 section 5.1.4's example: FILEARRAY(100, 200, 300) distributed
// (CYCLIC(10), *, BLOCK) onto PROCESSES(2, 1, 3), Fortran order.
TEST(LayoutTest, StandardExampleDarray) {
  const std::vector<int64_t> gsizes = {100, 200, 300};
  const std::vector<int> distribs = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE,
                                     MPI_DISTRIBUTE_BLOCK};
  const std::vector<int64_t> dargs = {10, MPI_DISTRIBUTE_DFLT_DARG,
                                      MPI_DISTRIBUTE_DFLT_DARG};
  const std::vector<int64_t> psizes = {2, 1, 3};
  const Layout& real = *PredefinedLayout(MPI_FLOAT);
  for (int64_t rank = 0; rank < 6; ++rank) {
    SCOPED_TRACE(rank);
    const LayoutRef type = *Darray(6, rank, gsizes, distribs, dargs, psizes,
                                   MPI_ORDER_FORTRAN, real);
    // Row-major grid: rank = c0 * 3 + c2.
    const int64_t c0 = rank / 3;
    const int64_t c2 = rank % 3;
    // Ten floats of every twenty along the first dimension, all of the
    // second, a hundred planes of the third: one run.
    const int64_t first = (c0 * 10 + c2 * 100 * 100 * 200) * 4;
    EXPECT_EQ(RunsOf(*type), (Runs{{first, 40, 5 * 200 * 100, 80}}));
    ExpectBounds(*type, {50 * 200 * 100 * 4, 0, 100 * 200 * 300 * 4, first,
                         first + (5 * 200 * 100 - 1) * 80 + 40});
  }
}

TEST(LayoutTest, DarrayBlocksAndLastPartialBlock) {
  const std::vector<int64_t> gsizes = {10};
  const std::vector<int64_t> psizes = {2};
  // cyclic(3) of 10 over 2: rank 1 owns [3, 6) and [9, 10).
  const LayoutRef cyclic =
      *Darray(2, 1, gsizes, std::vector<int>{MPI_DISTRIBUTE_CYCLIC},
              std::vector<int64_t>{3}, psizes, MPI_ORDER_C, Int());
  EXPECT_EQ(RunsOf(*cyclic), (Runs{{12, 12, 1, 0}, {36, 4, 1, 0}}));
  ExpectBounds(*cyclic, {16, 0, 40, 12, 40});
  // Default block over 3: blocks of 4, rank 2 owns [8, 10).
  const LayoutRef block =
      *Darray(3, 2, gsizes, std::vector<int>{MPI_DISTRIBUTE_BLOCK},
              std::vector<int64_t>{MPI_DISTRIBUTE_DFLT_DARG},
              std::vector<int64_t>{3}, MPI_ORDER_C, Int());
  EXPECT_EQ(RunsOf(*block), (Runs{{32, 8, 1, 0}}));
  // A process with no block holds nothing but keeps the array's extent.
  const LayoutRef nothing = *Darray(
      4, 3, std::vector<int64_t>{5}, std::vector<int>{MPI_DISTRIBUTE_BLOCK},
      std::vector<int64_t>{2}, std::vector<int64_t>{4}, MPI_ORDER_C, Int());
  ExpectBounds(*nothing, {0, 0, 20, 0, 0});
}

TEST(LayoutTest, DarrayRejectsInconsistentArguments) {
  auto status = [](int64_t comm_size, int64_t rank, int distrib, int64_t darg,
                   int64_t psize, int order = MPI_ORDER_C) {
    return Darray(comm_size, rank, std::vector<int64_t>{10},
                  std::vector<int>{distrib}, std::vector<int64_t>{darg},
                  std::vector<int64_t>{psize}, order, Int())
        .status();
  };
  EXPECT_TRUE(status(2, 1, MPI_DISTRIBUTE_BLOCK, 5, 2).ok());
  EXPECT_FALSE(status(2, 1, MPI_DISTRIBUTE_BLOCK, 4, 2).ok());  // 8 < 10
  EXPECT_FALSE(status(3, 1, MPI_DISTRIBUTE_BLOCK, 5, 2).ok());  // grid != 3
  EXPECT_FALSE(status(2, 2, MPI_DISTRIBUTE_BLOCK, 5, 2).ok());  // no rank 2
  EXPECT_FALSE(status(2, 0, MPI_DISTRIBUTE_NONE, 5, 2).ok());   // psize != 1
  EXPECT_FALSE(status(2, 0, MPI_DISTRIBUTE_CYCLIC, 0, 2).ok());
  EXPECT_FALSE(status(2, 0, 99, 1, 2).ok());
  EXPECT_FALSE(status(2, 0, MPI_DISTRIBUTE_CYCLIC, 1, 2, 7).ok());
  EXPECT_TRUE(status(1, 0, MPI_DISTRIBUTE_NONE, 5, 1).ok());
}

TEST(LayoutTest, ResizedBoundsReplaceTheData) {
  const LayoutRef spaced = Resized(Int(), -4, 12);
  ExpectBounds(*spaced, {4, -4, 8, 0, 4});
  EXPECT_TRUE(spaced->has_explicit_bounds());
  const LayoutRef two = Contiguous(2, *spaced);
  ExpectBounds(*two, {8, -4, 20, 0, 16});
  EXPECT_EQ(RunsOf(*two), (Runs{{0, 4, 2, 12}}));
  EXPECT_FALSE(two->IsContiguous(1));
  EXPECT_EQ(two->RunOfItems(3), (datatype::Run{0, 4, 6, 12}));

  // An extent smaller than the data makes items overlap.
  const LayoutRef overlapping =
      Contiguous(2, *Resized(*Contiguous(4, Int()), 0, 8));
  EXPECT_EQ(RunsOf(*overlapping), (Runs{{0, 16, 2, 8}}));
  ExpectBounds(*overlapping, {32, 0, 16, 0, 24});

  // A resized type is never padded, even in a struct.
  const LayoutRef nine = Resized(Double(), 0, 9);
  const std::vector<const Layout*> types = {nine.get()};
  ExpectBounds(*Struct(std::vector<int64_t>{1}, std::vector<int64_t>{0}, types),
               {8, 0, 9, 0, 8});
}

// Once any part of a typemap has explicit bounds, only those count
// (MPI-4.1 section 5.1.6), even if other data lies outside them.
TEST(LayoutTest, ExplicitBoundsAreStickyInAStruct) {
  const LayoutRef marked = Resized(Int(), 0, 4);
  const std::vector<const Layout*> types = {marked.get(), &Int()};
  const LayoutRef type =
      Struct(std::vector<int64_t>{1, 1}, std::vector<int64_t>{0, 100}, types);
  ExpectBounds(*type, {8, 0, 4, 0, 104});
  EXPECT_TRUE(type->has_explicit_bounds());
}

TEST(LayoutTest, EmptyTypemaps) {
  // Nothing at all: lb = ub = 0, as MPICH reports it.
  for (const LayoutRef& empty :
       {Contiguous(0, Int()), Vector(0, 3, 2, Int()), Vector(3, 0, 2, Int()),
        Indexed(std::vector<int64_t>{0, 0}, std::vector<int64_t>{-5, 7}, Int()),
        Struct({}, {}, {}), Contiguous(0, *Resized(Int(), -8, 32)),
        Contiguous(5, *Contiguous(0, Int()))}) {
    ExpectBounds(*empty, {0, 0, 0, 0, 0});
    EXPECT_TRUE(empty->runs().empty());
    EXPECT_TRUE(empty->signature().empty());
    EXPECT_TRUE(empty->IsContiguous(10));
    EXPECT_EQ(empty->reduction_base(), MPI_DATATYPE_NULL);
    EXPECT_EQ(empty->ElementsIn(0), 0);
    EXPECT_EQ(empty->ElementsIn(4), -1);
    EXPECT_FALSE(empty->has_explicit_bounds());
  }
  // No data but bound markers: the markers still count.
  const LayoutRef marks = Resized(*Contiguous(0, Int()), -8, 32);
  ExpectBounds(*Contiguous(2, *marks), {0, -8, 56, 0, 0});
}

TEST(LayoutTest, ElementsCountPairMembersSeparately) {
  const LayoutRef pairs = Contiguous(3, *PredefinedLayout(MPI_DOUBLE_INT));
  EXPECT_EQ(pairs->size(), 36);
  EXPECT_EQ(pairs->basic_elements(), 6);
  const std::pair<int64_t, int64_t> expected[] = {
      {0, 0},  {4, -1}, {8, 1},  {10, -1}, {12, 2},  {20, 3},
      {24, 4}, {36, 6}, {44, 7}, {48, 8},  {72, 12}, {73, -1}};
  for (auto [bytes, elements] : expected) {
    EXPECT_EQ(pairs->ElementsIn(bytes), elements) << bytes;
  }
  const std::vector<const Layout*> types = {&Double(), &Int(),
                                            PredefinedLayout(MPI_SHORT)};
  const LayoutRef mixed = Struct(std::vector<int64_t>{1, 2, 1},
                                 std::vector<int64_t>{0, 8, 16}, types);
  EXPECT_EQ(mixed->ElementsIn(8), 1);
  EXPECT_EQ(mixed->ElementsIn(12), 2);
  EXPECT_EQ(mixed->ElementsIn(16), 3);
  EXPECT_EQ(mixed->ElementsIn(17), -1);
  EXPECT_EQ(mixed->ElementsIn(18), 4);
  EXPECT_EQ(mixed->ElementsIn(18 + 8), 5);
}

TEST(LayoutTest, ReductionBases) {
  const LayoutRef pairs = Contiguous(2, *PredefinedLayout(MPI_DOUBLE_INT));
  EXPECT_EQ(pairs->reduction_base(), MPI_DOUBLE_INT);
  EXPECT_EQ(pairs->reduction_base_count(), 2);
  const LayoutRef vector = Vector(3, 2, 4, Double());
  EXPECT_EQ(vector->reduction_base(), MPI_DOUBLE);
  EXPECT_EQ(vector->reduction_base_count(), 6);
  const std::vector<const Layout*> doubles = {&Double(), vector.get()};
  const LayoutRef same = Struct(std::vector<int64_t>{1, 1},
                                std::vector<int64_t>{0, 1000}, doubles);
  EXPECT_EQ(same->reduction_base(), MPI_DOUBLE);
  EXPECT_EQ(same->reduction_base_count(), 7);
  EXPECT_EQ(Resized(Int(), 0, 64)->reduction_base(), MPI_INT);
  EXPECT_EQ(DoubleChar()->reduction_base(), MPI_DATATYPE_NULL);
  EXPECT_EQ(DoubleChar()->reduction_base_count(), 0);
}

TEST(LayoutTest, LayoutRefKeepsALayoutAliveAfterItsCreatorLetsGo) {
  LayoutRef copy;
  {
    LayoutRef original = Vector(3, 1, 2, Int());
    copy = original;
    LayoutRef moved = std::move(original);
    EXPECT_FALSE(original);  // NOLINT(bugprone-use-after-move): documented
    EXPECT_EQ(moved.get(), copy.get());
  }
  // Under AddressSanitizer a premature free would be caught here.
  EXPECT_EQ(copy->size(), 12);
  const Layout* raw = copy.release();
  EXPECT_FALSE(copy);
  LayoutRef adopted = LayoutRef::Adopt(raw);
  LayoutRef shared = LayoutRef::Share(raw);
  adopted = LayoutRef();
  EXPECT_EQ(shared->size(), 12);
  shared = shared;  // self-assignment keeps the reference
  EXPECT_EQ(shared->size(), 12);

  // Predefined layouts are never counted nor freed.
  const Layout* integer = PredefinedLayout(MPI_INT);
  for (int i = 0; i < 3; ++i) integer->Release();
  EXPECT_EQ(integer->size(), 4);
}

TEST(LayoutTest, DebugStringShowsBoundsRunsAndSignature) {
  EXPECT_EQ(Vector(2, 1, 3, Int())->DebugString(),
            "size=8 lb=0 ub=16 true_lb=0 true_ub=16 runs=[{0,4,2,12}] "
            "signature=[ MPI_INTx2 ]");
}

}  // namespace
}  // namespace minimpi::datatype
