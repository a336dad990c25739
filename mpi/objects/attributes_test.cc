// The attribute store and keyval registry with recording callbacks: which
// callback runs, on which object, with which value, in which order (copy in
// set order, delete in reverse), what a failing callback leaves behind,
// keyval lifetime (freed keyvals live while attributes use them, ids are
// never reused), callbacks that call back into the store, and threads
// sharing one store (run under ThreadSanitizer).
#include "mpi/objects/attributes.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace minimpi {
namespace {

constexpr uintptr_t kOld = 0x1111;  // handles of the objects in the tests
constexpr uintptr_t kNew = 0x2222;

// What the callbacks saw, in order, e.g. "delete k1 v10 on 1111".
struct Recorder {
  std::vector<std::string> events;
  int fail_copy_of = -1;    // keyval whose copy callback fails
  int fail_delete_of = -1;  // keyval whose delete callback fails
  bool copy_keeps = true;   // the flag the copy callback returns
};

std::string Name(int keyval, const std::vector<int>& ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == keyval) return absl::StrCat("k", i);
  }
  return "k?";
}

std::vector<int>* g_ids;  // keyval ids by test-local number, for names

int RecordingCopy(MPI_Comm old, int keyval, void* extra, void* in, void* out,
                  int* flag) {
  auto* recorder = static_cast<Recorder*>(extra);
  recorder->events.push_back(absl::StrCat(
      "copy ", Name(keyval, *g_ids), " v", reinterpret_cast<uintptr_t>(in),
      " on ", absl::Hex(reinterpret_cast<uintptr_t>(old))));
  if (keyval == recorder->fail_copy_of) return MPI_ERR_OTHER;
  *static_cast<void**>(out) =
      reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(in) + 1);
  *flag = recorder->copy_keeps;
  return MPI_SUCCESS;
}

int RecordingDelete(MPI_Comm comm, int keyval, void* value, void* extra) {
  auto* recorder = static_cast<Recorder*>(extra);
  recorder->events.push_back(absl::StrCat(
      "delete ", Name(keyval, *g_ids), " v", reinterpret_cast<uintptr_t>(value),
      " on ", absl::Hex(reinterpret_cast<uintptr_t>(comm))));
  return keyval == recorder->fail_delete_of ? MPI_ERR_ARG : MPI_SUCCESS;
}

class AttributeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { g_ids = &ids_; }
  void TearDown() override {
    for (Keyval* keyval : held_) registry_.Release(keyval);
  }

  // A recording keyval, acquired for the test's use.
  Keyval* Make(MPI_Comm_copy_attr_function* copy = RecordingCopy,
               MPI_Comm_delete_attr_function* destroy = RecordingDelete) {
    const int id =
        registry_.Create(Keyval::ForCommunicators(copy, destroy), &recorder_);
    ids_.push_back(id);
    Keyval* keyval = registry_.Acquire(id, AttributeObjectKind::kCommunicator);
    held_.push_back(keyval);
    return keyval;
  }

  static void* V(uintptr_t value) { return reinterpret_cast<void*>(value); }

  KeyvalRegistry registry_;
  Recorder recorder_;
  std::vector<int> ids_;
  std::vector<Keyval*> held_;
};

TEST_F(AttributeStoreTest, ReplacingAndDeletingRunDeleteCallbacks) {
  AttributeStore store(&registry_);
  Keyval* k0 = Make();
  EXPECT_TRUE(store.Set(kOld, k0, V(10)).ok());
  EXPECT_TRUE(recorder_.events.empty());  // nothing replaced
  EXPECT_TRUE(store.Set(kOld, k0, V(11)).ok());
  void* value = nullptr;
  ASSERT_TRUE(store.Get(k0, &value));
  EXPECT_EQ(value, V(11));
  EXPECT_TRUE(store.Delete(kOld, k0).ok());
  EXPECT_FALSE(store.Get(k0, &value));
  EXPECT_TRUE(store.Delete(kOld, k0).ok());  // not set: no callback, no error
  EXPECT_EQ(recorder_.events,
            (std::vector<std::string>{"delete k0 v10 on 1111",
                                      "delete k0 v11 on 1111"}));
}

