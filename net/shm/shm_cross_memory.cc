// net/shm's single copies: RDMA reads and writes between ranks of one
// node through Linux cross-memory attach (process_vm_readv/writev); the
// ring carries only what must be announced (a write with immediate, a pull
// request for the receiver to copy, a local completion).
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "net/shm/segment_layout.h"
#include "net/shm/shm_transport.h"

namespace minimpi::net::shm {
namespace {

// After a partial process_vm_readv/writev: moves an I/O vector past the
// `bytes` the kernel transferred, so the next call resumes where it
// stopped.
void SkipTransferred(iovec*& vector, int& left, size_t bytes) {
  while (bytes > 0) {
    const size_t n = std::min(bytes, vector->iov_len);
    vector->iov_base = static_cast<std::byte*>(vector->iov_base) + n;
    vector->iov_len -= n;
    bytes -= n;
    if (vector->iov_len == 0 && left > 0) ++vector, --left;
  }
}

}  // namespace

void ShmTransport::CrossMemoryReadv(int peer, const IoSegment* local,
                                    int local_count, const IoSegment* remote,
                                    int remote_count) {
  const int peer_local = local_index_of_rank_[peer];
  if (peer_local == my_local_index_) {
    // Our own address space: no system call needed.
    CopySegmentsInProcess(local, local_count, remote, remote_count);
    return;
  }
  iovec local_iov[1024];
  iovec remote_iov[1024];
  size_t total = 0;
  for (int i = 0; i < local_count; ++i) {
    local_iov[i] = {reinterpret_cast<void*>(local[i].address), local[i].length};
    total += local[i].length;
  }
  for (int i = 0; i < remote_count; ++i) {
    remote_iov[i] = {reinterpret_cast<void*>(remote[i].address),
                     remote[i].length};
  }
  // The kernel may stop early (a partial transfer); resume where it did on
  // both lists.
  iovec* l = local_iov;
  iovec* r = remote_iov;
  int l_left = local_count, r_left = remote_count;
  size_t done = 0;
  while (done < total) {
    ssize_t moved =
        process_vm_readv(peer_pids_[peer_local], l, l_left, r, r_left, 0);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      std::fprintf(stderr,
                   "net/shm RdmaReadv(rank %d): process_vm_readv of %zu bytes "
                   "in %d/%d segments from rank %d failed after %zu bytes: "
                   "%s\n",
                   rank_, total, local_count, remote_count, peer, done,
                   moved < 0 ? ErrnoText(errno).c_str() : "no progress");
      std::abort();
    }
    done += static_cast<size_t>(moved);
    SkipTransferred(l, l_left, static_cast<size_t>(moved));
    SkipTransferred(r, r_left, static_cast<size_t>(moved));
  }
}

PostResult ShmTransport::RdmaReadv(int vci, PeerVci peer,
                                   const IoSegment* local, int local_count,
                                   const MemoryRegion& local_region,
                                   const IoSegment* remote, int remote_count,
                                   uint32_t remote_key, uint64_t context) {
  if (peer.rank >= size_) [[unlikely]] {
    return OtherJobs(peer, "RdmaReadv")
        .RdmaReadv(vci, peer, local, local_count, local_region, remote,
                   remote_count, remote_key, context);
  }
  LocalIndexOrDie(peer, "RdmaReadv");
  if (local_count > max_io_segments() || remote_count > max_io_segments()) {
    std::fprintf(stderr,
                 "net/shm RdmaReadv(rank %d): %d/%d segments exceed %d\n",
                 rank_, local_count, remote_count, max_io_segments());
    std::abort();
  }
  Vci& state = vcis_[vci];
  if (state.local_done.full()) return PostResult::kRetry;
  CrossMemoryReadv(peer.rank, local, local_count, remote, remote_count);
  PushLocalDone(state, peer, context);
  return PostResult::kOk;
}

void ShmTransport::CrossMemoryWritev(int peer, const IoSegment* local,
                                     int local_count, uint64_t remote) {
  const int peer_local = local_index_of_rank_[peer];
  if (peer_local == my_local_index_) {
    for (int i = 0; i < local_count; ++i) {
      std::memmove(reinterpret_cast<void*>(remote),
                   reinterpret_cast<const void*>(local[i].address),
                   local[i].length);
      remote += local[i].length;
    }
    return;
  }
  iovec local_iov[1024];
  size_t total = 0;
  for (int i = 0; i < local_count; ++i) {
    local_iov[i] = {reinterpret_cast<void*>(local[i].address), local[i].length};
    total += local[i].length;
  }
  // Resume after a partial transfer where the kernel stopped.
  iovec* l = local_iov;
  int l_left = local_count;
  size_t done = 0;
  while (done < total) {
    iovec remote_iov = {reinterpret_cast<void*>(remote + done), total - done};
    ssize_t moved =
        process_vm_writev(peer_pids_[peer_local], l, l_left, &remote_iov, 1, 0);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      std::fprintf(stderr,
                   "net/shm RdmaWritev(rank %d): process_vm_writev of %zu "
                   "bytes in %d segments to 0x%llx of rank %d failed after "
                   "%zu bytes: %s\n",
                   rank_, total, local_count,
                   static_cast<unsigned long long>(remote), peer, done,
                   moved < 0 ? ErrnoText(errno).c_str() : "no progress");
      std::abort();
    }
    done += static_cast<size_t>(moved);
    SkipTransferred(l, l_left, static_cast<size_t>(moved));
  }
}

