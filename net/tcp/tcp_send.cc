// Posting on net/tcp: connections made on first use, frames written at
// once with writev or queued when the socket is full (kRetry only when
// nothing could be written), and RDMA emulated by frames that carry or
// ask for the bytes.
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "net/tcp/tcp_internal.h"
#include "net/tcp/tcp_transport.h"

namespace minimpi::net::tcp {

TcpTransport::Connection*& TcpTransport::SlotTo(Vci& state, PeerVci peer) {
  if (state.to_peer.empty()) {
    // Room for peers added later too, so a slot never moves.
    state.to_peer.assign(size_t(size_ + kMaxDynamicPeers) * num_vcis_, nullptr);
  }
  return state.to_peer[size_t(peer.rank) * num_vcis_ + peer.vci];
}

TcpTransport::Connection& TcpTransport::ConnectionTo(int vci, PeerVci peer) {
  Vci& state = vcis_[vci];
  if (peer.rank < 0 ||
      peer.rank >= peer_limit_.load(std::memory_order_acquire) ||
      peer.vci < 0 || peer.vci >= num_vcis_) {
    Die(peer.rank, absl::StrCat("was asked to reach rank ", peer.rank, " VCI ",
                                peer.vci, ", which does not exist"));
  }
  Connection*& slot = SlotTo(state, peer);
  if (slot != nullptr) return *slot;
  // A socket the peer opened to us may be waiting to be adopted: sending
  // on it spares a connection (and its handshake).
  if (state.handoff_count.load(std::memory_order_acquire) != 0) {
    TakeHandoffs(state);
    if (slot != nullptr) return *slot;
  }

  auto conn = std::make_unique<Connection>();
  conn->vci = vci;
  conn->peer = peer;
  conn->adopted = true;
  conn->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (conn->fd < 0) {
    Die(peer.rank, absl::StrCat("cannot open a socket to ", Who(peer.rank),
                                ": ", std::strerror(errno)));
  }
  SetNoDelay(conn->fd);
  SetCongestionControl(conn->fd, congestion_);  // the listener took it
  const sockaddr_in& address = addresses_[peer.rank];
  if (connect(conn->fd, reinterpret_cast<const sockaddr*>(&address),
              sizeof(address)) != 0) {
    if (errno != EINPROGRESS) {
      Die(peer.rank,
          absl::StrCat("could not connect to ", Who(peer.rank), " at ",
                       AddressText(address), ": ", std::strerror(errno)));
    }
    // Loopback and local links answer at once: skip a round through
    // epoll when the handshake is already done.
    pollfd ready = {conn->fd, POLLOUT, 0};
    int error = 0;
    socklen_t length = sizeof(error);
    if (poll(&ready, 1, 0) != 1 ||
        getsockopt(conn->fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 ||
        error != 0) {
      conn->connecting = true;
      conn->connect_deadline =
          absl::Now() + absl::Milliseconds(connect_timeout_ms_);
      ++state.connecting;
    }
  }
  conn->in_capacity = in_capacity_;
  conn->in = std::make_unique<char[]>(in_capacity_);
  Hello hello{kHelloMagic, rank_, vci, peer.vci};
  if (peer.rank >= size_) {
    // The peer knows us by our listener, not by our rank in our own job.
    hello.rank = kDynamicPeer;
    hello.listen_address = addresses_[rank_].sin_addr.s_addr;
    hello.listen_port = ntohs(addresses_[rank_].sin_port);
  }
  const iovec piece = Iov(&hello, sizeof(hello));
  Enqueue(*conn, &piece, 1, 0, 1);
  epoll_event event{};
  event.events = EPOLLIN | EPOLLOUT;
  event.data.ptr = conn.get();
  epoll_ctl(state.epoll_fd, EPOLL_CTL_ADD, conn->fd, &event);
  conn->writable_armed = true;
  state.touched.store(true, std::memory_order_relaxed);
  slot = conn.get();
  state.connections.push_back(std::move(conn));
  if (!slot->connecting) Flush(*slot);
  return *slot;
}

void TcpTransport::WatchWritable(Connection& conn, bool on) {
  if (conn.writable_armed == on || conn.closed) return;
  epoll_event event{};
  event.events = EPOLLIN | (on ? EPOLLOUT : 0);
  event.data.ptr = &conn;
  epoll_ctl(vcis_[conn.vci].epoll_fd, EPOLL_CTL_MOD, conn.fd, &event);
  conn.writable_armed = on;
}

void TcpTransport::Enqueue(Connection& conn, const iovec* pieces, int count,
                           size_t skip_bytes, int copy_count) {
  for (int i = 0; i < count; ++i) {
    size_t length = pieces[i].iov_len;
    const char* data = static_cast<const char*>(pieces[i].iov_base);
    if (skip_bytes >= length) {
      skip_bytes -= length;
      continue;
    }
    data += skip_bytes;
    length -= skip_bytes;
    skip_bytes = 0;
    OutPiece piece;
    if (i < copy_count) {
      piece.owned = std::make_unique<char[]>(length);
      std::memcpy(piece.owned.get(), data, length);
      data = piece.owned.get();
    }
    piece.data = data;
    piece.length = length;
    conn.out.push_back(std::move(piece));
  }
}

bool TcpTransport::Flush(Connection& conn) {
  if (conn.connecting || conn.closed) return false;
  while (!conn.out.empty()) {
    iovec pieces[64];
    int count = 0;
    for (auto it = conn.out.begin(); it != conn.out.end() && count < 64; ++it) {
      pieces[count++] = Iov(it->data, it->length);
    }
    msghdr message{};
    message.msg_iov = pieces;
    message.msg_iovlen = count;
    const ssize_t sent =
        sendmsg(conn.fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      DieOnSocketError(conn, errno);
    }
    size_t left = static_cast<size_t>(sent);
    while (left > 0) {
      OutPiece& front = conn.out.front();
      if (left >= front.length) {
        left -= front.length;
        conn.out.pop_front();
      } else {
        front.data += left;
        front.length -= left;
        left = 0;
      }
    }
  }
  WatchWritable(conn, !conn.out.empty());
  return conn.out.empty();
}

bool TcpTransport::CanPost(Connection& conn) {
  if (conn.out.empty() && !conn.connecting) return true;
  if (Flush(conn)) return true;
  // A connection being made takes a few posts, as a queue pair does.
  return conn.connecting && conn.out.size() < 64;
}

bool TcpTransport::SendOrQueue(Connection& conn, const iovec* pieces, int count,
                               int copy_count, bool retry_if_nothing) {
  if (!conn.out.empty() || conn.connecting) {
    // Order: nothing overtakes what is queued.
    if (!Flush(conn)) {
      if (retry_if_nothing && !CanPost(conn)) return false;
      Enqueue(conn, pieces, count, 0, copy_count);
      WatchWritable(conn, true);
      return true;
    }
  }
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += pieces[i].iov_len;
  msghdr message{};
  message.msg_iov = const_cast<iovec*>(pieces);
  message.msg_iovlen = std::min(count, kMaxIov);
  ssize_t sent;
  do {
    sent = sendmsg(conn.fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      DieOnSocketError(conn, errno);
    }
    sent = 0;
  }
  if (sent == 0 && retry_if_nothing && total > 0) return false;
  if (static_cast<size_t>(sent) < total) {
    Enqueue(conn, pieces, count, static_cast<size_t>(sent), copy_count);
    WatchWritable(conn, true);
  }
  return true;
}

PostResult TcpTransport::Send(int vci, PeerVci peer, const void* header,
                              size_t header_length, const void* payload,
                              size_t payload_length) {
  if (header_length + payload_length > max_message_) {
    Die(peer.rank,
        absl::StrCat("was asked to send a ", header_length + payload_length,
                     "-byte message; the most is ", max_message_));
  }
  std::lock_guard<std::recursive_mutex> lock(vcis_[vci].mutex);
  Connection& conn = ConnectionTo(vci, peer);
  FrameHeader frame;
  frame.type = FrameType::kMessage;
  frame.length = header_length + payload_length;
  const iovec pieces[3] = {Iov(&frame, sizeof(frame)),
                           Iov(header, header_length),
                           Iov(payload, payload_length)};
  return SendOrQueue(conn, pieces, 3, 3, true) ? PostResult::kOk
                                               : PostResult::kRetry;
}

PostResult TcpTransport::SendPacked(
    int vci, PeerVci peer, const void* header, size_t header_length,
    size_t payload_length,
    absl::FunctionRef<void(void* destination)> write_payload) {
  if (header_length + payload_length > max_message_) {
    Die(peer.rank,
        absl::StrCat("was asked to send a ", header_length + payload_length,
                     "-byte message; the most is ", max_message_));
  }
  std::lock_guard<std::recursive_mutex> lock(vcis_[vci].mutex);
  Connection& conn = ConnectionTo(vci, peer);
  // Decide before packing: the payload is written only when it will go.
  if (!CanPost(conn)) return PostResult::kRetry;
  const size_t total = kFrameBytes + header_length + payload_length;
  if (conn.pack_capacity < total) {
    conn.pack = std::make_unique<char[]>(max_message_ + kFrameBytes);
    conn.pack_capacity = max_message_ + kFrameBytes;
  }
  FrameHeader frame;
  frame.type = FrameType::kMessage;
  frame.length = header_length + payload_length;
  std::memcpy(conn.pack.get(), &frame, kFrameBytes);
  if (header_length > 0) {
    std::memcpy(conn.pack.get() + kFrameBytes, header, header_length);
  }
  write_payload(conn.pack.get() + kFrameBytes + header_length);
  const iovec piece = Iov(conn.pack.get(), total);
  // Whatever the socket does not take now is copied into the queue.
  SendOrQueue(conn, &piece, 1, 1, false);
  return PostResult::kOk;
}

PostResult TcpTransport::PostWrite(int vci, PeerVci peer,
                                   const IoSegment* local, int local_count,
                                   RemoteBuffer remote,
                                   const uint32_t* immediate,
                                   uint64_t context) {
  if (local_count < 0 || local_count > max_io_segments()) {
    Die(peer.rank, absl::StrCat("was asked to write ", local_count,
                                " segments; the most is ", max_io_segments()));
  }
  Vci& state = vcis_[vci];
  std::lock_guard<std::recursive_mutex> lock(state.mutex);
  Connection& conn = ConnectionTo(vci, peer);
  if (!CanPost(conn)) return PostResult::kRetry;
  if (state.free_ops.empty()) return PostResult::kRetry;
  const uint32_t slot = state.free_ops.back();
  iovec pieces[kMaxIov + 1];
  FrameHeader frame;
  frame.type =
      immediate != nullptr ? FrameType::kWriteImmediate : FrameType::kWrite;
  frame.immediate = immediate != nullptr ? *immediate : 0;
  frame.address = remote.address;
  frame.key = remote.remote_key;
  frame.cookie = slot;
  int count = 1;
  for (int i = 0; i < local_count; ++i) {
    if (local[i].length == 0) continue;
    frame.length += local[i].length;
    pieces[count++] =
        Iov(reinterpret_cast<const void*>(local[i].address), local[i].length);
  }
  pieces[0] = Iov(&frame, sizeof(frame));
  // The data goes straight from the caller's memory (valid until our
  // kLocalDone); only the frame header is copied if it must wait.
  if (!SendOrQueue(conn, pieces, count, 1, true)) return PostResult::kRetry;
  state.free_ops.pop_back();
  Op& op = state.ops[slot];
  op.in_use = true;
  op.context = context;
  op.peer = peer;
  op.local.clear();
  return PostResult::kOk;
}

PostResult TcpTransport::RdmaWrite(int vci, PeerVci peer, const void* local,
                                   const MemoryRegion&, RemoteBuffer remote,
                                   size_t length, uint64_t context) {
  const IoSegment segment = {reinterpret_cast<uint64_t>(local), length};
  return PostWrite(vci, peer, &segment, 1, remote, nullptr, context);
}

PostResult TcpTransport::RdmaWriteImmediate(
    int vci, PeerVci peer, const void* local, const MemoryRegion&,
    RemoteBuffer remote, size_t length, uint32_t immediate, uint64_t context) {
  const IoSegment segment = {reinterpret_cast<uint64_t>(local), length};
  return PostWrite(vci, peer, &segment, 1, remote, &immediate, context);
}

PostResult TcpTransport::RdmaWritev(int vci, PeerVci peer,
                                    const IoSegment* local, int local_count,
                                    const MemoryRegion&, RemoteBuffer remote,
                                    const uint32_t* immediate,
                                    uint64_t context) {
  return PostWrite(vci, peer, local, local_count, remote, immediate, context);
}

PostResult TcpTransport::RdmaReadv(int vci, PeerVci peer,
                                   const IoSegment* local, int local_count,
                                   const MemoryRegion&, const IoSegment* remote,
                                   int remote_count, uint32_t remote_key,
                                   uint64_t context) {
  if (local_count < 0 || remote_count < 0 || local_count > max_io_segments() ||
      remote_count > max_io_segments()) {
    Die(peer.rank,
        absl::StrCat("was asked to read ", remote_count, "/", local_count,
                     " segments; the most is ", max_io_segments()));
  }
  Vci& state = vcis_[vci];
  std::lock_guard<std::recursive_mutex> lock(state.mutex);
  Connection& conn = ConnectionTo(vci, peer);
  if (!CanPost(conn)) return PostResult::kRetry;
  if (state.free_ops.empty()) return PostResult::kRetry;
  const uint32_t slot = state.free_ops.back();
  FrameHeader frame;
  frame.type = FrameType::kReadRequest;
  frame.length = size_t(remote_count) * sizeof(RemoteSegment);
  frame.key = remote_key;
  frame.count = static_cast<uint32_t>(remote_count);
  frame.cookie = slot;
  const iovec pieces[2] = {Iov(&frame, sizeof(frame)),
                           Iov(remote, frame.length)};
  if (!SendOrQueue(conn, pieces, 2, 2, true)) return PostResult::kRetry;
  state.free_ops.pop_back();
  Op& op = state.ops[slot];
  op.in_use = true;
  op.context = context;
  op.peer = peer;
  op.local.clear();
  for (int i = 0; i < local_count; ++i) {
    if (local[i].length == 0) continue;
    op.local.push_back(
        Iov(reinterpret_cast<void*>(local[i].address), local[i].length));
  }
  return PostResult::kOk;
}

PostResult TcpTransport::RdmaRead(int vci, PeerVci peer, void* local,
                                  const MemoryRegion& local_region,
                                  RemoteBuffer remote, size_t length,
                                  uint64_t context) {
  const IoSegment mine = {reinterpret_cast<uint64_t>(local), length};
  const IoSegment theirs = {remote.address, length};
  return RdmaReadv(vci, peer, &mine, 1, local_region, &theirs, 1,
                   remote.remote_key, context);
}

}  // namespace minimpi::net::tcp
