// Windows' life (ids, registration, the members' descriptions), the
// messages one-sided communication receives, and synchronization: waiting
// for pending operations, the passive-target lock manager, and general
// active target's notices. The operations themselves are in operations.cc.
#include "mpi/rma/one_sided.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mpi/rma/operations.h"
#include "mpi/rma/protocol.h"

namespace minimpi::rma {

absl::StatusOr<std::unique_ptr<OneSided>> OneSided::Create(
    vci::VciSet& vcis, ApplyOpFunction apply_op, Options options) {
  std::unique_ptr<OneSided> engine(new OneSided(vcis, apply_op, options));
  absl::Status registered = vcis.Register({
      .traffic = vci::Traffic::kOneSided,
      .handler = engine.get(),
      .message_types =
          {
              static_cast<uint8_t>(MessageType::kAccumulate),
              static_cast<uint8_t>(MessageType::kCompareSwap),
              static_cast<uint8_t>(MessageType::kReply),
              static_cast<uint8_t>(MessageType::kLockRequest),
              static_cast<uint8_t>(MessageType::kLockGranted),
              static_cast<uint8_t>(MessageType::kUnlock),
              static_cast<uint8_t>(MessageType::kPost),
              static_cast<uint8_t>(MessageType::kComplete),
              static_cast<uint8_t>(MessageType::kUnlocked),
          },
      // Polls skip one-sided traffic while no window exists.
      .always_progress = false,
  });
  if (!registered.ok()) return registered;
  return engine;
}

OneSided::OneSided(vci::VciSet& vcis, ApplyOpFunction apply_op,
                   Options options)
    : vcis_(vcis),
      transport_(vcis.transport()),
      apply_op_(apply_op),
      windows_(new std::atomic<Window*>[kMaxWindows]),
      vci_states_(vcis.capacity()),
      options_(options) {
  for (int i = 0; i < kMaxWindows; ++i) {
    windows_[i].store(nullptr, std::memory_order_relaxed);
  }
  vci_states_.MakeAll();
}

OneSided::~OneSided() {
  {
    std::lock_guard<std::mutex> lock(thread_mutex_);
    stopping_ = true;
  }
  thread_wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  vcis_.Unregister(vci::Traffic::kOneSided);
}

// What a NIC would do for accumulates and locks if it could: answer them
// while the target computes. A try-lock per VCI, so an owner busy in MPI
// is never held up (it answers them itself), and nothing while no window
// exists. A look that finds nothing doubles the pause before the next, up
// to kIdleBackoff times progress_us: an open window with no traffic then
// costs a wakeup every few milliseconds, not every 200 us (measured: 1.5%
// of a core without the back-off).
void OneSided::ProgressLoop() {
  constexpr int kIdleBackoff = 16;
  int pause_us = options_.progress_us;
  std::unique_lock<std::mutex> lock(thread_mutex_);
  while (!stopping_) {
    if (open_windows_ == 0) {
      thread_wake_.wait(lock);
      pause_us = options_.progress_us;
      continue;
    }
    lock.unlock();
    bool found = false;
    const int in_use = vcis_.in_use();
    for (int v = 0; v < in_use; ++v) {
      if (vci_states_[v].windows.load(std::memory_order_relaxed) > 0) {
        found |= vcis_.TryProgress(v);
      }
    }
    pause_us = found ? options_.progress_us
                     : std::min(pause_us * 2,
                                options_.progress_us * kIdleBackoff);
    lock.lock();
    thread_wake_.wait_for(lock, std::chrono::microseconds(pause_us));
  }
}

absl::StatusOr<Window*> OneSided::Open(void* base, uint64_t length,
                                       int disp_unit, Flavor flavor, int rank,
                                       std::vector<int> world_ranks,
                                       std::vector<int> vcis) {
  auto window = std::make_unique<Window>();
  window->rank = rank;
  window->group_size = static_cast<int>(world_ranks.size());
  window->world_ranks = std::move(world_ranks);
  window->vcis = std::move(vcis);
  window->vci = window->vcis[rank];
  window->base = base;
  window->length = length;
  window->disp_unit = disp_unit;
  window->flavor = flavor;
  const int n = window->group_size;
  window->pending.reset(new std::atomic<int64_t>[n]);
  window->granted.reset(new std::atomic<uint8_t>[n]);
  window->posts_seen.reset(new std::atomic<int32_t>[n]);
  window->completes_seen.reset(new std::atomic<int32_t>[n]);
  for (int i = 0; i < n; ++i) {
    window->pending[i].store(0, std::memory_order_relaxed);
    window->granted[i].store(0, std::memory_order_relaxed);
    window->posts_seen[i].store(0, std::memory_order_relaxed);
    window->completes_seen[i].store(0, std::memory_order_relaxed);
  }
  if (length > 0) {
    absl::StatusOr<net::MemoryRegion> region =
        transport_.RegisterMemory(base, length);
    if (!region.ok()) return region.status();
    window->region = *region;
    window->registered = true;
  }
  {
    std::lock_guard<std::mutex> lock(ids_mutex_);
    if (!free_ids_.empty()) {
      window->id = free_ids_.back();
      free_ids_.pop_back();
    } else if (next_id_ < kMaxWindows) {
      window->id = next_id_++;
    }
  }
  if (window->id < 0) {
    if (window->registered) transport_.DeregisterMemory(window->region);
    return absl::ResourceExhaustedError(
        absl::StrCat("too many windows at once (at most ", kMaxWindows, ")"));
  }
  // Messages for the window may arrive as soon as its description leaves.
  windows_[window->id].store(window.get(), std::memory_order_release);
  vcis_.AddUser(vci::Traffic::kOneSided);
  vci_states_[window->vci].windows.fetch_add(1, std::memory_order_relaxed);
  if (options_.progress_thread) {
    std::lock_guard<std::mutex> lock(thread_mutex_);
    if (open_windows_++ == 0) thread_wake_.notify_all();
    if (!thread_.joinable()) thread_ = std::thread([this] { ProgressLoop(); });
  }
  return window.release();
}

TargetInfo OneSided::Describe(const Window& window) const {
  TargetInfo info;
  info.base = reinterpret_cast<uint64_t>(window.base);
  info.size = window.length;
  info.remote_key = window.region.remote_key;
  info.disp_unit = window.disp_unit;
  info.window = window.id;
  return info;
}

bool OneSided::Attach(Window& window, void* base, uint64_t length) {
  const uint64_t start = reinterpret_cast<uint64_t>(base);
  std::lock_guard lock(vcis_.mutex(window.vci));
  for (const auto& [other, other_length] : window.attached) {
    if (start < other + other_length && other < start + length) return false;
  }
  window.attached.emplace_back(start, length);
  return true;
}

int OneSided::TakeRefusals(Window& window) {
  // Every synchronization asks, and refusals are rare: a load, not a
  // read-modify-write, when there are none. Refusals counted by replies
  // are visible here, as the wait that precedes this acquired the
  // operation's completion.
  if (window.refused.load(std::memory_order_acquire) == 0) return 0;
  return window.refused.exchange(0, std::memory_order_acq_rel);
}

bool OneSided::Detach(Window& window, const void* base) {
  const uint64_t start = reinterpret_cast<uint64_t>(base);
  std::lock_guard lock(vcis_.mutex(window.vci));
  for (size_t i = 0; i < window.attached.size(); ++i) {
    if (window.attached[i].first == start) {
      window.attached.erase(window.attached.begin() + i);
      return true;
    }
  }
  return false;
}

void OneSided::Publish(Window& window, std::vector<TargetInfo> members) {
  window.targets = std::move(members);
}

void OneSided::SetDirect(Window& window, std::vector<std::byte*> direct,
                         std::vector<vci::VciLock*> atomicity) {
  window.direct = std::move(direct);
  window.atomicity = std::move(atomicity);
}

void OneSided::Close(Window* window) {
  if (options_.progress_thread) {
    std::lock_guard<std::mutex> lock(thread_mutex_);
    --open_windows_;
  }
  vci_states_[window->vci].windows.fetch_sub(1, std::memory_order_relaxed);
  windows_[window->id].store(nullptr, std::memory_order_release);
  if (window->registered) transport_.DeregisterMemory(window->region);
  {
    std::lock_guard<std::mutex> lock(ids_mutex_);
    free_ids_.push_back(window->id);
  }
  vcis_.RemoveUser(vci::Traffic::kOneSided);
  delete window;
}

template <typename Done>
void OneSided::WaitOn(Window& window, Done done) {
  vcis_.WaitUntil(window.vci, done);
}

void OneSided::WaitForOperations(Window& window, int rank) {
  if (rank < 0) {
    WaitOn(window, [&] {
      return window.pending_total.load(std::memory_order_acquire) == 0;
    });
  } else {
    WaitOn(window, [&] {
      return window.pending[rank].load(std::memory_order_acquire) == 0;
    });
  }
}

void OneSided::SendLocked(Window& window, int rank, const void* header,
                          size_t header_length, const void* payload,
                          size_t payload_length) {
  vci::Outbox::Message message;
  message.header = header;
  message.header_length = header_length;
  message.payload = payload;
  message.payload_length = payload_length;
  vcis_.outbox(window.vci).Send(
      transport_, window.vci,
      {window.world_ranks[rank], window.vcis[rank]}, message);
}

namespace {
Header Notice(const Window& window, int to, MessageType type,
              uint8_t flags = 0) {
  Header header;
  header.type = type;
  header.flags = flags;
  header.window = window.targets[to].window;
  header.from_rank = window.rank;
  return header;
}
}  // namespace

void OneSided::Lock(Window& window, int rank, bool exclusive) {
  {
    std::lock_guard lock(vcis_.mutex(window.vci));
    window.granted[rank].store(0, std::memory_order_relaxed);
    const Header header = Notice(window, rank, MessageType::kLockRequest,
                                 exclusive ? kExclusive : 0);
    SendLocked(window, rank, &header, sizeof(header), nullptr, 0);
  }
  const auto asked = std::chrono::steady_clock::now();
  WaitOn(window, [&] {
    return window.granted[rank].load(std::memory_order_acquire) != 0;
  });
  window.lock_wait_ns.Add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - asked)
                              .count());
}