TEST_F(AttributeStoreTest, DeleteAllGoesInReverseSetOrder) {
  AttributeStore store(&registry_);
  Keyval* k0 = Make();
  Keyval* k1 = Make();
  Keyval* k2 = Make();
  store.Set(kOld, k1, V(1));
  store.Set(kOld, k0, V(0));
  store.Set(kOld, k2, V(2));
  store.Set(kOld, k1, V(3));  // set again: now the most recent
  recorder_.events.clear();
  EXPECT_EQ(store.Order(), (std::vector<int>{ids_[0], ids_[2], ids_[1]}));
  EXPECT_TRUE(store.DeleteAll(kOld).ok());
  EXPECT_TRUE(store.empty());
  EXPECT_EQ(recorder_.events, (std::vector<std::string>{
                                  "delete k1 v3 on 1111",
                                  "delete k2 v2 on 1111",
                                  "delete k0 v0 on 1111",
                              }));
}

TEST_F(AttributeStoreTest, CopyRunsInSetOrderAndHonoursPredefinedCallbacks) {
  AttributeStore store(&registry_), copy(&registry_);
  Keyval* user = Make();
  Keyval* dup = Make(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN);
  Keyval* none = Make(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN);
  Keyval* user2 = Make();
  store.Set(kOld, user2, V(40));
  store.Set(kOld, none, V(30));
  store.Set(kOld, dup, V(20));
  store.Set(kOld, user, V(10));
  ASSERT_TRUE(store.CopyTo(kOld, copy).ok());
  EXPECT_EQ(
      recorder_.events,
      (std::vector<std::string>{"copy k3 v40 on 1111", "copy k0 v10 on 1111"}));
  void* value = nullptr;
  ASSERT_TRUE(copy.Get(user, &value));
  EXPECT_EQ(value, V(11));  // the callback's value
  ASSERT_TRUE(copy.Get(dup, &value));
  EXPECT_EQ(value, V(20));  // as is
  EXPECT_FALSE(copy.Get(none, &value));
  ASSERT_TRUE(copy.Get(user2, &value));
  EXPECT_EQ(value, V(41));
  // The copy keeps the original's order.
  EXPECT_EQ(copy.Order(), (std::vector<int>{ids_[3], ids_[1], ids_[0]}));
  recorder_.events.clear();
  copy.DeleteAll(kNew);
  EXPECT_EQ(recorder_.events,
            (std::vector<std::string>{"delete k0 v11 on 2222",
                                      "delete k3 v41 on 2222"}));
  store.DeleteAll(kOld);
}

TEST_F(AttributeStoreTest, CopyFlagFalseLeavesTheAttributeOut) {
  AttributeStore store(&registry_), copy(&registry_);
  Keyval* k0 = Make();
  store.Set(kOld, k0, V(5));
  recorder_.copy_keeps = false;
  ASSERT_TRUE(store.CopyTo(kOld, copy).ok());
  EXPECT_TRUE(copy.empty());
  store.DeleteAll(kOld);
}

TEST_F(AttributeStoreTest, FailingCallbacksStopAndKeepState) {
  AttributeStore store(&registry_), copy(&registry_);
  Keyval* k0 = Make();
  Keyval* k1 = Make();
  Keyval* k2 = Make();
  store.Set(kOld, k0, V(0));
  store.Set(kOld, k1, V(1));
  store.Set(kOld, k2, V(2));

  recorder_.fail_copy_of = ids_[1];
  AttributeFailure failure = store.CopyTo(kOld, copy);
  EXPECT_EQ(failure.code, MPI_ERR_OTHER);
  EXPECT_EQ(failure.keyval, ids_[1]);
  EXPECT_EQ(copy.Order(), std::vector<int>{ids_[0]});  // before the failure
  copy.DeleteAll(kNew);

  recorder_.fail_delete_of = ids_[1];
  failure = store.Set(kOld, k1, V(9));
  EXPECT_EQ(failure.code, MPI_ERR_ARG);
  void* value = nullptr;
  ASSERT_TRUE(store.Get(k1, &value));
  EXPECT_EQ(value, V(1));  // the old value stays
  EXPECT_EQ(store.Delete(kOld, k1).code, MPI_ERR_ARG);
  EXPECT_TRUE(store.Get(k1, &value));

  failure = store.DeleteAll(kOld);
  EXPECT_EQ(failure.keyval, ids_[1]);
  EXPECT_EQ(store.Order(), (std::vector<int>{ids_[0], ids_[1]}));
  recorder_.fail_delete_of = -1;
  EXPECT_TRUE(store.DeleteAll(kOld).ok());
}

