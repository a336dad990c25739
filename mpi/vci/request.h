// Requests: the state of one operation on a VCI, of any kind (a send, a
// receive, a collective's schedule, a partitioned send or receive, a
// generalized request), from posting to the moment the user reads its
// status. MPI_Wait, MPI_Test and the handles treat every kind alike; what
// only one kind needs hangs off `extension` or lives in the fields of that
// kind. A request is also the posted-receive element the matching engine
// links (it derives from match::PostedReceive), so posting a receive
// allocates nothing beyond the request itself.
//
// Each VCI owns a pool of them (Vci::requests, vci_set.h). Allocation
// happens under the VCI's lock; release may happen from any thread (the one
// that waited), so releases go onto a lock-free stack that the allocator
// takes over whole when its own free list runs dry (taking the whole stack
// at once has no ABA problem).
//
// Owned by: mpi/vci. Filled and completed by the kinds of traffic (mpi/p2p,
// mpi/part, the collectives' schedules); read by the C bindings in mpi/
// (through handles).
#ifndef MINIMPI_MPI_VCI_REQUEST_H_
#define MINIMPI_MPI_VCI_REQUEST_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>

#include "mpi/datatype/layout.h"
#include "mpi/match/match_engine.h"
#include "net/transport.h"

namespace minimpi::vci {

enum class Error : int8_t {
  kNone = 0,
  kTruncated,  // the message was longer than the receive buffer
};

struct Status {
  int32_t source = match::kAnySource;  // the sender's rank in the communicator
  int32_t tag = match::kAnyTag;
  Error error = Error::kNone;
  bool cancelled = false;
  uint64_t bytes = 0;          // bytes delivered into the buffer
  uint64_t arrived_bytes = 0;  // bytes the sender sent (> bytes if truncated)
};

enum class RequestKind : uint8_t {
  kSend,
  kReceive,
  kCompleted,   // born complete (MPI_PROC_NULL operations)
  kCollective,  // completed by its schedule
  // Point-to-point work of several requests, completed by its schedule
  // like a collective: MPI_Isendrecv, a buffered message, a buffer flush.
  kCompound,
  // A generalized request (MPI_Grequest_start): the program completes it
  // (MPI_Grequest_complete); its callbacks live in `extension`.
  kGeneralized,
  // A partitioned send or receive (MPI_Psend_init/MPI_Precv_init): always
  // persistent; mpi/part owns it through `extension` and completes it.
  kPartitioned,
  // A request-based one-sided operation (MPI_Rput...): mpi/rma completes it.
  kOneSided,
};

// kBuffered marks a persistent MPI_Bsend_init request: each start copies
// the data into the attached buffer (BufferedSends) and completes at once,
// so p2p never posts it itself.
enum class SendMode : uint8_t { kStandard, kSynchronous, kReady, kBuffered };

// The data of a send or a receive is either `bytes` contiguous bytes at
// `buffer` (layout == nullptr), or `count` items of a non-contiguous
// datatype `layout` at `buffer`, whose packed form is `bytes` long. The
// bindings turn every contiguous case (a derived type included) into the
// first form, so the fast paths never look at a layout.
struct SendArguments {
  const void* buffer = nullptr;
  size_t bytes = 0;
  const datatype::Layout* layout = nullptr;
  int64_t count = 0;
  int destination_world_rank = 0;
  // The receiver's VCI: the communicator's own VCI index, or the peer
  // endpoint's VCI on an endpoints communicator.
  int destination_vci = 0;
  int32_t remote_context = 0;  // the receiver's matching context
  int32_t source_rank = 0;     // our rank in the communicator
  int32_t tag = 0;
  int vci = 0;
  SendMode mode = SendMode::kStandard;
  match::TrafficKind kind;  // collectives: which one, for the matching engine

  net::PeerVci destination() const {
    return {destination_world_rank, destination_vci};
  }
};

struct ReceiveArguments {
  void* buffer = nullptr;
  size_t capacity = 0;                       // packed bytes
  const datatype::Layout* layout = nullptr;  // as in SendArguments
  int64_t count = 0;
  int32_t context = 0;
  int32_t source = match::kAnySource;  // rank in the communicator, or any
  int32_t tag = match::kAnyTag;
  int vci = 0;
  match::TrafficKind kind;
};

enum class RequestState : uint8_t {
  kInactive,     // persistent, not started (or finished and waited on)
  kActive,       // in flight
  kComplete,     // finished; status valid
  kActiveFreed,  // in flight, and MPI_Request_free was called on it
  kFree,         // back in its pool: no operation (set by Release)
};

class RequestPool;
struct Request;
// A non-contiguous rendezvous read in flight: point-to-point's alone
// (defined in mpi/p2p/p2p_internal.h).
struct GatheredRead;

// Work that moves forward as requests it posted complete: the schedule of a
// collective. When such a request completes, the progress engine queues its
// parent on the VCI and calls Advance once it is outside the transport's
// poll, with the VCI's lock held. The work keeps what it posts through
// (mpi/p2p's PointToPoint) itself.
//
// The engine sets `in_advance` before calling Advance; while it is set,
// completions do not queue the schedule again, so Advance must check its own
// in-flight steps before it returns, and must clear `in_advance` itself
// before returning or completing its collective (after completing, the
// waiting thread may delete it). That way a schedule that finishes inside
// Advance is never left on the queue.
class Progressable {
 public:
  virtual ~Progressable() = default;
  virtual void Advance(int vci) = 0;

