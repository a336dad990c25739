#include "net/routed_transport.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace minimpi::net {

RoutedTransport::RoutedTransport(std::unique_ptr<Transport> node,
                                 std::unique_ptr<Transport> network,
                                 const std::vector<bool>& on_node)
    : node_(std::move(node)),
      network_(std::move(network)),
      name_(absl::StrCat(node_->name(), "+", network_->name())),
      max_message_size_(
          std::min(node_->max_message_size(), network_->max_message_size())),
      max_io_segments_(
          std::min(node_->max_io_segments(), network_->max_io_segments())),
      has_doorbell_(node_->has_doorbell() && network_->has_doorbell()),
      network_first_(new uint8_t[node_->num_vcis()]()) {
  network_->AlsoRingOnFirstContact(node_.get());
  route_.reserve(on_node.size());
  for (bool local : on_node) {
    route_.push_back(local ? node_.get() : network_.get());
  }
}

int RoutedTransport::Poll(int vci, CompletionHandler& handler,
                          int max_completions) {
  Transport* first = node_.get();
  Transport* second = network_.get();
  if (network_first_[vci]) std::swap(first, second);
  network_first_[vci] ^= 1;
  int handled = 0;
  if (first->MayHaveWork(vci))
    handled = first->Poll(vci, handler, max_completions);
  if (handled < max_completions && second->MayHaveWork(vci)) {
    handled += second->Poll(vci, handler, max_completions - handled);
  }
  return handled;
}

bool RoutedTransport::DoorbellMayHaveWork(const Transport& transport,
                                          int vci) const {
  const int doorbell = node_->DoorbellOf(vci);
  for (int other = 0; other < node_->num_vcis(); ++other) {
    if (node_->DoorbellOf(other) == doorbell && transport.MayHaveWork(other)) {
      return true;
    }
  }
  return false;
}

uint64_t RoutedTransport::ArmDoorbell(int vci) {
  // Both doorbells are armed; the token carries both tokens, the network's
  // in the high half.
  const uint64_t network = network_->ArmDoorbell(vci);
  const uint64_t node = node_->ArmDoorbell(vci);
  return (network << 32) | (node & 0xffffffffu);
}

void RoutedTransport::SleepOnDoorbell(int vci, uint64_t token,
                                      int64_t timeout_ns) {
  const uint64_t node_token = token & 0xffffffffu;
  const uint64_t network_token = token >> 32;
  if (!DoorbellMayHaveWork(*network_, vci)) {
    node_->SleepOnDoorbell(vci, node_token, timeout_ns);
    return;
  }
  // Shared memory counts only when a node peer talks to this VCI: a VCI
  // used for itself alone (self messages) is rung from this process, and
  // RingDoorbell reaches the network's doorbell too.
  const bool node_traffic = DoorbellMayHaveWork(*node_, vci);
  network_->SleepOnDoorbell(
      vci, network_token,
      node_traffic ? std::min(timeout_ns, kMixedSleepSliceNs) : timeout_ns);
}

void RoutedTransport::RingDoorbell(int vci) {
  node_->RingDoorbell(vci);
  network_->RingDoorbell(vci);
}

}  // namespace minimpi::net
