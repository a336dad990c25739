#include "net/ib/registration_cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "net/ib/verbs.h"

namespace minimpi::net::ib {
namespace {

const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));

// A device that hands out unique keys and records every call. Its
// deregister checks that each registration goes exactly once and, when
// the test tracks holders (threaded test), that nobody holds it.
class FakeDevice {
 public:
  struct Region {
    uintptr_t begin = 0;
    uintptr_t end = 0;
    bool registered = false;
  };

  // Keys are 1 to max_keys - 1; registering more fails the test.
  explicit FakeDevice(uint32_t max_keys = 1 << 14)
      : max_keys_(max_keys), holders_(new std::atomic<int>[max_keys]) {
    for (uint32_t i = 0; i < max_keys; ++i) holders_[i] = 0;
  }

  RegistrationCache::RegisterFn register_fn() {
    return [this](void* address, size_t length, VerbsMr* mr) {
      return Register(address, length, mr);
    };
  }
  RegistrationCache::DeregisterFn deregister_fn() {
    return [this](VerbsMr* mr) { Deregister(mr); };
  }

  bool Register(void* address, size_t length, VerbsMr* mr) {
    std::lock_guard<std::mutex> lock(mutex_);
    register_calls_.push_back(
        Region{reinterpret_cast<uintptr_t>(address),
               reinterpret_cast<uintptr_t>(address) + length, false});
    if (fail_errno_ != 0) {
      errno = fail_errno_;
      return false;
    }
    const uint32_t key = next_key_++;
    if (key >= max_keys_) {
      ADD_FAILURE() << "out of keys";
      errno = ENOMEM;
      return false;
    }
    mr->lkey = key;
    mr->rkey = key + max_keys_;
    mr->handle = reinterpret_cast<void*>(static_cast<uintptr_t>(key));
    regions_[key] = register_calls_.back();
    regions_[key].registered = true;
    return true;
  }

  void Deregister(VerbsMr* mr) {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint32_t key = mr->lkey;
    EXPECT_EQ(mr->rkey, key + max_keys_);
    EXPECT_EQ(mr->handle, reinterpret_cast<void*>(static_cast<uintptr_t>(key)));
    auto it = regions_.find(key);
    if (it == regions_.end()) {
      ADD_FAILURE() << "deregistered unknown key " << key;
      return;
    }
    EXPECT_TRUE(it->second.registered)
        << "key " << key << " deregistered twice";
    it->second.registered = false;
    EXPECT_EQ(holders_[key].load(), 0)
        << "key " << key << " deregistered while held";
    deregistered_.push_back(key);
  }

  void FailWith(int error) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_errno_ = error;
  }
  bool IsRegistered(uint32_t key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = regions_.find(key);
    return it != regions_.end() && it->second.registered;
  }
  Region region(uint32_t key) {
    std::lock_guard<std::mutex> lock(mutex_);
    return regions_[key];
  }
  std::vector<Region> register_calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return register_calls_;
  }
  std::vector<uint32_t> deregistered() {
    std::lock_guard<std::mutex> lock(mutex_);
    return deregistered_;
  }
  uint32_t keys_issued() {
    std::lock_guard<std::mutex> lock(mutex_);
    return next_key_ - 1;
  }
  std::atomic<int>& holders(uint32_t key) { return holders_[key]; }

 private:
  const uint32_t max_keys_;
  std::mutex mutex_;
  uint32_t next_key_ = 1;
  int fail_errno_ = 0;
  std::map<uint32_t, Region> regions_;
  std::vector<Region> register_calls_;
  std::vector<uint32_t> deregistered_;
  std::unique_ptr<std::atomic<int>[]> holders_;
};

// Page-aligned memory that the tests register (the fake never touches it).
class Arena {
 public:
  explicit Arena(size_t pages)
      : memory_(static_cast<char*>(std::aligned_alloc(kPage, pages * kPage))) {}
  ~Arena() { std::free(memory_); }
  char* page(size_t index) const { return memory_ + index * kPage; }