void ShmTransport::CrossMemoryCopy(bool write, int peer, void* local,
                                   uint64_t remote, size_t length) {
  const int peer_local = local_index_of_rank_[peer];
  if (peer_local == my_local_index_) {
    // Our own address space: a plain copy (memmove: regions may overlap).
    void* remote_pointer = reinterpret_cast<void*>(remote);
    if (write) {
      std::memmove(remote_pointer, local, length);
    } else {
      std::memmove(local, remote_pointer, length);
    }
    return;
  }
  size_t done = 0;
  while (done < length) {
    iovec local_iov = {static_cast<std::byte*>(local) + done, length - done};
    iovec remote_iov = {reinterpret_cast<void*>(remote + done), length - done};
    ssize_t moved = write ? process_vm_writev(peer_pids_[peer_local],
                                              &local_iov, 1, &remote_iov, 1, 0)
                          : process_vm_readv(peer_pids_[peer_local], &local_iov,
                                             1, &remote_iov, 1, 0);
    if (moved < 0 && errno == EINTR) continue;
    if (moved <= 0) {
      // Setup proved CMA works, so this is a bad address or a dead peer;
      // the transport interface has no error completion to report it.
      std::fprintf(stderr,
                   "net/shm %s(rank %d): %s %zu bytes at 0x%llx of rank %d "
                   "failed after %zu bytes: %s\n",
                   write ? "RdmaWrite" : "RdmaRead", rank_,
                   write ? "process_vm_writev" : "process_vm_readv", length,
                   static_cast<unsigned long long>(remote), peer, done,
                   moved < 0 ? ErrnoText(errno).c_str() : "no progress");
      std::abort();
    }
    done += static_cast<size_t>(moved);
  }
}

void ShmTransport::PushLocalDone(Vci& vci, PeerVci peer, uint64_t context) {
  LocalCompletionQueue& queue = vci.local_done;
  Completion& entry =
      queue.entries[(queue.head + queue.size) % kLocalCompletionCapacity];
  entry = Completion{};
  entry.type = CompletionType::kLocalDone;
  entry.peer = peer.rank;
  entry.peer_vci = peer.vci;
  entry.context = context;
  ++queue.size;
  if (!vci.touched.load(std::memory_order_relaxed)) {
    vci.touched.store(true, std::memory_order_relaxed);
  }
}

PostResult ShmTransport::RdmaRead(int vci, PeerVci peer, void* local,
                                  const MemoryRegion& local_region,
                                  RemoteBuffer remote, size_t length,
                                  uint64_t context) {
  if (peer.rank >= size_) [[unlikely]] {
    return OtherJobs(peer, "RdmaRead")
        .RdmaRead(vci, peer, local, local_region, remote, length, context);
  }
  LocalIndexOrDie(peer, "RdmaRead");
  Vci& state = vcis_[vci];
  if (state.local_done.full()) return PostResult::kRetry;
  if (length != 0) {
    CrossMemoryCopy(false, peer.rank, local, remote.address, length);
  }
  PushLocalDone(state, peer, context);
  return PostResult::kOk;
}

PostResult ShmTransport::RdmaWrite(int vci, PeerVci peer, const void* local,
                                   const MemoryRegion& local_region,
                                   RemoteBuffer remote, size_t length,
                                   uint64_t context) {
  if (peer.rank >= size_) [[unlikely]] {
    return OtherJobs(peer, "RdmaWrite")
        .RdmaWrite(vci, peer, local, local_region, remote, length, context);
  }
  LocalIndexOrDie(peer, "RdmaWrite");
  Vci& state = vcis_[vci];
  if (state.local_done.full()) return PostResult::kRetry;
  if (length != 0) {
    CrossMemoryCopy(true, peer.rank, const_cast<void*>(local), remote.address,
                    length);
  }
  PushLocalDone(state, peer, context);
  return PostResult::kOk;
}

