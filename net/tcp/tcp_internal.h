// What the files of net/tcp's transport share: frame and I/O vector
// limits, address text, socket options. Private to the tcp library.
//
// Owned by: net/tcp.
#ifndef MINIMPI_NET_TCP_TCP_INTERNAL_H_
#define MINIMPI_NET_TCP_TCP_INTERNAL_H_

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "net/tcp/tcp_transport.h"

namespace minimpi::net::tcp {

// Marks the process-wide accept set among a VCI's epoll events (connections
// are pointers, never 1).
inline constexpr uint64_t kAcceptTag = 1;
inline constexpr int kMaxIov = 1024;  // IOV_MAX on Linux
inline constexpr size_t kFrameBytes = sizeof(FrameHeader);

inline std::string AddressText(const sockaddr_in& address) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &address.sin_addr, text, sizeof(text));
  return absl::StrCat(text, ":", ntohs(address.sin_port));
}

inline void SetNoDelay(int fd) {
  // Nagle would hold small frames back waiting for acknowledgements.
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Settings::tcp_congestion on one socket (`name` empty: the kernel's
// default). Returns 0, or the errno of the kernel's refusal.
inline int SetCongestionControl(int fd, const std::string& name) {
  if (name.empty()) return 0;
  return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(),
                    static_cast<socklen_t>(name.size())) == 0
             ? 0
             : errno;
}

inline iovec Iov(const void* data, size_t length) {
  return {const_cast<void*>(data), length};
}

}  // namespace minimpi::net::tcp

#endif  // MINIMPI_NET_TCP_TCP_INTERNAL_H_