TEST_F(AttributeStoreTest, FreedKeyvalLivesWhileAttributesUseIt) {
  AttributeStore store(&registry_);
  const int id = registry_.Create(
      Keyval::ForCommunicators(RecordingCopy, RecordingDelete), &recorder_);
  ids_.push_back(id);
  Keyval* keyval = registry_.Acquire(id, AttributeObjectKind::kCommunicator);
  store.Set(kOld, keyval, V(7));
  registry_.Release(keyval);  // the test's own reference
  EXPECT_EQ(registry_.Free(id, AttributeObjectKind::kCommunicator),
            KeyvalRegistry::FreeResult::kFreed);
  // Still in use: freeing again is tolerated, and the id still resolves.
  EXPECT_EQ(registry_.Free(id, AttributeObjectKind::kCommunicator),
            KeyvalRegistry::FreeResult::kAlreadyFreed);
  keyval = registry_.Acquire(id, AttributeObjectKind::kCommunicator);
  ASSERT_NE(keyval, nullptr);
  registry_.Release(keyval);
  EXPECT_EQ(registry_.live(), 1u);
  EXPECT_TRUE(store.DeleteAll(kOld).ok());
  EXPECT_EQ(recorder_.events, std::vector<std::string>{"delete k0 v7 on 1111"});
  // Now it is gone for good.
  EXPECT_EQ(registry_.live(), 0u);
  EXPECT_EQ(registry_.Acquire(id, AttributeObjectKind::kCommunicator), nullptr);
  EXPECT_EQ(registry_.Free(id, AttributeObjectKind::kCommunicator),
            KeyvalRegistry::FreeResult::kInvalid);
}

TEST_F(AttributeStoreTest, IdsAreNeverReusedAndKindsDoNotMix) {
  const int first =
      registry_.Create(Keyval::ForCommunicators(nullptr, nullptr), nullptr);
  EXPECT_EQ(registry_.Free(first, AttributeObjectKind::kCommunicator),
            KeyvalRegistry::FreeResult::kFreed);
  const int second =
      registry_.Create(Keyval::ForCommunicators(nullptr, nullptr), nullptr);
  EXPECT_NE(first, second);
  EXPECT_EQ(registry_.Acquire(first, AttributeObjectKind::kCommunicator),
            nullptr);
  EXPECT_EQ(
      registry_.Acquire(MPI_KEYVAL_INVALID, AttributeObjectKind::kCommunicator),
      nullptr);
  EXPECT_EQ(registry_.Acquire(12345, AttributeObjectKind::kCommunicator),
            nullptr);
  EXPECT_EQ(registry_.Acquire(second, AttributeObjectKind::kDatatype), nullptr);
  EXPECT_EQ(registry_.Free(second, AttributeObjectKind::kDatatype),
            KeyvalRegistry::FreeResult::kInvalid);
  const int type =
      registry_.Create(Keyval::ForDatatypes(MPI_TYPE_DUP_FN, nullptr), nullptr);
  Keyval* keyval = registry_.Acquire(type, AttributeObjectKind::kDatatype);
  ASSERT_NE(keyval, nullptr);
  void* out = nullptr;
  bool keep = false;
  EXPECT_EQ(keyval->Copy(kOld, V(3), &out, &keep), MPI_SUCCESS);
  EXPECT_TRUE(keep);
  EXPECT_EQ(out, V(3));
  registry_.Release(keyval);
  registry_.Free(type, AttributeObjectKind::kDatatype);
  registry_.Free(second, AttributeObjectKind::kCommunicator);
  EXPECT_EQ(registry_.live(), 0u);
}

// compat: window keyvals run the window callbacks with the window's
// handle, and no other kind's keyval stands in for them.
int WindowCopy(MPI_Win old, int, void* extra, void* in, void* out, int* flag) {
  auto* recorder = static_cast<Recorder*>(extra);
  recorder->events.push_back(
      absl::StrCat("win copy v", reinterpret_cast<uintptr_t>(in), " on ",
                   absl::Hex(reinterpret_cast<uintptr_t>(old))));
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}

int WindowDelete(MPI_Win win, int, void* value, void* extra) {
  auto* recorder = static_cast<Recorder*>(extra);
  recorder->events.push_back(
      absl::StrCat("win delete v", reinterpret_cast<uintptr_t>(value), " on ",
                   absl::Hex(reinterpret_cast<uintptr_t>(win))));
  return MPI_ERR_WIN;
}

