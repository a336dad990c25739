#include "net/testing/loopback_transport.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace minimpi::net::testing {

LoopbackTransport::LoopbackTransport(LoopbackOptions options)
    : options_(options),
      refuse_every_(options.refuse_every),
      inboxes_(new Inbox[options.num_vcis]) {}

bool LoopbackTransport::Accept() {
  const uint64_t n = posts_.fetch_add(1) + 1;
  const int every = refuse_every_.load();
  if (every > 0 && n % every == 0) {
    refusals_.fetch_add(1);
    return false;
  }
  return true;
}

void LoopbackTransport::CheckPeer(PeerVci peer) const {
  // A test that names another rank or a VCI that does not exist has a bug
  // worth a loud stop.
  if (peer.rank != 0 || peer.vci < 0 || peer.vci >= options_.num_vcis) {
    std::fprintf(stderr, "loopback: no peer rank %d VCI %d\n", peer.rank,
                 peer.vci);
    std::abort();
  }
}

void LoopbackTransport::Deliver(int vci, Entry entry) {
  Inbox& inbox = inboxes_[vci];
  std::lock_guard<std::mutex> lock(inbox.mutex);
  inbox.entries.push_back(std::move(entry));
}

void LoopbackTransport::LocalDone(int vci, uint64_t context) {
  Entry entry;
  entry.completion.type = CompletionType::kLocalDone;
  entry.completion.peer = 0;
  entry.completion.peer_vci = vci;
  entry.completion.context = context;
  Deliver(vci, std::move(entry));
}

void LoopbackTransport::Inject(int vci, const Completion& completion,
                               std::vector<std::byte> data) {
  Entry entry{completion, std::move(data)};
  Deliver(vci, std::move(entry));
}

absl::StatusOr<MemoryRegion> LoopbackTransport::RegisterMemory(void* address,
                                                               size_t length) {
  MemoryRegion region;
  region.address = address;
  region.length = length;
  return region;
}

PostResult LoopbackTransport::Send(int vci, PeerVci peer, const void* header,
                                   size_t header_length, const void* payload,
                                   size_t payload_length) {
  return SendPacked(vci, peer, header, header_length, payload_length,
                    [&](void* destination) {
                      if (payload_length > 0) {
                        std::memcpy(destination, payload, payload_length);
                      }
                    });
}

PostResult LoopbackTransport::SendPacked(
    int vci, PeerVci peer, const void* header, size_t header_length,
    size_t payload_length,
    absl::FunctionRef<void(void* destination)> write_payload) {
  CheckPeer(peer);
  if (header_length + payload_length > options_.max_message_size) {
    std::fprintf(stderr, "loopback: a message over max_message_size\n");
    std::abort();
  }
  if (!Accept()) return PostResult::kRetry;
  Entry entry;
  entry.data.resize(header_length + payload_length);
  std::memcpy(entry.data.data(), header, header_length);
  write_payload(entry.data.data() + header_length);
  entry.completion.type = CompletionType::kReceive;
  entry.completion.peer = 0;
  entry.completion.peer_vci = vci;
  entry.completion.length = entry.data.size();
  Deliver(peer.vci, std::move(entry));
  return PostResult::kOk;
}

PostResult LoopbackTransport::RdmaRead(int vci, PeerVci peer, void* local,
                                       const MemoryRegion&, RemoteBuffer remote,
                                       size_t length, uint64_t context) {
  CheckPeer(peer);
  if (!Accept()) return PostResult::kRetry;
  if (length > 0) {
    std::memcpy(local, reinterpret_cast<const void*>(remote.address), length);
  }
  LocalDone(vci, context);
  return PostResult::kOk;
}

PostResult LoopbackTransport::RdmaWrite(int vci, PeerVci peer,
                                        const void* local,
                                        const MemoryRegion& region,
                                        RemoteBuffer remote, size_t length,
                                        uint64_t context) {
  IoSegment segment{reinterpret_cast<uint64_t>(local), length};
  return RdmaWritev(vci, peer, &segment, 1, region, remote, nullptr, context);
}

PostResult LoopbackTransport::RdmaWriteImmediate(
    int vci, PeerVci peer, const void* local, const MemoryRegion& region,
    RemoteBuffer remote, size_t length, uint32_t immediate, uint64_t context) {
  IoSegment segment{reinterpret_cast<uint64_t>(local), length};
  return RdmaWritev(vci, peer, &segment, 1, region, remote, &immediate,
                    context);
}

PostResult LoopbackTransport::RdmaReadv(int vci, PeerVci peer,
                                        const IoSegment* local, int local_count,
                                        const MemoryRegion&,
                                        const IoSegment* remote,
                                        int remote_count, uint32_t,
                                        uint64_t context) {
  CheckPeer(peer);
  if (!Accept()) return PostResult::kRetry;
  CopySegmentsInProcess(local, local_count, remote, remote_count);
  LocalDone(vci, context);
  return PostResult::kOk;
}

PostResult LoopbackTransport::RdmaWritev(int vci, PeerVci peer,
                                         const IoSegment* local,
                                         int local_count, const MemoryRegion&,
                                         RemoteBuffer remote,
                                         const uint32_t* immediate,
                                         uint64_t context) {
  CheckPeer(peer);
  if (!Accept()) return PostResult::kRetry;
  size_t offset = 0;
  for (int i = 0; i < local_count; ++i) {
    if (local[i].length == 0) continue;
    std::memcpy(reinterpret_cast<void*>(remote.address + offset),
                reinterpret_cast<const void*>(local[i].address),
                local[i].length);
    offset += local[i].length;
  }
  if (immediate != nullptr) {
    Entry landed;
    landed.completion.type = CompletionType::kWriteImmediate;
    landed.completion.peer = 0;
    landed.completion.peer_vci = vci;
    landed.completion.length = offset;
    landed.completion.immediate = *immediate;
    Deliver(peer.vci, std::move(landed));
  }
  LocalDone(vci, context);
  return PostResult::kOk;
}

int LoopbackTransport::Poll(int vci, CompletionHandler& handler,
                            int max_completions) {
  Inbox& inbox = inboxes_[vci];
  int handled = 0;
  while (handled < max_completions) {
    Entry entry;
    {
      std::lock_guard<std::mutex> lock(inbox.mutex);
      if (inbox.entries.empty()) break;
      entry = std::move(inbox.entries.front());
      inbox.entries.pop_front();
    }
    // The handler may post to this very inbox: no lock is held here.
    if (entry.completion.type == CompletionType::kReceive) {
      entry.completion.data = entry.data.data();
    }
    handler.OnCompletion(vci, entry.completion);
    ++handled;
  }
  return handled;
}

}  // namespace minimpi::net::testing
