// The "wire" of the software RDMA device (soft_verbs.h): how soft NICs in
// different processes (or in one process) find and talk to each other.
//
// Every opened soft device context owns an inbox: a POSIX shared-memory file
// /dev/shm/minimpi-softib-<id> holding a ring of fixed-size packet slots.
// Any process may push a packet into any inbox (producers serialize on a
// process-shared robust mutex in the segment, so a producer killed mid-push
// does not wedge the fabric); only the owning context pops (its NIC thread or
// a poller, serialized by the context's lock). The consumer sleeps on a
// futex word in the segment (futexes work on MAP_SHARED memory across
// processes, unlike an eventfd), and producers wake it only when it said it
// sleeps.
//
// Packets carry no bulk data: a request names the requester's buffers (pid
// + addresses, as a real NIC's DMA would read them) and the responder moves
// the bytes itself with process_vm_readv/writev (cross-memory attach). Only
// inline sends carry their bytes, copied when posted.
//
// A process killed without closing its device leaves its inbox file; peers
// see it dead (its pid is gone), and the next context opened on the host
// removes it (owners hold a flock on their file, which dies with them).
//
// Ids (the LID, also encoded in the GIDs) come from a fabric-wide counter in
// /dev/shm/minimpi-softib-fabric, as do QP numbers, so that no two contexts
// on the host ever share a QP number: a transport that mixes up local and
// remote QP numbers fails here instead of working by accident.
//
// Owned by: net/ib/testing. Used by: soft_verbs.cc only.
#ifndef MINIMPI_NET_IB_TESTING_SOFT_FABRIC_H_
#define MINIMPI_NET_IB_TESTING_SOFT_FABRIC_H_

#include <pthread.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace minimpi::net::ib::testing::internal {

inline constexpr uint32_t kMaxSendSge = 16;
inline constexpr uint32_t kMaxInlineData = 256;
inline constexpr uint32_t kMaxId = 0xBFFF;  // unicast LIDs are 1..0xBFFF

enum class PacketType : uint8_t { kRequest = 1, kAck = 2 };

// What a responder answers. Each maps to one requester completion status.
enum class AckStatus : uint8_t {
  kOk = 0,
  kRnrRetryExceeded,  // IBV_WC_RNR_RETRY_EXC_ERR
  kPsnError,          // IBV_WC_RETRY_EXC_ERR (hardware would time out)
  kNoQp,              // IBV_WC_RETRY_EXC_ERR: no such/unconnected/dead QP
  kRemoteAccess,      // IBV_WC_REM_ACCESS_ERR
  kInvalidRequest,    // IBV_WC_REM_INV_REQ_ERR
  kRemoteOperation,   // IBV_WC_REM_OP_ERR
  kRequesterFault,    // IBV_WC_LOC_PROT_ERR: the requester's memory faulted
};

struct Segment {
  uint64_t address = 0;
  uint64_t length = 0;
};

// One slot of an inbox. Trivially copyable: it lives in shared memory.
struct Packet {
  PacketType type = PacketType::kRequest;
  uint8_t opcode = 0;  // ibv_wr_opcode of a request
  AckStatus status = AckStatus::kOk;
  uint8_t rnr_retry = 0;  // the requester QP's rnr_retry (7: forever)
  uint8_t num_sge = 0;
  uint8_t is_inline = 0;
  uint16_t reserved = 0;
  uint32_t src_id = 0;   // the sender's context id (LID)
  uint32_t src_qpn = 0;  // the sender's QP
  uint32_t dst_qpn = 0;
  uint32_t psn = 0;
  uint32_t imm_data = 0;  // verbatim, never byte-swapped
  uint32_t rkey = 0;
  int32_t src_pid = 0;  // whose memory `sge` addresses
  uint32_t reserved2 = 0;
  uint64_t length = 0;  // total bytes of the message
  uint64_t remote_address = 0;
  // The requester's buffers: the source of a send/write, the destination
  // of a read. Unused for inline data.
  Segment sge[kMaxSendSge];
  uint8_t inline_data[kMaxInlineData];
};

// An inbox segment as mapped in this process. Shared by all users in the
// process (see FindInbox), so that ThreadSanitizer sees one address for the
// ring and its lock.
class Inbox {
 public:
  ~Inbox();
  Inbox(const Inbox&) = delete;
  Inbox& operator=(const Inbox&) = delete;

  // Creates this process's inbox for `id`, replacing a stale file of a
  // killed process. Null (errno set) on failure.
  static std::shared_ptr<Inbox> Create(uint32_t id);
  // Maps the inbox of `id` as it is (FindInbox is usually what you want).
  // Null when there is no usable file.
  static std::shared_ptr<Inbox> Open(uint32_t id);

  uint32_t id() const { return id_; }
  pid_t pid() const;

  // Producer side (any process). False when the ring is full.
  bool Push(const Packet& packet);
  // Consumer side; the caller serializes consumers. False when empty.
  bool Pop(Packet* packet);
  bool Empty() const;

  // False once the owner closed it or its process is gone.
  bool Alive() const;
  // Owner only: marks the inbox dead to its peers and removes the file.
  void Close();

  // The consumer's sleep: read Doorbell(), check for work, then Sleep();
  // it returns at once if anyone rang since. timeout_ns < 0: no timeout.
  uint32_t Doorbell() const;
  void Sleep(uint32_t seen_doorbell, int64_t timeout_ns);
  // Wakes the consumer if it sleeps (producers call it after Push).
  void Ring();

 private:
  struct Header;  // the segment's first page
  Inbox(uint32_t id, void* base, size_t bytes, bool owner);
  friend std::shared_ptr<Inbox> FindInbox(uint32_t id);
  friend void ForgetInbox(uint32_t id);

  Header* header() const { return static_cast<Header*>(base_); }
  Packet* slot(uint64_t index) const;

  const uint32_t id_;
  void* const base_;
  const size_t bytes_;
  void ReleaseOwnership();

  const bool owner_;
  ino_t inode_ = 0;   // the owner's file, to remove only that one
  int lock_fd_ = -1;  // the owner's flock on it (see RemoveStaleInboxes)
  pid_t lock_owner_ = 0;
};

// The live inbox of context `id`, from a per-process cache (re-opened when
// the cached one died, since ids wrap); null when there is none.
std::shared_ptr<Inbox> FindInbox(uint32_t id);
// Drops `id` from the cache (the owner closing it).
void ForgetInbox(uint32_t id);

// Fabric-wide unique numbers (wrapping): a context id in 1..kMaxId, and a
// QP number in 0x100..0xFFFFFF.
uint32_t AllocateContextId();
uint32_t AllocateQpNumber();

// Copies between this process's `local` buffers and process `pid`'s
// `remote` ones (pid may be this process): remote → local when
// `from_remote`, else local → remote. Both lists must cover the same number
// of bytes. 0 or an errno (ESRCH: the process is gone; EFAULT: a bad
// address on either side). Like DMA, invisible to ThreadSanitizer.
int CrossMemoryCopy(pid_t pid, bool from_remote, iovec* local, int local_count,
                    iovec* remote, int remote_count);

}  // namespace minimpi::net::ib::testing::internal

#endif  // MINIMPI_NET_IB_TESTING_SOFT_FABRIC_H_
