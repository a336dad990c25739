#include "mpi/bindings/dynamic_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/coll/basic.h"

namespace minimpi {
namespace {

constexpr char kPortPrefix[] = "minimpi-port:";

// Who a process is across jobs. Fixed size, so a group's table is one
// allgather.
struct Identity {
  char job[256] = {};     // the PMIx namespace
  int32_t job_rank = -1;  // rank in that job
  char address[64] = {};  // Transport::DynamicAddress ("" where it has none)
};

// Peers of other jobs, by (job, rank): the index each was added under. An
// index is never reused, so a process met twice is reached the same way.
// Lives as long as the transport it indexes (a new one starts it afresh).
struct PeerTable {
  std::mutex mutex;
  const net::Transport* transport = nullptr;      // guarded by mutex
  std::map<std::pair<uint64_t, int>, int> index;  // guarded by mutex
};
PeerTable& Peers() {
  static PeerTable* table = new PeerTable();
  return *table;
}

// Listening sockets of the ports this process opened, by port name.
std::mutex ports_mutex;
std::map<std::string, int>& OpenPorts() {
  static auto* ports = new std::map<std::string, int>();
  return *ports;
}

// The parents of a spawned process (its MPI_Comm_get_parent).
std::atomic<MPI_Comm> parents{MPI_COMM_NULL};

std::string ErrnoText() { return std::strerror(errno); }

absl::Status WriteAll(int fd, const void* data, size_t bytes) {
  const char* at = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t sent = send(fd, at, bytes, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) {
      return absl::UnavailableError(
          absl::StrCat("the connection to the other group broke: ",
                       sent < 0 ? ErrnoText() : "closed"));
    }
    at += sent;
    bytes -= static_cast<size_t>(sent);
  }
  return absl::OkStatus();
}

absl::Status ReadAll(int fd, void* data, size_t bytes) {
  char* at = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t got = recv(fd, at, bytes, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return absl::UnavailableError(
          absl::StrCat("the connection to the other group broke: ",
                       got < 0 ? ErrnoText() : "closed by the other side"));
    }
    at += got;
    bytes -= static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

// Sends `bytes` (length first) and returns what the other side sent the
// same way. Both sides write first: what roots swap is small next to a
// socket's buffers.
absl::StatusOr<std::vector<std::byte>> Swap(int fd, const void* data,
                                            size_t bytes) {
  const uint64_t length = bytes;
  std::vector<std::byte> message(sizeof(length) + bytes);
  std::memcpy(message.data(), &length, sizeof(length));
  if (bytes != 0) std::memcpy(message.data() + sizeof(length), data, bytes);
  absl::Status status = WriteAll(fd, message.data(), message.size());
  uint64_t remote_length = 0;
  if (status.ok()) status = ReadAll(fd, &remote_length, sizeof(remote_length));
  if (!status.ok()) return status;
  if (remote_length > (uint64_t{1} << 32)) {
    return absl::DataLossError(
        "the other group sent a malformed table (is the port minimpi's?)");
  }
  std::vector<std::byte> remote(remote_length);
  status = ReadAll(fd, remote.data(), remote.size());
  if (!status.ok()) return status;
  return remote;
}

absl::StatusOr<sockaddr_in> ParsePort(const std::string& port_name) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (port_name.rfind(kPortPrefix, 0) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", port_name, "' is not a port name MPI_Open_port gave"));
  }
  std::vector<std::string> fields = absl::StrSplit(
      port_name.substr(std::strlen(kPortPrefix)), absl::MaxSplits(':', 1));
  int port = 0;
  if (fields.size() != 2 ||
      inet_pton(AF_INET, fields[0].c_str(), &address.sin_addr) != 1 ||
      !absl::SimpleAtoi(fields[1], &port) || port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", port_name, "' is not a port name MPI_Open_port gave"));
  }
  address.sin_port = htons(static_cast<uint16_t>(port));
  return address;
}

// Both roots write, then read, several times over: with Nagle's algorithm
// each write after the first waited for the other side's delayed
// acknowledgement (about 40 ms each time).
void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// The root's socket to the other group.
absl::StatusOr<int> OpenConnection(MeetRole role,
                                   const std::string& port_name) {
  if (role == MeetRole::kAccept) {
    int listener = -1;
    {
      std::lock_guard<std::mutex> lock(ports_mutex);
      auto it = OpenPorts().find(port_name);
      if (it != OpenPorts().end()) listener = it->second;
    }
    if (listener < 0) {
      return absl::NotFoundError(absl::StrCat(
          "port '", port_name, "' was not opened by this process"));
    }
    for (;;) {
      int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        SetNoDelay(fd);
        return fd;
      }
      if (errno != EINTR && errno != ECONNABORTED) {
        return absl::UnavailableError(
            absl::StrCat("accept on port '", port_name, "': ", ErrnoText()));
      }
    }
  }
  absl::StatusOr<sockaddr_in> address = ParsePort(port_name);
  if (!address.ok()) return address.status();
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("socket: ", ErrnoText()));
  }
  if (connect(fd, reinterpret_cast<const sockaddr*>(&*address),
              sizeof(*address)) != 0) {
    std::string why = ErrnoText();
    close(fd);
    return absl::NotFoundError(
        absl::StrCat("nobody accepts on port '", port_name, "' (", why, ")"));
  }
  SetNoDelay(fd);
  return fd;
}

