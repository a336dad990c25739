// The InfiniBand transport: RC queue pairs per (vci, peer), inline small
// sends, connection data exchanged through the bootstrap. For now only its
// creation exists; it reports that the transport is not implemented yet so
// that CreateTransport can say so clearly.
//
// Owned by: net/ib. Called by: net/transport.cc (CreateTransport).
#ifndef MINIMPI_NET_IB_IB_TRANSPORT_H_
#define MINIMPI_NET_IB_IB_TRANSPORT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "net/transport.h"
#include "runtime/bootstrap.h"
#include "runtime/settings.h"

namespace minimpi::net::ib {

// Collective. NotFound when this node has no RDMA device; Unimplemented
// otherwise until the RC queue-pair transport lands.
absl::StatusOr<std::unique_ptr<Transport>> CreateIbTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings);

}  // namespace minimpi::net::ib

#endif  // MINIMPI_NET_IB_IB_TRANSPORT_H_
