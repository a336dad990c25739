// The out-of-band channel net/ib connects queue pairs through, as rdma_cm
// does over IP: one thread per process with a TCP listener (its address
// goes through the bootstrap once, at setup), which sends and receives
// fixed-size ConnectMessages to and from other processes' managers.
//
// Why a thread: a Request must be answered even while every thread of the
// target computes or waits on something else, as a NIC's connection
// manager would; otherwise two ranks that each wait for the other's first
// message could never connect. The thread does no data-path work: it
// receives messages, hands each to the callback (which creates and
// connects QPs), and writes what it is asked to. It also watches extra
// descriptors (the device's asynchronous events) for its owner.
//
// Sockets are opened to a peer on first use and kept; messages to this
// process itself skip the network. A peer's socket closing is not an error
// here (a job ends that way); failures that matter show up on the QPs.
//
// Owned by: net/ib. Called by: net/ib/ib_transport.cc.
#ifndef MINIMPI_NET_IB_CONNECTION_MANAGER_H_
#define MINIMPI_NET_IB_CONNECTION_MANAGER_H_

#include <netinet/in.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "net/ib/connection_protocol.h"

namespace minimpi::net::ib {

class ConnectionManager {
 public:
  // Called on the manager's thread for every message that arrives.
  using MessageHandler = std::function<void(const ConnectMessage&)>;
  // Ends the job (the transport's Die): the manager cannot reach a peer.
  using FailureHandler = std::function<void(int rank, const std::string&)>;

  // Listens on `address` (dotted IPv4; any port). Starts no thread yet.
  static absl::StatusOr<std::unique_ptr<ConnectionManager>> Listen(
      const std::string& address, int rank, int connect_timeout_ms);
  ~ConnectionManager();
  ConnectionManager(const ConnectionManager&) = delete;
  ConnectionManager& operator=(const ConnectionManager&) = delete;

  // "a.b.c.d:port", for the bootstrap.
  std::string address() const;

  // Starts the thread; `peers[r]` is rank r's address() text. `watch` are
  // extra descriptors whose readability calls `on_watch(fd)`.
  absl::Status Start(std::vector<std::string> peers, MessageHandler on_message,
                     FailureHandler on_failure, std::vector<int> watch,
                     std::function<void(int)> on_watch);

  // Stops and joins the thread: no handler runs after it returns. The
  // owner calls it before tearing down what the handlers touch (calling
  // it again, or destroying the manager, is then harmless).
  void Stop();

  // Queues `message` for `rank`'s manager; any thread, never blocks on a
  // peer (the manager's thread writes it).
  void Post(int rank, const ConnectMessage& message);

 private:
  struct Incoming {
    int fd = -1;
    ConnectMessage message;
    size_t received = 0;
  };

  ConnectionManager(int listen_fd, sockaddr_in address, int rank,
                    int connect_timeout_ms);
  void Loop();
  void SendQueued();
  // The socket to `rank`'s manager, connected on first use; -1 after the
  // failure handler was called.
  int SocketTo(int rank);
  void Accept();
  void Read(Incoming& incoming);

  const int listen_fd_;
  const sockaddr_in listen_address_;
  const int rank_;
  const int connect_timeout_ms_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Post and the destructor
  std::vector<sockaddr_in> peers_;
  MessageHandler on_message_;
  FailureHandler on_failure_;
  std::function<void(int)> on_watch_;
  std::vector<int> watch_;

  std::mutex queue_mutex_;
  // Guarded by queue_mutex_.
  std::deque<std::pair<int, ConnectMessage>> queue_;

  // The manager thread's own.
  absl::flat_hash_map<int, int> out_sockets_;                     // rank -> fd
  absl::flat_hash_map<int, std::unique_ptr<Incoming>> incoming_;  // by fd

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace minimpi::net::ib

#endif  // MINIMPI_NET_IB_CONNECTION_MANAGER_H_
