// The operations: puts and gets as RDMA pieces cut along both sides'
// datatypes, accumulates and compare-and-swap as messages the target
// applies, and their completion at the origin.
#include "mpi/rma/operations.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "mpi/datatype/predefined.h"
#include "mpi/rma/protocol.h"

namespace minimpi::rma {
namespace {

// Pieces per RDMA post and bytes per piece: one post never holds more.
constexpr int kMaxPieces = 64;
constexpr int64_t kMaxPieceBytes = int64_t{1} << 30;

// Whether [offset, offset + length) is memory the window exposes: inside
// it, or for a dynamic window (whose base is address 0) inside one
// attached piece.
bool Exposes(const Window& window, uint64_t offset, uint64_t length) {
  if (window.flavor != Flavor::kDynamic) {
    return offset <= window.length && length <= window.length - offset;
  }
  for (const auto& [start, size] : window.attached) {
    if (offset >= start && offset - start <= size &&
        length <= size - (offset - start)) {
      return true;
    }
  }
  return false;
}

// Whole elements of the predefined type `basic` per piece of an
// accumulate: at most `room` bytes, at least one element.
int64_t ElementChunk(uint32_t basic, int64_t room) {
  const datatype::PredefinedType* type = datatype::FindPredefined(
      reinterpret_cast<MPI_Datatype>(static_cast<uintptr_t>(basic)));
  const int64_t element =
      type != nullptr ? std::max<int64_t>(1, type->size) : 1;
  return std::max<int64_t>(element, room / element * element);
}

// Where member `rank`'s window starts in this process: our own part, or a
// member's mapped here; null otherwise (and for our own part of a window
// with no memory, or a dynamic window, whose base is address 0).
std::byte* Reachable(const Window& window, int rank) {
  if (rank == window.rank) return static_cast<std::byte*>(window.base);
  return window.direct.empty() ? nullptr : window.direct[rank];
}

// A predefined handle as the 32-bit word the accumulate protocol carries
// (protocol.h) and ApplyOpFunction reads.
uint32_t HandleWord(const void* handle) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(handle));
}

vci::VciLock* AtomicityLock(const Window& window, int rank) {
  return window.atomicity.empty() ? nullptr : window.atomicity[rank];
}

void MarkComplete(vci::Request* request) {
  if (request != nullptr) {
    request->state.store(vci::RequestState::kComplete,
                         std::memory_order_release);
  }
}

}  // namespace

vci::Request* OneSided::NewRequest(Window& window) {
  std::lock_guard lock(vcis_.mutex(window.vci));
  vci::Request* request = vcis_.requests(window.vci).Allocate();
  request->kind = vci::RequestKind::kOneSided;
  request->vci = window.vci;
  request->status = vci::Status{};
  request->state.store(vci::RequestState::kActive, std::memory_order_release);
  return request;
}

// A dynamic window's target alone knows what it has attached, and may
// detach it at any moment: its puts and gets travel as accumulates of
// bytes (MPI_REPLACE, MPI_NO_OP), which the target checks against its
// attached memory when it applies them, so no origin ever needs a key for
// memory that may be gone.
void OneSided::Put(Window& window, const Buffer& origin,
                   const TargetSpan& target, vci::Request* request) {
  if (window.flavor == Flavor::kDynamic) {
    Accumulate(window, origin, nullptr, target, HandleWord(MPI_REPLACE),
               HandleWord(MPI_BYTE), request);
    return;
  }
  Transfer(window, /*read=*/false, origin, target, request);
}

void OneSided::Get(Window& window, const Buffer& result,
                   const TargetSpan& target, vci::Request* request) {
  if (window.flavor == Flavor::kDynamic) {
    Accumulate(window, {nullptr, 0, target.layout}, &result, target,
               HandleWord(MPI_NO_OP), HandleWord(MPI_BYTE), request);
    return;
  }
  Transfer(window, /*read=*/true, result, target, request);
}