// MPI_Comm_connect's root, connected to a port whose listener exists: the
// kernel took the connection, but no MPI_Comm_accept may ever take it. The
// accepting root writes its table as soon as it accepts, so a readable
// socket means accepted; none within MINIMPI_CONNECT_TIMEOUT seconds is an
// error (MPI-4.1 section 11.8.2 allows the timeout), never a wait for ever.
absl::Status WaitForAccept(int fd, const std::string& port_name) {
  const int timeout_s = Instance::Get().settings().connect_timeout_s;
  if (timeout_s == 0) return absl::OkStatus();
  pollfd readable{fd, POLLIN, 0};
  int ready;
  do {
    ready = poll(&readable, 1, timeout_s * 1000);
  } while (ready < 0 && errno == EINTR);
  if (ready > 0) return absl::OkStatus();
  if (ready < 0) {
    return absl::UnavailableError(
        absl::StrCat("waiting on port '", port_name, "': ", ErrnoText()));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("nobody accepted on port '", port_name, "' within ",
                   timeout_s, " s (MINIMPI_CONNECT_TIMEOUT)"));
}

// The peer index this process reaches `remote` by (ReachProcess).
absl::StatusOr<int> PeerIndexOf(const Identity& remote) {
  const std::string job(remote.job, strnlen(remote.job, sizeof(remote.job)));
  const std::string address(remote.address,
                            strnlen(remote.address, sizeof(remote.address)));
  absl::StatusOr<int> index =
      ReachProcess(JobHash(job), remote.job_rank, address);
  if (index.ok() || !absl::IsNotFound(index.status())) return index;
  return absl::UnavailableError(absl::StrCat(
      "rank ", remote.job_rank, " of job ", job,
      " cannot be reached: its transport takes no processes of other jobs "
      "(MINIMPI_TRANSPORT=ib, or a launcher without dynamic processes)"));
}

Identity MyIdentity() {
  Instance& instance = Instance::Get();
  Identity mine;
  std::snprintf(mine.job, sizeof(mine.job), "%s",
                instance.bootstrap().job_id().c_str());
  mine.job_rank = instance.bootstrap().rank();
  std::snprintf(mine.address, sizeof(mine.address), "%s",
                MyDynamicAddress().c_str());
  return mine;
}

// The root's verdict, broadcast so every process returns the same answer.
struct Verdict {
  int32_t ok = 1;
  uint32_t message_length = 0;
  uint64_t remote_bytes = 0;
};

// Spreads the root's status (ok, or its message) over `local`.
absl::Status AgreeOnStatus(p2p::PointToPoint& p2p, Communicator& local,
                           int root, const absl::Status& at_root) {
  Verdict verdict;
  std::string message;
  if (local.rank == root && !at_root.ok()) {
    verdict.ok = 0;
    message = std::string(at_root.message());
    verdict.message_length = static_cast<uint32_t>(message.size());
  }
  coll::BcastBytes(p2p, local, &verdict, sizeof(verdict), root);
  if (verdict.ok) return absl::OkStatus();
  message.resize(verdict.message_length);
  coll::BcastBytes(p2p, local, message.data(), message.size(), root);
  return absl::UnavailableError(message);
}

}  // namespace

uint64_t JobHash(const std::string& job) {
  // libstdc++'s string hash is unseeded: every process agrees.
  return std::hash<std::string>()(job);
}

