// Reading and progress on net/tcp: accepting connections, parsing frames
// (messages, writes landed in place after their key is checked, read
// requests answered from registered memory), completions, and polling a
// VCI's sockets.
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

void TcpTransport::TakeHandoffs(Vci& state) {
  std::lock_guard<std::mutex> lock(state.handoff_mutex);
  for (auto& conn : state.handoff) {
    conn->adopted = true;
    // Our messages to the initiator's VCI go back on its socket unless we
    // already send on one of our own (switching would let a later message
    // overtake an earlier one). One socket carrying both directions lets
    // the kernel's acknowledgements ride on the answers: apart, every small
    // message also cost a pure ACK, about 4 us a round trip over veth.
    Connection*& slot = SlotTo(state, conn->peer);
    if (slot == nullptr) slot = conn.get();
    state.connections.push_back(std::move(conn));
  }
  state.handoff.clear();
  state.handoff_count.store(0, std::memory_order_relaxed);
}

void TcpTransport::Accept() {
  // Whichever VCI gets here first accepts for all; the others move on.
  if (!accept_mutex_.try_lock()) return;
  epoll_event events[32];
  const int ready = epoll_wait(accept_epoll_fd_, events, 32, 0);
  for (int i = 0; i < ready; ++i) {
    const int fd = events[i].data.fd;
    if (fd == listen_fd_) {
      while (true) {
        const int accepted =
            accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (accepted < 0) break;  // EAGAIN, or a connection already gone
        SetNoDelay(accepted);
        SetCongestionControl(accepted, congestion_);  // the listener took it
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.fd = accepted;
        epoll_ctl(accept_epoll_fd_, EPOLL_CTL_ADD, accepted, &event);
        unidentified_[accepted].fd = accepted;
      }
      continue;
    }
    auto it = unidentified_.find(fd);
    if (it == unidentified_.end()) continue;
    Unidentified& pending = it->second;
    // Exactly the hello: what follows belongs to the VCI it names.
    const ssize_t got =
        recv(fd, reinterpret_cast<char*>(&pending.hello) + pending.received,
             sizeof(Hello) - pending.received, MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    const Hello& hello = pending.hello;
    const bool complete = got > 0 && (pending.received += got) == sizeof(Hello);
    if (got > 0 && !complete) continue;
    epoll_ctl(accept_epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    const int peer_rank =
        complete && hello.rank == kDynamicPeer
            ? DynamicPeerAt(hello.listen_address, hello.listen_port)
            : hello.rank;
    if (complete && hello.magic == kHelloMagic && hello.rank == kDynamicPeer &&
        peer_rank == kDynamicPeer && hello.target_vci >= 0 &&
        hello.target_vci < num_vcis_ && hello.vci >= 0 &&
        hello.vci < num_vcis_) {
      // A process of another job that added us before we added it: its
      // socket waits, its bytes unread, until AddPeer names it.
      parked_.push_back(hello);
      parked_fds_.push_back(fd);
      unidentified_.erase(it);
      continue;
    }
    if (!complete || hello.magic != kHelloMagic || peer_rank < 0 ||
        peer_rank >= peer_limit_.load(std::memory_order_acquire) ||
        hello.target_vci < 0 || hello.target_vci >= num_vcis_ ||
        hello.vci < 0 || hello.vci >= num_vcis_) {
      // Gone before it said who it was, or not one of ours: nobody to
      // report to.
      close(fd);
      unidentified_.erase(it);
      continue;
    }
    const Hello identified = hello;  // erase frees `hello`
    unidentified_.erase(it);
    HandOver(fd, identified, peer_rank);
  }
  accept_mutex_.unlock();
}

void TcpTransport::HandOver(int fd, const Hello& hello, int peer_rank) {
  auto conn = std::make_unique<Connection>();
  conn->fd = fd;
  conn->vci = hello.target_vci;
  conn->peer = {peer_rank, hello.vci};
  conn->in_capacity = in_capacity_;
  conn->in = std::make_unique<char[]>(in_capacity_);
  Connection* raw = conn.get();
  Vci& target = vcis_[hello.target_vci];
  const int target_vci = hello.target_vci;
  {
    std::lock_guard<std::mutex> lock(target.handoff_mutex);
    target.handoff.push_back(std::move(conn));
    target.handoff_count.fetch_add(1, std::memory_order_release);
  }
  target.touched.store(true, std::memory_order_relaxed);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = raw;
  epoll_ctl(target.epoll_fd, EPOLL_CTL_ADD, fd, &event);
  RingDoorbell(target_vci);
  if (Transport* other = also_ring_.load(std::memory_order_acquire)) {
    other->RingDoorbell(target_vci);
  }
}

void TcpTransport::CompleteOp(Connection& conn, uint64_t cookie,
                              const char* what) {
  Vci& state = vcis_[conn.vci];
  if (cookie >= kMaxOutstandingOps || !state.ops[cookie].in_use) {
    Die(conn.peer.rank,
        absl::StrCat("got a ", what, " from ", Who(conn.peer.rank),
                     " for no operation it has posted"));
  }
  Op& op = state.ops[cookie];
  Completion completion;
  completion.type = CompletionType::kLocalDone;
  completion.peer = op.peer.rank;
  completion.peer_vci = op.peer.vci;
  completion.context = op.context;
  state.pending.push_back(completion);
  op.in_use = false;
  op.local.clear();
  state.free_ops.push_back(static_cast<uint32_t>(cookie));
}

void TcpTransport::FinishBody(Connection& conn) {
  if (conn.body == Body::kReadResponse) {
    CompleteOp(conn, conn.body_cookie, "read response");
  } else {
    // Every byte is in place: only now the notice, then the ack.
    if (conn.body == Body::kWriteImmediate) {
      Completion completion;
      completion.type = CompletionType::kWriteImmediate;
      completion.peer = conn.peer.rank;
      completion.peer_vci = conn.peer.vci;
      completion.length = conn.body_total;
      completion.immediate = conn.body_immediate;
      vcis_[conn.vci].pending.push_back(completion);
    }
    FrameHeader ack;
    ack.type = FrameType::kWriteAck;
    ack.cookie = conn.body_cookie;
    const iovec piece = Iov(&ack, sizeof(ack));
    SendOrQueue(conn, &piece, 1, 1, false);
  }
  conn.body = Body::kNone;
  conn.body_iov.clear();
  conn.body_next = 0;
  conn.body_left = 0;
}

void TcpTransport::AnswerRead(Connection& conn, const FrameHeader& frame,
                              const RemoteSegment* segments) {
  std::vector<iovec> pieces(frame.count + 1);
  FrameHeader response;
  response.type = FrameType::kReadResponse;
  response.cookie = frame.cookie;
  int count = 1;
  for (uint32_t i = 0; i < frame.count; ++i) {
    CheckRemoteAccess(conn, "read", frame.key, segments[i].address,
                      segments[i].length);
    if (segments[i].length == 0) continue;
    response.length += segments[i].length;
    pieces[count++] = Iov(reinterpret_cast<const void*>(segments[i].address),
                          segments[i].length);
  }
  pieces[0] = Iov(&response, sizeof(response));
  // Straight from registered memory; only the header is copied if queued.
  SendOrQueue(conn, pieces.data(), count, 1, false);
}

// Moves `bytes` of body that landed in place (readv) or were copied there.
static void AdvanceBody(std::vector<iovec>& body, size_t& next, size_t bytes) {
  while (bytes > 0) {
    iovec& piece = body[next];
    const size_t n = std::min(bytes, piece.iov_len);
    piece.iov_base = static_cast<char*>(piece.iov_base) + n;
    piece.iov_len -= n;
    bytes -= n;
    if (piece.iov_len == 0) ++next;
  }
}

TcpTransport::ParseEnd TcpTransport::Parse(Connection& conn,
                                           CompletionHandler& handler,
                                           int& handled, int max_completions) {
  Vci& state = vcis_[conn.vci];
  auto garbled = [&](const FrameHeader& frame) {
    Die(conn.peer.rank,
        absl::StrCat("got a garbled frame (type ", uint32_t(frame.type),
                     ", length ", frame.length, ") from ",
                     Who(conn.peer.rank)));
  };
  while (true) {
    if (conn.body != Body::kNone) {
      // Bytes a batched read took past the last header go in place first.
      const size_t buffered =
          std::min(conn.in_end - conn.in_begin, conn.body_left);
      size_t copied = 0;
      while (copied < buffered) {
        iovec& piece = conn.body_iov[conn.body_next];
        const size_t n = std::min(buffered - copied, piece.iov_len);
        std::memcpy(piece.iov_base, conn.in.get() + conn.in_begin + copied, n);
        AdvanceBody(conn.body_iov, conn.body_next, n);
        copied += n;
      }
      conn.in_begin += buffered;
      conn.body_left -= buffered;
      if (conn.body_left > 0) return ParseEnd::kNeedBytes;
      FinishBody(conn);
      continue;
    }
    const size_t available = conn.in_end - conn.in_begin;
    if (available < kFrameBytes) return ParseEnd::kNeedBytes;
    FrameHeader frame;
    std::memcpy(&frame, conn.in.get() + conn.in_begin, kFrameBytes);
    switch (frame.type) {
      case FrameType::kMessage: {
        if (frame.length > max_message_) garbled(frame);
        if (available < kFrameBytes + frame.length) {
          return ParseEnd::kNeedBytes;
        }
        // Notices produced earlier on this connection go first.
        DrainPending(state, handler, handled, max_completions);
        if (handled >= max_completions || !state.pending.empty()) {
          return ParseEnd::kStopped;
        }
        Completion completion;
        completion.type = CompletionType::kReceive;
        completion.peer = conn.peer.rank;
        completion.peer_vci = conn.peer.vci;
        completion.data = conn.in.get() + conn.in_begin + kFrameBytes;
        completion.length = frame.length;
        conn.in_begin += kFrameBytes + frame.length;
        ++handled;
        // The buffer is not touched until the handler returns.
        handler.OnCompletion(conn.vci, completion);
        break;
      }
      case FrameType::kWrite:
      case FrameType::kWriteImmediate:
        CheckRemoteAccess(conn, "write", frame.key, frame.address,
                          frame.length);
        conn.in_begin += kFrameBytes;
        conn.body = frame.type == FrameType::kWrite ? Body::kWrite
                                                    : Body::kWriteImmediate;
        conn.body_iov.assign(
            1, Iov(reinterpret_cast<void*>(frame.address), frame.length));
        conn.body_next = 0;
        conn.body_left = conn.body_total = frame.length;
        conn.body_immediate = frame.immediate;
        conn.body_cookie = frame.cookie;
        break;
      case FrameType::kReadRequest: {
        if (frame.count > uint32_t(kMaxIov) ||
            frame.length != frame.count * sizeof(RemoteSegment)) {
          garbled(frame);
        }
        if (available < kFrameBytes + frame.length) {
          return ParseEnd::kNeedBytes;
        }
        std::vector<RemoteSegment> segments(frame.count);
        std::memcpy(segments.data(),
                    conn.in.get() + conn.in_begin + kFrameBytes, frame.length);
        conn.in_begin += kFrameBytes + frame.length;
        AnswerRead(conn, frame, segments.data());
        break;
      }
      case FrameType::kWriteAck:
        conn.in_begin += kFrameBytes;
        CompleteOp(conn, frame.cookie, "write acknowledgement");
        break;
      case FrameType::kReadResponse: {
        if (frame.cookie >= kMaxOutstandingOps ||
            !state.ops[frame.cookie].in_use) {
          garbled(frame);
        }
        Op& op = state.ops[frame.cookie];
        size_t expected = 0;
        for (const iovec& piece : op.local) expected += piece.iov_len;
        if (expected != frame.length) garbled(frame);
        conn.in_begin += kFrameBytes;
        conn.body = Body::kReadResponse;
        conn.body_iov = op.local;
        conn.body_next = 0;
        conn.body_left = conn.body_total = frame.length;
        conn.body_cookie = frame.cookie;
        break;
      }
      case FrameType::kBye:
        conn.in_begin += kFrameBytes;
        conn.bye_received = true;
        break;
      default:
        garbled(frame);
    }
  }
}

void TcpTransport::OnReadable(Connection& conn, CompletionHandler& handler,
                              int& handled, int max_completions) {
  // Bounded, so one busy socket cannot starve the others.
  for (int round = 0; round < 64 && !conn.closed; ++round) {
    if (conn.in_begin == conn.in_end) {
      conn.in_begin = conn.in_end = 0;
    } else if (conn.in_capacity - conn.in_end < conn.in_capacity / 2) {
      std::memmove(conn.in.get(), conn.in.get() + conn.in_begin,
                   conn.in_end - conn.in_begin);
      conn.in_end -= conn.in_begin;
      conn.in_begin = 0;
    }
    ssize_t got;
    size_t asked = 0;
    if (conn.body != Body::kNone && conn.body_left > 0) {
      // The body straight into place, and whatever follows it into the
      // buffer, in one call.
      iovec pieces[kMaxIov];
      int count = 0;
      for (size_t i = conn.body_next;
           i < conn.body_iov.size() && count < kMaxIov - 1; ++i) {
        pieces[count++] = conn.body_iov[i];
      }
      pieces[count++] =
          Iov(conn.in.get() + conn.in_end, conn.in_capacity - conn.in_end);
      for (int i = 0; i < count; ++i) asked += pieces[i].iov_len;
      got = readv(conn.fd, pieces, count);
      if (got > 0) {
        const size_t in_place = std::min<size_t>(got, conn.body_left);
        AdvanceBody(conn.body_iov, conn.body_next, in_place);
        conn.body_left -= in_place;
        conn.in_end += got - in_place;
      }
    } else {
      asked = conn.in_capacity - conn.in_end;
      got = recv(conn.fd, conn.in.get() + conn.in_end, asked, MSG_DONTWAIT);
      if (got > 0) conn.in_end += got;
    }
    if (got == 0) {
      const bool mid = conn.body != Body::kNone || conn.in_end > conn.in_begin;
      if (!conn.bye_received || mid) DieOnEof(conn);
      // A clean goodbye: the socket is done.
      epoll_ctl(vcis_[conn.vci].epoll_fd, EPOLL_CTL_DEL, conn.fd, nullptr);
      conn.closed = true;
      return;
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      DieOnSocketError(conn, errno);
    }
    if (Parse(conn, handler, handled, max_completions) == ParseEnd::kStopped) {
      if (!conn.in_backlog) {
        conn.in_backlog = true;
        vcis_[conn.vci].backlog.push_back(&conn);
      }
      return;
    }
    // A short read emptied the socket: asking again would only cost a
    // system call to hear EAGAIN (epoll reports the next bytes).
    if (static_cast<size_t>(got) < asked) return;
  }
}

void TcpTransport::OnWritable(Connection& conn) {
  if (conn.connecting) {
    int error = 0;
    socklen_t length = sizeof(error);
    getsockopt(conn.fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      Die(conn.peer.rank,
          absl::StrCat("could not connect to ", Who(conn.peer.rank), " at ",
                       AddressText(addresses_[conn.peer.rank]), ": ",
                       std::strerror(error)));
    }
    conn.connecting = false;
    --vcis_[conn.vci].connecting;
  }
  Flush(conn);
}

void TcpTransport::CheckConnectTimeouts(Vci& state) {
  const absl::Time now = absl::Now();
  for (const auto& conn : state.connections) {
    if (conn->connecting && now > conn->connect_deadline) {
      Die(conn->peer.rank,
          absl::StrCat("could not connect to ", Who(conn->peer.rank), " at ",
                       AddressText(addresses_[conn->peer.rank]), " within ",
                       connect_timeout_ms_, " ms: ", std::strerror(ETIMEDOUT)));
    }
  }
}

void TcpTransport::DrainPending(Vci& state, CompletionHandler& handler,
                                int& handled, int max_completions) {
  while (handled < max_completions && !state.pending.empty()) {
    // Copied out first: the handler may post, and so push new entries.
    const Completion completion = state.pending.front();
    state.pending.pop_front();
    ++handled;
    handler.OnCompletion(static_cast<int>(&state - vcis_.get()), completion);
  }
}

int TcpTransport::Poll(int vci, CompletionHandler& handler,
                       int max_completions) {
  Vci& state = vcis_[vci];
  std::lock_guard<std::recursive_mutex> lock(state.mutex);
  state.polls.fetch_add(1, std::memory_order_relaxed);
  return PollLocked(vci, &handler, max_completions);
}

// A handler that is never called: the progress thread passes it with no
// room for completions.
class NoHandler : public CompletionHandler {
 public:
  void OnCompletion(int, const Completion&) override {}
};

int TcpTransport::PollLocked(int vci, CompletionHandler* handler,
                             int max_completions) {
  Vci& state = vcis_[vci];
  const bool progress_only = handler == nullptr;
  NoHandler none;
  CompletionHandler& to = progress_only ? none : *handler;
  if (progress_only) max_completions = 0;
  int handled = 0;
  if (state.handoff_count.load(std::memory_order_acquire) != 0) {
    TakeHandoffs(state);
  }
  DrainPending(state, to, handled, max_completions);
  if (!progress_only && !state.backlog.empty() && handled < max_completions) {
    std::vector<Connection*> backlog;
    backlog.swap(state.backlog);
    for (size_t i = 0; i < backlog.size(); ++i) {
      Connection& conn = *backlog[i];
      conn.in_backlog = false;
      if (handled < max_completions &&
          Parse(conn, to, handled, max_completions) == ParseEnd::kNeedBytes) {
        continue;
      }
      conn.in_backlog = true;
      state.backlog.push_back(&conn);
    }
  }
  if (progress_only || handled < max_completions) {
    epoll_event events[64];
    const int ready = epoll_wait(state.epoll_fd, events, 64, 0);
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.u64 == kAcceptTag) {
        Accept();
        continue;
      }
      Connection& conn = *static_cast<Connection*>(events[i].data.ptr);
      if (!conn.adopted) TakeHandoffs(state);
      if (conn.closed) continue;
      if ((events[i].events & (EPOLLOUT | EPOLLERR)) != 0 &&
          (conn.connecting || !conn.out.empty())) {
        OnWritable(conn);
      }
      if ((events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0 &&
          !conn.in_backlog && (progress_only || handled < max_completions)) {
        OnReadable(conn, to, handled, max_completions);
      }
    }
  }
  if (state.connecting > 0) CheckConnectTimeouts(state);
  DrainPending(state, to, handled, max_completions);
  return handled;
}

}  // namespace minimpi::net::tcp