void OneSided::Transfer(Window& window, bool read, const Buffer& origin,
                        const TargetSpan& target, vci::Request* request) {
  std::byte* mapped = Reachable(window, target.rank);
  if (mapped != nullptr || target.rank == window.rank) {
    // Our own part of the window (see AccumulateInPlace for why), or a
    // member's mapped here: a copy by this thread, complete when the call
    // returns.
    std::byte* memory =
        mapped + target.disp * window.targets[target.rank].disp_unit;
    const int64_t bytes = datatype::PackedSize(target.count, target.layout);
    if (origin.layout->IsContiguous(origin.count) &&
        target.layout->IsContiguous(target.count)) {
      // The common case (OSU's, halo exchanges of contiguous rows): one
      // move, none of the layout walk's set-up. memmove: a put from the
      // window to itself may overlap.
      std::byte* here = static_cast<std::byte*>(
                            const_cast<void*>(origin.address)) +
                        origin.layout->true_lb();
      std::byte* there = memory + target.layout->true_lb();
      if (bytes > 0) {
        if (read) {
          std::memmove(here, there, static_cast<size_t>(bytes));
        } else {
          std::memmove(there, here, static_cast<size_t>(bytes));
        }
      }
    } else if (read) {
      datatype::TypedCopy(memory, target.count, target.layout,
                          const_cast<void*>(origin.address), origin.count,
                          origin.layout, bytes);
    } else {
      datatype::TypedCopy(origin.address, origin.count, origin.layout, memory,
                          target.count, target.layout, bytes);
    }
    MarkComplete(request);
    return;
  }
  auto* op = new Operation;
  op->kind = read ? Operation::Kind::kGet : Operation::Kind::kPut;
  op->window = &window;
  op->target = target.rank;
  op->request = request;
  op->local_layout = datatype::LayoutRef::Share(origin.layout);
  op->remote_layout = datatype::LayoutRef::Share(target.layout);
  const TargetInfo& info = window.targets[target.rank];
  op->local.emplace(origin.address, origin.count, origin.layout);
  op->remote.emplace(
      reinterpret_cast<const void*>(info.base + target.disp * info.disp_unit),
      target.count, target.layout);
  if (origin.count > 0 && origin.layout->size() > 0) {
    const auto [low, high] = origin.layout->TouchedBytes(origin.count);
    absl::StatusOr<net::MemoryRegion> region = transport_.RegisterMemory(
        static_cast<std::byte*>(const_cast<void*>(origin.address)) + low,
        size_t(high - low));
    if (!region.ok()) {
      std::fprintf(stderr, "minimpi: one-sided: cannot register memory: %s\n",
                   std::string(region.status().message()).c_str());
      std::abort();
    }
    op->local_region = *region;
    op->local_registered = true;
  }
  std::lock_guard lock(vcis_.mutex(window.vci));
  window.pending[target.rank].fetch_add(1, std::memory_order_relaxed);
  window.pending_total.fetch_add(1, std::memory_order_relaxed);
  PostPiecesLocked(*op);
}

