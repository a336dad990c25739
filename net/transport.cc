// CreateTransport: picks, once at setup, the transport that carries each
// pair of ranks. Lives apart from the interface so that net/shm, net/tcp and
// net/ib can depend on transport.h without depending on each other.
#include "net/transport.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "net/ib/ib_devices.h"
#include "net/ib/ib_transport.h"
#include "net/routed_transport.h"
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
  // Every rank decides alike from the same node map and settings, so the
  // transports' collective setups (their fences) match across the job.
  const bool spans_nodes = bootstrap.num_nodes() > 1;
  if (settings.transport == "shm") {
    if (spans_nodes) {
      return absl::FailedPreconditionError(absl::StrCat(
          "net: MINIMPI_TRANSPORT=shm, but only ", local, " of ",
          bootstrap.size(), " ranks run on this node (", bootstrap.hostname(),
          ", ", bootstrap.num_nodes(),
          " nodes in the job) and shared memory cannot reach the others; "
          "use MINIMPI_TRANSPORT=auto or tcp"));
    }
    return CreateShm(bootstrap, settings);
  }
  if (settings.transport == "tcp") {
    return tcp::CreateTcpTransport(bootstrap, settings);
  }
  if (settings.transport == "ib") {
    return ib::CreateIbTransport(bootstrap, settings);
  }
  if (settings.transport != "auto") {
    return absl::InvalidArgumentError(
        absl::StrCat("net: unknown transport '", settings.transport,
                     "' (expected auto, shm, tcp or ib)"));
  }
  if (!spans_nodes) return CreateShm(bootstrap, settings);
  // Across nodes: shared memory inside this node, the network between.
  absl::StatusOr<std::unique_ptr<Transport>> node =
      CreateShm(bootstrap, settings);
  if (!node.ok()) return node.status();
  absl::StatusOr<std::unique_ptr<Transport>> network =
      tcp::CreateTcpTransport(bootstrap, settings);
  if (!network.ok()) return network.status();
  std::vector<bool> on_node(bootstrap.size(), false);
  for (int rank : bootstrap.local_ranks()) on_node[rank] = true;
  return std::unique_ptr<Transport>(
      new RoutedTransport(*std::move(node), *std::move(network), on_node));
}

}  // namespace minimpi::net
