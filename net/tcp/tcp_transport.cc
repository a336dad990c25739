// net/tcp's transport: choosing the address to listen on, setup (addresses
// through the bootstrap), teardown, errors that end the job, memory
// registration, the helper thread that moves RDMA data for idle VCIs, and
// doorbells. Posting is in tcp_send.cc, reading and progress in
// tcp_receive.cc.
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
#include "net/tcp/tcp_internal.h"

namespace minimpi::net::tcp {
namespace {

constexpr std::string_view kAddressKey = "net.tcp";

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

absl::StatusOr<std::unique_ptr<Transport>> CreateTcpTransportForOtherJobs(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  absl::StatusOr<std::unique_ptr<TcpTransport>> transport =
      TcpTransport::Create(bootstrap, settings, /*exchange_addresses=*/false);
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
      max_message_(kMaxHeaderBytes + settings.tcp_eager_max),
      connect_timeout_ms_(settings.tcp_connect_timeout_ms),
      congestion_(settings.tcp_congestion == "system"
                      ? std::string()
                      : settings.tcp_congestion),
      // Room for many small frames per read, and always for the largest
      // message or read request after the unparsed rest of the last read.
      in_capacity_(std::max<size_t>(
          64 * 1024, 2 * (kFrameBytes +
                          std::max<size_t>(max_message_,
                                           kMaxIov * sizeof(RemoteSegment))))),
      progress_interval_us_(settings.tcp_progress_us) {}

absl::StatusOr<std::unique_ptr<TcpTransport>> TcpTransport::Create(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings,
    bool exchange_addresses) {
  if (settings.num_vcis < 1 || settings.endpoint_vcis < 0) {
    return absl::InvalidArgumentError("net/tcp: need at least 1 VCI");
  }
  // Private constructor: no make_unique.
  std::unique_ptr<TcpTransport> transport(
      new TcpTransport(bootstrap, settings));
  absl::Status status =
      transport->Setup(bootstrap, settings.tcp_interface, exchange_addresses);
  if (!status.ok()) return status;
  return transport;
}

absl::Status TcpTransport::Setup(runtime::Bootstrap& bootstrap,
                                 const std::string& interface,
                                 bool exchange_addresses) {
  absl::StatusOr<in_addr> chosen = ChooseAddress(interface);
  if (!chosen.ok()) return chosen.status();
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) {
    return absl::UnavailableError(
        absl::StrCat("net/tcp: socket failed: ", std::strerror(errno)));
  }
  // Asked of the listener first, so a name the kernel refuses ends the job
  // here with the setting's name. Accepted sockets are set one by one all
  // the same (Accept), as are the ones we connect (ConnectionTo).
  if (const int error = SetCongestionControl(listen_fd_, congestion_)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "net/tcp: MINIMPI_TCP_CONGESTION=", congestion_,
        ": the kernel refused it (", std::strerror(error),
        "); /proc/sys/net/ipv4/tcp_allowed_congestion_control lists what "
        "this user may choose, and 'system' keeps the kernel's default"));
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

  addresses_.assign(size_ + kMaxDynamicPeers, sockaddr_in{});
  addresses_[rank_] = mine;
  peer_limit_.store(exchange_addresses ? size_ : 0, std::memory_order_release);
  // One exchange: every rank's listener and the settings that must agree.
  absl::Status status;
  if (exchange_addresses) {
    status = bootstrap.Put(
        kAddressKey,
        absl::StrCat(AddressText(mine), " ", num_vcis_, " ", max_message_));
  }
  if (status.ok() && exchange_addresses) status = bootstrap.Commit();
  if (status.ok() && exchange_addresses) status = bootstrap.Fence();
  if (!status.ok()) return status;
  for (int peer = 0; exchange_addresses && peer < size_; ++peer) {
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
  if (exchange_addresses) StartProgressThread();
  return absl::OkStatus();
}

void TcpTransport::StartProgressThread() {
  std::call_once(progress_started_, [this] {
    if (progress_interval_us_ > 0) {
      progress_thread_ = std::thread([this] { ProgressLoop(); });
    }
  });
}

absl::StatusOr<std::string> TcpTransport::DynamicAddress() {
  return AddressText(addresses_[rank_]);
}

absl::Status TcpTransport::AddPeer(int rank, const std::string& address) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(address, absl::MaxSplits(':', 1));
  sockaddr_in parsed{};
  parsed.sin_family = AF_INET;
  int port = 0;
  if (fields.size() != 2 ||
      inet_pton(AF_INET, std::string(fields[0]).c_str(), &parsed.sin_addr) !=
          1 ||
      !absl::SimpleAtoi(fields[1], &port) || port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "net/tcp: malformed address of a process of another job: '", address,
        "'"));
  }
  parsed.sin_port = htons(static_cast<uint16_t>(port));
  if (rank < size_ || rank >= size_ + kMaxDynamicPeers) {
    return absl::ResourceExhaustedError(
        absl::StrCat("net/tcp: cannot add peer ", rank, ": at most ",
                     kMaxDynamicPeers, " processes of other jobs per process"));
  }
  {
    std::lock_guard<std::mutex> lock(accept_mutex_);
    addresses_[rank] = parsed;
    dynamic_by_listener_[(uint64_t(parsed.sin_addr.s_addr) << 16) |
                         uint64_t(port)] = rank;
    if (peer_limit_.load(std::memory_order_relaxed) <= rank) {
      peer_limit_.store(rank + 1, std::memory_order_release);
    }
    for (size_t i = 0; i < parked_.size();) {
      if (DynamicPeerAt(parked_[i].listen_address, parked_[i].listen_port) !=
          rank) {
        ++i;
        continue;
      }
      HandOver(parked_fds_[i], parked_[i], rank);
      parked_.erase(parked_.begin() + i);
      parked_fds_.erase(parked_fds_.begin() + i);
    }
  }
  StartProgressThread();
  return absl::OkStatus();
}

int TcpTransport::DynamicPeerAt(uint32_t address, uint32_t port) const {
  auto it = dynamic_by_listener_.find((uint64_t(address) << 16) |
                                      uint64_t(port & 0xffff));
  return it == dynamic_by_listener_.end() ? kDynamicPeer : it->second;
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
    for (int fd : parked_fds_) close(fd);
  }
  if (accept_epoll_fd_ >= 0) close(accept_epoll_fd_);
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::string TcpTransport::Who(int rank) const {
  if (rank >= size_) {
    return absl::StrCat("a process of another job (",
                        AddressText(addresses_[rank]), ")");
  }
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

std::string TcpTransport::CongestionControlForTesting(int vci, PeerVci peer) {
  Vci& state = vcis_[vci];
  std::lock_guard<std::recursive_mutex> lock(state.mutex);
  TakeHandoffs(state);
  Connection* conn = SlotTo(state, peer);
  if (conn == nullptr) return "";
  char name[16] = {};
  socklen_t length = sizeof(name);
  if (getsockopt(conn->fd, IPPROTO_TCP, TCP_CONGESTION, name, &length) != 0) {
    return "";
  }
  return std::string(name, strnlen(name, sizeof(name)));
}

int TcpTransport::ConnectionCountForTesting(int vci) const {
  Vci& state = vcis_[vci];
  // The helper thread may be adopting connections right now.
  std::lock_guard<std::recursive_mutex> lock(state.mutex);
  return static_cast<int>(state.connections.size()) +
         state.handoff_count.load(std::memory_order_acquire);
}

}  // namespace minimpi::net::tcp