uint64_t MyJobHash() { return JobHash(Instance::Get().bootstrap().job_id()); }

std::string MyDynamicAddress() {
  absl::StatusOr<std::string> address =
      Instance::Get().transport().DynamicAddress();
  return address.ok() ? *address : std::string();
}

absl::StatusOr<int> ReachProcess(uint64_t job_hash, int job_rank,
                                 const std::string& address) {
  Instance& instance = Instance::Get();
  runtime::Bootstrap& bootstrap = instance.bootstrap();
  if (job_hash == MyJobHash()) return job_rank;
  PeerTable& table = Peers();
  std::lock_guard<std::mutex> lock(table.mutex);
  if (table.transport != &instance.transport()) {
    table.transport = &instance.transport();
    table.index.clear();
  }
  const auto key = std::make_pair(job_hash, job_rank);
  auto it = table.index.find(key);
  if (it != table.index.end()) return it->second;
  if (address.empty()) {
    return absl::NotFoundError(
        absl::StrCat("rank ", job_rank, " of another job was never met"));
  }
  const int index = bootstrap.size() + static_cast<int>(table.index.size());
  absl::Status added = instance.transport().AddPeer(index, address);
  if (!added.ok()) return added;
  table.index.emplace(key, index);
  return index;
}

absl::StatusOr<std::string> OpenPort() {
  Instance& instance = Instance::Get();
  // The address net/tcp listens on, so the other job finds the port where
  // it finds us.
  std::string host = "127.0.0.1";
  absl::StatusOr<std::string> transport_address =
      instance.transport().DynamicAddress();
  if (transport_address.ok()) {
    host = transport_address->substr(0, transport_address->find(':'));
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("socket: ", ErrnoText()));
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    std::string why = ErrnoText();
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", host, ": ", why));
  }
  std::string name =
      absl::StrCat(kPortPrefix, host, ":", ntohs(address.sin_port));
  std::lock_guard<std::mutex> lock(ports_mutex);
  OpenPorts()[name] = fd;
  return name;
}

