// The TCP transport: the whole transport interface over nonblocking sockets,
// for ranks on other nodes (and every pair when MINIMPI_TRANSPORT=tcp).
//
// Owned by: net/tcp. Called by: net/transport.cc (CreateTransport).
#ifndef MINIMPI_NET_TCP_TCP_TRANSPORT_H_
#define MINIMPI_NET_TCP_TCP_TRANSPORT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "net/transport.h"
#include "runtime/bootstrap.h"
#include "runtime/settings.h"

namespace minimpi::net::tcp {

// Collective over every rank of the job (one Put/Commit/Fence): the
// transport reaches every rank, itself included.
absl::StatusOr<std::unique_ptr<Transport>> CreateTcpTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings);

}  // namespace minimpi::net::tcp

#endif  // MINIMPI_NET_TCP_TCP_TRANSPORT_H_