PostResult ShmTransport::RdmaWriteImmediate(
    int vci, PeerVci peer, const void* local, const MemoryRegion& local_region,
    RemoteBuffer remote, size_t length, uint32_t immediate, uint64_t context) {
  if (peer.rank >= size_) [[unlikely]] {
    return OtherJobs(peer, "RdmaWriteImmediate")
        .RdmaWriteImmediate(vci, peer, local, local_region, remote, length,
                            immediate, context);
  }
  Vci& state = vcis_[vci];
  Outbound& out = ProducerFor(vci, peer, "RdmaWriteImmediate");
  // Claim both resources before moving data, so kRetry never leaves a
  // write done without its notification.
  if (state.local_done.full()) return PostResult::kRetry;
  CellHeader* cell = Reserve(out, sizeof(WriteNotice));
  if (cell == nullptr) return PostResult::kRetry;
  if (length != 0) {
    CrossMemoryCopy(true, peer.rank, const_cast<void*>(local), remote.address,
                    length);
  }
  // The notification travels on the same ring as Sends, hence after them.
  const WriteNotice notice{length};
  std::memcpy(cell->message(), &notice, sizeof(notice));
  cell->length = sizeof(notice);
  cell->flags = kCellFlagWriteImmediate;
  cell->immediate = immediate;
  Deliver(out);
  PushLocalDone(state, peer, context);
  return PostResult::kOk;
}

PostResult ShmTransport::RdmaWritev(int vci, PeerVci peer,
                                    const IoSegment* local, int local_count,
                                    const MemoryRegion& local_region,
                                    RemoteBuffer remote,
                                    const uint32_t* immediate,
                                    uint64_t context) {
  if (peer.rank >= size_) [[unlikely]] {
    return OtherJobs(peer, "RdmaWritev")
        .RdmaWritev(vci, peer, local, local_count, local_region, remote,
                    immediate, context);
  }
  Vci& state = vcis_[vci];
  // Claim every resource before moving data, so kRetry never leaves a
  // write done without its notification.
  if (state.local_done.full()) return PostResult::kRetry;
  Outbound* out = nullptr;
  CellHeader* cell = nullptr;
  size_t length = 0;
  for (int i = 0; i < local_count; ++i) length += local[i].length;
  const int peer_local = LocalIndexOrDie(peer, "RdmaWritev");
  const bool pull = immediate != nullptr && pull_min_ > 0 &&
                    length >= pull_min_ && local_count == 1 &&
                    peer_local != my_local_index_;
  if (immediate != nullptr) {
    out = &ProducerFor(vci, peer, "RdmaWritev");
    cell = Reserve(*out, pull ? sizeof(PullRequest) : sizeof(WriteNotice));
    if (cell == nullptr) return PostResult::kRetry;
  }
  if (pull) {
    // Large and contiguous: the receiver pulls it when it takes the cell,
    // then sets the slot's flag here, which Poll turns into our kLocalDone
    // (the buffer stays ours to keep unchanged until then). From twice the
    // threshold on, this thread writes the second half first, so both
    // processes copy at once (as the split rendezvous does).
    static_assert(sizeof(PullRequest) <= kMaxHeaderBytes);
    PullSlot* slot = nullptr;
    for (PullSlot& candidate : state.pulls) {
      if (!candidate.in_use) {
        slot = &candidate;
        break;
      }
    }
    if (slot == nullptr) return PostResult::kRetry;  // before any copy
    slot->in_use = true;
    slot->context = context;
    slot->peer = peer;
    slot->done.store(0, std::memory_order_relaxed);
    ++state.pulls_in_flight;
    size_t pulled = length;
    if (length >= 2 * pull_min_) {
      pulled = length / 2;
      const IoSegment rest = {local[0].address + pulled, length - pulled};
      CrossMemoryWritev(peer.rank, &rest, 1, remote.address + pulled);
    }
    PullRequest request;
    request.source = local[0].address;
    request.destination = remote.address;
    request.length = pulled;
    request.write_length = length;
    request.done_flag = reinterpret_cast<uint64_t>(&slot->done);
    std::memcpy(cell->message(), &request, sizeof(request));
    cell->length = sizeof(request);
    cell->flags = kCellFlagPullWrite;
    cell->immediate = *immediate;
    Deliver(*out);
    return PostResult::kOk;
  }
  if (length != 0) {
    CrossMemoryWritev(peer.rank, local, local_count, remote.address);
  }
  if (cell != nullptr) {
    const WriteNotice notice{length};
    std::memcpy(cell->message(), &notice, sizeof(notice));
    cell->length = sizeof(notice);
    cell->flags = kCellFlagWriteImmediate;
    cell->immediate = *immediate;
    Deliver(*out);
  }
  PushLocalDone(state, peer, context);
  return PostResult::kOk;
}

}  // namespace minimpi::net::shm