void OneSided::PostPiecesLocked(Operation& op) {
  Window& window = *op.window;
  const net::PeerVci peer{window.world_ranks[op.target],
                          window.vcis[op.target]};
  const uint32_t remote_key =
      static_cast<uint32_t>(window.targets[op.target].remote_key);
  const uint64_t context = vci::TagContext(vci::Traffic::kOneSided, &op);
  const int max_pieces = std::min(kMaxPieces, transport_.max_io_segments());
  datatype::Segment local[kMaxPieces];
  datatype::Segment remote[kMaxPieces];
  net::IoSegment local_io[kMaxPieces];
  net::IoSegment remote_io[kMaxPieces];
  while (!op.remote->done() && !op.local->done()) {
    const int64_t local_at = op.local->position();
    const int64_t remote_at = op.remote->position();
    net::PostResult result;
    if (op.kind == Operation::Kind::kGet) {
      const datatype::SegmentPairing pairing =
          datatype::PairSegments(*op.local, *op.remote, local, remote,
                                 max_pieces, kMaxPieceBytes);
      if (pairing.bytes == 0) break;
      for (int i = 0; i < pairing.local_segments; ++i) {
        local_io[i] = {reinterpret_cast<uint64_t>(local[i].address),
                       static_cast<size_t>(local[i].length)};
      }
      for (int i = 0; i < pairing.remote_segments; ++i) {
        remote_io[i] = {reinterpret_cast<uint64_t>(remote[i].address),
                        static_cast<size_t>(remote[i].length)};
      }
      result = transport_.RdmaReadv(
          window.vci, peer, local_io, pairing.local_segments, op.local_region,
          remote_io, pairing.remote_segments, remote_key, context);
    } else {
      // A write lands in one contiguous stretch of the target: one remote
      // segment, and the origin's pieces that fill it.
      if (op.remote->Fill(remote, 1, kMaxPieceBytes) == 0) break;
      const int n = op.local->Fill(local, max_pieces, remote[0].length);
      int64_t covered = 0;
      for (int i = 0; i < n; ++i) {
        local_io[i] = {reinterpret_cast<uint64_t>(local[i].address),
                       static_cast<size_t>(local[i].length)};
        covered += local[i].length;
      }
      if (covered == 0) break;
      if (covered < remote[0].length) op.remote->Seek(remote_at + covered);
      result = transport_.RdmaWritev(
          window.vci, peer, local_io, n, op.local_region,
          {reinterpret_cast<uint64_t>(remote[0].address), remote_key},
          nullptr, context);
    }
    if (result == net::PostResult::kRetry) {
      op.local->Seek(local_at);
      op.remote->Seek(remote_at);
      if (!op.queued) {
        op.queued = true;
        vci_states_[window.vci].refused.push_back(&op);
      }
      return;
    }
    ++op.in_flight;
  }
  op.all_posted = true;
  if (op.in_flight == 0) FinishLocked(op);
}

bool OneSided::ProgressLocked(int vci) {
  std::vector<Operation*>& refused = vci_states_[vci].refused;
  if (refused.empty()) return false;
  std::vector<Operation*> retry;
  retry.swap(refused);
  for (Operation* op : retry) {
    op->queued = false;
    PostPiecesLocked(*op);
  }
  return true;
}

void OneSided::OnLocalDoneLocked(int /*vci*/, uint64_t context) {
  OnePieceDoneLocked(*static_cast<Operation*>(vci::UntagContext(context)));
}

void OneSided::OnePieceDoneLocked(Operation& op) {
  --op.in_flight;
  if (op.all_posted && op.in_flight == 0) FinishLocked(op);
}

void OneSided::FinishLocked(Operation& op) {
  Window& window = *op.window;
  if (op.local_registered) transport_.DeregisterMemory(op.local_region);
  if (vci::Request* request = op.request) {
    const vci::RequestState previous = request->state.exchange(
        vci::RequestState::kComplete, std::memory_order_acq_rel);
    if (previous == vci::RequestState::kActiveFreed) {
      request->pool->Release(request);
    }
  }
  window.pending[op.target].fetch_sub(1, std::memory_order_release);
  window.pending_total.fetch_sub(1, std::memory_order_release);
  const int vci = window.vci;
  delete &op;
  vcis_.WakeSleepers(vci);
}

