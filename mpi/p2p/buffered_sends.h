// Buffered sends (MPI_Bsend, MPI_Ibsend, MPI_Bsend_init's starts): the
// message is packed into the buffer the program attached (MPI_Buffer_attach)
// at the call, which then returns, and is sent from there by a
// BufferedMessage, a small schedule that owns the inner send. When that send
// completes, progress gives its space back, so any thread's progress
// reclaims the buffer: nobody waits for a buffered message.
//
// One BufferedSends serves the process (MPI_Buffer_attach); MPI-4.1 adds
// one per communicator (MPI_Comm_attach_buffer) and per session, each its
// own object (section 3.6.1). With
// MPI_BUFFER_AUTOMATIC the library finds the memory itself: each message
// gets its own heap block and no send ever lacks room.
//
// Detaching (and flushing, MPI-4.1's MPI_Buffer_flush) waits, by making
// progress, until the messages buffered before the call have left; the
// nonblocking flush returns a request that completes then. Messages count in
// the order they were buffered (a sequence number each); a flush waits for
// every number below the one current at its call.
//
// Threads: one mutex guards the buffer, the set of messages in flight and
// the flush waiters. It is never held while a VCI lock is taken; a message
// finishing takes it while its VCI's lock is held (VCI lock, then this one).
//
// Owned by: mpi/p2p. Called by: the buffered-send bindings and MPI_Finalize
// (which flushes, so no buffered message is lost).
#ifndef MINIMPI_MPI_P2P_BUFFERED_SENDS_H_
#define MINIMPI_MPI_P2P_BUFFERED_SENDS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "mpi/p2p/bsend_buffer.h"
#include "mpi/p2p/point_to_point.h"

namespace minimpi::p2p {

// Always owned by a shared_ptr: a message in flight holds one, so a
// communicator freed while its buffered messages leave takes nothing from
// under them.
class BufferedSends : public std::enable_shared_from_this<BufferedSends> {
 public:
  BufferedSends() = default;
  BufferedSends(const BufferedSends&) = delete;
  BufferedSends& operator=(const BufferedSends&) = delete;

  // MPI_Buffer_attach. False when a buffer is attached already.
  bool Attach(std::byte* base, size_t size);
  bool AttachAutomatic();

  // MPI_Buffer_detach: waits until every buffered message has left, then
  // detaches. Returns the buffer (automatic: *automatic set, base null),
  // or false when none is attached. Buffered sends started meanwhile find no
  // buffer.
  struct Detached {
    std::byte* base = nullptr;
    size_t size = 0;
    bool automatic = false;
  };
  std::optional<Detached> Detach(PointToPoint& p2p);

  // Packs `send`'s data (contiguous or a layout) into the buffer and starts
  // sending it; returns at once. kNoBuffer: none attached (or it is being
  // detached); kNoRoom: not enough free space, even after one round of
  // progress reclaimed what had finished.
  enum class SendResult { kSent, kNoBuffer, kNoRoom };
  SendResult Send(PointToPoint& p2p, const vci::SendArguments& send);

  // MPI_Buffer_flush: waits until the messages buffered before the call
  // have left. MPI_Buffer_iflush: a request (on `vci`) that completes then.
  void Flush(PointToPoint& p2p);
  vci::Request* StartFlush(PointToPoint& p2p, int vci);

  // Messages in flight (tests, MPI_Finalize).
  size_t pending() const;

 private:
  class Message;
  class FlushRequest;

  // A message left: its space goes back, and flushes it was the last one
  // for complete.
  void Finished(PointToPoint& p2p, std::byte* data, bool on_heap,
                uint64_t sequence);
  // Whether every message numbered below `sequence` has left. Locked.
  bool DoneBelowLocked(uint64_t sequence) const;

  mutable std::mutex mutex_;
  std::unique_ptr<BsendBuffer> buffer_;  // guarded by mutex_
  bool automatic_ = false;               // guarded by mutex_
  bool detaching_ = false;               // guarded by mutex_
  uint64_t next_sequence_ = 0;           // guarded by mutex_
  std::set<uint64_t> in_flight_;         // guarded by mutex_
  std::vector<FlushRequest*> flushes_;   // guarded by mutex_
};

// The process's buffered sends (MPI_Buffer_attach's buffer).
BufferedSends& ProcessBufferedSends();

}  // namespace minimpi::p2p

#endif  // MINIMPI_MPI_P2P_BUFFERED_SENDS_H_
