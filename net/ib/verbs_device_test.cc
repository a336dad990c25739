// Tests of the libibverbs implementation of Verbs. CI machines have no RDMA
// device, so there only the device-independent parts run (the list and a
// failed open); on a machine with a device, one is opened and queried.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "net/ib/verbs.h"

namespace minimpi::net::ib {
namespace {

TEST(VerbsDeviceTest, ProviderIsLibibverbs) {
  std::unique_ptr<Verbs> verbs = CreateDeviceVerbs();
  ASSERT_NE(verbs, nullptr);
  EXPECT_STREQ(verbs->provider(), "libibverbs");
}

TEST(VerbsDeviceTest, ListDevicesIsStable) {
  std::unique_ptr<Verbs> verbs = CreateDeviceVerbs();
  const std::vector<std::string> devices = verbs->ListDevices();
  for (const std::string& name : devices) EXPECT_FALSE(name.empty());
  EXPECT_EQ(verbs->ListDevices(), devices);
  EXPECT_EQ(CreateDeviceVerbs()->ListDevices(), devices);
}

TEST(VerbsDeviceTest, OpeningAnUnknownDeviceFailsWithErrno) {
  std::unique_ptr<Verbs> verbs = CreateDeviceVerbs();
  errno = 0;
  EXPECT_EQ(verbs->OpenDevice("no-such-device"), nullptr);
  EXPECT_NE(errno, 0);
}

TEST(VerbsDeviceTest, OpensQueriesAndClosesTheFirstDevice) {
  std::unique_ptr<Verbs> verbs = CreateDeviceVerbs();
  const std::vector<std::string> devices = verbs->ListDevices();
  if (devices.empty()) {
    GTEST_SKIP() << "no RDMA device here (none listed by libibverbs); only "
                    "the device-independent tests ran";
  }
  VerbsContext* context = verbs->OpenDevice(devices[0]);
  ASSERT_NE(context, nullptr) << devices[0] << ": " << std::strerror(errno);
  ibv_device_attr device_attr = {};
  EXPECT_EQ(verbs->QueryDevice(context, &device_attr), 0);
  EXPECT_GE(device_attr.phys_port_cnt, 1);
  ibv_port_attr port_attr = {};
  EXPECT_EQ(verbs->QueryPort(context, 1, &port_attr), 0);
  EXPECT_GE(verbs->AsyncEventFd(context), 0);
  AsyncEvent event;
  // Nonblocking: returns at once whether or not an event waits.
  verbs->GetAsyncEvent(context, &event);
  std::printf("%s: %d port(s), port 1 state %d\n", devices[0].c_str(),
              device_attr.phys_port_cnt, port_attr.state);
  verbs->CloseDevice(context);
}

}  // namespace
}  // namespace minimpi::net::ib