void OneSided::Accumulate(Window& window, const Buffer& origin,
                          const Buffer* result, const TargetSpan& target,
                          uint32_t op_handle, uint32_t basic,
                          vci::Request* request) {
  if (std::byte* memory = Reachable(window, target.rank);
      memory != nullptr || target.rank == window.rank) {
    AccumulateInPlace(window, memory, origin, result, target, op_handle,
                      basic);
    MarkComplete(request);
    return;
  }
  auto* op = new Operation;
  op->kind = Operation::Kind::kMessages;
  op->window = &window;
  op->target = target.rank;
  op->request = request;
  const int64_t bytes = datatype::PackedSize(target.count, target.layout);
  if (origin.count > 0) {
    op->packed.resize(bytes);
    datatype::Pack(origin.address, origin.count, origin.layout, 0,
                   op->packed.data(), bytes);
  }
  if (result != nullptr) {
    op->result = const_cast<void*>(result->address);
    op->result_count = result->count;
    op->result_layout = datatype::LayoutRef::Share(result->layout);
  }
  const TargetInfo& info = window.targets[target.rank];
  datatype::SegmentCursor remote(
      reinterpret_cast<const void*>(info.base + target.disp * info.disp_unit),
      target.count, target.layout);
  // Each message carries whole elements, as much as one message holds.
  const int64_t chunk = ElementChunk(
      basic, static_cast<int64_t>(transport_.max_message_size()) -
                 static_cast<int64_t>(sizeof(Header)));

  std::lock_guard lock(vcis_.mutex(window.vci));
  window.pending[target.rank].fetch_add(1, std::memory_order_relaxed);
  window.pending_total.fetch_add(1, std::memory_order_relaxed);
  Header header;
  header.type = MessageType::kAccumulate;
  header.flags = result != nullptr ? kWantsResult : 0;
  header.window = info.window;
  header.from_rank = window.rank;
  header.op = op_handle;
  header.basic = basic;
  header.cookie = reinterpret_cast<uint64_t>(op);
  datatype::Segment piece;
  while (!remote.done()) {
    const int64_t at = remote.position();
    if (remote.Fill(&piece, 1, chunk) == 0) break;
    header.offset = reinterpret_cast<uint64_t>(piece.address) - info.base;
    header.length = static_cast<uint64_t>(piece.length);
    header.result_offset = static_cast<uint64_t>(at);
    ++op->in_flight;
    SendLocked(window, target.rank, &header, sizeof(header),
               op->packed.empty() ? nullptr : op->packed.data() + at,
               op->packed.empty() ? 0 : static_cast<size_t>(piece.length));
  }
  op->all_posted = true;
  if (op->in_flight == 0) FinishLocked(*op);
}

