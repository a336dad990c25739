// CreateTransport: picks the transport that Settings::transport names, once,
// at setup. Lives apart from the interface so that net/shm and net/ib can
// depend on transport.h without depending on each other.
#include "net/transport.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "net/ib/ib_devices.h"
#include "net/ib/ib_transport.h"
#include "net/shm/shm_transport.h"
#include "net/tcp/tcp_transport.h"

namespace minimpi::net {
namespace {

absl::StatusOr<std::unique_ptr<Transport>> CreateShm(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  absl::StatusOr<std::unique_ptr<shm::ShmTransport>> transport =
      shm::ShmTransport::Create(bootstrap, settings);
  if (!transport.ok()) return transport.status();
  return std::unique_ptr<Transport>(std::move(*transport));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Transport>> CreateTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  const int local = static_cast<int>(bootstrap.local_ranks().size());
  const bool all_on_this_node = local == bootstrap.size();
  if (settings.transport == "shm") {
    if (!all_on_this_node) {
      return absl::FailedPreconditionError(absl::StrCat(
          "net: MINIMPI_TRANSPORT=shm, but only ", local, " of ",
          bootstrap.size(),
          " ranks run on this node and shared memory cannot reach the "
          "others; use MINIMPI_TRANSPORT=ib or auto"));
    }
    return CreateShm(bootstrap, settings);
  }
  if (settings.transport == "tcp") {
    return tcp::CreateTcpTransport(bootstrap, settings);
  }
  if (settings.transport == "ib") {
    return ib::CreateIbTransport(bootstrap, settings);
  }
  if (settings.transport == "auto") {
    if (all_on_this_node) return CreateShm(bootstrap, settings);
    if (!ib::ListRdmaDevices().empty()) {
      return ib::CreateIbTransport(bootstrap, settings);
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "net: ranks span several nodes (", local, " of ", bootstrap.size(),
        " on this one), shared memory reaches only ranks on one node, and "
        "this node has no RDMA device for net/ib"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("net: unknown transport '", settings.transport,
                   "' (expected auto, shm or ib)"));
}

}  // namespace minimpi::net
