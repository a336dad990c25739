// Info objects against a reference kept as a vector of pairs: set, replace,
// delete and n-th key in random sequences; key and value length limits;
// handles that go stale when freed; MPI_INFO_ENV's keys; and threads
// setting keys of one object at once (run under ThreadSanitizer).
#include "mpi/objects/info.h"

#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi {
namespace {

TEST(InfoTest, RandomOperationsMatchReference) {
  std::mt19937 random(3);
  Info info;
  std::vector<std::pair<std::string, std::string>> reference;
  for (int step = 0; step < 20000; ++step) {
    const std::string key = "key" + std::to_string(random() % 12);
    auto it = std::find_if(reference.begin(), reference.end(),
                           [&](const auto& e) { return e.first == key; });
    switch (random() % 3) {
      case 0: {
        const std::string value = "v" + std::to_string(random());
        info.Set(key, value);
        if (it == reference.end()) {
          reference.emplace_back(key, value);
        } else {
          it->second = value;  // in place: the key keeps its position
        }
        break;
      }
      case 1:
        EXPECT_EQ(info.Delete(key), it != reference.end());
        if (it != reference.end()) reference.erase(it);
        break;
      default:
        if (it == reference.end()) {
          EXPECT_EQ(info.Get(key), std::nullopt);
        } else {
          EXPECT_EQ(info.Get(key), it->second);
        }
    }
    ASSERT_EQ(info.size(), static_cast<int>(reference.size()));
  }
  for (int n = 0; n < info.size(); ++n) {
    EXPECT_EQ(info.NthKey(n), reference[n].first);
  }
  EXPECT_EQ(info.NthKey(-1), std::nullopt);
  EXPECT_EQ(info.NthKey(info.size()), std::nullopt);
  EXPECT_EQ(info.Entries(), reference);
}

TEST(InfoTest, KeyAndValueLimits) {
  std::string problem;
  EXPECT_EQ(Info::CheckKey("k", &problem), MPI_SUCCESS);
  EXPECT_EQ(Info::CheckKey("", &problem), MPI_ERR_INFO_KEY);
  EXPECT_EQ(Info::CheckKey(nullptr, &problem), MPI_ERR_INFO_KEY);
  const std::string longest_key(MPI_MAX_INFO_KEY - 1, 'k');
  EXPECT_EQ(Info::CheckKey(longest_key.c_str(), &problem), MPI_SUCCESS);
  const std::string long_key(MPI_MAX_INFO_KEY, 'k');
  EXPECT_EQ(Info::CheckKey(long_key.c_str(), &problem), MPI_ERR_INFO_KEY);
  EXPECT_NE(problem.find("256 characters"), std::string::npos) << problem;

  EXPECT_EQ(Info::CheckValue("", &problem), MPI_SUCCESS);
  EXPECT_EQ(Info::CheckValue(nullptr, &problem), MPI_ERR_INFO_VALUE);
  const std::string longest_value(MPI_MAX_INFO_VAL - 1, 'v');
  EXPECT_EQ(Info::CheckValue(longest_value.c_str(), &problem), MPI_SUCCESS);
  const std::string long_value(MPI_MAX_INFO_VAL, 'v');
  EXPECT_EQ(Info::CheckValue(long_value.c_str(), &problem), MPI_ERR_INFO_VALUE);
}

TEST(InfoTest, HandlesGoStaleWhenFreed) {
  auto info = std::make_unique<Info>();
  Info* object = info.get();
  const MPI_Info handle = NewInfoHandle(std::move(info));
  ASSERT_NE(handle, MPI_INFO_NULL);
  EXPECT_EQ(LookupInfo(handle), object);
  delete InfoTable().Remove(reinterpret_cast<uintptr_t>(handle));
  EXPECT_EQ(LookupInfo(handle), nullptr);
  EXPECT_EQ(LookupInfo(MPI_INFO_NULL), nullptr);
  EXPECT_EQ(LookupInfo(reinterpret_cast<MPI_Info>(0x5a5a5a5a5aull)), nullptr);
  // A new object in the same slot does not revive the old handle.
  const MPI_Info next = NewInfoHandle(std::make_unique<Info>());
  EXPECT_EQ(LookupInfo(handle), nullptr);
  EXPECT_NE(LookupInfo(next), nullptr);
  delete InfoTable().Remove(reinterpret_cast<uintptr_t>(next));
}

TEST(InfoTest, EnvironmentDescribesThisProcess) {
  Info* environment = LookupInfo(MPI_INFO_ENV);
  ASSERT_NE(environment, nullptr);
  EXPECT_TRUE(environment->predefined());
  EXPECT_EQ(environment->Get("thread_level"), "MPI_THREAD_MULTIPLE");
  ASSERT_TRUE(environment->Get("command").has_value());
  EXPECT_NE(environment->Get("command")->find("info_test"), std::string::npos);
  EXPECT_TRUE(environment->Get("host").has_value());
  EXPECT_TRUE(environment->Get("wdir").has_value());
  char program[] = "prog", first[] = "-x", second[] = "7";
  char* argv[] = {program, first, second, nullptr};
  const auto entries = Info::EnvironmentEntries(3, argv);
  ASSERT_GE(entries.size(), 2u);
  EXPECT_EQ(entries[0], (Info::Entry{"command", "prog"}));
  EXPECT_EQ(entries[1], (Info::Entry{"argv", "-x 7"}));
}

TEST(InfoTest, ThreadsSetAndReadOneObject) {
  Info info;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&info, t] {
      for (int i = 0; i < 500; ++i) {
        const std::string key =
            "t" + std::to_string(t) + "_" + std::to_string(i % 50);
        info.Set(key, std::to_string(i));
        EXPECT_TRUE(info.Get(key).has_value());
        if (i % 7 == 0) info.Delete(key);
        (void)info.NthKey(i % 10);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(info.size(), 200);
}

}  // namespace
}  // namespace minimpi
