#include "net/tcp/tcp_transport.h"

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

namespace minimpi::net::tcp {
namespace {

constexpr std::string_view kAddressKey = "net.tcp";
// Marks the process-wide accept set among a VCI's epoll events (connections
// are pointers, never 1).
constexpr uint64_t kAcceptTag = 1;
constexpr int kMaxIov = 1024;  // IOV_MAX on Linux
constexpr size_t kFrameBytes = sizeof(FrameHeader);
static_assert(sizeof(IoSegment) == sizeof(RemoteSegment));

std::string AddressText(const sockaddr_in& address) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &address.sin_addr, text, sizeof(text));
  return absl::StrCat(text, ":", ntohs(address.sin_port));
}

void SetNoDelay(int fd) {
  // Nagle would hold small frames back waiting for acknowledgements.
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// The address to listen on: Settings::tcp_interface names an interface or
// is an IPv4 address; empty picks the first non-loopback IPv4 interface
// that is up, else loopback.
absl::StatusOr<in_addr> ChooseAddress(const std::string& interface) {
  in_addr address{};
  if (!interface.empty() && inet_pton(AF_INET, interface.c_str(), &address)) {
    return address;
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return absl::UnavailableError(
        absl::StrCat("net/tcp: getifaddrs failed: ", std::strerror(errno)));
  }
  bool found = false;
  for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) {
      continue;
    }
    const bool up = (entry->ifa_flags & IFF_UP) != 0;
    const bool loopback = (entry->ifa_flags & IFF_LOOPBACK) != 0;
    if (interface.empty() ? (up && !loopback) : interface == entry->ifa_name) {
      address = reinterpret_cast<sockaddr_in*>(entry->ifa_addr)->sin_addr;
      found = true;
      break;
    }
  }
  freeifaddrs(list);
  if (found) return address;
  if (!interface.empty()) {
    return absl::NotFoundError(
        absl::StrCat("net/tcp: MINIMPI_TCP_IF=", interface,
                     " is neither an IPv4 address nor an interface with one"));
  }
  address.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

iovec Iov(const void* data, size_t length) {
  return {const_cast<void*>(data), length};
}

}  // namespace

absl::StatusOr<std::string> ListenAddress(const std::string& interface) {
  absl::StatusOr<in_addr> address = ChooseAddress(interface);
  if (!address.ok()) return address.status();
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &*address, text, sizeof(text));
  return std::string(text);
}

absl::StatusOr<std::unique_ptr<Transport>> CreateTcpTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  absl::StatusOr<std::unique_ptr<TcpTransport>> transport =
      TcpTransport::Create(bootstrap, settings);
  if (!transport.ok()) return transport.status();
  return std::unique_ptr<Transport>(std::move(*transport));
}

TcpTransport::TcpTransport(runtime::Bootstrap& bootstrap,
                           const runtime::Settings& settings)
    : bootstrap_(&bootstrap),
      rank_(bootstrap.rank()),
      size_(bootstrap.size()),
      num_vcis_(settings.num_vcis + settings.endpoint_vcis),
      shared_vcis_(settings.num_vcis),
      max_message_(kMaxHeaderBytes + settings.eager_max),
      connect_timeout_ms_(settings.tcp_connect_timeout_ms),
      progress_interval_us_(settings.tcp_progress_us),
      // Room for many small frames per read, and always for the largest
      // message or read request after the unparsed rest of the last read.
      in_capacity_(std::max<size_t>(
          64 * 1024, 2 * (kFrameBytes +
                          std::max<size_t>(max_message_,
                                           kMaxIov * sizeof(RemoteSegment))))) {
}

absl::StatusOr<std::unique_ptr<TcpTransport>> TcpTransport::Create(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  if (settings.num_vcis < 1 || settings.endpoint_vcis < 0) {
    return absl::InvalidArgumentError("net/tcp: need at least 1 VCI");
  }
  // Private constructor: no make_unique.
  std::unique_ptr<TcpTransport> transport(
      new TcpTransport(bootstrap, settings));
  absl::Status status = transport->Setup(bootstrap, settings.tcp_interface);
  if (!status.ok()) return status;
  return transport;
}