 private:
  char* memory_;
};

class RegistrationCacheTest : public ::testing::Test {
 protected:
  FakeDevice device_;
  Arena arena_{16};
};

Registration AcquireOrDie(RegistrationCache& cache, void* address,
                          size_t length) {
  absl::StatusOr<Registration> registration = cache.Acquire(address, length);
  EXPECT_TRUE(registration.ok()) << registration.status();
  return registration.ok() ? *registration : Registration();
}

TEST_F(RegistrationCacheTest, CoveringLiveEntryIsShared) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(), 0);
  const Registration a = AcquireOrDie(cache, arena_.page(0), 3 * kPage);
  const Registration b = AcquireOrDie(cache, arena_.page(1) + 100, 200);
  EXPECT_EQ(b.mr().lkey, a.mr().lkey);
  EXPECT_EQ(b.mr().rkey, a.mr().rkey);
  EXPECT_EQ(b.id(), a.id());
  EXPECT_EQ(cache.stats().registrations, 1u);
  EXPECT_EQ(cache.stats().hits, 1u);
  cache.Release(a);
  EXPECT_TRUE(device_.deregistered().empty());
  EXPECT_EQ(cache.stats().live_entries, 1u);
  cache.Release(b);
  EXPECT_EQ(device_.deregistered(), std::vector<uint32_t>{a.mr().lkey});
  EXPECT_EQ(cache.stats().live_entries, 0u);
  EXPECT_EQ(cache.stats().deregistrations, 1u);
}

TEST_F(RegistrationCacheTest, PartialOverlapRegistersAnew) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(), 0);
  const Registration a = AcquireOrDie(cache, arena_.page(0), 2 * kPage);
  const Registration b = AcquireOrDie(cache, arena_.page(1), 2 * kPage);
  EXPECT_NE(a.mr().lkey, b.mr().lkey);
  EXPECT_EQ(cache.stats().registrations, 2u);
  EXPECT_EQ(cache.stats().hits, 0u);
  // Covered by b only (a ends at page 2).
  const Registration c = AcquireOrDie(cache, arena_.page(2), kPage);
  EXPECT_EQ(c.mr().lkey, b.mr().lkey);
  cache.Release(a);
  cache.Release(b);
  cache.Release(c);
  std::vector<uint32_t> gone = device_.deregistered();
  std::sort(gone.begin(), gone.end());
  EXPECT_EQ(gone, (std::vector<uint32_t>{a.mr().lkey, b.mr().lkey}));
}

TEST_F(RegistrationCacheTest, RangesAreWidenedToPages) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(), 0);
  const Registration a = AcquireOrDie(cache, arena_.page(0) + 10, 5);
  EXPECT_EQ(a.base(), arena_.page(0));
  EXPECT_EQ(a.length(), kPage);
  const Registration b = AcquireOrDie(cache, arena_.page(2) - 1, 2);
  EXPECT_EQ(b.base(), arena_.page(1));
  EXPECT_EQ(b.length(), 2 * kPage);
  // Zero length: the page holding the address.
  const Registration c = AcquireOrDie(cache, arena_.page(5) + 7, 0);
  EXPECT_EQ(c.base(), arena_.page(5));
  EXPECT_EQ(c.length(), kPage);
  const std::vector<FakeDevice::Region> calls = device_.register_calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].begin, reinterpret_cast<uintptr_t>(arena_.page(0)));
  EXPECT_EQ(calls[0].end, reinterpret_cast<uintptr_t>(arena_.page(1)));
  EXPECT_EQ(calls[1].begin, reinterpret_cast<uintptr_t>(arena_.page(1)));
  EXPECT_EQ(calls[1].end, reinterpret_cast<uintptr_t>(arena_.page(3)));
  EXPECT_EQ(calls[2].begin, reinterpret_cast<uintptr_t>(arena_.page(5)));
  EXPECT_EQ(calls[2].end, reinterpret_cast<uintptr_t>(arena_.page(6)));
  // Widening makes a later request within the same page a hit.
  const Registration d = AcquireOrDie(cache, arena_.page(0) + 100, 1000);
  EXPECT_EQ(d.mr().lkey, a.mr().lkey);
  for (const Registration& r : {a, b, c, d}) cache.Release(r);
  EXPECT_EQ(cache.stats().deregistrations, 3u);
}

