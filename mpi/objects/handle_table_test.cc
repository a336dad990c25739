#include "mpi/objects/handle_table.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi {
namespace {

// What MPICH's datatype/indexed_misc does with a datatype: free it, make a
// new one (which takes the freed slot), then use the old handle again. The
// old handle must name nothing rather than the new object.
TEST(HandleTableTest, AFreedSlotIsReusedUnderAnotherHandle) {
  HandleTable<int> table(HandleKind::kDatatype);
  int first = 1;
  int second = 2;
  const uintptr_t old_handle = table.Insert(&first);
  ASSERT_NE(old_handle, 0u);
  EXPECT_EQ(table.Remove(old_handle), &first);
  const uintptr_t new_handle = table.Insert(&second);
  EXPECT_EQ(HandleIndex(new_handle), HandleIndex(old_handle));  // slot reused
  EXPECT_NE(new_handle, old_handle);
  EXPECT_EQ(table.Lookup(old_handle), nullptr);
  EXPECT_EQ(table.Lookup(new_handle), &second);
  // Freeing through the stale handle fails and leaves the new object alone.
  EXPECT_EQ(table.Remove(old_handle), nullptr);
  EXPECT_EQ(table.Lookup(new_handle), &second);
  EXPECT_EQ(table.live(), 1u);
}

TEST(HandleTableTest, ADoubleRemoveDoesNotFreeTheSlotTwice) {
  HandleTable<int> table(HandleKind::kCommunicator);
  int a = 1, b = 2, c = 3;
  const uintptr_t handle = table.Insert(&a);
  EXPECT_EQ(table.Remove(handle), &a);
  EXPECT_EQ(table.Remove(handle), nullptr);
  // Were the slot on the free list twice, these two would share it.
  const uintptr_t first = table.Insert(&b);
  const uintptr_t second = table.Insert(&c);
  EXPECT_NE(HandleIndex(first), HandleIndex(second));
  EXPECT_EQ(table.Lookup(first), &b);
  EXPECT_EQ(table.Lookup(second), &c);
}

TEST(HandleTableTest, EveryStaleHandleOfAChurnedSlotFails) {
  HandleTable<int> table(HandleKind::kOp);
  int object = 0;
  std::vector<uintptr_t> stale;
  for (int round = 0; round < 1000; ++round) {
    const uintptr_t handle = table.Insert(&object);
    for (uintptr_t old : stale) ASSERT_NE(old, handle) << "round " << round;
    stale.push_back(handle);
    ASSERT_EQ(table.Remove(handle), &object);
  }
  for (uintptr_t old : stale) EXPECT_EQ(table.Lookup(old), nullptr);
  EXPECT_EQ(table.live(), 0u);
}

TEST(HandleTableTest, OtherKindsAndGarbageNameNothing) {
  HandleTable<int> datatypes(HandleKind::kDatatype);
  HandleTable<int> ops(HandleKind::kOp);
  int object = 0;
  const uintptr_t handle = datatypes.Insert(&object);
  EXPECT_EQ(ops.Lookup(handle), nullptr);            // right slot, wrong kind
  EXPECT_EQ(datatypes.Lookup(0x209), nullptr);       // a predefined ABI value
  EXPECT_EQ(datatypes.Lookup(handle + 1), nullptr);  // a slot never used
  EXPECT_EQ(datatypes.Lookup(EncodeHandle(
                HandleKind::kDatatype, 0,
                HandleTable<int>::kMaxChunks * HandleTable<int>::kChunkSlots)),
            nullptr);  // beyond the table
  EXPECT_EQ(datatypes.Lookup(~uintptr_t{0}), nullptr);
  EXPECT_EQ(datatypes.Lookup(handle), &object);
}

TEST(HandleTableTest, LiveHandleAtFollowsTheSlot) {
  HandleTable<int> table(HandleKind::kGroup);
  int a = 1, b = 2;
  const uintptr_t first = table.Insert(&a);
  EXPECT_EQ(table.LiveHandleAt(HandleIndex(first)), first);
  table.Remove(first);
  EXPECT_EQ(table.LiveHandleAt(HandleIndex(first)), 0u);
  const uintptr_t second = table.Insert(&b);
  EXPECT_EQ(table.LiveHandleAt(HandleIndex(first)), second);
}

TEST(HandleTableTest, GenerationsWrapWithinTheirBits) {
  const uint32_t last = static_cast<uint32_t>(handle_internal::kGenerationMask);
  EXPECT_EQ(NextGeneration(last), 0u);
  const uintptr_t handle = EncodeHandle(HandleKind::kWindow, last, 7);
  EXPECT_TRUE(HandleIsKind(handle, HandleKind::kWindow));
  EXPECT_EQ(HandleGeneration(handle), last);
  EXPECT_EQ(HandleIndex(handle), 7u);
  // Object handles lie far above the standard ABI's predefined constants.
  EXPECT_GT(EncodeHandle(HandleKind::kCommunicator, 0, 0), uintptr_t{0xfff});
}

}  // namespace
}  // namespace minimpi