absl::Status TcpTransport::Setup(runtime::Bootstrap& bootstrap,
                                 const std::string& interface) {
  absl::StatusOr<in_addr> chosen = ChooseAddress(interface);
  if (!chosen.ok()) return chosen.status();
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) {
    return absl::UnavailableError(
        absl::StrCat("net/tcp: socket failed: ", std::strerror(errno)));
  }
  sockaddr_in mine{};
  mine.sin_family = AF_INET;
  mine.sin_addr = *chosen;
  mine.sin_port = 0;  // ephemeral
  socklen_t length = sizeof(mine);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&mine), sizeof(mine)) != 0 ||
      listen(listen_fd_, SOMAXCONN) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&mine), &length) !=
          0) {
    return absl::UnavailableError(absl::StrCat("net/tcp: cannot listen on ",
                                               AddressText(mine), ": ",
                                               std::strerror(errno)));
  }

  // One exchange: every rank's listener and the settings that must agree.
  absl::Status status = bootstrap.Put(
      kAddressKey,
      absl::StrCat(AddressText(mine), " ", num_vcis_, " ", max_message_));
  if (status.ok()) status = bootstrap.Commit();
  if (status.ok()) status = bootstrap.Fence();
  if (!status.ok()) return status;
  addresses_.assign(size_, sockaddr_in{});
  for (int peer = 0; peer < size_; ++peer) {
    absl::StatusOr<std::string> text = bootstrap.Get(peer, kAddressKey);
    if (!text.ok()) return text.status();
    std::vector<absl::string_view> fields =
        absl::StrSplit(*text, absl::ByAnyChar(" :"));
    int port = 0, vcis = 0;
    size_t max_message = 0;
    sockaddr_in& address = addresses_[peer];
    address.sin_family = AF_INET;
    if (fields.size() != 4 ||
        inet_pton(AF_INET, std::string(fields[0]).c_str(), &address.sin_addr) !=
            1 ||
        !absl::SimpleAtoi(fields[1], &port) ||
        !absl::SimpleAtoi(fields[2], &vcis) ||
        !absl::SimpleAtoi(fields[3], &max_message)) {
      return absl::InternalError(absl::StrCat("net/tcp: malformed address of ",
                                              Who(peer), ": '", *text, "'"));
    }
    address.sin_port = htons(static_cast<uint16_t>(port));
    if (vcis != num_vcis_ || max_message != max_message_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "net/tcp: ", Who(peer), " uses ", vcis, " VCIs and ", max_message,
          "-byte messages but ", Who(rank_), " uses ", num_vcis_, " and ",
          max_message_, "; every rank must see the same MINIMPI_* settings"));
    }
  }

  accept_epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (accept_epoll_fd_ < 0) {
    return absl::UnavailableError(
        absl::StrCat("net/tcp: epoll_create1 failed: ", std::strerror(errno)));
  }
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = listen_fd_;
  epoll_ctl(accept_epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &event);

  vcis_ = std::make_unique<Vci[]>(num_vcis_);
  for (int v = 0; v < num_vcis_; ++v) {
    Vci& state = vcis_[v];
    state.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (DoorbellOf(v) == v) {
      state.doorbell_fd = epoll_create1(EPOLL_CLOEXEC);
      state.event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    }
    if (state.epoll_fd < 0 ||
        (DoorbellOf(v) == v && (state.doorbell_fd < 0 || state.event_fd < 0))) {
      return absl::UnavailableError(absl::StrCat(
          "net/tcp: cannot make epoll sets: ", std::strerror(errno)));
    }
    event.events = EPOLLIN;
    event.data.u64 = kAcceptTag;
    epoll_ctl(state.epoll_fd, EPOLL_CTL_ADD, accept_epoll_fd_, &event);
    if (DoorbellOf(v) == v) {
      event.data.fd = state.event_fd;
      epoll_ctl(state.doorbell_fd, EPOLL_CTL_ADD, state.event_fd, &event);
    }
    event.data.fd = state.epoll_fd;
    epoll_ctl(vcis_[DoorbellOf(v)].doorbell_fd, EPOLL_CTL_ADD, state.epoll_fd,
              &event);
    for (int op = kMaxOutstandingOps - 1; op >= 0; --op) {
      state.free_ops.push_back(op);
    }
  }
  if (progress_interval_us_ > 0) {
    progress_thread_ = std::thread([this] { ProgressLoop(); });
  }
  return absl::OkStatus();
}