TEST_F(RegistrationCacheTest, UserMemoryAtTheSameAddressGetsANewRegistration) {
  // The same address twice: a static buffer standing for memory freed and
  // allocated again at the same place.
  static char buffer[1 << 16];
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(),
                          1 << 30);
  const Registration first = AcquireOrDie(cache, buffer, sizeof(buffer));
  cache.Release(first);
  EXPECT_EQ(device_.deregistered(), std::vector<uint32_t>{first.mr().lkey});
  EXPECT_EQ(cache.stats().idle_entries, 0u);
  const Registration second = AcquireOrDie(cache, buffer, sizeof(buffer));
  EXPECT_NE(second.mr().lkey, first.mr().lkey);
  EXPECT_EQ(cache.stats().registrations, 2u);
  EXPECT_EQ(cache.stats().hits, 0u);
  cache.Release(second);
}

TEST_F(RegistrationCacheTest, MallocFreeMallocGetsANewRegistration) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(),
                          1 << 30);
  constexpr size_t kSize = 3 * 4096 + 17;
  char* buffer = static_cast<char*>(std::malloc(kSize));
  const Registration first = AcquireOrDie(cache, buffer, kSize);
  cache.Release(first);
  std::free(buffer);
  char* again = static_cast<char*>(std::malloc(kSize));  // often `buffer`
  const Registration second = AcquireOrDie(cache, again, kSize);
  EXPECT_NE(second.mr().lkey, first.mr().lkey)
      << (again == buffer ? "same address" : "different address");
  EXPECT_FALSE(device_.IsRegistered(first.mr().lkey));
  EXPECT_EQ(cache.stats().hits, 0u);
  cache.Release(second);
  std::free(again);
}

TEST_F(RegistrationCacheTest, OwnedMemoryIsRetainedAndReused) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(),
                          16 * kPage);
  cache.AddOwnedRange(arena_.page(0), 4 * kPage);
  const Registration a = AcquireOrDie(cache, arena_.page(0), 100);
  cache.Release(a);
  EXPECT_TRUE(device_.deregistered().empty());
  EXPECT_EQ(cache.stats().idle_entries, 1u);
  EXPECT_EQ(cache.stats().idle_bytes, kPage);
  const Registration b = AcquireOrDie(cache, arena_.page(0) + 10, 50);
  EXPECT_EQ(b.mr().lkey, a.mr().lkey);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().registrations, 1u);
  EXPECT_EQ(cache.stats().idle_entries, 0u);
  EXPECT_EQ(cache.stats().idle_bytes, 0u);
  EXPECT_EQ(cache.stats().live_entries, 1u);
  cache.Release(b);
  // Memory outside the owned range is still dropped at its last release.
  const Registration c = AcquireOrDie(cache, arena_.page(4), kPage);
  cache.Release(c);
  EXPECT_EQ(device_.deregistered(), std::vector<uint32_t>{c.mr().lkey});
  // So is an entry reaching past the owned range.
  const Registration d = AcquireOrDie(cache, arena_.page(3), 2 * kPage);
  cache.Release(d);
  EXPECT_EQ(device_.deregistered(),
            (std::vector<uint32_t>{c.mr().lkey, d.mr().lkey}));
  EXPECT_EQ(cache.stats().idle_entries, 1u);
}

