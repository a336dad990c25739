// MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0): one request for a send
// and a receive. SendReceive is a small schedule that owns the two inner
// requests, as a collective's schedule owns its steps: started by
// PointToPoint::StartSchedule, it posts the receive and then the send in
// its first Advance (with the VCI's lock held, never waiting), is advanced
// again as either completes, and completes its own request, with the
// receive's status, once both have. For MPI_Isendrecv_replace it also owns
// the packed copy of the outgoing data, so the receive can land in the
// program's buffer while the send still reads the copy.
//
// Owned by: mpi/p2p. Called by: the point-to-point bindings.
#ifndef MINIMPI_MPI_P2P_SEND_RECEIVE_H_
#define MINIMPI_MPI_P2P_SEND_RECEIVE_H_

#include <cstddef>
#include <memory>
#include <optional>

#include "mpi/p2p/point_to_point.h"

namespace minimpi::p2p {

class SendReceive : public vci::Progressable {
 public:
  // An absent half is a send to or receive from MPI_PROC_NULL: nothing to
  // post; the request then reports `no_receive_status` if the receive is the
  // absent one. `staging` holds the data `send` points into, if it is a
  // copy. Both halves must use one VCI: the one the schedule starts on.
  SendReceive(PointToPoint& p2p, std::optional<vci::SendArguments> send,
              std::optional<vci::ReceiveArguments> receive,
              const vci::Status& no_receive_status,
              std::unique_ptr<std::byte[]> staging);

  void Advance(int vci) override;

 private:
  PointToPoint& p2p_;
  const std::optional<vci::SendArguments> send_;
  const std::optional<vci::ReceiveArguments> receive_;
  const vci::Status no_receive_status_;
  const std::unique_ptr<std::byte[]> staging_;
  bool posted_ = false;
  vci::Request* send_request_ = nullptr;
  vci::Request* receive_request_ = nullptr;
};

}  // namespace minimpi::p2p

#endif  // MINIMPI_MPI_P2P_SEND_RECEIVE_H_
