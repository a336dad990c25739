#include "net/ib/ib_devices.h"

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi::net::ib {
namespace {

// Runs everywhere: with no device or driver the list is empty, not a crash.
TEST(IbDevicesTest, ListsDevicesWithoutCrashing) {
  const std::vector<std::string> devices = ListRdmaDevices();
  for (const std::string& name : devices) EXPECT_FALSE(name.empty());
  // Probing twice gives the same answer (the list is freed and rebuilt).
  EXPECT_EQ(ListRdmaDevices(), devices);
  std::printf("RDMA devices found: %zu\n", devices.size());
}

}  // namespace
}  // namespace minimpi::net::ib
