#include "runtime/settings.h"

#include <cstdlib>

#include "gtest/gtest.h"

namespace minimpi::runtime {
namespace {

TEST(SettingsTest, DefaultsWhenUnset) {
  unsetenv("MINIMPI_NUM_VCIS");
  auto settings = Settings::FromEnvironment();
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->num_vcis, Settings().num_vcis);
}

TEST(SettingsTest, ReadsIntegers) {
  setenv("MINIMPI_NUM_VCIS", "7", 1);
  auto settings = Settings::FromEnvironment();
  unsetenv("MINIMPI_NUM_VCIS");
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->num_vcis, 7);
}

TEST(SettingsTest, RejectsOutOfRangeAndNamesTheVariable) {
  setenv("MINIMPI_NUM_VCIS", "0", 1);
  auto settings = Settings::FromEnvironment();
  unsetenv("MINIMPI_NUM_VCIS");
  ASSERT_FALSE(settings.ok());
  EXPECT_NE(settings.status().message().find("MINIMPI_NUM_VCIS"),
            std::string::npos);
}

TEST(SettingsTest, RejectsUnknownChoice) {
  setenv("MINIMPI_TRANSPORT", "carrier-pigeon", 1);
  auto settings = Settings::FromEnvironment();
  unsetenv("MINIMPI_TRANSPORT");
  ASSERT_FALSE(settings.ok());
  EXPECT_NE(settings.status().message().find("shm"), std::string::npos);
}

TEST(SettingsTest, DescribesEveryVariable) {
  auto described = DescribeSettings(Settings());
  ASSERT_FALSE(described.empty());
  for (const auto& info : described) {
    EXPECT_EQ(info.name.rfind("MINIMPI_", 0), 0u) << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
  }
}

}  // namespace
}  // namespace minimpi::runtime
