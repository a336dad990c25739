// net/shm's data path: finding (and on first use registering) the ring of
// a connection, sending into it, polling the rings registered in a VCI's
// inbox, and the futex doorbells sleepers wait on. Setup is in
// shm_segment.cc, the single copies in shm_cross_memory.cc.
#include "net/shm/shm_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "net/shm/segment_layout.h"

namespace minimpi::net::shm {
namespace {

// A doorbell word: bit 0 says someone may sleep on it (armed); the other
// bits count rings, so a sleeper whose token went stale returns at once.
constexpr uint32_t kArmed = 1;

long Futex(std::atomic<uint32_t>* word, int operation, uint32_t value,
           const timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word lives in memory shared with peers.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), operation, value,
                 timeout, nullptr, 0);
}

// Wakes every sleeper if the word is armed: disarm and count one ring in
// one step (adding 1 to an armed word clears bit 0 and carries into the
// count), then wake.
bool RingIfArmed(std::atomic<uint32_t>* doorbell) {
  uint32_t word = doorbell->load(std::memory_order_relaxed);
  while ((word & kArmed) != 0) {
    if (doorbell->compare_exchange_weak(word, word + 1,
                                        std::memory_order_seq_cst,
                                        std::memory_order_relaxed)) {
      Futex(doorbell, FUTEX_WAKE, INT32_MAX, nullptr);
      return true;
    }
  }
  return false;
}
}  // namespace

absl::StatusOr<MemoryRegion> ShmTransport::RegisterMemory(void* address,
                                                          size_t length) {
  // Once other jobs' processes are reachable, their transport needs the
  // region (and its keys serve ours too: cross-memory attach ignores them).
  if (Transport* other = other_jobs_.load(std::memory_order_acquire))
      [[unlikely]] {
    return other->RegisterMemory(address, length);
  }
  // Cross-memory attach reaches any mapped address: nothing to pin.
  MemoryRegion region;
  region.address = address;
  region.length = length;
  return region;
}

void ShmTransport::DeregisterMemory(const MemoryRegion& region) {
  // Only the other jobs' transport hands out keys (ours are all 0).
  if (region.remote_key != 0 || region.transport_handle != nullptr) {
    if (Transport* other = other_jobs_.load(std::memory_order_acquire)) {
      other->DeregisterMemory(region);
    }
  }
}

int ShmTransport::LocalIndexOrDie(PeerVci peer, const char* operation) const {
  if (peer.rank < 0 || peer.rank >= size_ ||
      local_index_of_rank_[peer.rank] < 0 || peer.vci < 0 ||
      peer.vci >= num_vcis_) {
    std::fprintf(stderr,
                 "net/shm %s(rank %d): rank %d VCI %d is not reachable\n",
                 operation, rank_, peer.rank, peer.vci);
    std::abort();
  }
  return local_index_of_rank_[peer.rank];
}

ShmTransport::Outbound& ShmTransport::Connect(int vci, PeerVci peer,
                                              const char* operation) {
  Vci& state = vcis_[vci];
  const int peer_local = LocalIndexOrDie(peer, operation);
  if (state.to_peer.empty()) {
    state.to_peer.resize(local_ranks_.size() * size_t(num_vcis_));
  }
  Outbound& out = state.to_peer[size_t(peer_local) * num_vcis_ + peer.vci];
  if (out.ring.attached()) [[likely]] {
    state.last_peer = peer;
    state.last_out = &out;
    return out;
  }
  // First message on this connection: the ring's place is fixed, and
  // registering it in the receiving VCI's inbox is what makes that VCI
  // poll it. The entry is written before any message, so the receiver never
  // misses one.
  auto* segment = static_cast<std::byte*>(peer_segments_[peer_local].address);
  out.ring = RingProducer(segment + RingOffset(my_local_index_, vci, peer.vci),
                          ring_bytes_);
  state.touched.store(true, std::memory_order_relaxed);
  void* inbox = segment + InboxOffset(peer.vci);
  out.doorbell = PeerDoorbell(peer_local, peer.vci);
  out.peer_local = peer_local;
  const uint32_t slot =
      InboxCount(inbox)->fetch_add(1, std::memory_order_acq_rel);
  InboxEntries(inbox)[slot].store(
      uint32_t(my_local_index_) * num_vcis_ + vci + 1,
      std::memory_order_release);
  state.last_peer = peer;
  state.last_out = &out;
  return out;
}