TEST_F(RegistrationCacheTest, OwnedRangeSharingPagesIsRetainedByWholePages) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(),
                          16 * kPage);
  // Not page-aligned, as malloc'd memory is: its pages stay mapped while it
  // lives, so entries within them may be kept.
  cache.AddOwnedRange(arena_.page(1) + 64, kPage);  // pages 1 and 2
  const Registration a = AcquireOrDie(cache, arena_.page(1) + 64, kPage);
  EXPECT_EQ(a.length(), 2 * kPage);
  cache.Release(a);
  EXPECT_EQ(cache.stats().idle_entries, 1u);
  const Registration b = AcquireOrDie(cache, arena_.page(2) + 64, kPage);
  EXPECT_NE(b.mr().lkey, a.mr().lkey);  // reaches page 3: not covered
  cache.Release(b);                     // nor retained
  EXPECT_EQ(device_.deregistered(), std::vector<uint32_t>{b.mr().lkey});
}

TEST_F(RegistrationCacheTest, IdleEntriesBeyondTheByteLimitAreEvictedLru) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(),
                          2 * kPage);
  cache.AddOwnedRange(arena_.page(0), 8 * kPage);
  const Registration p0 = AcquireOrDie(cache, arena_.page(0), kPage);
  cache.Release(p0);
  const Registration p1 = AcquireOrDie(cache, arena_.page(1), kPage);
  cache.Release(p1);
  EXPECT_EQ(cache.stats().idle_bytes, 2 * kPage);
  EXPECT_TRUE(device_.deregistered().empty());
  // Use page 0 again: page 1 becomes the least recently used.
  cache.Release(AcquireOrDie(cache, arena_.page(0), kPage));
  const Registration p2 = AcquireOrDie(cache, arena_.page(2), kPage);
  cache.Release(p2);
  EXPECT_EQ(device_.deregistered(), std::vector<uint32_t>{p1.mr().lkey});
  EXPECT_EQ(cache.stats().idle_bytes, 2 * kPage);
  EXPECT_EQ(cache.stats().idle_entries, 2u);
  // Pages 0 and 2 are still there.
  const Registration again0 = AcquireOrDie(cache, arena_.page(0), kPage);
  const Registration again2 = AcquireOrDie(cache, arena_.page(2), kPage);
  EXPECT_EQ(again0.mr().lkey, p0.mr().lkey);
  EXPECT_EQ(again2.mr().lkey, p2.mr().lkey);
  cache.Release(again0);
  cache.Release(again2);
  // An entry larger than the limit is not kept at all.
  const Registration big = AcquireOrDie(cache, arena_.page(3), 3 * kPage);
  cache.Release(big);
  EXPECT_FALSE(device_.IsRegistered(big.mr().lkey));
  EXPECT_LE(cache.stats().idle_bytes, 2 * kPage);
}

TEST_F(RegistrationCacheTest, ZeroLimitRetainsNothing) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(), 0);
  cache.AddOwnedRange(arena_.page(0), 8 * kPage);
  const Registration a = AcquireOrDie(cache, arena_.page(0), kPage);
  cache.Release(a);
  EXPECT_FALSE(device_.IsRegistered(a.mr().lkey));
  EXPECT_EQ(cache.stats().idle_entries, 0u);
}

TEST_F(RegistrationCacheTest, RemoveOwnedRangeDeregistersIdleAndDefersLive) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(),
                          16 * kPage);
  cache.AddOwnedRange(arena_.page(0), 4 * kPage);
  const Registration idle = AcquireOrDie(cache, arena_.page(0), kPage);
  cache.Release(idle);
  const Registration live = AcquireOrDie(cache, arena_.page(2), kPage);
  cache.RemoveOwnedRange(arena_.page(0), 4 * kPage);
  EXPECT_EQ(device_.deregistered(), std::vector<uint32_t>{idle.mr().lkey});
  EXPECT_TRUE(device_.IsRegistered(live.mr().lkey));
  EXPECT_EQ(cache.stats().idle_entries, 0u);
  // An entry marked to go is not shared any more.
  const Registration fresh = AcquireOrDie(cache, arena_.page(2), kPage);
  EXPECT_NE(fresh.mr().lkey, live.mr().lkey);
  cache.Release(live);
  EXPECT_FALSE(device_.IsRegistered(live.mr().lkey));
  cache.Release(fresh);  // not owned any more: not retained
  EXPECT_FALSE(device_.IsRegistered(fresh.mr().lkey));
  // Owned again (MPI_Alloc_mem returned the same memory): registered anew,
  // then retained.
  cache.AddOwnedRange(arena_.page(0), 4 * kPage);
  const Registration after = AcquireOrDie(cache, arena_.page(0), kPage);
  EXPECT_NE(after.mr().lkey, idle.mr().lkey);
  cache.Release(after);
  EXPECT_TRUE(device_.IsRegistered(after.mr().lkey));
}