absl::Status ClosePort(const std::string& port_name) {
  std::lock_guard<std::mutex> lock(ports_mutex);
  auto it = OpenPorts().find(port_name);
  if (it == OpenPorts().end()) {
    return absl::NotFoundError(
        absl::StrCat("port '", port_name, "' is not open in this process"));
  }
  close(it->second);
  OpenPorts().erase(it);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Communicator>> MeetOtherGroup(
    Communicator& local, int root, MeetRole role, const std::string& port_name,
    int fd) {
  p2p::PointToPoint& p2p = Instance::Get().p2p();
  // Who we are, gathered at every process (the root sends it over).
  const Identity mine = MyIdentity();
  std::vector<Identity> ours(local.size);
  coll::AllgatherBytes(p2p, local, &mine, sizeof(Identity), ours.data());

  int socket_fd = role == MeetRole::kJoin ? fd : -1;
  // MPI_Comm_join's socket is the caller's; it keeps TCP_NODELAY after.
  if (role == MeetRole::kJoin && local.rank == root) SetNoDelay(fd);
  std::vector<std::byte> theirs;
  absl::Status status;
  // The accepting root takes the next connection when one fails before the
  // tables are swapped: its connector gave up (MINIMPI_CONNECT_TIMEOUT) or
  // was no minimpi process, and an accept waits for a connector.
  for (bool retry = true; local.rank == root && retry;) {
    retry = false;
    if (role != MeetRole::kJoin) {
      absl::StatusOr<int> opened = OpenConnection(role, port_name);
      if (opened.ok()) {
        socket_fd = *opened;
      } else {
        status = opened.status();
      }
    }
    if (status.ok() && role == MeetRole::kConnect) {
      status = WaitForAccept(socket_fd, port_name);
    }
    if (status.ok()) {
      absl::StatusOr<std::vector<std::byte>> swapped =
          Swap(socket_fd, ours.data(), ours.size() * sizeof(Identity));
      if (swapped.ok() && swapped->size() % sizeof(Identity) != 0) {
        swapped = absl::DataLossError(
            "the other group sent a malformed table (is it minimpi?)");
      }
      if (swapped.ok()) {
        theirs = *std::move(swapped);
      } else if (role == MeetRole::kAccept) {
        close(socket_fd);
        socket_fd = -1;
        retry = true;
      } else {
        status = swapped.status();
      }
    }
  }
  auto close_socket = [&] {
    if (local.rank == root && role != MeetRole::kJoin && socket_fd >= 0) {
      close(socket_fd);
    }
  };
  status = AgreeOnStatus(p2p, local, root, status);
  if (!status.ok()) {
    close_socket();
    return status;
  }
  uint64_t remote_bytes = theirs.size();
  coll::BcastBytes(p2p, local, &remote_bytes, sizeof(remote_bytes), root);
  theirs.resize(remote_bytes);
  coll::BcastBytes(p2p, local, theirs.data(), theirs.size(), root);
  std::vector<Identity> remote(remote_bytes / sizeof(Identity));
  std::memcpy(remote.data(), theirs.data(), remote_bytes);

  // Every process makes the other group reachable, then says whether it
  // could; the root hears from everybody (a gather of flags) before it
  // tells the other root, so nobody sends to a process that cannot receive.
  std::vector<int> remote_ranks(remote.size());
  absl::Status reachable;
  for (size_t r = 0; r < remote.size() && reachable.ok(); ++r) {
    absl::StatusOr<int> index = PeerIndexOf(remote[r]);
    if (index.ok()) {
      remote_ranks[r] = *index;
    } else {
      reachable = index.status();
    }
  }
  std::vector<int32_t> flags(local.size);
  const int32_t my_flag = reachable.ok() ? 1 : 0;
  coll::AllgatherBytes(p2p, local, &my_flag, sizeof(my_flag), flags.data());
  int32_t all_ok = 1;
  for (int32_t flag : flags) all_ok &= flag;
  if (local.rank == root) {
    absl::StatusOr<std::vector<std::byte>> answer =
        Swap(socket_fd, &all_ok, sizeof(all_ok));
    int32_t remote_ok = 0;
    if (answer.ok() && answer->size() == sizeof(remote_ok)) {
      std::memcpy(&remote_ok, answer->data(), sizeof(remote_ok));
    }
    status = !answer.ok() ? answer.status()
             : !all_ok
                 ? (reachable.ok()
                        ? absl::UnavailableError("a process of this group "
                                                 "cannot reach the other "
                                                 "group's transport")
                        : reachable)
             : !remote_ok ? absl::UnavailableError(
                                "a process of the other group cannot reach "
                                "this group's transport")
                          : absl::OkStatus();
  }
  status = AgreeOnStatus(p2p, local, root, status);
  if (!status.ok()) {
    close_socket();
    return status;
  }
  std::unique_ptr<Communicator> inter = IntercommThroughLeaders(
      local, root,
      [&](const void* table, size_t bytes) {
        absl::StatusOr<std::vector<std::byte>> swapped =
            Swap(socket_fd, table, bytes);
        // The connection was just good; losing it now leaves nothing to
        // agree on, so the job ends.
        if (!swapped.ok()) {
          Instance::Get().bootstrap().Abort(
              1, absl::StrCat("minimpi: connecting two groups: ",
                              swapped.status().message()));
        }
        return *std::move(swapped);
      },
      remote_ranks);
  close_socket();
  if (inter == nullptr) {
    return absl::DataLossError(
        "the two groups disagree on the other group's size");
  }
  return inter;
}

void ConnectToParents() {
  const char* port = std::getenv(kParentPortVariable);
  if (port == nullptr || *port == '\0') return;
  Instance& instance = Instance::Get();
  absl::StatusOr<std::unique_ptr<Communicator>> inter =
      MeetOtherGroup(*instance.world(), 0, MeetRole::kConnect, port, -1);
  if (!inter.ok()) {
    const std::string line =
        absl::StrCat("MPI_Init(rank ", instance.world_rank(),
                     "): a spawned process cannot reach its parents: ",
                     inter.status().message());
    std::fprintf(stderr, "%s\n", line.c_str());
    instance.bootstrap().Abort(1, line);
  }
  (*inter)->set_name("MPI_COMM_PARENT");
  parents.store(Publish(*std::move(inter))->handle);
}

Communicator* Parents() {
  MPI_Comm handle = parents.load();
  if (handle == MPI_COMM_NULL) return nullptr;
  return ToCommunicator(handle);
}

void ForgetParents(Communicator* comm) {
  MPI_Comm expected = comm->handle;
  parents.compare_exchange_strong(expected, MPI_COMM_NULL);
}

}  // namespace minimpi