void OneSided::Unlock(Window& window, int rank, bool exclusive) {
  WaitForOperations(window, rank);
  {
    std::lock_guard lock(vcis_.mutex(window.vci));
    const Header header =
        Notice(window, rank, MessageType::kUnlock, exclusive ? kExclusive : 0);
    SendLocked(window, rank, &header, sizeof(header), nullptr, 0);
  }
  // Answered once released: the window may be freed right after, and no
  // message of the epoch may still be on its way to it.
  WaitOn(window, [&] {
    return window.granted[rank].load(std::memory_order_acquire) == 0;
  });
}

void OneSided::Post(Window& window, const std::vector<int>& origins) {
  std::lock_guard lock(vcis_.mutex(window.vci));
  for (int origin : origins) {
    const Header header = Notice(window, origin, MessageType::kPost);
    SendLocked(window, origin, &header, sizeof(header), nullptr, 0);
  }
}

void OneSided::Start(Window& window, const std::vector<int>& targets) {
  WaitOn(window, [&] {
    for (int target : targets) {
      if (window.posts_seen[target].load(std::memory_order_acquire) == 0) {
        return false;
      }
    }
    return true;
  });
  for (int target : targets) {
    window.posts_seen[target].fetch_sub(1, std::memory_order_acq_rel);
  }
}