TEST_F(RegistrationCacheTest, RemoveOwnedRangeByItsStartAlone) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(),
                          16 * kPage);
  cache.AddOwnedRange(arena_.page(0), 4 * kPage);
  const Registration a = AcquireOrDie(cache, arena_.page(3), kPage);
  cache.Release(a);
  // A zero length names the owned range starting there; all of it goes.
  cache.RemoveOwnedRange(arena_.page(0), 0);
  EXPECT_FALSE(device_.IsRegistered(a.mr().lkey));
  const Registration b = AcquireOrDie(cache, arena_.page(3), kPage);
  cache.Release(b);
  EXPECT_FALSE(device_.IsRegistered(b.mr().lkey));  // no longer owned
}

TEST_F(RegistrationCacheTest, AddingAnOverlappingOwnedRangeReplacesTheOld) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(),
                          16 * kPage);
  cache.AddOwnedRange(arena_.page(0), 4 * kPage);
  const Registration a = AcquireOrDie(cache, arena_.page(1), kPage);
  cache.Release(a);
  EXPECT_TRUE(device_.IsRegistered(a.mr().lkey));
  // The old owned memory must have gone (its free was missed): forget it.
  cache.AddOwnedRange(arena_.page(2), 4 * kPage);
  EXPECT_FALSE(device_.IsRegistered(a.mr().lkey));
  const Registration b = AcquireOrDie(cache, arena_.page(1), kPage);
  cache.Release(b);
  EXPECT_FALSE(device_.IsRegistered(b.mr().lkey));  // page 1 not owned now
}

TEST_F(RegistrationCacheTest, InvalidateRange) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(),
                          16 * kPage);
  cache.AddOwnedRange(arena_.page(0), 4 * kPage);
  const Registration idle = AcquireOrDie(cache, arena_.page(0), kPage);
  cache.Release(idle);
  const Registration untouched = AcquireOrDie(cache, arena_.page(3), kPage);
  cache.Release(untouched);
  const Registration live = AcquireOrDie(cache, arena_.page(1), kPage);
  const Registration user = AcquireOrDie(cache, arena_.page(8), kPage);
  // Page 0 (by a byte of it) to page 1, and page 8.
  cache.InvalidateRange(arena_.page(0) + kPage - 1, 2);
  cache.InvalidateRange(arena_.page(8) + 5, 0);
  EXPECT_EQ(device_.deregistered(), std::vector<uint32_t>{idle.mr().lkey});
  EXPECT_TRUE(device_.IsRegistered(live.mr().lkey));
  EXPECT_TRUE(device_.IsRegistered(user.mr().lkey));
  EXPECT_TRUE(device_.IsRegistered(untouched.mr().lkey));
  const Registration user_again = AcquireOrDie(cache, arena_.page(8), kPage);
  EXPECT_NE(user_again.mr().lkey, user.mr().lkey);
  cache.Release(user);
  cache.Release(live);
  EXPECT_FALSE(device_.IsRegistered(user.mr().lkey));
  EXPECT_FALSE(device_.IsRegistered(live.mr().lkey));  // not retained
  const Registration again = AcquireOrDie(cache, arena_.page(3), kPage);
  EXPECT_EQ(again.mr().lkey, untouched.mr().lkey);
  cache.Release(again);
  cache.Release(user_again);
}