TcpTransport::~TcpTransport() {
  stop_progress_.store(true, std::memory_order_relaxed);
  if (progress_thread_.joinable()) progress_thread_.join();
  if (vcis_ != nullptr) {
    for (int v = 0; v < num_vcis_; ++v) {
      Vci& state = vcis_[v];
      TakeHandoffs(state);
      for (auto& conn : state.connections) {
        if (conn->fd < 0) continue;
        if (!conn->closed && !conn->connecting) {
          // Best effort, never blocking: whatever is queued, then BYE, so
          // the peer takes the EOF that follows as a clean end.
          if (conn->out.empty() || Flush(*conn)) {
            FrameHeader bye;
            bye.type = FrameType::kBye;
            send(conn->fd, &bye, sizeof(bye), MSG_NOSIGNAL | MSG_DONTWAIT);
          }
          // Unread bytes at close would make the kernel reset the
          // connection, which the peer may still be reading the BYE from.
          shutdown(conn->fd, SHUT_WR);
          char discard[4096];
          while (recv(conn->fd, discard, sizeof(discard), MSG_DONTWAIT) > 0) {
          }
        }
        close(conn->fd);
      }
      for (int fd : {state.epoll_fd, state.doorbell_fd, state.event_fd}) {
        if (fd >= 0) close(fd);
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(accept_mutex_);
    for (auto& [fd, unidentified] : unidentified_) close(fd);
  }
  if (accept_epoll_fd_ >= 0) close(accept_epoll_fd_);
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::string TcpTransport::Who(int rank) const {
  return absl::StrCat("rank ", rank, " (", bootstrap_->node_name(rank), ")");
}

void TcpTransport::Die(int, const std::string& what) {
  const std::string line =
      absl::StrCat("minimpi: net/tcp: ", Who(rank_), " ", what);
  // Printed here as well: Slurm's PMIx plugin does not print the message
  // of an abort (minimpi's mpiexec does, as its reason for ending the job).
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  bootstrap_->Abort(1, line);
  std::abort();  // Abort does not return; this says so to the compiler
}

void TcpTransport::DieOnSocketError(const Connection& conn, int error) {
  const bool mid = conn.body != Body::kNone || conn.in_end > conn.in_begin ||
                   !conn.out.empty();
  Die(conn.peer.rank,
      absl::StrCat("lost its connection to ", Who(conn.peer.rank),
                   mid ? " in the middle of a message" : "", ": ",
                   std::strerror(error)));
}

void TcpTransport::DieOnEof(const Connection& conn) {
  const bool mid = conn.body != Body::kNone || conn.in_end > conn.in_begin;
  Die(conn.peer.rank,
      absl::StrCat("lost its connection to ", Who(conn.peer.rank),
                   mid ? " in the middle of a message" : "",
                   ": the peer closed it without saying goodbye (it exited "
                   "or crashed)"));
}

absl::StatusOr<MemoryRegion> TcpTransport::RegisterMemory(void* address,
                                                          size_t length) {
  const uint32_t key = next_key_.fetch_add(1, std::memory_order_relaxed);
  {
    std::unique_lock<std::shared_mutex> lock(regions_mutex_);
    regions_[key] = Region{reinterpret_cast<uint64_t>(address), length};
  }
  MemoryRegion region;
  region.address = address;
  region.length = length;
  region.local_key = key;
  region.remote_key = key;
  return region;
}

void TcpTransport::DeregisterMemory(const MemoryRegion& region) {
  std::unique_lock<std::shared_mutex> lock(regions_mutex_);
  regions_.erase(region.remote_key);
}

void TcpTransport::CheckRemoteAccess(const Connection& conn,
                                     const char* operation, uint32_t key,
                                     uint64_t address, uint64_t length) {
  {
    std::shared_lock<std::shared_mutex> lock(regions_mutex_);
    auto it = regions_.find(key);
    if (it != regions_.end() &&
        (length == 0 ||
         (address >= it->second.address &&
          address - it->second.address <= it->second.length &&
          length <= it->second.length - (address - it->second.address)))) {
      return;
    }
  }
  Die(conn.peer.rank,
      absl::StrCat("got an RDMA ", operation, " from ", Who(conn.peer.rank),
                   " of ", length, " bytes at 0x", absl::Hex(address),
                   " under key ", key,
                   ", which no registered region covers (remote access "
                   "error)"));
}

TcpTransport::Connection& TcpTransport::ConnectionTo(int vci, PeerVci peer) {
  Vci& state = vcis_[vci];
  if (peer.rank < 0 || peer.rank >= size_ || peer.vci < 0 ||
      peer.vci >= num_vcis_) {
    Die(peer.rank, absl::StrCat("was asked to reach rank ", peer.rank, " VCI ",
                                peer.vci, ", which does not exist"));
  }
  if (state.to_peer.empty()) {
    state.to_peer.assign(size_t(size_) * num_vcis_, nullptr);
  }
  Connection*& slot = state.to_peer[size_t(peer.rank) * num_vcis_ + peer.vci];
  if (slot != nullptr) return *slot;

  auto conn = std::make_unique<Connection>();
  conn->vci = vci;
  conn->peer = peer;
  conn->initiator = true;
  conn->adopted = true;
  conn->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (conn->fd < 0) {
    Die(peer.rank, absl::StrCat("cannot open a socket to ", Who(peer.rank),
                                ": ", std::strerror(errno)));
  }
  SetNoDelay(conn->fd);
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
  const Hello hello{kHelloMagic, rank_, vci, peer.vci};
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

void TcpTransport::TakeHandoffs(Vci& state) {
  std::lock_guard<std::mutex> lock(state.handoff_mutex);
  for (auto& conn : state.handoff) {
    conn->adopted = true;
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
    if (!complete || hello.magic != kHelloMagic || hello.rank < 0 ||
        hello.rank >= size_ || hello.target_vci < 0 ||
        hello.target_vci >= num_vcis_ || hello.vci < 0 ||
        hello.vci >= num_vcis_) {
      // Gone before it said who it was, or not one of ours: nobody to
      // report to.
      close(fd);
      unidentified_.erase(it);
      continue;
    }
    auto conn = std::make_unique<Connection>();
    conn->fd = fd;
    conn->vci = hello.target_vci;
    conn->peer = {hello.rank, hello.vci};
    conn->in_capacity = in_capacity_;
    conn->in = std::make_unique<char[]>(in_capacity_);
    Connection* raw = conn.get();
    Vci& target = vcis_[hello.target_vci];
    const int target_vci = hello.target_vci;
    unidentified_.erase(it);
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
  accept_mutex_.unlock();
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
        if (conn.initiator || frame.length > max_message_) garbled(frame);
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
        if (conn.initiator) garbled(frame);
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
        if (conn.initiator || frame.count > uint32_t(kMaxIov) ||
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
        if (!conn.initiator) garbled(frame);
        conn.in_begin += kFrameBytes;
        CompleteOp(conn, frame.cookie, "write acknowledgement");
        break;
      case FrameType::kReadResponse: {
        if (!conn.initiator || frame.cookie >= kMaxOutstandingOps ||
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

void TcpTransport::ProgressLoop() {
  while (!stop_progress_.load(std::memory_order_relaxed)) {
    usleep(progress_interval_us_);
    // A connection to a VCI that has never carried tcp traffic waits here:
    // nobody polls that VCI's sockets (callers skip a VCI that
    // MayHaveWork says is idle), so this thread hands it over, which makes
    // it busy and rings its doorbell.
    Accept();
    for (int v = 0; v < num_vcis_; ++v) {
      Vci& state = vcis_[v];
      if (!MayHaveWork(v)) continue;
      // An owner that polls needs no help, and should not meet this
      // thread on its mutex.
      const uint64_t polls = state.polls.load(std::memory_order_relaxed);
      if (polls != state.polls_seen) {
        state.polls_seen = polls;
        continue;
      }
      if (!state.mutex.try_lock()) continue;
      const size_t pending_before = state.pending.size();
      PollLocked(v, nullptr, 0);
      const bool news =
          state.pending.size() != pending_before || !state.backlog.empty();
      state.mutex.unlock();
      if (news) RingDoorbell(v);
    }
  }
}

uint64_t TcpTransport::ArmDoorbell(int vci) {
  Vci& bell = vcis_[DoorbellOf(vci)];
  bell.armed.store(true, std::memory_order_seq_cst);
  // A ring from before this arming may still sit in the eventfd; nobody
  // needs it once nobody sleeps.
  if (bell.sleepers.load(std::memory_order_seq_cst) == 0) {
    uint64_t count;
    while (read(bell.event_fd, &count, sizeof(count)) > 0) {
    }
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return bell.rings.load(std::memory_order_seq_cst);
}

void TcpTransport::SleepOnDoorbell(int vci, uint64_t token,
                                   int64_t timeout_ns) {
  Vci& bell = vcis_[DoorbellOf(vci)];
  bell.sleepers.fetch_add(1, std::memory_order_seq_cst);
  if (bell.rings.load(std::memory_order_seq_cst) == token) {
    // Level-triggered and consuming nothing: a socket with bytes, an
    // unaccepted connection or a ring ends it, and Poll does the work.
    // epoll_pwait2 takes the timeout in nanoseconds (a VCI that also has
    // shared-memory peers sleeps in slices of tens of microseconds);
    // epoll_wait's milliseconds are the fallback for older kernels.
    epoll_event events[8];
    const int64_t wait_ns = std::max<int64_t>(timeout_ns, 0);
    const timespec timeout = {static_cast<time_t>(wait_ns / 1'000'000'000),
                              static_cast<long>(wait_ns % 1'000'000'000)};
    if (epoll_pwait2(bell.doorbell_fd, events, 8, &timeout, nullptr) < 0 &&
        errno == ENOSYS) {
      const int64_t ms =
          std::min<int64_t>(INT_MAX, (wait_ns + 999'999) / 1'000'000);
      epoll_wait(bell.doorbell_fd, events, 8, static_cast<int>(ms));
    }
  }
  bell.sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

void TcpTransport::RingDoorbell(int vci) {
  Vci& bell = vcis_[DoorbellOf(vci)];
  if (!bell.armed.load(std::memory_order_seq_cst)) return;
  if (!bell.armed.exchange(false, std::memory_order_seq_cst)) return;
  bell.rings.fetch_add(1, std::memory_order_seq_cst);
  const uint64_t one = 1;
  ssize_t ignored = write(bell.event_fd, &one, sizeof(one));
  (void)ignored;
}

bool TcpTransport::MayHaveWork(int vci) const {
  // A peer's first connection to a VCI waits in the listener until some
  // poll accepts it: the helper thread does, every interval; without it,
  // every VCI must be polled, since any may be the first to hear.
  if (progress_interval_us_ == 0) return true;
  const Vci& state = vcis_[vci];
  return state.touched.load(std::memory_order_relaxed) ||
         state.handoff_count.load(std::memory_order_relaxed) != 0;
}

int TcpTransport::ConnectionCountForTesting(int vci) const {
  Vci& state = vcis_[vci];
  // The helper thread may be adopting connections right now.
  std::lock_guard<std::recursive_mutex> lock(state.mutex);
  return static_cast<int>(state.connections.size()) +
         state.handoff_count.load(std::memory_order_acquire);
}

}  // namespace minimpi::net::tcp