void OneSided::Complete(Window& window, const std::vector<int>& targets) {
  for (int target : targets) WaitForOperations(window, target);
  std::lock_guard lock(vcis_.mutex(window.vci));
  for (int target : targets) {
    const Header header = Notice(window, target, MessageType::kComplete);
    SendLocked(window, target, &header, sizeof(header), nullptr, 0);
  }
}

bool OneSided::WaitPosted(Window& window, const std::vector<int>& origins,
                          bool test) {
  auto all_done = [&] {
    for (int origin : origins) {
      if (window.completes_seen[origin].load(std::memory_order_acquire) ==
          0) {
        return false;
      }
    }
    return true;
  };
  if (test) {
    vcis_.TestRound(window.vci, all_done);
    if (!all_done()) return false;
  } else {
    WaitOn(window, all_done);
  }
  for (int origin : origins) {
    window.completes_seen[origin].fetch_sub(1, std::memory_order_acq_rel);
  }
  return true;
}

void OneSided::GrantLocked(Window& window) {
  while (!window.lock_queue.empty()) {
    const Window::Waiter next = window.lock_queue.front();
    if (window.exclusive_holder >= 0) return;
    if (next.exclusive && window.shared_holders > 0) return;
    window.lock_queue.pop_front();
    if (next.exclusive) {
      window.exclusive_holder = next.rank;
    } else {
      ++window.shared_holders;
    }
    const Header header = Notice(window, next.rank, MessageType::kLockGranted,
                                 next.queued ? kQueued : 0);
    SendLocked(window, next.rank, &header, sizeof(header), nullptr, 0);
  }
}