TEST_F(RegistrationCacheTest, RegistrationFailurePropagates) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(), 0);
  device_.FailWith(ENOMEM);
  absl::StatusOr<Registration> failed = cache.Acquire(arena_.page(0) + 3, 10);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kResourceExhausted);
  const std::string message(failed.status().message());
  EXPECT_NE(message.find(std::strerror(ENOMEM)), std::string::npos) << message;
  char address[32];
  std::snprintf(address, sizeof(address), "0x%llx",
                static_cast<unsigned long long>(
                    reinterpret_cast<uintptr_t>(arena_.page(0) + 3)));
  EXPECT_NE(message.find(address), std::string::npos) << message;
  EXPECT_NE(message.find("10 bytes"), std::string::npos) << message;
  EXPECT_EQ(cache.stats().registrations, 0u);
  EXPECT_EQ(cache.stats().live_entries, 0u);
  device_.FailWith(0);
  const Registration ok = AcquireOrDie(cache, arena_.page(0), 10);
  cache.Release(ok);
}

TEST_F(RegistrationCacheTest, WrappingRangeIsRejected) {
  RegistrationCache cache(device_.register_fn(), device_.deregister_fn(), 0);
  absl::StatusOr<Registration> wrapped =
      cache.Acquire(reinterpret_cast<void*>(~uintptr_t{0} - 100), 1000);
  EXPECT_EQ(wrapped.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(device_.register_calls().empty());
}

TEST_F(RegistrationCacheTest, DestructorDeregistersEverything) {
  std::vector<uint32_t> keys;
  {
    RegistrationCache cache(device_.register_fn(), device_.deregister_fn(),
                            16 * kPage);
    cache.AddOwnedRange(arena_.page(0), 4 * kPage);
    const Registration idle = AcquireOrDie(cache, arena_.page(0), kPage);
    cache.Release(idle);
    const Registration live = AcquireOrDie(cache, arena_.page(5), kPage);
    keys = {idle.mr().lkey, live.mr().lkey};
    EXPECT_TRUE(device_.deregistered().empty());
  }
  std::vector<uint32_t> gone = device_.deregistered();
  std::sort(gone.begin(), gone.end());
  EXPECT_EQ(gone, keys);
}

TEST(RegistrationCacheDeathTest, ReleasingTwiceAborts) {
  FakeDevice device;
  Arena arena(1);
  RegistrationCache cache(device.register_fn(), device.deregister_fn(), 0);
  const Registration a = AcquireOrDie(cache, arena.page(0), kPage);
  cache.Release(a);
  EXPECT_DEATH(cache.Release(a), "unknown or already released");
  EXPECT_DEATH(cache.Release(Registration()), "unknown or already released");
}

// The reference model: a plain list of registrations, searched linearly.
// An Acquire must share exactly when a live (or, over owned memory,
// retained) entry not marked to go covers the request, and a release must
// deregister exactly the entries the model drops.
struct ModelEntry {
  uintptr_t begin;
  uintptr_t end;
  int references;
  bool doomed;
  uint32_t key;
};

void RunAgainstModel(bool owned_arena, uint32_t seed) {
  SCOPED_TRACE(testing::Message()
               << "seed " << seed << " owned " << owned_arena);
  constexpr size_t kPages = 16;
  FakeDevice device;
  Arena arena(kPages);
  const uintptr_t base = reinterpret_cast<uintptr_t>(arena.page(0));
  RegistrationCache cache(device.register_fn(), device.deregister_fn(),
                          owned_arena ? (size_t{1} << 40) : 0);
  if (owned_arena) cache.AddOwnedRange(arena.page(0), kPages * kPage);

  std::vector<ModelEntry> model;
  std::vector<Registration> held;
  std::mt19937 random(seed);
  auto uniform = [&random](size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(random);
  };
  auto page_down = [](uintptr_t x) { return x & ~(kPage - 1); };
  auto page_up = [](uintptr_t x) { return (x + kPage - 1) & ~(kPage - 1); };
  uint64_t expected_registrations = 0;
  std::vector<uint32_t> expected_deregistered;
  size_t checked = 0;  // deregistrations compared so far

  for (int step = 0; step < 5000; ++step) {
    const size_t op = uniform(10);
    if (op < 5 || held.empty()) {
      const uintptr_t offset = uniform(kPages * kPage / 2) * 2;
      const size_t max_length =
          std::min<size_t>(4 * kPage, kPages * kPage - offset);
      const size_t length = uniform(8) == 0 ? 0 : 1 + uniform(max_length);
      const uintptr_t begin = base + offset;
      const uintptr_t end = begin + std::max<size_t>(length, 1);
      bool live_covers = false;
      bool any_covers = false;
      for (const ModelEntry& e : model) {
        if (e.doomed || e.begin > begin || e.end < end) continue;
        any_covers = true;
        if (e.references > 0) live_covers = true;
      }
      const Registration r =
          AcquireOrDie(cache, reinterpret_cast<void*>(begin), length);
      ASSERT_NE(r.id(), 0u);
      auto it = std::find_if(
          model.begin(), model.end(),
          [&r](const ModelEntry& e) { return e.key == r.mr().lkey; });
      if (any_covers) {
        ASSERT_NE(it, model.end()) << "step " << step << ": registered anew "
                                   << "though an entry covers the range";
        ASSERT_FALSE(it->doomed) << "step " << step;
        ASSERT_LE(it->begin, begin);
        ASSERT_GE(it->end, end);
        if (live_covers) ASSERT_GT(it->references, 0) << "step " << step;
        ++it->references;
      } else {
        ASSERT_EQ(it, model.end()) << "step " << step << ": shared an entry "
                                   << "that does not cover the range";
        ++expected_registrations;
        model.push_back(
            {page_down(begin), page_up(end), 1, false, r.mr().lkey});
      }
      held.push_back(r);
    } else if (op < 9) {
      const size_t index = uniform(held.size());
      const Registration r = held[index];
      held.erase(held.begin() + index);
      cache.Release(r);
      auto it = std::find_if(
          model.begin(), model.end(),
          [&r](const ModelEntry& e) { return e.key == r.mr().lkey; });
      ASSERT_NE(it, model.end());
      if (--it->references == 0 && (it->doomed || !owned_arena)) {
        expected_deregistered.push_back(it->key);
        model.erase(it);
      }
    } else {
      const uintptr_t offset = uniform(kPages * kPage);
      const size_t length = uniform(2 * kPage);
      const uintptr_t lo = page_down(base + offset);
      const uintptr_t hi = page_up(base + offset + std::max<size_t>(length, 1));
      cache.InvalidateRange(reinterpret_cast<void*>(base + offset), length);
      for (auto it = model.begin(); it != model.end();) {
        if (it->begin < hi && it->end > lo) {
          if (it->references == 0) {
            expected_deregistered.push_back(it->key);
            it = model.erase(it);
            continue;
          }
          it->doomed = true;
        }
        ++it;
      }
    }
    // One step may deregister several entries, in an order of its own.
    const std::vector<uint32_t> all_gone = device.deregistered();
    ASSERT_EQ(all_gone.size(), expected_deregistered.size()) << "step " << step;
    std::vector<uint32_t> gone(all_gone.begin() + checked, all_gone.end());
    std::vector<uint32_t> expected(expected_deregistered.begin() + checked,
                                   expected_deregistered.end());
    std::sort(gone.begin(), gone.end());
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(gone, expected) << "step " << step;
    checked = all_gone.size();
    ASSERT_EQ(cache.stats().registrations, expected_registrations)
        << "step " << step;
    size_t live = 0, idle = 0, idle_bytes = 0;
    for (const ModelEntry& e : model) {
      if (e.references > 0) {
        ++live;
      } else {
        ++idle;
        idle_bytes += e.end - e.begin;
      }
    }
    ASSERT_EQ(cache.stats().live_entries, live) << "step " << step;
    ASSERT_EQ(cache.stats().idle_entries, idle) << "step " << step;
    ASSERT_EQ(cache.stats().idle_bytes, idle_bytes) << "step " << step;
  }
  for (const Registration& r : held) cache.Release(r);
}

TEST(RegistrationCacheModelTest, UserMemoryMatchesTheModel) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    RunAgainstModel(/*owned_arena=*/false, seed);
    if (testing::Test::HasFatalFailure()) return;
  }
}