void ShmTransport::Deliver(Outbound& out) {
  out.ring.Publish();
  // Order the publication before the look at the doorbell (the sleeper
  // arms before its last look at the ring): either it sees the message or
  // this sees it armed. The look is one load of a line that changes only
  // when somebody arms, so a peer that spins costs nothing more.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // WakePeer's first look, inline: nobody sleeps, almost always.
  if ((out.doorbell->load(std::memory_order_relaxed) & kArmed) != 0) {
    WakePeer(out.doorbell, out.peer_local);
  }
}

CellHeader* ShmTransport::Reserve(Outbound& out, size_t message_bytes) {
  CellHeader* cell = out.ring.TryReserve(message_bytes);
  if (cell == nullptr) {
    // The ring is full, and its producer may have just published a wrap
    // marker that only the consumer can take to make room: wake it, or both
    // sides could sleep waiting for each other.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    WakePeer(out.doorbell, out.peer_local);
  }
  return cell;
}

void ShmTransport::WakePeer(std::atomic<uint32_t>* doorbell, int peer_local) {
  if (!RingIfArmed(doorbell) || peer_local == my_local_index_) return;
  Presence* presence = PresenceOf(peer_local);
  presence->cpu.store(-1, std::memory_order_relaxed);
  presence->asleep.store(0, std::memory_order_relaxed);
}

ShmTransport::Presence* ShmTransport::PresenceOf(int local_index) const {
  // In the first line of VCI 0's inbox, after its two words.
  return reinterpret_cast<Presence*>(
      static_cast<std::byte*>(peer_segments_[local_index].address) +
      InboxOffset(0) + 2 * sizeof(uint32_t));
}

bool ShmTransport::PeerMayShareCore(bool* move_away) {
  if (move_away != nullptr) *move_away = false;
  if (local_ranks_.size() < 2 || local_ranks_.size() > kMaxPresenceScan) {
    return false;
  }
  const int cpu = sched_getcpu();
  // Written only when it changed: peers read this line on every wait.
  Presence* mine = PresenceOf(my_local_index_);
  if (mine->cpu.load(std::memory_order_relaxed) != cpu) {
    mine->cpu.store(cpu, std::memory_order_relaxed);
  }
  for (int local = 0; local < static_cast<int>(local_ranks_.size()); ++local) {
    if (local == my_local_index_) continue;
    const Presence* presence = PresenceOf(local);
    if (presence->asleep.load(std::memory_order_relaxed) != 0) continue;
    const int peer_cpu = presence->cpu.load(std::memory_order_relaxed);
    // Woken and not yet run: it will most likely run on a core of its own.
    if (peer_cpu < 0) continue;
    if (peer_cpu == cpu) {
      // Of two ranks on one core, the later one moves.
      if (move_away != nullptr) *move_away = local > my_local_index_;
      return true;
    }
  }
  return false;
}

std::atomic<uint32_t>* ShmTransport::OwnDoorbell(int vci) const {
  return InboxDoorbell(static_cast<std::byte*>(own_segment_.address) +
                       InboxOffset(DoorbellOf(vci)));
}

uint64_t ShmTransport::ArmDoorbell(int vci) {
  std::atomic<uint32_t>* doorbell = OwnDoorbell(vci);
  const uint32_t token =
      doorbell->fetch_or(kArmed, std::memory_order_seq_cst) | kArmed;
  // The caller's next look at its rings must not move before the arming.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return token;
}

