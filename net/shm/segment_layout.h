// The part of a rank's shared-memory segment that more than one file of
// net/shm reads: the inbox of each VCI, where senders register the rings
// they start using (shm_segment.cc lays the segment out and says where the
// inboxes are; shm_transport.cc registers and reads rings through them).
//
// An inbox: a line with the count of registrations and the VCI whose
// doorbell this VCI uses (written once at setup); a line with the doorbell
// (only the first VCI of a group that shares one uses its own); then the
// entries, each (sender local index * VCIs + sender VCI) + 1, 0 while being
// written.
//
// Owned by: net/shm (private to the shm_transport library).
#ifndef MINIMPI_NET_SHM_SEGMENT_LAYOUT_H_
#define MINIMPI_NET_SHM_SEGMENT_LAYOUT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "net/shm/spsc_ring.h"

namespace minimpi::net::shm {

inline std::atomic<uint32_t>* InboxCount(void* inbox) {
  return static_cast<std::atomic<uint32_t>*>(inbox);
}
inline std::atomic<uint32_t>* InboxDoorbellVci(void* inbox) {
  return static_cast<std::atomic<uint32_t>*>(inbox) + 1;
}
inline std::atomic<uint32_t>* InboxDoorbell(void* inbox) {
  return reinterpret_cast<std::atomic<uint32_t>*>(
      static_cast<std::byte*>(inbox) + kCacheLineBytes);
}
inline std::atomic<uint32_t>* InboxEntries(void* inbox) {
  return reinterpret_cast<std::atomic<uint32_t>*>(
      static_cast<std::byte*>(inbox) + 2 * kCacheLineBytes);
}

inline std::string ErrnoText(int error) { return std::strerror(error); }

}  // namespace minimpi::net::shm

#endif  // MINIMPI_NET_SHM_SEGMENT_LAYOUT_H_