TEST(RegistrationCacheModelTest, OwnedMemoryMatchesTheModel) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    RunAgainstModel(/*owned_arena=*/true, seed);
    if (testing::Test::HasFatalFailure()) return;
  }
}

// Four threads acquire and release overlapping ranges, some of them owned,
// with a small idle limit (so eviction runs) and the occasional
// invalidation. Each holder counts itself on the key it holds; the fake
// device fails a test that deregisters a held key or one twice.
TEST(RegistrationCacheThreadedTest, ConcurrentAcquireAndRelease) {
  constexpr size_t kPages = 8;
  constexpr int kThreads = 4;
  constexpr int kSteps = 20000;
  FakeDevice device(/*max_keys=*/kThreads * kSteps + 1);
  Arena arena(kPages);
  const uintptr_t base = reinterpret_cast<uintptr_t>(arena.page(0));
  uint64_t registrations = 0;
  {
    RegistrationCache cache(device.register_fn(), device.deregister_fn(),
                            2 * kPage);
    cache.AddOwnedRange(arena.page(0), 4 * kPage);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 random(t + 1);
        auto uniform = [&random](size_t n) {
          return std::uniform_int_distribution<size_t>(0, n - 1)(random);
        };
        std::vector<Registration> held;
        for (int step = 0; step < kSteps; ++step) {
          const size_t op = uniform(16);
          if (op < 8 && held.size() < 4) {
            const uintptr_t begin = base + uniform(kPages * kPage - 1);
            const size_t length =
                1 + uniform(std::min<size_t>(2 * kPage,
                                             base + kPages * kPage - begin));
            absl::StatusOr<Registration> r =
                cache.Acquire(reinterpret_cast<void*>(begin), length);
            ASSERT_TRUE(r.ok()) << r.status();
            const uint32_t key = r->mr().lkey;
            ++device.holders(key);
            ASSERT_TRUE(device.IsRegistered(key));
            const FakeDevice::Region region = device.region(key);
            ASSERT_LE(region.begin, begin);
            ASSERT_GE(region.end, begin + length);
            held.push_back(*r);
          } else if (op < 15 && !held.empty()) {
            const size_t index = uniform(held.size());
            const Registration r = held[index];
            held.erase(held.begin() + index);
            ASSERT_TRUE(device.IsRegistered(r.mr().lkey));
            --device.holders(r.mr().lkey);
            cache.Release(r);
          } else if (op == 15) {
            cache.InvalidateRange(
                reinterpret_cast<void*>(base + uniform(kPages * kPage)), 64);
          }
        }
        for (const Registration& r : held) {
          --device.holders(r.mr().lkey);
          cache.Release(r);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    const RegistrationCache::Stats stats = cache.stats();
    EXPECT_EQ(stats.live_entries, 0u);
    EXPECT_LE(stats.idle_bytes, 2 * kPage);
    EXPECT_GT(stats.hits, 0u);
    EXPECT_EQ(stats.registrations, device.keys_issued());
    EXPECT_EQ(stats.deregistrations + stats.idle_entries, stats.registrations);
    registrations = stats.registrations;
    std::printf("%llu registrations, %llu hits, %llu deregistrations\n",
                static_cast<unsigned long long>(stats.registrations),
                static_cast<unsigned long long>(stats.hits),
                static_cast<unsigned long long>(stats.deregistrations));
  }
  // After the cache is gone, every registration was deregistered once.
  const std::vector<uint32_t> gone = device.deregistered();
  EXPECT_EQ(gone.size(), registrations);
  for (uint32_t key = 1; key <= registrations; ++key) {
    EXPECT_FALSE(device.IsRegistered(key)) << key;
  }
}

}  // namespace
}  // namespace minimpi::net::ib
