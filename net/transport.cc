// CreateTransport: picks, once at setup, the transport that carries each
// pair of ranks. Lives apart from the interface so that net/shm, net/tcp and
// net/ib can depend on transport.h without depending on each other.
#include "net/transport.h"

#include <cstdio>
#include <ranges>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "net/ib/ib_transport.h"
#include "net/routed_transport.h"
#include "net/shm/shm_transport.h"
#include "net/tcp/tcp_transport.h"
#include "runtime/dynamic_processes.h"

namespace minimpi::net {
namespace {

constexpr char kIbUsableKey[] = "minimpi.ib_usable";

absl::StatusOr<std::unique_ptr<Transport>> CreateShm(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  absl::StatusOr<std::unique_ptr<shm::ShmTransport>> transport =
      shm::ShmTransport::Create(bootstrap, settings);
  if (!transport.ok()) return transport.status();
  // Under a launcher that starts or connects other jobs, their processes
  // are reached through tcp, made when first needed (see the header).
  if (runtime::LauncherServesDynamicProcesses(bootstrap)) {
    (*transport)
        ->AllowOtherJobs(
            [&bootstrap,
             settings]() -> absl::StatusOr<std::unique_ptr<Transport>> {
              return tcp::CreateTcpTransportForOtherJobs(bootstrap, settings);
            });
  }
  return std::unique_ptr<Transport>(std::move(*transport));
}

// Whether net/ib can carry the traffic between nodes: every rank must be
// able to open a device, so the ranks agree through one exchange. Says why
// not under MINIMPI_VERBOSE.
absl::StatusOr<bool> EveryRankCanUseIb(runtime::Bootstrap& bootstrap,
                                       const runtime::Settings& settings) {
  std::string why;
  const bool usable = ib::IbUsable(settings, &why);
  absl::Status status = bootstrap.Put(kIbUsableKey, usable ? "1" : why);
  if (status.ok()) status = bootstrap.Commit();
  if (status.ok()) status = bootstrap.Fence();
  if (!status.ok()) return status;
  for (int rank = 0; rank < bootstrap.size(); ++rank) {
    absl::StatusOr<std::string> answer = bootstrap.Get(rank, kIbUsableKey);
    if (!answer.ok()) return answer.status();
    if (*answer == "1") continue;
    if (settings.verbose && bootstrap.rank() == 0) {
      std::fprintf(stderr,
                   "minimpi: net: RDMA between nodes is not available (rank "
                   "%d on %s: %s); using tcp\n",
                   rank, bootstrap.node_name(rank).c_str(), answer->c_str());
    }
    return false;
  }
  if (settings.verbose && bootstrap.rank() == 0) {
    std::fprintf(stderr, "minimpi: net: using ib between nodes\n");
  }
  return true;
}

// "shm": every rank on one node.
absl::StatusOr<std::unique_ptr<Transport>> CreateShmOnly(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  if (bootstrap.num_nodes() > 1) {
    const int local = static_cast<int>(bootstrap.local_ranks().size());
    return absl::FailedPreconditionError(absl::StrCat(
        "net: MINIMPI_TRANSPORT=shm, but only ", local, " of ",
        bootstrap.size(), " ranks run on this node (", bootstrap.hostname(),
        ", ", bootstrap.num_nodes(),
        " nodes in the job) and shared memory cannot reach the others; "
        "use MINIMPI_TRANSPORT=auto or tcp"));
  }
  return CreateShm(bootstrap, settings);
}

// "auto": each pair of ranks gets its own.
absl::StatusOr<std::unique_ptr<Transport>> CreateByPlace(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  if (bootstrap.num_nodes() <= 1) return CreateShm(bootstrap, settings);
  // Across nodes: shared memory inside this node, the network between:
  // RDMA when every rank can open a device, else TCP.
  absl::StatusOr<bool> use_ib = EveryRankCanUseIb(bootstrap, settings);
  if (!use_ib.ok()) return use_ib.status();
  absl::StatusOr<std::unique_ptr<Transport>> node =
      CreateShm(bootstrap, settings);
  if (!node.ok()) return node.status();
  absl::StatusOr<std::unique_ptr<Transport>> network =
      *use_ib ? ib::CreateIbTransport(bootstrap, settings)
              : tcp::CreateTcpTransport(bootstrap, settings);
  if (!network.ok()) return network.status();
  std::vector<bool> on_node(bootstrap.size(), false);
  for (int rank : bootstrap.local_ranks()) on_node[rank] = true;
  return std::unique_ptr<Transport>(
      new RoutedTransport(*std::move(node), *std::move(network), on_node));
}

constexpr TransportChoice kTransports[] = {
    {"auto", "shm inside a node, tcp or ib between nodes", CreateByPlace},
    {"shm", "ranks of one node only", CreateShmOnly},
    {"tcp", "every pair, even inside a node", tcp::CreateTcpTransport},
    {"ib", "every pair over RDMA", ib::CreateIbTransport},
};

}  // namespace

std::span<const TransportChoice> TransportChoices() { return kTransports; }

std::vector<std::string> TransportNames() {
  auto names = std::views::transform(kTransports, &TransportChoice::name);
  return {names.begin(), names.end()};
}

absl::StatusOr<std::unique_ptr<Transport>> CreateTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  // Every rank decides alike from the same node map and settings, so the
  // transports' collective setups (their fences) match across the job.
  for (const TransportChoice& choice : kTransports) {
    if (settings.transport == choice.name) {
      return choice.create(bootstrap, settings);
    }
  }
  std::vector<std::string> names = TransportNames();
  const std::string last = names.back();
  names.pop_back();
  return absl::InvalidArgumentError(absl::StrCat(
      "net: unknown transport '", settings.transport, "' (expected ",
      absl::StrJoin(names, ", "), " or ", last, ")"));
}

}  // namespace minimpi::net
