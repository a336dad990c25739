#include "net/ib/ib_devices.h"

#include <infiniband/verbs.h>

namespace minimpi::net::ib {

std::vector<std::string> ListRdmaDevices() {
  std::vector<std::string> names;
  int count = 0;
  // Returns nullptr (errno set) when the verbs stack is unusable, e.g. no
  // kernel support; an empty list when no device exists.
  ibv_device** devices = ibv_get_device_list(&count);
  if (devices == nullptr) return names;
  for (int i = 0; i < count && devices[i] != nullptr; ++i) {
    const char* name = ibv_get_device_name(devices[i]);
    names.emplace_back(name != nullptr ? name : "");
  }
  ibv_free_device_list(devices);
  return names;
}

}  // namespace minimpi::net::ib
