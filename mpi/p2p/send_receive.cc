#include "mpi/p2p/send_receive.h"

#include <utility>

namespace minimpi::p2p {

using vci::ReceiveArguments;
using vci::SendArguments;
using vci::Status;

SendReceive::SendReceive(PointToPoint& p2p, std::optional<SendArguments> send,
                         std::optional<ReceiveArguments> receive,
                         const Status& no_receive_status,
                         std::unique_ptr<std::byte[]> staging)
    : p2p_(p2p),
      send_(std::move(send)),
      receive_(std::move(receive)),
      no_receive_status_(no_receive_status),
      staging_(std::move(staging)) {}

void SendReceive::Advance(int /*vci*/) {
  PointToPoint& p2p = p2p_;
  if (!posted_) {
    posted_ = true;
    // The receive first, so two ranks exchanging with each other never
    // wait on each other's rendezvous.
    if (receive_.has_value())
      receive_request_ = p2p.IrecvLocked(*receive_, this);
    if (send_.has_value()) send_request_ = p2p.IsendLocked(*send_, this);
  }
  const bool receive_done =
      receive_request_ == nullptr || PointToPoint::IsComplete(receive_request_);
  const bool send_done =
      send_request_ == nullptr || PointToPoint::IsComplete(send_request_);
  if (!receive_done || !send_done) {
    in_advance = false;
    return;
  }
  if (receive_request_ != nullptr) {
    request->status = receive_request_->status;
    // For the truncation message, which names the buffer's size.
    request->capacity = receive_request_->capacity;
    p2p.Retire(receive_request_);
  } else {
    request->status = no_receive_status_;
  }
  if (send_request_ != nullptr) p2p.Retire(send_request_);
  in_advance = false;
  p2p.CompleteCollectiveLocked(request);  // may delete this: return at once
}

}  // namespace minimpi::p2p