void OneSided::OnMessageLocked(int vci, net::PeerVci peer,
                               const std::byte* data, size_t length) {
  Header header;
  std::memcpy(&header, data, sizeof(header));
  Window* window =
      header.window >= 0 && header.window < kMaxWindows
          ? windows_[header.window].load(std::memory_order_acquire)
          : nullptr;
  if (window == nullptr || header.from_rank < 0 ||
      header.from_rank >= window->group_size) {
    std::fprintf(stderr,
                 "minimpi: one-sided message (type %d) from rank %d for "
                 "window %d, which does not exist here: ignored\n",
                 static_cast<int>(header.type), peer.rank, header.window);
    return;
  }
  const int from = header.from_rank;
  switch (header.type) {
    case MessageType::kAccumulate:
    case MessageType::kCompareSwap:
      ApplyLocked(*window, vci, peer, header, data + sizeof(header),
                  length - sizeof(header));
      return;
    case MessageType::kReply:
      OnReplyLocked(*reinterpret_cast<Operation*>(header.cookie), header,
                    data + sizeof(header), length - sizeof(header));
      return;
    case MessageType::kLockRequest:
      window->lock_queue.push_back({from, (header.flags & kExclusive) != 0});
      GrantLocked(*window);
      // Still queued (the newest is last): its grant will say it waited.
      if (!window->lock_queue.empty()) window->lock_queue.back().queued = true;
      return;
    case MessageType::kLockGranted:
      if (header.flags & kQueued) window->lock_waits.Add();
      window->granted[from].store(1, std::memory_order_release);
      return;
    case MessageType::kUnlock:
      if (header.flags & kExclusive) {
        window->exclusive_holder = -1;
      } else if (window->shared_holders > 0) {
        --window->shared_holders;
      }
      GrantLocked(*window);
      {
        const Header done = Notice(*window, from, MessageType::kUnlocked);
        SendLocked(*window, from, &done, sizeof(done), nullptr, 0);
      }
      return;
    case MessageType::kUnlocked:
      window->granted[from].store(0, std::memory_order_release);
      return;
    case MessageType::kPost:
      window->posts_seen[from].fetch_add(1, std::memory_order_acq_rel);
      return;
    case MessageType::kComplete:
      window->completes_seen[from].fetch_add(1, std::memory_order_acq_rel);
      return;
  }
}

}  // namespace minimpi::rma