  bool queued_for_advance = false;  // guarded by the VCI lock
  bool in_advance = false;          // guarded by the VCI lock
  // The request this work completes (set by PointToPoint::StartCollective).
  Request* request = nullptr;
};

struct Request : match::PostedReceive {
  std::atomic<RequestState> state{RequestState::kInactive};
  RequestKind kind = RequestKind::kSend;
  bool persistent = false;
  int vci = 0;

  // Send side: what to send (kept whole so a persistent send restarts).
  SendArguments send;
  net::MemoryRegion send_region;  // registered for the rendezvous read
  uint64_t receiver_request = 0;  // split rendezvous: the peer's request
  // MPI_Cancel asked the receiver to withdraw the message (kCancelSend);
  // reset at each start. Guarded by the VCI lock.
  bool cancel_requested = false;

  // Receive side.
  void* receive_buffer = nullptr;
  size_t capacity = 0;  // packed bytes
  const datatype::Layout* receive_layout = nullptr;
  int64_t receive_count = 0;
  net::MemoryRegion receive_region;
  net::PeerVci rendezvous_peer;  // whose buffer we read, and its VCI
  uint64_t rendezvous_sender_request = 0;
  uint32_t rendezvous_remote_key = 0;  // of the sender's region
  // Rendezvous events still to come before the request completes (read or
  // write done, the peer's done). Guarded by the VCI lock.
  int pending_events = 0;
  // A rendezvous receive read in pieces: reads not done yet (the last
  // one done tells the sender).
  int reads_left = 0;
  // A non-contiguous rendezvous: on the sender, the description of its
  // memory layout sent with the request (or a packed copy of data too
  // irregular to describe); on the receiver, the gathered read in flight.
  // Both owned by the request until it completes. Guarded by the VCI lock.
  std::byte* rendezvous_staging = nullptr;
  // The sender's advertised data: the send buffer or the staging copy.
  const void* rendezvous_data = nullptr;
  struct GatheredRead* gathered_read = nullptr;
  // Keeps a derived datatype's layout alive while a nonblocking or
  // persistent operation may still use it (MPI lets a program free the
  // datatype meanwhile). Empty for contiguous and predefined data.
  datatype::LayoutRef layout_hold;

  Status status;
  // Opaque to p2p: the bindings keep the communicator's handle here, to
  // raise a completed request's error on its handler.
  uintptr_t owner = 0;
  // Opaque to p2p: what the bindings keep for a kGeneralized request.
  void* extension = nullptr;
  // A step of a collective: told when this request completes.
  Progressable* parent = nullptr;
  // A collective request owns its schedule; deleted when the request is.
  Progressable* schedule = nullptr;

  RequestPool* pool = nullptr;
  Request* next_free = nullptr;
  // Where the request lives in its pool, and how many times the slot has
  // been handed back: the bindings build the user's handle from both, so a
  // stale copy of a handle stops resolving once the request is released.
  uint32_t index = 0;
  std::atomic<uint32_t> generation{0};
};

// Whether `request` is in flight or finished and not yet collected: not an
// inactive persistent request (whose wait returns at once, with an empty
// status). A null request is not active.
inline bool IsActive(const Request* request) {
  return request != nullptr && request->state.load(std::memory_order_acquire) !=
                                   RequestState::kInactive;
}

// The VCI every active request of `requests` lives on, or -1 when they are
// on several (or none is active): a wait or test on one VCI progresses
// that VCI first (and an endpoint's VCI alone, VciSet::ProgressBeyond), one
// on several progresses every VCI.
int CommonVci(std::span<Request* const> requests);

class RequestPool {
 public:
  // Requests come in chunks of kChunk; a pool holds at most kMaxRequests at
  // once (the bindings give the index 22 bits of a handle).
  static constexpr uint32_t kChunkBits = 6;
  static constexpr uint32_t kChunk = 1u << kChunkBits;
  static constexpr uint32_t kMaxChunks = 1u << 16;
  static constexpr uint32_t kMaxRequests = kChunk * kMaxChunks;
  // Generations are compared modulo 2^24, the room a handle has for them.
  static constexpr uint32_t kGenerationMask = (1u << 24) - 1;

