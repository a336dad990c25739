// Probe for RDMA devices through libibverbs. Used to decide whether net/ib
// can run here (MINIMPI_TRANSPORT=auto) and by minimpi_info.
//
// Owned by: net/ib. Called by: net/transport.cc, net/ib, tools.
#ifndef MINIMPI_NET_IB_IB_DEVICES_H_
#define MINIMPI_NET_IB_IB_DEVICES_H_

#include <string>
#include <vector>

namespace minimpi::net::ib {

// Names of the RDMA devices libibverbs sees (e.g. "mlx5_0"), in its order;
// empty when there are none or no provider/driver is installed. Never fails.
std::vector<std::string> ListRdmaDevices();

}  // namespace minimpi::net::ib

#endif  // MINIMPI_NET_IB_IB_DEVICES_H_
