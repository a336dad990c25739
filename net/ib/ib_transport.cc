#include "net/ib/ib_transport.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "net/ib/ib_devices.h"

namespace minimpi::net::ib {

absl::StatusOr<std::unique_ptr<Transport>> CreateIbTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings&) {
  const std::vector<std::string> devices = ListRdmaDevices();
  if (devices.empty()) {
    return absl::NotFoundError(
        absl::StrCat("net/ib: rank ", bootstrap.rank(),
                     " found no RDMA device (ibv_get_device_list is empty)"));
  }
  return absl::UnimplementedError(absl::StrCat(
      "net/ib: the RC queue-pair transport is not implemented yet (devices "
      "found: ",
      absl::StrJoin(devices, ", "), ")"));
}

}  // namespace minimpi::net::ib