void ShmTransport::SleepOnDoorbell(int vci, uint64_t token,
                                   int64_t timeout_ns) {
  if (Transport* other = other_jobs_.load(std::memory_order_acquire);
      other != nullptr && other->MayHaveWork(vci)) [[unlikely]] {
    timeout_ns = std::min(timeout_ns, kOtherJobsSleepSliceNs);
  }
  const timespec timeout = {static_cast<time_t>(timeout_ns / 1'000'000'000),
                            static_cast<long>(timeout_ns % 1'000'000'000)};
  Presence* presence = PresenceOf(my_local_index_);
  presence->asleep.store(1, std::memory_order_relaxed);
  // Returns at once when a ring already changed the word.
  Futex(OwnDoorbell(vci), FUTEX_WAIT, static_cast<uint32_t>(token), &timeout);
  presence->asleep.store(0, std::memory_order_relaxed);
  const int cpu = sched_getcpu();
  if (presence->cpu.load(std::memory_order_relaxed) != cpu) {
    presence->cpu.store(cpu, std::memory_order_relaxed);
  }
}

void ShmTransport::RingDoorbell(int vci) {
  // No fence: the caller ordered its change before (see the interface).
  RingIfArmed(OwnDoorbell(vci));
}

void ShmTransport::WakePeer(PeerVci peer) {
  if (peer.rank >= size_) {
    if (Transport* other = other_jobs_.load(std::memory_order_acquire)) {
      other->WakePeer(peer);
    }
    return;
  }
  if (peer.rank < 0 ||
      peer.rank >= static_cast<int>(local_index_of_rank_.size())) {
    return;
  }
  const int local = local_index_of_rank_[peer.rank];
  if (local < 0) return;
  if (local == my_local_index_) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    RingDoorbell(peer.vci);
    return;
  }
  RingPeerDoorbell(local, peer.vci);
}

bool ShmTransport::MayHaveWork(int vci) const {
  if (vcis_[vci].touched.load(std::memory_order_relaxed)) return true;
  if (Transport* other = other_jobs_.load(std::memory_order_acquire);
      other != nullptr && other->MayHaveWork(vci)) {
    return true;
  }
  void* inbox =
      static_cast<std::byte*>(own_segment_.address) + InboxOffset(vci);
  return InboxCount(inbox)->load(std::memory_order_acquire) != 0;
}

std::atomic<uint32_t>* ShmTransport::PeerDoorbell(int peer_local,
                                                  int peer_vci) const {
  auto* segment = static_cast<std::byte*>(peer_segments_[peer_local].address);
  const uint32_t doorbell_vci =
      InboxDoorbellVci(segment + InboxOffset(peer_vci))
          ->load(std::memory_order_acquire);
  return InboxDoorbell(segment + InboxOffset(int(doorbell_vci)));
}

void ShmTransport::RingPeerDoorbell(int peer_local, int peer_vci) {
  std::atomic<uint32_t>* doorbell = PeerDoorbell(peer_local, peer_vci);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  WakePeer(doorbell, peer_local);
}

void ShmTransport::TakeNewSenders(int vci) {
  Vci& state = vcis_[vci];
  void* inbox =
      static_cast<std::byte*>(own_segment_.address) + InboxOffset(vci);
  const uint32_t registered =
      InboxCount(inbox)->load(std::memory_order_acquire);
  while (state.inbox_seen < registered) {
    const uint32_t entry =
        InboxEntries(inbox)[state.inbox_seen].load(std::memory_order_acquire);
    if (entry == 0) return;  // its sender is still writing it: next time
    const int sender_local = static_cast<int>((entry - 1) / num_vcis_);
    const int sender_vci = static_cast<int>((entry - 1) % num_vcis_);
    Inbound inbound;
    inbound.ring = RingConsumer(static_cast<std::byte*>(own_segment_.address) +
                                    RingOffset(sender_local, sender_vci, vci),
                                ring_bytes_);
    inbound.rank = local_ranks_[sender_local];
    inbound.vci = sender_vci;
    state.from_sender.push_back(inbound);
    ++state.inbox_seen;
  }
}

PostResult ShmTransport::Send(int vci, PeerVci peer, const void* header,
                              size_t header_length, const void* payload,
                              size_t payload_length) {
  if (peer.rank >= size_) [[unlikely]] {
    return OtherJobs(peer, "Send")
        .Send(vci, peer, header, header_length, payload, payload_length);
  }
  const size_t length = header_length + payload_length;
  if (length > max_message_) {
    std::fprintf(stderr,
                 "net/shm Send(rank %d): %zu-byte message exceeds the %zu "
                 "bytes a cell holds\n",
                 rank_, length, max_message_);
    std::abort();
  }
  Outbound& out = ProducerFor(vci, peer, "Send");
  CellHeader* cell = Reserve(out, length);
  if (cell == nullptr) return PostResult::kRetry;
  // Straight into the peer's cell: the only copy on the sending side.
  std::byte* message = cell->message();
  if (header_length != 0) std::memcpy(message, header, header_length);
  if (payload_length != 0) {
    std::memcpy(message + header_length, payload, payload_length);
  }
  cell->length = static_cast<uint32_t>(length);
  cell->flags = 0;
  Deliver(out);
  return PostResult::kOk;
}

PostResult ShmTransport::SendPacked(
    int vci, PeerVci peer, const void* header, size_t header_length,
    size_t payload_length,
    absl::FunctionRef<void(void* destination)> write_payload) {
  if (peer.rank >= size_) [[unlikely]] {
    return OtherJobs(peer, "SendPacked")
        .SendPacked(vci, peer, header, header_length, payload_length,
                    write_payload);
  }
  const size_t length = header_length + payload_length;
  if (length > max_message_) {
    std::fprintf(stderr,
                 "net/shm SendPacked(rank %d): %zu-byte message exceeds the "
                 "%zu bytes a cell holds\n",
                 rank_, length, max_message_);
    std::abort();
  }
  Outbound& out = ProducerFor(vci, peer, "SendPacked");
  CellHeader* cell = Reserve(out, length);
  if (cell == nullptr) return PostResult::kRetry;
  std::byte* message = cell->message();
  if (header_length != 0) std::memcpy(message, header, header_length);
  if (payload_length != 0) write_payload(message + header_length);
  cell->length = static_cast<uint32_t>(length);
  cell->flags = 0;
  Deliver(out);
  return PostResult::kOk;
}

int ShmTransport::Poll(int vci, CompletionHandler& handler,
                       int max_completions) {
  Vci& state = vcis_[vci];
  int handled = 0;
  // Local completions first. Copy the entry out before the call: the
  // handler may post and so push new entries.
  LocalCompletionQueue& queue = state.local_done;
  while (handled < max_completions && queue.size != 0) {
    const Completion completion = queue.entries[queue.head];
    queue.head = (queue.head + 1) % kLocalCompletionCapacity;
    --queue.size;
    handler.OnCompletion(vci, completion);
    ++handled;
  }

  // Pulled writes the receivers have finished.
  for (uint32_t i = 0; state.pulls_in_flight > 0 && i < kPullCapacity &&
                       handled < max_completions;
       ++i) {
    PullSlot& slot = state.pulls[i];
    if (!slot.in_use || slot.done.load(std::memory_order_acquire) == 0) {
      continue;
    }
    slot.in_use = false;
    --state.pulls_in_flight;
    Completion completion;
    completion.type = CompletionType::kLocalDone;
    completion.peer = slot.peer.rank;
    completion.peer_vci = slot.peer.vci;
    completion.context = slot.context;
    handler.OnCompletion(vci, completion);
    ++handled;
  }

  // Then one message per ring in turn, so that a busy sender cannot starve
  // the others; stop after a full round finds nothing. New senders first:
  // one load of a line that changes only when a connection is made.
  TakeNewSenders(vci);
  const uint32_t num_senders = static_cast<uint32_t>(state.from_sender.size());
  uint32_t sender = state.next_sender;
  uint32_t idle_rings = 0;
  // Rings this poll freed room in (at most one entry per completion), to
  // tell a producer that waits for room.
  uint32_t freed[64];
  int num_freed = 0;
  while (handled < max_completions && idle_rings < num_senders) {
    Inbound& inbound = state.from_sender[sender];
    RingConsumer& ring = inbound.ring;
    const uint64_t released_before = ring.released();
    const CellHeader* cell = ring.Peek();
    // Taking a wrap marker frees room too.
    if (ring.released() != released_before &&
        (num_freed == 0 || freed[num_freed - 1] != sender) && num_freed < 64) {
      freed[num_freed++] = sender;
    }
    if (cell != nullptr) {
      Completion completion;
      completion.peer = inbound.rank;
      completion.peer_vci = inbound.vci;
      completion.length = cell->length;
      if (cell->flags == kCellFlagWriteImmediate) {
        WriteNotice notice;
        std::memcpy(&notice, cell->message(), sizeof(notice));
        completion.type = CompletionType::kWriteImmediate;
        completion.immediate = cell->immediate;
        completion.length = notice.write_length;
      } else if (cell->flags == kCellFlagPullWrite) {
        PullRequest request;
        std::memcpy(&request, cell->message(), sizeof(request));
        CrossMemoryCopy(false, completion.peer,
                        reinterpret_cast<void*>(request.destination),
                        request.source, request.length);
        completion.type = CompletionType::kWriteImmediate;
        completion.immediate = cell->immediate;
        completion.length = request.write_length;
        uint64_t done = 1;
        CrossMemoryCopy(true, completion.peer, &done, request.done_flag,
                        sizeof(done));
        // The flag is no ring message: wake the sender if it sleeps.
        RingPeerDoorbell(local_index_of_rank_[completion.peer], inbound.vci);
      } else {
        completion.type = CompletionType::kReceive;
        completion.data = cell->message();
      }
      handler.OnCompletion(vci, completion);
      ring.Release();
      if ((num_freed == 0 || freed[num_freed - 1] != sender) &&
          num_freed < 64) {
        freed[num_freed++] = sender;
      }
      ++handled;
      idle_rings = 0;
    } else {
      ++idle_rings;
    }
    sender = (sender + 1 == num_senders) ? 0 : sender + 1;
  }
  state.next_sender = sender;
  for (int i = 0; i < num_freed; ++i) {
    Inbound& inbound = state.from_sender[freed[i]];
    if (inbound.ring.TakeProducerWaiting()) {
      RingPeerDoorbell(local_index_of_rank_[inbound.rank], inbound.vci);
    }
  }
  if (Transport* other = other_jobs_.load(std::memory_order_acquire);
      other != nullptr) [[unlikely]] {
    if (handled < max_completions && other->MayHaveWork(vci)) {
      handled += other->Poll(vci, handler, max_completions - handled);
    }
  }
  return handled;
}

Transport& ShmTransport::OtherJobs(PeerVci peer, const char* operation) const {
  Transport* other = other_jobs_.load(std::memory_order_acquire);
  if (other == nullptr) {
    std::fprintf(stderr,
                 "net/shm %s(rank %d): rank %d is past this job's %d ranks and "
                 "no process of another job was added\n",
                 operation, rank_, peer.rank, size_);
    std::abort();
  }
  return *other;
}

absl::StatusOr<std::string> ShmTransport::DynamicAddress() {
  if (Transport* other = other_jobs_.load(std::memory_order_acquire)) {
    return other->DynamicAddress();
  }
  std::lock_guard<std::mutex> lock(other_jobs_mutex_);
  if (other_jobs_owner_ == nullptr) {
    if (!make_other_jobs_) return Transport::DynamicAddress();
    absl::StatusOr<std::unique_ptr<Transport>> made = make_other_jobs_();
    if (!made.ok()) return made.status();
    other_jobs_owner_ = *std::move(made);
    // A VCI's first connection from another job wakes a thread asleep on
    // our doorbell at once, not after a slice.
    other_jobs_owner_->AlsoRingOnFirstContact(this);
    other_jobs_.store(other_jobs_owner_.get(), std::memory_order_release);
  }
  return other_jobs_owner_->DynamicAddress();
}

absl::Status ShmTransport::AddPeer(int rank, const std::string& address) {
  if (rank < size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("net/shm: peer ", rank, " is a rank of this job"));
  }
  absl::StatusOr<std::string> mine = DynamicAddress();  // makes the transport
  if (!mine.ok()) return mine.status();
  return other_jobs_.load(std::memory_order_acquire)->AddPeer(rank, address);
}

}  // namespace minimpi::net::shm
