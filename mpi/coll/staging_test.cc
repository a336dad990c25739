// CollectiveStaging::NothingToStage, the blocking collectives' shortcut
// past staging, against Stage itself (the reference): wherever the
// shortcut says there is nothing to stage, Stage must leave every argument
// as it was, for every predefined datatype and every collective the node
// path serves; and the shortcut must not claim derived or gapped types.
#include "mpi/coll/staging.h"

#include <mpi.h>

#include <vector>

#include "gtest/gtest.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/datatype/predefined.h"

namespace minimpi::coll {
namespace {

class StagingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int provided;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  }
  static void TearDownTestSuite() { MPI_Finalize(); }

  static Communicator& Self() { return *ToCommunicator(MPI_COMM_SELF); }
};

bool SameArguments(const Arguments& a, const Arguments& b) {
  return a.send_buffer == b.send_buffer &&
         a.receive_buffer == b.receive_buffer && a.in_place == b.in_place &&
         a.root == b.root && a.count == b.count && a.type == b.type &&
         a.extent == b.extent && a.op == b.op && a.send_count == b.send_count &&
         a.send_type == b.send_type && a.send_extent == b.send_extent &&
         a.receive_count == b.receive_count &&
         a.receive_type == b.receive_type &&
         a.receive_extent == b.receive_extent &&
         a.send_counts == b.send_counts &&
         a.send_displacements == b.send_displacements &&
         a.receive_counts == b.receive_counts &&
         a.receive_displacements == b.receive_displacements;
}

// The arguments a binding builds for `collective` with `type` on both sides
// (two items per block), on MPI_COMM_SELF as its root.
Arguments ArgumentsFor(Collective collective, MPI_Datatype type,
                       std::vector<std::byte>& send,
                       std::vector<std::byte>& receive) {
  MPI_Aint lower_bound = 0, extent = 0;
  MPI_Type_get_extent(type, &lower_bound, &extent);
  Arguments a;
  a.root = 0;
  switch (collective) {
    case Collective::kBcast:
      a.receive_buffer = receive.data();
      a.count = 2;
      a.type = type;
      a.extent = static_cast<size_t>(extent);
      break;
    case Collective::kReduce:
    case Collective::kAllreduce:
      a.send_buffer = send.data();
      a.receive_buffer = receive.data();
      a.count = 2;
      a.type = type;
      a.extent = static_cast<size_t>(extent);
      a.op = LookupOp(MPI_SUM);
      break;
    default:
      a.send_buffer = send.data();
      a.send_count = 2;
      a.send_type = type;
      a.send_extent = static_cast<size_t>(extent);
      a.receive_buffer = receive.data();
      a.receive_count = 2;
      a.receive_type = type;
      a.receive_extent = static_cast<size_t>(extent);
      break;
  }
  return a;
}

constexpr Collective kNodeCollectives[] = {
    Collective::kBcast,   Collective::kReduce,  Collective::kAllreduce,
    Collective::kGather,  Collective::kScatter, Collective::kAllgather,
    Collective::kAlltoall};

// Every datatype handle of the predefined table.
std::vector<MPI_Datatype> PredefinedTypes() {
  std::vector<MPI_Datatype> types;
  for (uintptr_t i = 0; i < datatype::predefined_internal::kHandleCount; ++i) {
    auto handle = reinterpret_cast<MPI_Datatype>(
        datatype::predefined_internal::kFirstHandle + i);
    if (Datatype::FindPredefined(handle) != nullptr) types.push_back(handle);
  }
  return types;
}

TEST_F(StagingTest, WhereNothingIsToStageStageChangesNothing) {
  std::vector<std::byte> send(4096), receive(4096);
  int shortcuts = 0, staged = 0;
  for (MPI_Datatype type : PredefinedTypes()) {
    for (Collective collective : kNodeCollectives) {
      // The reductions pass MPI_SUM with every type: Stage reads the op
      // only for derived types.
      const Arguments before = ArgumentsFor(collective, type, send, receive);
      if (!CollectiveStaging::NothingToStage(before)) {
        ++staged;
        continue;
      }
      ++shortcuts;
      Arguments after = before;
      CollectiveStaging staging(&LookupDatatype);
      ASSERT_EQ(staging.Stage(Self(), collective, &after), MPI_SUCCESS);
      EXPECT_TRUE(SameArguments(before, after))
          << "type handle " << reinterpret_cast<uintptr_t>(type)
          << ", collective " << static_cast<int>(collective);
      EXPECT_FALSE(staging.needs_finish());
    }
  }
  // Both ways are taken: most predefined types are dense, the pair types
  // of MPI_MINLOC and MPI_MAXLOC with padding are not.
  EXPECT_GT(shortcuts, 0);
  EXPECT_GT(staged, 0);
}

TEST_F(StagingTest, TheShortcutTakesDensePredefinedTypesOnly) {
  std::vector<std::byte> send(4096), receive(4096);
  EXPECT_TRUE(CollectiveStaging::NothingToStage(
      ArgumentsFor(Collective::kBcast, MPI_DOUBLE, send, receive)));
  EXPECT_TRUE(CollectiveStaging::NothingToStage(
      ArgumentsFor(Collective::kGather, MPI_BYTE, send, receive)));
  EXPECT_TRUE(CollectiveStaging::NothingToStage(Arguments()));  // a barrier
  // A double and an int: 12 bytes of data in a 16-byte extent.
  EXPECT_FALSE(CollectiveStaging::NothingToStage(
      ArgumentsFor(Collective::kGather, MPI_DOUBLE_INT, send, receive)));

  // Derived types always go through Stage, even dense ones (a reduction
  // on them changes its count to the base type's).
  MPI_Datatype pair, strided;
  MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
  MPI_Type_commit(&pair);
  MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &strided);
  MPI_Type_commit(&strided);
  for (MPI_Datatype type : {pair, strided}) {
    for (Collective collective : kNodeCollectives) {
      EXPECT_FALSE(CollectiveStaging::NothingToStage(
          ArgumentsFor(collective, type, send, receive)));
    }
  }
  // And Stage does change a dense derived type's reduction.
  Arguments reduced = ArgumentsFor(Collective::kAllreduce, pair, send, receive);
  const Arguments before = reduced;
  CollectiveStaging staging(&LookupDatatype);
  ASSERT_EQ(staging.Stage(Self(), Collective::kAllreduce, &reduced),
            MPI_SUCCESS);
  EXPECT_FALSE(SameArguments(before, reduced));
  MPI_Type_free(&pair);
  MPI_Type_free(&strided);
}

}  // namespace
}  // namespace minimpi::coll
