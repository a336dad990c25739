// PerVci: states on cache lines of their own, made once each (all at once
// or as their VCIs come), found only once made, destroyed with the PerVci;
// states made by two threads while a third looks for them (run under
// ThreadSanitizer in CI).
#include "mpi/vci/per_vci.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi::vci {
namespace {

// A state smaller than a cache line, to show that the slots pad it.
struct SmallState {
  SmallState() = default;
  explicit SmallState(int value) : value(value) {}
  int value = -1;
};

TEST(PerVciTest, EachStateHasCacheLinesOfItsOwn) {
  PerVci<SmallState> states(4);
  states.MakeAll();
  for (int v = 0; v < 4; ++v) {
    const auto address = reinterpret_cast<uintptr_t>(&states[v]);
    EXPECT_EQ(address % kVciStateAlignment, 0u) << "VCI " << v;
    if (v > 0) {
      const auto previous = reinterpret_cast<uintptr_t>(&states[v - 1]);
      EXPECT_GE(address - previous, kVciStateAlignment) << "VCI " << v;
    }
  }
}

TEST(PerVciTest, MakeAllDefaultConstructsEveryState) {
  PerVci<SmallState> states(3);
  EXPECT_EQ(states.capacity(), 3);
  states.MakeAll();
  for (uint32_t v = 0; v < 3; ++v) {
    ASSERT_NE(states.Find(v), nullptr);
    EXPECT_EQ(states.Find(v), &states[v]);
    EXPECT_EQ(states[v].value, -1);
  }
}

TEST(PerVciTest, FindSeesOnlyStatesMadeInRange) {
  PerVci<SmallState> states(3);
  EXPECT_EQ(states.Find(1), nullptr);
  SmallState& made = states.Make(1, 42);
  EXPECT_EQ(&made, &states[1]);
  EXPECT_EQ(states[1].value, 42);
  EXPECT_EQ(states.Find(0), nullptr);
  EXPECT_EQ(states.Find(1), &made);
  EXPECT_EQ(states.Find(2), nullptr);
  EXPECT_EQ(states.Find(3), nullptr);
  EXPECT_EQ(states.Find(UINT32_MAX), nullptr);
}

// Counts its destructions, to show that only made states are destroyed,
// each once.
struct CountedState {
  explicit CountedState(std::atomic<int>* destroyed) : destroyed(destroyed) {}
  ~CountedState() { destroyed->fetch_add(1); }
  std::atomic<int>* destroyed;
};

TEST(PerVciTest, DestroysTheStatesMadeOnly) {
  std::atomic<int> destroyed{0};
  {
    PerVci<CountedState> states(5);
    states.Make(0, &destroyed);
    states.Make(3, &destroyed);
    EXPECT_EQ(destroyed.load(), 0);
  }
  EXPECT_EQ(destroyed.load(), 2);
}

// A state wider than a cache line, as point-to-point's is.
struct WideState {
  explicit WideState(int vci) {
    for (int& word : words) word = vci;
  }
  int words[40];
};

TEST(PerVciTest, StatesMadeByTwoThreadsAreSeenWholeByAThird) {
  constexpr int kCapacity = 256;
  PerVci<WideState> states(kCapacity);
  // Two makers (even and odd VCIs, as two endpoints made at once) and a
  // reader that finds each state as soon as it is made, and must see every
  // word its maker wrote.
  auto make = [&](int first) {
    for (int v = first; v < kCapacity; v += 2) states.Make(v, v);
  };
  std::atomic<int> torn{0};
  std::thread reader([&] {
    std::vector<bool> seen(kCapacity, false);
    for (int found = 0; found < kCapacity;) {
      for (uint32_t v = 0; v < kCapacity; ++v) {
        if (seen[v]) continue;
        const WideState* state = states.Find(v);
        if (state == nullptr) continue;
        for (int word : state->words) {
          if (word != static_cast<int>(v)) torn.fetch_add(1);
        }
        seen[v] = true;
        ++found;
      }
    }
  });
  std::thread even(make, 0);
  std::thread odd(make, 1);
  even.join();
  odd.join();
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  for (int v = 0; v < kCapacity; ++v) {
    EXPECT_EQ(states[v].words[39], v);
    const auto address = reinterpret_cast<uintptr_t>(&states[v]);
    EXPECT_EQ(address % kVciStateAlignment, 0u);
  }
}

}  // namespace
}  // namespace minimpi::vci