void OneSided::CompareAndSwap(Window& window, const void* origin,
                              const void* compare, void* result,
                              int64_t element_size, uint32_t basic,
                              const TargetSpan& target) {
  if (std::byte* memory = Reachable(window, target.rank);
      memory != nullptr || target.rank == window.rank) {
    // Done here, as AccumulateInPlace says.
    const bool here = target.rank == window.rank;
    const uint64_t offset = static_cast<uint64_t>(
        target.disp * window.targets[target.rank].disp_unit);
    std::lock_guard atomic(AccumulateLock(window, target.rank));
    if (here &&
        !Exposes(window, offset, static_cast<uint64_t>(element_size))) {
      window.refused.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    std::byte* place = memory + offset;
    std::byte old[64];  // one element of a predefined type
    std::memcpy(old, place, element_size);
    if (std::memcmp(old, compare, element_size) == 0) {
      std::memcpy(place, origin, element_size);
    }
    std::memcpy(result, old, element_size);
    return;
  }
  auto* op = new Operation;
  op->kind = Operation::Kind::kMessages;
  op->window = &window;
  op->target = target.rank;
  op->packed.resize(2 * element_size);
  std::memcpy(op->packed.data(), compare, element_size);
  std::memcpy(op->packed.data() + element_size, origin, element_size);
  op->result = result;
  op->result_count = element_size;  // bytes; no layout: contiguous
  const TargetInfo& info = window.targets[target.rank];
  std::lock_guard lock(vcis_.mutex(window.vci));
  window.pending[target.rank].fetch_add(1, std::memory_order_relaxed);
  window.pending_total.fetch_add(1, std::memory_order_relaxed);
  Header header;
  header.type = MessageType::kCompareSwap;
  header.flags = kWantsResult;
  header.window = info.window;
  header.from_rank = window.rank;
  header.basic = basic;
  header.offset = static_cast<uint64_t>(target.disp * info.disp_unit);
  header.length = static_cast<uint64_t>(element_size);
  header.cookie = reinterpret_cast<uint64_t>(op);
  op->in_flight = 1;
  op->all_posted = true;
  SendLocked(window, target.rank, &header, sizeof(header), op->packed.data(),
             op->packed.size());
}


// What makes an accumulate applied in place atomic per element against
// those the target's progress applies: the target's atomicity lock where
// its memory lies in a shared segment (that progress takes it too), else,
// for our own part of the window, our VCI's lock, under which our progress
// applies others' accumulates. Memory of another member is reachable only
// through a shared segment, so one of the two always applies.
vci::VciLock& OneSided::AccumulateLock(const Window& window, int rank) {
  if (vci::VciLock* lock = AtomicityLock(window, rank)) return *lock;
  return vcis_.mutex(window.vci);
}

// What ApplyLocked does for another member's message, done by the caller
// in the call on memory it reaches: its own part of the window, or a
// member's mapped here. The origin and result buffers are free again when
// the call returns (for its own part MPICH completes such operations in
// the call too, and programs rely on it: mpi4py's tests free a
// compare-and-swap's result buffer before the closing fence), and no
// message travels. Atomic per element against the accumulates the
// target's progress applies (AccumulateLock).
void OneSided::AccumulateInPlace(Window& window, std::byte* memory,
                                 const Buffer& origin, const Buffer* result,
                                 const TargetSpan& target, uint32_t op_handle,
                                 uint32_t basic) {
  const bool here = target.rank == window.rank;
  const int64_t bytes = datatype::PackedSize(target.count, target.layout);
  // The origin's data in packed order: the buffer itself when contiguous
  // (a large accumulate then costs no allocation, no page faults), else a
  // packed copy.
  const std::byte* source = nullptr;
  std::vector<std::byte> packed;
  if (origin.count > 0 && origin.layout->IsContiguous(origin.count)) {
    source = static_cast<const std::byte*>(origin.address) +
             origin.layout->true_lb();
  } else if (origin.count > 0) {
    packed.resize(bytes);
    datatype::Pack(origin.address, origin.count, origin.layout, 0,
                   packed.data(), bytes);
    source = packed.data();
  }
  const TargetInfo& info = window.targets[target.rank];
  datatype::SegmentCursor places(
      reinterpret_cast<const void*>(info.base + target.disp * info.disp_unit),
      target.count, target.layout);
  const int64_t chunk = ElementChunk(basic, kMaxPieceBytes);
  // The old data of a fetching call's piece: on the stack for a few
  // elements (a fetch-and-op, a small get-accumulate), so the small call
  // allocates nothing.
  std::byte small[64];
  std::vector<std::byte> large;
  std::lock_guard atomic(AccumulateLock(window, target.rank));
  datatype::Segment piece;
  while (!places.done()) {
    const int64_t at = places.position();
    if (places.Fill(&piece, 1, chunk) == 0) break;
    const uint64_t offset =
        reinterpret_cast<uint64_t>(piece.address) - info.base;
    const uint64_t length = static_cast<uint64_t>(piece.length);
    // Another member's range was checked by the bindings; only our own
    // dynamic window's attached memory is known here alone.
    if (here && !Exposes(window, offset, length)) {
      window.refused.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    std::byte* place = memory + offset;
    std::byte* old = nullptr;
    if (result != nullptr) {
      if (length > sizeof(small)) large.resize(length);
      old = length > sizeof(small) ? large.data() : small;
      std::memcpy(old, place, length);
    }
    if (source != nullptr &&
        !apply_op_(op_handle, basic, source + at, place,
                   static_cast<int64_t>(length))) {
      std::fprintf(stderr,
                   "minimpi: accumulate with an op and type that do not go "
                   "together: ignored\n");
    }
    if (result != nullptr) {
      datatype::Unpack(old, static_cast<int64_t>(length),
                       const_cast<void*>(result->address), result->count,
                       result->layout, at);
    }
  }
}

void OneSided::ApplyLocked(Window& window, int vci, net::PeerVci peer,
                           const Header& header, const std::byte* payload,
                           size_t payload_length) {
  Header reply;
  reply.type = MessageType::kReply;
  reply.window = header.window;
  reply.from_rank = window.rank;
  reply.cookie = header.cookie;
  reply.result_offset = header.result_offset;
  if (!Exposes(window, header.offset, header.length)) {
    // The origin checked what it could; only a dynamic window's attached
    // memory is known here alone. The origin's next synchronization raises
    // MPI_ERR_RMA_RANGE.
    reply.flags = kRefused;
    vci::Outbox::Message message;
    message.header = &reply;
    message.header_length = sizeof(reply);
    vcis_.outbox(vci).Send(transport_, vci, peer, message);
    return;
  }
  std::byte* target = static_cast<std::byte*>(window.base) + header.offset;
  // Origins on this node apply theirs in place (AccumulateInPlace).
  std::unique_lock<vci::VciLock> atomic;
  if (vci::VciLock* lock = AtomicityLock(window, window.rank)) {
    atomic = std::unique_lock<vci::VciLock>(*lock);
  }
  // The old data, for a fetching call: on the stack for a few elements (a
  // fetch-and-op, a compare-and-swap), copied to the heap only if the
  // reply has to wait in the outbox.
  std::byte small[64];
  std::unique_ptr<std::byte[]> large;
  std::byte* old = nullptr;
  if (header.flags & kWantsResult) {
    if (header.length > sizeof(small)) {
      large.reset(new std::byte[header.length]);
      old = large.get();
    } else {
      old = small;
    }
    std::memcpy(old, target, header.length);
  }
  if (header.type == MessageType::kCompareSwap) {
    if (payload_length == 2 * header.length &&
        std::memcmp(target, payload, header.length) == 0) {
      std::memcpy(target, payload + header.length, header.length);
    }
  } else if (payload_length > 0) {
    if (!apply_op_(header.op, header.basic, payload, target,
                   static_cast<int64_t>(payload_length))) {
      std::fprintf(stderr,
                   "minimpi: accumulate from rank %d with an op and type "
                   "that do not go together: ignored\n",
                   peer.rank);
    }
  }
  if (atomic.owns_lock()) atomic.unlock();
  reply.length = old != nullptr ? header.length : 0;
  vci::Outbox::Message message;
  message.header = &reply;
  message.header_length = sizeof(reply);
  message.payload = old;
  message.payload_length = old != nullptr ? header.length : 0;
  vci::Outbox& outbox = vcis_.outbox(vci);
  if (outbox.TrySend(transport_, vci, peer, message)) return;
  // Waiting: the payload must outlive this call; the outbox tells us
  // (OnSentLocked) when it may go.
  if (old != nullptr) {
    std::byte* kept =
        large != nullptr ? large.release() : new std::byte[header.length];
    if (kept != old) std::memcpy(kept, old, header.length);
    message.payload = kept;
    message.sender = this;
    message.word = reinterpret_cast<uint64_t>(kept);
  }
  outbox.Enqueue(peer, message);
}

void OneSided::OnSentLocked(int /*vci*/, uint64_t word, uint32_t /*flags*/) {
  delete[] reinterpret_cast<std::byte*>(word);
}

void OneSided::OnReplyLocked(Operation& op, const Header& header,
                             const std::byte* data, size_t length) {
  if (header.flags & kRefused) {
    op.window->refused.fetch_add(1, std::memory_order_relaxed);
  }
  if (op.result != nullptr && length > 0) {
    if (op.result_layout) {
      datatype::Unpack(data, static_cast<int64_t>(length), op.result,
                       op.result_count, op.result_layout.get(),
                       static_cast<int64_t>(header.result_offset));
    } else {
      std::memcpy(op.result, data,
                  std::min<size_t>(length, static_cast<size_t>(op.result_count)));
    }
  }
  OnePieceDoneLocked(op);
}

}  // namespace minimpi::rma
