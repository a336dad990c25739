#include "mpi/vci/outbox.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace minimpi::vci {

Outbox::~Outbox() {
  // Messages still waiting at teardown were never going to be received.
  for (auto& [key, queue] : queues_) {
    while (Entry* entry = queue.head) {
      queue.head = entry->next;
      delete entry;
    }
  }
  for (Entry* entry : spare_) delete entry;
}

bool Outbox::Waiting(net::PeerVci peer) const {
  const auto queue = queues_.find(Key(peer));
  return queue != queues_.end() && queue->second.head != nullptr;
}

bool Outbox::Post(net::Transport& transport, int vci, net::PeerVci peer,
                  const Message& message) {
  net::PostResult result;
  size_t payload_bytes;
  if (message.pack != nullptr) {
    payload_bytes = message.packed_length;
    result = transport.SendPacked(
        vci, peer, message.header, message.header_length, message.packed_length,
        [&message](void* destination) {
          message.pack(message.pack_source, destination);
        });
  } else {
    payload_bytes = message.payload_length;
    result = transport.Send(vci, peer, message.header, message.header_length,
                            message.payload, message.payload_length);
  }
  if (result != net::PostResult::kOk) [[unlikely]] {
    counters_.refused.Add();
    return false;
  }
  const net::Link link = links_ != nullptr ? links_->Of(transport, peer.rank)
                                           : transport.LinkTo(peer.rank);
  counters_.messages_sent.Add(link);
  counters_.bytes_sent.Add(link, payload_bytes);
  return true;
}

void Outbox::Enqueue(net::PeerVci peer, const Message& message) {
  if (message.header_length > net::kMaxHeaderBytes) {
    std::fprintf(stderr, "minimpi: a message header of %zu bytes\n",
                 message.header_length);
    std::abort();
  }
  counters_.queued.Add();
  Entry* entry;
  if (!spare_.empty()) {
    entry = spare_.back();
    spare_.pop_back();
  } else {
    entry = new Entry();
  }
  entry->next = nullptr;
  entry->message = message;
  std::memcpy(entry->header, message.header, message.header_length);
  entry->message.header = entry->header;
  Queue& queue = queues_[Key(peer)];
  if (queue.head == nullptr) {
    queue.head = entry;
    backlogged_peers_.push_back(peer);
  } else {
    queue.tail->next = entry;
  }
  queue.tail = entry;
}

bool Outbox::RetryLocked(net::Transport& transport, int vci) {
  bool progressed = false;
  for (size_t i = 0; i < backlogged_peers_.size();) {
    const net::PeerVci peer = backlogged_peers_[i];
    // Looked up again after each message: its sender, told it left, may
    // queue another (to any peer), which may rehash the map.
    for (;;) {
      Queue& queue = queues_[Key(peer)];
      Entry* entry = queue.head;
      // Not TrySend: this message is the head of the queue.
      if (entry == nullptr || !Post(transport, vci, peer, entry->message)) {
        break;
      }
      progressed = true;
      queue.head = entry->next;
      const Message sent = entry->message;
      spare_.push_back(entry);
      if (sent.sender != nullptr) {
        sent.sender->OnSentLocked(vci, sent.word, sent.flags);
      }
    }
    Queue& queue = queues_[Key(peer)];
    if (queue.head == nullptr) {
      queue.tail = nullptr;
      backlogged_peers_[i] = backlogged_peers_.back();
      backlogged_peers_.pop_back();
    } else {
      ++i;
    }
  }
  return progressed;
}

bool Outbox::Withdraw(net::PeerVci peer,
                      absl::FunctionRef<bool(const Message&)> is_it) {
  const auto found = queues_.find(Key(peer));
  if (found == queues_.end()) return false;
  Queue& queue = found->second;
  Entry* previous = nullptr;
  for (Entry* entry = queue.head; entry != nullptr;
       previous = entry, entry = entry->next) {
    if (!is_it(entry->message)) continue;
    (previous == nullptr ? queue.head : previous->next) = entry->next;
    if (queue.tail == entry) queue.tail = previous;
    // An emptied queue leaves its peer on backlogged_peers_; the next retry
    // drops it.
    spare_.push_back(entry);
    return true;
  }
  return false;
}

}  // namespace minimpi::vci
