#include "net/ib/ib_devices.h"

#include <memory>
#include <string>
#include <vector>

#include "net/ib/verbs.h"

namespace minimpi::net::ib {

// Through the verbs layer, so that net/ib/verbs_device.cc stays the one
// place that calls libibverbs.
std::vector<std::string> ListRdmaDevices() {
  return CreateDeviceVerbs()->ListDevices();
}

}  // namespace minimpi::net::ib