  RequestPool();
  RequestPool(const RequestPool&) = delete;
  RequestPool& operator=(const RequestPool&) = delete;
  ~RequestPool();

  // Caller holds the owning VCI's lock. Aborts when the pool is exhausted.
  // Inline: every nonblocking call allocates one. The request is as a new
  // one: Unlink reset it when it was released.
  Request* Allocate() {
    if (free_list_ == nullptr) [[unlikely]] {
      Refill();
    }
    Request* request = free_list_;
    free_list_ = request->next_free;
    request->next_free = nullptr;
    request->state.store(RequestState::kInactive, std::memory_order_relaxed);
    return request;
  }
  // Any thread, any time. Invalidates every handle of the request.
  void Release(Request* request) {
    Unlink(request);
    Return(request, request);
  }
  // Invalidates the request's handles without releasing it (MPI_Request_free
  // of a request still in flight, which is released when it completes).
  // Only one thread at a time changes a request's generation (the one that
  // frees or releases it; a free and the completion that then releases are
  // ordered by the request's state), so a plain increment suffices: readers
  // only compare it.
  static void Invalidate(Request* request) {
    request->generation.store(
        request->generation.load(std::memory_order_relaxed) + 1,
        std::memory_order_relaxed);
  }

  // Release in two halves, so that several requests of one pool go back
  // with one atomic operation (ReleaseBatch): Unlink invalidates the
  // request, drops what it holds and resets it to a new request's state
  // (but kFree); Return hands back a chain of unlinked requests, `first` to
  // `last` linked through next_free.
  //
  // The reset happens here rather than at Allocate because a request's
  // ~400 bytes of stores then leave the posting call's path: a sender
  // posting a window of messages into a ring its peer is polling waits for
  // each ring line to come back from the peer's core, and a store buffer
  // already full of the reset turned that wait into a stall (measured on
  // the 8-byte message rate). Release happens in a wait, after the
  // operation finished.
  static void Unlink(Request* request);
  void Return(Request* first, Request* last);

  // The request at `index` if its generation is `generation` (its handle is
  // still valid), else nullptr. Any thread, lock-free. Inline: every wait
  // and test translates each of its handles with it.
  Request* Lookup(uint32_t index, uint32_t generation) const {
    if (index >= kMaxRequests) return nullptr;
    Request* chunk =
        chunks_[index >> kChunkBits].load(std::memory_order_acquire);
    if (chunk == nullptr) return nullptr;
    Request* request = &chunk[index & (kChunk - 1)];
    if (((request->generation.load(std::memory_order_relaxed) ^ generation) &
         kGenerationMask) != 0) {
      return nullptr;
    }
    return request;
  }
  // The request in slot `index` whatever its generation and state (free
  // ones included), or nullptr for a slot never allocated: handle
  // conversions rebuild a handle from the slot's generation.
  Request* SlotAt(uint32_t index) const;

 private:
  // Fills the empty free list: from the requests released meanwhile, or
  // with a new chunk.
  void Refill();

  Request* free_list_ = nullptr;             // guarded by the VCI lock
  std::atomic<Request*> returned_{nullptr};  // lock-free stack
  uint32_t num_chunks_ = 0;                  // guarded by the VCI lock
  // kMaxChunks entries, zero-filled by calloc so that untouched pages cost
  // no memory; readers load them lock-free.
  std::atomic<Request*>* chunks_ = nullptr;
};

// Releases requests collected together (the requests of a Waitall) with
// one atomic operation per run of requests from the same pool, instead of
// one each. The requests' handles die at Add; they become reusable at
// Flush (or when the batch goes out of scope).
class ReleaseBatch {
 public:
  ReleaseBatch() = default;
  ReleaseBatch(const ReleaseBatch&) = delete;
  ReleaseBatch& operator=(const ReleaseBatch&) = delete;
  ~ReleaseBatch() { Flush(); }

  void Add(Request* request) {
    RequestPool::Unlink(request);
    if (request->pool != pool_) {
      Flush();
      pool_ = request->pool;
      last_ = request;
    }
    request->next_free = first_;
    first_ = request;
  }
  void Flush() {
    if (first_ == nullptr) return;
    pool_->Return(first_, last_);
    first_ = last_ = nullptr;
    pool_ = nullptr;
  }

 private:
  RequestPool* pool_ = nullptr;
  Request* first_ = nullptr;
  Request* last_ = nullptr;
};

}  // namespace minimpi::vci

#endif  // MINIMPI_MPI_VCI_REQUEST_H_
