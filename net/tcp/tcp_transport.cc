#include "net/tcp/tcp_transport.h"

#include "absl/status/status.h"

namespace minimpi::net::tcp {

absl::StatusOr<std::unique_ptr<Transport>> CreateTcpTransport(
    runtime::Bootstrap&, const runtime::Settings&) {
  return absl::UnimplementedError("net/tcp: not implemented yet");
}

}  // namespace minimpi::net::tcp
