#include "net/ib/connection_manager.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace minimpi::net::ib {
namespace {

std::string AddressText(const sockaddr_in& address) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &address.sin_addr, text, sizeof(text));
  return absl::StrCat(text, ":", ntohs(address.sin_port));
}

bool ParseAddress(const std::string& text, sockaddr_in* address) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  int port = 0;
  *address = sockaddr_in{};
  address->sin_family = AF_INET;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &port) ||
      inet_pton(AF_INET, parts[0].c_str(), &address->sin_addr) != 1) {
    return false;
  }
  address->sin_port = htons(static_cast<uint16_t>(port));
  return true;
}

// Writes all of `length` bytes to a blocking socket; false on error.
bool WriteAll(int fd, const void* data, size_t length) {
  const char* bytes = static_cast<const char*>(data);
  while (length > 0) {
    ssize_t wrote = send(fd, bytes, length, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    bytes += wrote;
    length -= static_cast<size_t>(wrote);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ConnectionManager>> ConnectionManager::Listen(
    const std::string& address, int rank, int connect_timeout_ms) {
  sockaddr_in mine{};
  mine.sin_family = AF_INET;
  if (inet_pton(AF_INET, address.c_str(), &mine.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("net/ib: bad listen address '", address, "'"));
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  socklen_t length = sizeof(mine);
  if (fd < 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&mine), sizeof(mine)) != 0 ||
      listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &length) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    return absl::UnavailableError(
        absl::StrCat("net/ib: the connection manager cannot listen on ",
                     address, ": ", std::strerror(error)));
  }
  return std::unique_ptr<ConnectionManager>(
      new ConnectionManager(fd, mine, rank, connect_timeout_ms));
}

ConnectionManager::ConnectionManager(int listen_fd, sockaddr_in address,
                                     int rank, int connect_timeout_ms)
    : listen_fd_(listen_fd),
      listen_address_(address),
      rank_(rank),
      connect_timeout_ms_(connect_timeout_ms) {}

void ConnectionManager::Stop() {
  stop_.store(true, std::memory_order_release);
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    ssize_t ignored = write(wake_fd_, &one, sizeof(one));
    (void)ignored;
  }
  if (thread_.joinable()) thread_.join();
}

ConnectionManager::~ConnectionManager() {
  Stop();
  for (auto& [rank, fd] : out_sockets_) {
    if (fd >= 0) close(fd);
  }
  for (auto& [fd, incoming] : incoming_) close(fd);
  for (int fd : {epoll_fd_, wake_fd_, listen_fd_}) {
    if (fd >= 0) close(fd);
  }
}

std::string ConnectionManager::address() const {
  return AddressText(listen_address_);
}

absl::Status ConnectionManager::Start(std::vector<std::string> peers,
                                      MessageHandler on_message,
                                      FailureHandler on_failure,
                                      std::vector<int> watch,
                                      std::function<void(int)> on_watch) {
  peers_.resize(peers.size());
  for (size_t rank = 0; rank < peers.size(); ++rank) {
    if (!ParseAddress(peers[rank], &peers_[rank])) {
      return absl::InternalError(
          absl::StrCat("net/ib: malformed connection manager address of rank ",
                       rank, ": '", peers[rank], "'"));
    }
  }
  on_message_ = std::move(on_message);
  on_failure_ = std::move(on_failure);
  on_watch_ = std::move(on_watch);
  watch_ = std::move(watch);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    return absl::UnavailableError(absl::StrCat(
        "net/ib: connection manager setup failed: ", std::strerror(errno)));
  }
  std::vector<int> fds = watch_;
  fds.push_back(listen_fd_);
  fds.push_back(wake_fd_);
  for (int fd : fds) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
  }
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void ConnectionManager::Post(int rank, const ConnectMessage& message) {
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    queue_.emplace_back(rank, message);
  }
  const uint64_t one = 1;
  ssize_t ignored = write(wake_fd_, &one, sizeof(one));
  (void)ignored;
}

int ConnectionManager::SocketTo(int rank) {
  auto found = out_sockets_.find(rank);
  if (found != out_sockets_.end()) return found->second;
  const sockaddr_in& address = peers_[rank];
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int error = fd < 0 ? errno : 0;
  if (fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&address),
                         sizeof(address)) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      pollfd wait = {fd, POLLOUT, 0};
      const int ready = poll(&wait, 1, connect_timeout_ms_);
      socklen_t length = sizeof(error);
      if (ready == 1) {
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
      } else {
        error = ETIMEDOUT;
      }
    }
  }
  if (error != 0) {
    if (fd >= 0) close(fd);
    out_sockets_[rank] = -1;
    on_failure_(rank, absl::StrCat("cannot reach the connection manager of "
                                   "rank ",
                                   rank, " at ", AddressText(address), ": ",
                                   std::strerror(error)));
    return -1;
  }
  // Messages are small and few: blocking writes, no Nagle delay.
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  out_sockets_[rank] = fd;
  return fd;
}

void ConnectionManager::SendQueued() {
  std::deque<std::pair<int, ConnectMessage>> batch;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    batch.swap(queue_);
  }
  for (auto& [rank, message] : batch) {
    if (rank == rank_) {
      on_message_(message);
      continue;
    }
    const int fd = SocketTo(rank);
    if (fd < 0) continue;
    if (!WriteAll(fd, &message, sizeof(message))) {
      on_failure_(rank, absl::StrCat("lost its connection manager's socket to "
                                     "rank ",
                                     rank, ": ", std::strerror(errno)));
    }
  }
}

void ConnectionManager::Accept() {
  while (true) {
    const int fd =
        accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto incoming = std::make_unique<Incoming>();
    incoming->fd = fd;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
    incoming_[fd] = std::move(incoming);
  }
}

void ConnectionManager::Read(Incoming& incoming) {
  while (true) {
    char* into = reinterpret_cast<char*>(&incoming.message) + incoming.received;
    ssize_t got =
        recv(incoming.fd, into, sizeof(ConnectMessage) - incoming.received, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (got <= 0) {
      // The peer's process ended (or will): nothing more comes this way.
      epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, incoming.fd, nullptr);
      const int fd = incoming.fd;
      close(fd);
      incoming_.erase(fd);
      return;
    }
    incoming.received += static_cast<size_t>(got);
    if (incoming.received == sizeof(ConnectMessage)) {
      incoming.received = 0;
      if (incoming.message.magic == kConnectMagic) {
        on_message_(incoming.message);
      }
    }
  }
}

void ConnectionManager::Loop() {
  epoll_event events[16];
  while (!stop_.load(std::memory_order_acquire)) {
    const int ready = epoll_wait(epoll_fd_, events, 16, -1);
    for (int i = 0; i < ready; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd_) {
        uint64_t count;
        while (read(wake_fd_, &count, sizeof(count)) > 0) {
        }
        if (stop_.load(std::memory_order_acquire)) return;
        SendQueued();
      } else if (fd == listen_fd_) {
        Accept();
      } else if (auto found = incoming_.find(fd); found != incoming_.end()) {
        Read(*found->second);
      } else {
        on_watch_(fd);
      }
    }
  }
}

}  // namespace minimpi::net::ib