TEST_F(AttributeStoreTest, WindowKeyvalsRunWindowCallbacks) {
  const int id = registry_.Create(Keyval::ForWindows(WindowCopy, WindowDelete),
                                  &recorder_);
  EXPECT_EQ(registry_.Acquire(id, AttributeObjectKind::kCommunicator), nullptr);
  EXPECT_EQ(registry_.Acquire(id, AttributeObjectKind::kDatatype), nullptr);
  Keyval* keyval = registry_.Acquire(id, AttributeObjectKind::kWindow);
  ASSERT_NE(keyval, nullptr);
  EXPECT_EQ(keyval->kind(), AttributeObjectKind::kWindow);
  void* out = nullptr;
  bool keep = false;
  EXPECT_EQ(keyval->Copy(kOld, V(5), &out, &keep), MPI_SUCCESS);
  EXPECT_TRUE(keep);
  EXPECT_EQ(out, V(5));
  EXPECT_EQ(keyval->Delete(kNew, V(6)), MPI_ERR_WIN);
  EXPECT_EQ(recorder_.events,
            (std::vector<std::string>{"win copy v5 on 1111",
                                      "win delete v6 on 2222"}));
  registry_.Release(keyval);
  // The predefined callbacks are recognized for windows too.
  const int dup = registry_.Create(
      Keyval::ForWindows(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN), nullptr);
  Keyval* dup_keyval = registry_.Acquire(dup, AttributeObjectKind::kWindow);
  EXPECT_EQ(dup_keyval->Copy(kOld, V(7), &out, &keep), MPI_SUCCESS);
  EXPECT_TRUE(keep);
  EXPECT_EQ(out, V(7));
  EXPECT_EQ(dup_keyval->Delete(kOld, V(7)), MPI_SUCCESS);
  registry_.Release(dup_keyval);
  EXPECT_EQ(registry_.Free(id, AttributeObjectKind::kDatatype),
            KeyvalRegistry::FreeResult::kInvalid);
  EXPECT_EQ(registry_.Free(id, AttributeObjectKind::kWindow),
            KeyvalRegistry::FreeResult::kFreed);
  EXPECT_EQ(registry_.Free(dup, AttributeObjectKind::kWindow),
            KeyvalRegistry::FreeResult::kFreed);
  EXPECT_EQ(registry_.live(), 0u);
}

// A delete callback that reads the store and frees its own keyval, as
// MPICH's attrdeleteget and keyval_double_free tests do.
struct Reentrant {
  AttributeStore* store;
  KeyvalRegistry* registry;
  Keyval* keyval;
  bool saw_value = false;
};

int ReentrantDelete(MPI_Comm, int keyval, void*, void* extra) {
  auto* state = static_cast<Reentrant*>(extra);
  void* value = nullptr;
  state->saw_value = state->store->Get(state->keyval, &value);
  state->registry->Free(keyval, AttributeObjectKind::kCommunicator);
  return MPI_SUCCESS;
}

TEST_F(AttributeStoreTest, CallbacksMayCallBackIn) {
  AttributeStore store(&registry_);
  Reentrant state{&store, &registry_, nullptr};
  const int id = registry_.Create(
      Keyval::ForCommunicators(MPI_COMM_NULL_COPY_FN, ReentrantDelete), &state);
  state.keyval = registry_.Acquire(id, AttributeObjectKind::kCommunicator);
  store.Set(kOld, state.keyval, V(1));
  registry_.Release(state.keyval);
  EXPECT_TRUE(store.DeleteAll(kOld).ok());
  EXPECT_TRUE(state.saw_value);  // still set while its callback runs
  EXPECT_EQ(registry_.live(), 0u);
}

TEST_F(AttributeStoreTest, ThreadsShareOneStore) {
  AttributeStore store(&registry_);
  std::vector<Keyval*> keyvals;
  for (int i = 0; i < 8; ++i) {
    keyvals.push_back(Make(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      AttributeStore copy(&registry_);
      for (int i = 0; i < 2000; ++i) {
        Keyval* mine = keyvals[2 * t + i % 2];
        store.Set(kOld, mine, V(i));
        void* value = nullptr;
        EXPECT_TRUE(store.Get(mine, &value));
        if (i % 3 == 0) store.Delete(kOld, mine);
        if (i % 100 == 0) store.CopyTo(kOld, copy);
      }
      copy.DeleteAll(kNew);
    });
  }
  for (auto& thread : threads) thread.join();
  store.DeleteAll(kOld);
  EXPECT_TRUE(store.empty());
}

}  // namespace
}  // namespace minimpi
