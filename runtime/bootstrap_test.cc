// Tests of Bootstrap in singleton mode (no launcher). Multi-rank behaviour is
// tested through mpiexec in tests/launcher/.

#include "runtime/bootstrap.h"

#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

extern char** environ;

namespace minimpi::runtime {
namespace {

// Makes sure no PMIx server contact leaked in from whatever ran the test.
void ClearPmixEnvironment() {
  std::vector<std::string> names;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string item(*entry);
    if (item.rfind("PMIX_", 0) == 0)
      names.push_back(item.substr(0, item.find('=')));
  }
  for (const std::string& name : names) unsetenv(name.c_str());
}

TEST(SingletonBootstrapTest, HasSizeOneAndIsRankZero) {
  ClearPmixEnvironment();
  auto bootstrap = Bootstrap::Init();
  ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
  EXPECT_TRUE((*bootstrap)->is_singleton());
  EXPECT_EQ((*bootstrap)->rank(), 0);
  EXPECT_EQ((*bootstrap)->size(), 1);
  EXPECT_EQ((*bootstrap)->local_rank(), 0);
  EXPECT_EQ((*bootstrap)->local_ranks(), std::vector<int>{0});
  EXPECT_EQ((*bootstrap)->job_id(), "singleton-" + std::to_string(getpid()));
  EXPECT_TRUE((*bootstrap)->Finalize().ok());
}

TEST(SingletonBootstrapTest, PutIsVisibleOnlyAfterCommitAndFence) {
  ClearPmixEnvironment();
  auto bootstrap = Bootstrap::Init();
  ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
  Bootstrap& b = **bootstrap;
  // Binary data with embedded zeros must survive byte for byte.
  const std::string value("addr\0\x01\xff-0", 9);
  ASSERT_TRUE(b.Put("shm-address", value).ok());
  EXPECT_EQ(b.Get(0, "shm-address").status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(b.Commit().ok());
  EXPECT_EQ(b.Get(0, "shm-address").status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(b.Fence().ok());
  absl::StatusOr<std::string> got = b.Get(0, "shm-address");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, value);
  EXPECT_EQ(got->size(), 9u);

  // A second round overwrites the key.
  ASSERT_TRUE(b.Put("shm-address", "second").ok());
  ASSERT_TRUE(b.Commit().ok());
  ASSERT_TRUE(b.Fence().ok());
  EXPECT_EQ(*b.Get(0, "shm-address"), "second");
}

TEST(SingletonBootstrapTest, RejectsUnknownKeysAndRanks) {
  ClearPmixEnvironment();
  auto bootstrap = Bootstrap::Init();
  ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
  EXPECT_EQ((*bootstrap)->Get(0, "never-put").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ((*bootstrap)->Get(1, "never-put").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SingletonBootstrapDeathTest, AbortExitsWithTheErrorCode) {
  ClearPmixEnvironment();
  auto bootstrap = Bootstrap::Init();
  ASSERT_TRUE(bootstrap.ok()) << bootstrap.status();
  EXPECT_EXIT((*bootstrap)->Abort(7, "bad input"), testing::ExitedWithCode(7),
              "MPI_Abort\\(errorcode 7\\): bad input");
}

}  // namespace
}  // namespace minimpi::runtime
