// One operation in flight at its origin: its RDMA pieces still to post and
// in flight, or its messages' replies still to come. Private to mpi/rma.
#ifndef MINIMPI_MPI_RMA_OPERATIONS_H_
#define MINIMPI_MPI_RMA_OPERATIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "mpi/datatype/layout.h"
#include "mpi/datatype/pack.h"
#include "mpi/rma/one_sided.h"
#include "net/transport.h"

namespace minimpi::rma {

struct Operation {
  enum class Kind : uint8_t { kPut, kGet, kMessages };
  Kind kind = Kind::kPut;
  Window* window = nullptr;
  int target = 0;  // rank in the window's group
  vci::Request* request = nullptr;

  // kPut, kGet: the two sides' segments, walked in packed order, and the
  // origin buffer's registration.
  std::optional<datatype::SegmentCursor> local;
  std::optional<datatype::SegmentCursor> remote;
  net::MemoryRegion local_region;
  bool local_registered = false;
  // The layouts stay alive while the operation runs, whatever the program
  // frees meanwhile.
  datatype::LayoutRef local_layout;
  datatype::LayoutRef remote_layout;
  datatype::LayoutRef result_layout;

  // kMessages: the origin's data, packed (the messages point into it until
  // they leave), and where replies' data goes.
  std::vector<std::byte> packed;
  void* result = nullptr;
  int64_t result_count = 0;

  int in_flight = 0;       // pieces posted or messages sent, not answered
  bool all_posted = false;
  bool queued = false;     // in its VCI's VciState::refused, for progress
};

}  // namespace minimpi::rma

#endif  // MINIMPI_MPI_RMA_OPERATIONS_H_
