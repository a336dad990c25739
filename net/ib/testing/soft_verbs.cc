// The soft device's verbs objects and its NIC logic; the wire it uses is in
// soft_fabric.h. The NIC model is described in soft_verbs.h.
//
// Locking: each context has one mutex guarding all of its objects (PDs,
// MRs, CQs, channels, SRQs, QPs, outbox). Every method and the NIC thread
// take it; nothing ever holds two contexts' mutexes, so contexts in one
// process (and NICs of different processes, which share only the lock-free
// consumer side and short producer locks of the inboxes) never deadlock.
// Bytes move under the context's mutex too: it makes a remote access and a
// concurrent DeregMr of its region atomic with respect to each other, as the
// hardware's table lookup is, and this is a test device.
#include "net/ib/testing/soft_verbs.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "net/ib/testing/soft_fabric.h"

namespace minimpi::net::ib::testing {
namespace {

using internal::AckStatus;
using internal::FindInbox;
using internal::Inbox;
using internal::kMaxInlineData;
using internal::kMaxSendSge;
using internal::Packet;
using internal::PacketType;

// Device limits (QueryDevice).
constexpr uint32_t kMaxQpWr = 1024;
constexpr uint32_t kMaxSrqWr = 8192;
constexpr uint32_t kMaxSrqSge = 4;
constexpr int kMaxCqe = 65536;
constexpr uint32_t kMaxRdAtomic = 16;
constexpr uint64_t kMaxMrSize = uint64_t{1} << 40;
constexpr uint32_t kPsnMask = 0xFFFFFF;
constexpr uint8_t kRnrRetryForever = 7;

// Timers of the NIC thread, armed only while there is such work.
constexpr int64_t kRnrRetryNs = 500'000;      // RNR NAK → retry
constexpr int64_t kOutboxRetryNs = 200'000;   // a peer's inbox was full
constexpr int64_t kLivenessNs = 10'000'000;   // is an unanswering peer dead?
constexpr int kPollProgressBudget = 64;       // packets PollCq may handle
constexpr int64_t kRetransmitNs = 1'000'000;  // resend dropped requests
// How long dropped requests are resent before IBV_WC_RETRY_EXC_ERR: the
// hardware's (retry_cnt + 1) * 4.096 us * 2^timeout, within these bounds
// (timeout 0, "forever" on hardware, gets the upper one). The lower bound
// is generous because a peer on an oversubscribed host may take a while to
// move its QP to RTR.
constexpr int64_t kMinRetryBudgetNs = 1'000'000'000;
constexpr int64_t kMaxRetryBudgetNs = 60'000'000'000;

std::atomic<uint64_t> rnr_naks{0};
std::atomic<uint64_t> packets_sent{0};
std::atomic<uint64_t> outbox_waits{0};
std::atomic<uint64_t> peer_failures{0};
// Memory keys are never reused within a process, so a stale key is always
// caught. lkey and rkey differ, so that mixing them up is caught too.
std::atomic<uint32_t> next_key_pair{0x100};

// Context ids (LIDs) of this process. A LID belongs to a port, not to an
// opened context: hardware gives every open of a device the same LID, and
// callers rely on it (net/ib probes a device, closes it and opens it again,
// keeping the probed address). So an open reuses an id of this process that
// no open context uses, and only a second context open at the same time
// gets a new one (it is then like a second port). After fork the child
// starts its own list: its parent's ids are not its own.
std::mutex id_pool_mutex;
pid_t id_pool_owner = 0;
std::vector<std::pair<uint32_t, bool>>* id_pool = nullptr;  // id, in use

uint32_t AcquireContextId() {
  std::lock_guard<std::mutex> lock(id_pool_mutex);
  if (id_pool == nullptr || id_pool_owner != getpid()) {
    id_pool = new std::vector<std::pair<uint32_t, bool>>;  // leaks on fork
    id_pool_owner = getpid();
  }
  for (auto& [id, in_use] : *id_pool) {
    if (!in_use) {
      in_use = true;
      return id;
    }
  }
  const uint32_t id = internal::AllocateContextId();
  if (id != 0) id_pool->push_back({id, true});
  return id;
}

void ReleaseContextId(uint32_t id) {
  std::lock_guard<std::mutex> lock(id_pool_mutex);
  if (id_pool == nullptr || id_pool_owner != getpid()) return;
  for (auto& [pooled, in_use] : *id_pool) {
    if (pooled == id) in_use = false;
  }
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int Fail(int error) {
  errno = error;
  return error;
}

template <typename T>
T* FailNull(int error) {
  errno = error;
  return nullptr;
}

struct SoftContext;

struct SoftPd {
  SoftContext* context;
  uint32_t id;
};

struct SoftMr {
  SoftContext* context;
  uint32_t pd_id;
  uint64_t address;
  uint64_t length;
  int access;
  uint32_t lkey;
  uint32_t rkey;
};

struct SoftChannel {
  SoftContext* context;
  int fd;  // eventfd, semaphore mode: one read per event
};

struct CqEntry {
  ibv_wc wc;
  bool send_side;  // reclaims send-queue slots when polled
  uint64_t seq;    // the send WQE's sequence number
};

struct SoftCq {
  SoftContext* context;
  size_t capacity;
  std::deque<CqEntry> entries;
  bool overrun = false;
  bool armed = false;
  SoftChannel* channel;
};

struct RecvWqe {
  uint64_t wr_id;
  int num_sge;
  ibv_sge sge[kMaxSrqSge];
};

struct SoftSrq {
  SoftContext* context;
  uint32_t pd_id;
  uint32_t max_wr;
  uint32_t max_sge;
  std::deque<RecvWqe> queue;
};

enum class WqeState { kPosted, kSent, kDone };

struct SendWqe {
  uint64_t seq;
  uint64_t wr_id;
  ibv_wr_opcode opcode;
  bool signaled;
  uint32_t imm_data;
  uint64_t remote_address;
  uint32_t rkey;
  int num_sge;
  ibv_sge sge[kMaxSendSge];
  bool is_inline;
  uint8_t inline_data[kMaxInlineData];
  uint64_t length;
  uint32_t psn;
  WqeState state;
  ibv_wc_status status;
};

// A request the responder could not take yet (no receive: RNR).
struct ParkedPacket {
  Packet packet;
  uint32_t naks = 0;
};

struct SoftQp {
  SoftContext* context;
  uint32_t qpn;
  uint32_t pd_id;
  SoftCq* send_cq;
  SoftCq* recv_cq;
  SoftSrq* srq;
  ibv_qp_cap cap;
  ibv_qp_state state = IBV_QPS_RESET;
  int access = 0;
  // Set at RTR: the peer and what the responder expects.
  uint32_t remote_id = 0;
  uint32_t dest_qpn = 0;
  uint32_t expected_psn = 0;
  uint32_t max_dest_rd_atomic = 0;
  // Set at RTS: the requester.
  uint32_t next_psn = 0;
  uint8_t rnr_retry = 0;
  uint32_t max_rd_atomic = 0;
  uint8_t timeout = 0;
  uint8_t retry_cnt = 0;
  // Send queue: WQEs posted and not yet completed, in order; the first
  // `first_posted` of them were sent (or failed locally: a failed WQE stops
  // transmission until it is reported), the rest wait.
  std::deque<SendWqe> sq;
  size_t first_posted = 0;
  // Retransmission after the responder dropped our requests (its QP was
  // not ready yet, or is not ours): send again from `hold_until_ns`, and
  // give up at `retry_deadline_ns`, as the hardware's transport timer does.
  int64_t hold_until_ns = 0;
  int64_t retry_deadline_ns = 0;
  // Slots: a WQE's slot is free once its CQE (or a later one of the same
  // QP) was polled.
  uint64_t posted = 0;
  uint64_t reclaimed = 0;
  // Responder: requests waiting behind an RNR, in order.
  std::deque<ParkedPacket> parked;
  int64_t next_rnr_retry_ns = 0;
};

struct SoftContext {
  std::mutex mutex;
  uint32_t id = 0;
  bool roce = false;
  std::optional<uint64_t> max_rnr;
  std::shared_ptr<Inbox> inbox;
  int async_fd = -1;
  std::deque<AsyncEvent> async_events;
  uint32_t next_pd_id = 1;
  std::map<SoftPd*, std::unique_ptr<SoftPd>> pds;
  std::unordered_map<uint32_t, SoftMr*> keys;  // lkeys and rkeys
  std::map<SoftMr*, std::unique_ptr<SoftMr>> mrs;
  std::map<SoftChannel*, std::unique_ptr<SoftChannel>> channels;
  std::map<SoftCq*, std::unique_ptr<SoftCq>> cqs;
  std::map<SoftSrq*, std::unique_ptr<SoftSrq>> srqs;
  std::map<uint32_t, std::unique_ptr<SoftQp>> qps;
  // Packets for peers whose inbox was full, per peer id, in order.
  std::map<uint32_t, std::deque<Packet>> outbox;
  bool timer_armed = false;  // the NIC thread sleeps with a timeout
  int64_t next_liveness_ns = 0;
  std::atomic<bool> stopping{false};
  std::thread nic;
  // CloseDevice ran while objects were left: the context lives on (without
  // its NIC) until the last of them is destroyed, so that any shutdown
  // order is safe.
  bool closed = false;

  bool Empty() const {
    return pds.empty() && mrs.empty() && channels.empty() && cqs.empty() &&
           srqs.empty() && qps.empty();
  }
};

// After an object was removed: frees a closed context once nothing of it
// is left. `lock` holds its mutex and is released.
void ReleaseIfClosed(std::unique_lock<std::mutex>& lock, SoftContext* context) {
  const bool free_it = context->closed && context->Empty();
  lock.unlock();
  if (free_it) delete context;
}

// ---------------------------------------------------------------------------
// GIDs: the context id is encoded in every GID, so that a GID names a
// context as a LID does.

constexpr uint8_t kGuidMarker[6] = {'s', 'o', 'f', 't', 'i', 'b'};

ibv_gid MakeGid(uint32_t id, bool ipv4_mapped) {
  ibv_gid gid = {};
  if (ipv4_mapped) {  // ::ffff:10.254.x.y
    gid.raw[10] = 0xff;
    gid.raw[11] = 0xff;
    gid.raw[12] = 10;
    gid.raw[13] = 254;
  } else {  // fe80::<"softib" id>, a link-local GID
    gid.raw[0] = 0xfe;
    gid.raw[1] = 0x80;
    std::memcpy(&gid.raw[8], kGuidMarker, sizeof(kGuidMarker));
  }
  gid.raw[14] = static_cast<uint8_t>(id >> 8);
  gid.raw[15] = static_cast<uint8_t>(id);
  return gid;
}

// The context id a GID names, or 0.
uint32_t DecodeGid(const ibv_gid& gid) {
  const uint32_t id = (uint32_t{gid.raw[14]} << 8) | gid.raw[15];
  const ibv_gid link_local = MakeGid(id, false);
  const ibv_gid ipv4_mapped = MakeGid(id, true);
  if (std::memcmp(&gid, &link_local, sizeof(gid)) == 0 ||
      std::memcmp(&gid, &ipv4_mapped, sizeof(gid)) == 0) {
    return id;
  }
  return 0;
}

// ---------------------------------------------------------------------------
// Helpers that need the context's mutex held.

void QueueAsyncEvent(SoftContext* context, AsyncEvent event) {
  if (context->async_fd < 0) return;  // closed
  context->async_events.push_back(event);
  const uint64_t one = 1;
  (void)!write(context->async_fd, &one, sizeof(one));
}

void PushCqe(SoftCq* cq, const ibv_wc& wc, bool send_side, uint64_t seq) {
  if (cq == nullptr || cq->overrun) return;
  if (cq->entries.size() >= cq->capacity) {
    // Hardware cannot write the CQE: the CQ is lost.
    cq->overrun = true;
    QueueAsyncEvent(cq->context, {IBV_EVENT_CQ_ERR, 0, 0});
    return;
  }
  cq->entries.push_back({wc, send_side, seq});
  if (cq->armed && cq->channel != nullptr) {
    cq->armed = false;
    const uint64_t one = 1;
    (void)!write(cq->channel->fd, &one, sizeof(one));
  }
}

// Queues `packet` for peer `id`: into its inbox, or into the outbox behind
// earlier packets for it. False when the peer is gone.
bool SendPacket(SoftContext* context, uint32_t id, const Packet& packet) {
  std::shared_ptr<Inbox> inbox = FindInbox(id);
  if (inbox == nullptr) {
    context->outbox.erase(id);
    return false;
  }
  packets_sent.fetch_add(1, std::memory_order_relaxed);
  auto queued = context->outbox.find(id);
  if (queued != context->outbox.end()) {
    queued->second.push_back(packet);
    return true;
  }
  if (inbox->Push(packet)) {
    inbox->Ring();
    return true;
  }
  outbox_waits.fetch_add(1, std::memory_order_relaxed);
  context->outbox[id].push_back(packet);
  return true;
}

void FlushOutbox(SoftContext* context) {
  for (auto it = context->outbox.begin(); it != context->outbox.end();) {
    std::shared_ptr<Inbox> inbox = FindInbox(it->first);
    if (inbox == nullptr) {  // its QPs fail at the next liveness check
      it = context->outbox.erase(it);
      continue;
    }
    bool pushed = false;
    while (!it->second.empty() && inbox->Push(it->second.front())) {
      it->second.pop_front();
      pushed = true;
    }
    if (pushed) inbox->Ring();
    it = it->second.empty() ? context->outbox.erase(it) : std::next(it);
  }
}

// ---------------------------------------------------------------------------
// Requester.

ibv_wc_status StatusOf(AckStatus status) {
  switch (status) {
    case AckStatus::kOk:
      return IBV_WC_SUCCESS;
    case AckStatus::kRnrRetryExceeded:
      return IBV_WC_RNR_RETRY_EXC_ERR;
    case AckStatus::kPsnError:
    case AckStatus::kNoQp:
      return IBV_WC_RETRY_EXC_ERR;
    case AckStatus::kRemoteAccess:
      return IBV_WC_REM_ACCESS_ERR;
    case AckStatus::kInvalidRequest:
      return IBV_WC_REM_INV_REQ_ERR;
    case AckStatus::kRemoteOperation:
      return IBV_WC_REM_OP_ERR;
    case AckStatus::kRequesterFault:
      return IBV_WC_LOC_PROT_ERR;
  }
  return IBV_WC_GENERAL_ERR;
}

ibv_wc_opcode SendCompletionOpcode(ibv_wr_opcode opcode) {
  switch (opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ:
      return IBV_WC_RDMA_READ;
    default:
      return IBV_WC_SEND;
  }
}

// Marks the QP in error: whatever has not completed is flushed (reported
// by ReportCompletions), and the responder forgets its parked requests.
void MarkError(SoftQp* qp) {
  qp->state = IBV_QPS_ERR;
  for (SendWqe& wqe : qp->sq) {
    if (wqe.state != WqeState::kDone) {
      wqe.state = WqeState::kDone;
      wqe.status = IBV_WC_WR_FLUSH_ERR;
    }
  }
  qp->first_posted = qp->sq.size();
  qp->parked.clear();
  qp->hold_until_ns = 0;
  qp->retry_deadline_ns = 0;
}

// Generates the requester's CQEs for the finished WQEs at the head of the
// send queue, in posting order. An error moves the QP to ERR (flushing the
// rest, which are reported right after it).
void ReportCompletions(SoftQp* qp) {
  while (!qp->sq.empty() && qp->sq.front().state == WqeState::kDone) {
    const SendWqe& wqe = qp->sq.front();
    if (wqe.status != IBV_WC_SUCCESS || wqe.signaled) {
      ibv_wc wc = {};
      wc.wr_id = wqe.wr_id;
      wc.status = wqe.status;
      wc.opcode = SendCompletionOpcode(wqe.opcode);
      wc.byte_len = static_cast<uint32_t>(wqe.length);
      wc.qp_num = qp->qpn;
      PushCqe(qp->send_cq, wc, /*send_side=*/true, wqe.seq);
    }
    const bool failed = wqe.status != IBV_WC_SUCCESS;
    qp->sq.pop_front();
    if (qp->first_posted > 0) --qp->first_posted;
    if (failed && qp->state != IBV_QPS_ERR) MarkError(qp);
  }
}

void FailQp(SoftQp* qp) {
  MarkError(qp);
  ReportCompletions(qp);
}

// Finds the MR that `key` names in `context` for a local (`local`) or
// remote access to [address, address + length) by PD `pd_id` needing
// `access` bits; null when none may be accessed so.
SoftMr* FindMr(SoftContext* context, uint32_t key, bool local, uint32_t pd_id,
               uint64_t address, uint64_t length, int access) {
  auto it = context->keys.find(key);
  if (it == context->keys.end()) return nullptr;
  SoftMr* mr = it->second;
  if ((local ? mr->lkey : mr->rkey) != key || mr->pd_id != pd_id ||
      (mr->access & access) != access || address < mr->address ||
      length > mr->length || address - mr->address > mr->length - length) {
    return nullptr;
  }
  return mr;
}

// Sends what the send queue holds for the peer, in order, while the QP may
// transmit. This is where the NIC would fetch the WQE: local keys are
// checked here; the bytes themselves are fetched later by the responder.
void Transmit(SoftQp* qp) {
  SoftContext* context = qp->context;
  if (qp->hold_until_ns != 0) return;  // the retransmission timer resumes
  while (qp->state == IBV_QPS_RTS && qp->first_posted < qp->sq.size() &&
         qp->sq[qp->first_posted].state == WqeState::kPosted) {
    SendWqe& wqe = qp->sq[qp->first_posted];
    Packet packet;
    packet.type = PacketType::kRequest;
    packet.opcode = static_cast<uint8_t>(wqe.opcode);
    packet.rnr_retry = qp->rnr_retry;
    packet.src_id = context->id;
    packet.src_qpn = qp->qpn;
    packet.dst_qpn = qp->dest_qpn;
    packet.psn = qp->next_psn;
    packet.imm_data = wqe.imm_data;
    packet.rkey = wqe.rkey;
    packet.src_pid = getpid();
    packet.length = wqe.length;
    packet.remote_address = wqe.remote_address;
    bool keys_valid = true;
    if (wqe.is_inline) {
      packet.is_inline = 1;
      std::memcpy(packet.inline_data, wqe.inline_data, wqe.length);
    } else {
      // A read writes into the local buffers: they need local write access.
      const int access =
          wqe.opcode == IBV_WR_RDMA_READ ? IBV_ACCESS_LOCAL_WRITE : 0;
      for (int i = 0; i < wqe.num_sge; ++i) {
        const ibv_sge& sge = wqe.sge[i];
        if (sge.length == 0) continue;
        if (FindMr(context, sge.lkey, /*local=*/true, qp->pd_id, sge.addr,
                   sge.length, access) == nullptr) {
          keys_valid = false;
          break;
        }
        packet.sge[packet.num_sge++] = {sge.addr, sge.length};
      }
    }
    if (!keys_valid) {
      // Reported once the WQEs before it completed; nothing after it goes.
      wqe.state = WqeState::kDone;
      wqe.status = IBV_WC_LOC_PROT_ERR;
      ReportCompletions(qp);
      return;
    }
    if (!SendPacket(context, qp->remote_id, packet)) {
      peer_failures.fetch_add(1, std::memory_order_relaxed);
      wqe.state = WqeState::kDone;
      wqe.status = IBV_WC_RETRY_EXC_ERR;
      ReportCompletions(qp);
      return;
    }
    wqe.psn = packet.psn;
    wqe.state = WqeState::kSent;
    qp->next_psn = (qp->next_psn + 1) & kPsnMask;
    ++qp->first_posted;
  }
}

void HandleAck(SoftContext* context, const Packet& ack) {
  auto it = context->qps.find(ack.dst_qpn);
  if (it == context->qps.end()) return;
  SoftQp* qp = it->second.get();
  // A flushed or reset QP ignores late answers.
  if (qp->state != IBV_QPS_RTS || ack.src_id != qp->remote_id ||
      ack.src_qpn != qp->dest_qpn || qp->sq.empty()) {
    return;
  }
  SendWqe& wqe = qp->sq.front();
  if (wqe.state != WqeState::kSent || wqe.psn != ack.psn) return;
  if (ack.status == AckStatus::kNoQp) {
    // Dropped: hardware would resend after its timeout, until retry_cnt
    // runs out. Rewind to this WQE and resend it and what followed.
    const int64_t now = NowNs();
    if (qp->retry_deadline_ns == 0) {
      int64_t budget = qp->timeout == 0
                           ? kMaxRetryBudgetNs
                           : (int64_t{qp->retry_cnt} + 1) * 4096 *
                                 (int64_t{1} << std::min<int>(qp->timeout, 24));
      budget = std::clamp(budget, kMinRetryBudgetNs, kMaxRetryBudgetNs);
      qp->retry_deadline_ns = now + budget;
    }
    if (now < qp->retry_deadline_ns) {
      for (size_t i = 0; i < qp->first_posted; ++i) {
        if (qp->sq[i].state == WqeState::kSent) {
          qp->sq[i].state = WqeState::kPosted;
        }
      }
      qp->first_posted = 0;
      qp->next_psn = wqe.psn;
      qp->hold_until_ns = now + kRetransmitNs;
      return;
    }
  }
  qp->retry_deadline_ns = 0;
  wqe.state = WqeState::kDone;
  wqe.status = StatusOf(ack.status);
  ReportCompletions(qp);
}

// The requester side of the liveness timer: a QP waiting for answers from
// a peer that closed or died fails, as hardware's transport timer would.
void CheckPeers(SoftContext* context) {
  for (auto& [qpn, qp_holder] : context->qps) {
    SoftQp* qp = qp_holder.get();
    if (qp->state != IBV_QPS_RTS || qp->first_posted == 0 ||
        qp->sq.front().state != WqeState::kSent) {
      continue;
    }
    if (FindInbox(qp->remote_id) != nullptr) continue;
    peer_failures.fetch_add(1, std::memory_order_relaxed);
    SendWqe& wqe = qp->sq.front();
    if (wqe.state != WqeState::kDone) {
      wqe.state = WqeState::kDone;
      wqe.status = IBV_WC_RETRY_EXC_ERR;
    }
    ReportCompletions(qp);
  }
}

// ---------------------------------------------------------------------------
// Responder.

void Reply(SoftContext* context, const Packet& request, AckStatus status) {
  Packet ack;
  ack.type = PacketType::kAck;
  ack.status = status;
  ack.src_id = context->id;
  ack.src_qpn = request.dst_qpn;
  ack.dst_qpn = request.src_qpn;
  ack.psn = request.psn;
  SendPacket(context, request.src_id, ack);  // a dead requester needs none
}

// The responder's own error: its QP goes to ERR, with an async event.
void ResponderError(SoftQp* qp, ibv_event_type event) {
  FailQp(qp);
  QueueAsyncEvent(qp->context, {event, qp->qpn, 0});
}

void PushRecvCqe(SoftQp* qp, const RecvWqe& recv, const Packet& request,
                 ibv_wc_status status, ibv_wc_opcode opcode) {
  ibv_wc wc = {};
  wc.wr_id = recv.wr_id;
  wc.status = status;
  wc.opcode = opcode;
  wc.byte_len = static_cast<uint32_t>(request.length);
  wc.qp_num = qp->qpn;
  wc.src_qp = request.src_qpn;
  wc.slid = qp->context->roce ? 0 : static_cast<uint16_t>(request.src_id);
  const ibv_wr_opcode op = static_cast<ibv_wr_opcode>(request.opcode);
  if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
    wc.wc_flags = IBV_WC_WITH_IMM;
    wc.imm_data = request.imm_data;  // verbatim: network order by convention
  }
  PushCqe(qp->recv_cq, wc, /*send_side=*/false, 0);
}

// Copies the request's payload into local buffers `local` (covering exactly
// request.length bytes): inline bytes, or the requester's memory.
int FetchPayload(const Packet& request, std::vector<iovec>& local) {
  if (request.is_inline) {
    // Placed like any DMA (see CrossMemoryCopy), into our own memory.
    iovec source = {const_cast<uint8_t*>(request.inline_data),
                    static_cast<size_t>(request.length)};
    return internal::CrossMemoryCopy(getpid(), /*from_remote=*/false, &source,
                                     1, local.data(),
                                     static_cast<int>(local.size()));
  }
  std::vector<iovec> remote;
  for (int i = 0; i < request.num_sge; ++i) {
    remote.push_back({reinterpret_cast<void*>(request.sge[i].address),
                      static_cast<size_t>(request.sge[i].length)});
  }
  return internal::CrossMemoryCopy(request.src_pid, /*from_remote=*/true,
                                   local.data(), static_cast<int>(local.size()),
                                   remote.data(),
                                   static_cast<int>(remote.size()));
}

// What became of a request.
enum class Outcome { kDone, kRnr, kRnrExceeded };

Outcome ReceiverNotReady(SoftQp* qp, ParkedPacket& parked) {
  const uint64_t total = rnr_naks.fetch_add(1, std::memory_order_relaxed) + 1;
  ++parked.naks;
  const std::optional<uint64_t>& limit = qp->context->max_rnr;
  const bool exceeded = (limit.has_value() && total > *limit) ||
                        (parked.packet.rnr_retry != kRnrRetryForever &&
                         parked.naks > parked.packet.rnr_retry);
  if (!exceeded) return Outcome::kRnr;
  Reply(qp->context, parked.packet, AckStatus::kRnrRetryExceeded);
  return Outcome::kRnrExceeded;
}

// A failed access to a failed payload fetch: who is to blame.
void FetchFailed(SoftQp* qp, const Packet& request, int error) {
  // ESRCH: the requester is gone, nobody to answer. EFAULT: its buffers
  // (checked against its keys) are not mapped any more.
  if (error != ESRCH) Reply(qp->context, request, AckStatus::kRequesterFault);
}

Outcome Execute(SoftQp* qp, ParkedPacket& parked) {
  SoftContext* context = qp->context;
  const Packet& request = parked.packet;
  if (request.psn != qp->expected_psn) {
    Reply(context, request, AckStatus::kPsnError);
    return Outcome::kDone;
  }
  const auto opcode = static_cast<ibv_wr_opcode>(request.opcode);
  SoftSrq* srq = qp->srq;
  switch (opcode) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM: {
      if (srq == nullptr || srq->queue.empty()) {
        return ReceiverNotReady(qp, parked);
      }
      const RecvWqe recv = srq->queue.front();
      uint64_t room = 0;
      bool keys_valid = true;
      std::vector<iovec> local;
      uint64_t left = request.length;
      for (int i = 0; i < recv.num_sge; ++i) {
        const ibv_sge& sge = recv.sge[i];
        room += sge.length;
        if (sge.length == 0 || left == 0) continue;
        if (FindMr(context, sge.lkey, /*local=*/true, srq->pd_id, sge.addr,
                   sge.length, IBV_ACCESS_LOCAL_WRITE) == nullptr) {
          keys_valid = false;
          break;
        }
        const uint64_t n = std::min<uint64_t>(left, sge.length);
        local.push_back({reinterpret_cast<void*>(sge.addr), n});
        left -= n;
      }
      if (keys_valid && room < request.length) {
        srq->queue.pop_front();
        PushRecvCqe(qp, recv, request, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV);
        Reply(context, request, AckStatus::kInvalidRequest);
        FailQp(qp);
        return Outcome::kDone;
      }
      if (!keys_valid) {
        srq->queue.pop_front();
        PushRecvCqe(qp, recv, request, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV);
        Reply(context, request, AckStatus::kRemoteOperation);
        FailQp(qp);
        return Outcome::kDone;
      }
      if (const int error = FetchPayload(request, local); error != 0) {
        FetchFailed(qp, request, error);
        return Outcome::kDone;
      }
      srq->queue.pop_front();
      PushRecvCqe(qp, recv, request, IBV_WC_SUCCESS, IBV_WC_RECV);
      break;
    }
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: {
      // Hardware does not check the rkey of a zero-length access.
      if (request.length > 0 &&
          ((qp->access & IBV_ACCESS_REMOTE_WRITE) == 0 ||
           FindMr(context, request.rkey, /*local=*/false, qp->pd_id,
                  request.remote_address, request.length,
                  IBV_ACCESS_REMOTE_WRITE) == nullptr)) {
        Reply(context, request, AckStatus::kRemoteAccess);
        ResponderError(qp, IBV_EVENT_QP_ACCESS_ERR);
        return Outcome::kDone;
      }
      const bool with_imm = opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
      if (with_imm && (srq == nullptr || srq->queue.empty())) {
        return ReceiverNotReady(qp, parked);
      }
      if (request.length > 0) {
        std::vector<iovec> local = {
            {reinterpret_cast<void*>(request.remote_address),
             static_cast<size_t>(request.length)}};
        if (const int error = FetchPayload(request, local); error != 0) {
          FetchFailed(qp, request, error);
          return Outcome::kDone;
        }
      }
      if (with_imm) {
        const RecvWqe recv = srq->queue.front();
        srq->queue.pop_front();
        PushRecvCqe(qp, recv, request, IBV_WC_SUCCESS,
                    IBV_WC_RECV_RDMA_WITH_IMM);
      }
      break;
    }
    case IBV_WR_RDMA_READ: {
      if (qp->max_dest_rd_atomic == 0) {
        Reply(context, request, AckStatus::kInvalidRequest);
        ResponderError(qp, IBV_EVENT_QP_REQ_ERR);
        return Outcome::kDone;
      }
      if (request.length > 0 &&
          ((qp->access & IBV_ACCESS_REMOTE_READ) == 0 ||
           FindMr(context, request.rkey, /*local=*/false, qp->pd_id,
                  request.remote_address, request.length,
                  IBV_ACCESS_REMOTE_READ) == nullptr)) {
        Reply(context, request, AckStatus::kRemoteAccess);
        ResponderError(qp, IBV_EVENT_QP_ACCESS_ERR);
        return Outcome::kDone;
      }
      if (request.length > 0) {
        iovec local = {reinterpret_cast<void*>(request.remote_address),
                       static_cast<size_t>(request.length)};
        std::vector<iovec> remote;
        for (int i = 0; i < request.num_sge; ++i) {
          remote.push_back({reinterpret_cast<void*>(request.sge[i].address),
                            static_cast<size_t>(request.sge[i].length)});
        }
        if (const int error = internal::CrossMemoryCopy(
                request.src_pid, /*from_remote=*/false, &local, 1,
                remote.data(), static_cast<int>(remote.size()));
            error != 0) {
          FetchFailed(qp, request, error);
          return Outcome::kDone;
        }
      }
      break;
    }
    default:
      Reply(context, request, AckStatus::kInvalidRequest);
      ResponderError(qp, IBV_EVENT_QP_REQ_ERR);
      return Outcome::kDone;
  }
  qp->expected_psn = (qp->expected_psn + 1) & kPsnMask;
  Reply(context, request, AckStatus::kOk);
  return Outcome::kDone;
}

// Retries the QP's parked requests in order until one is still not ready.
void RetryParked(SoftQp* qp) {
  while (!qp->parked.empty()) {
    const Outcome outcome = Execute(qp, qp->parked.front());
    if (outcome == Outcome::kRnr) {
      qp->next_rnr_retry_ns = NowNs() + kRnrRetryNs;
      return;
    }
    if (outcome == Outcome::kRnrExceeded) {
      // The requester's QP is in error now: what followed will not be
      // answered (the requester flushed it).
      qp->parked.clear();
      return;
    }
    qp->parked.pop_front();
  }
}

void HandleRequest(SoftContext* context, const Packet& request) {
  auto it = context->qps.find(request.dst_qpn);
  SoftQp* qp = it == context->qps.end() ? nullptr : it->second.get();
  // Hardware drops what no connected QP accepts; the requester would time
  // out. Answer at once instead, with the same outcome.
  if (qp == nullptr || (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS) ||
      request.src_id != qp->remote_id || request.src_qpn != qp->dest_qpn) {
    Reply(context, request, AckStatus::kNoQp);
    return;
  }
  // Later requests wait behind a parked one: delivery stays in order.
  if (!qp->parked.empty()) {
    qp->parked.push_back({request, 0});
    return;
  }
  ParkedPacket parked = {request, 0};
  if (Execute(qp, parked) == Outcome::kRnr) {
    qp->parked.push_back(parked);
    qp->next_rnr_retry_ns = NowNs() + kRnrRetryNs;
  }
}

// Handles up to `budget` packets of the inbox, then pushes what the outbox
// holds.
void Progress(SoftContext* context, int budget) {
  Packet packet;
  for (int i = 0; i < budget && context->inbox->Pop(&packet); ++i) {
    if (packet.type == PacketType::kRequest) {
      HandleRequest(context, packet);
    } else {
      HandleAck(context, packet);
    }
  }
  if (!context->outbox.empty()) FlushOutbox(context);
}

// When the NIC thread should next wake without a packet: -1 for never.
int64_t NextDeadline(SoftContext* context, int64_t now) {
  int64_t deadline = -1;
  auto consider = [&deadline](int64_t when) {
    if (deadline < 0 || when < deadline) deadline = when;
  };
  if (!context->outbox.empty()) consider(now + kOutboxRetryNs);
  for (auto& [qpn, qp] : context->qps) {
    if (!qp->parked.empty()) consider(qp->next_rnr_retry_ns);
    if (qp->hold_until_ns != 0) consider(qp->hold_until_ns);
    if (qp->state == IBV_QPS_RTS && qp->first_posted > 0) {
      consider(context->next_liveness_ns);
    }
  }
  return deadline;
}

void RunTimers(SoftContext* context, int64_t now) {
  for (auto& [qpn, qp] : context->qps) {
    if (!qp->parked.empty() && now >= qp->next_rnr_retry_ns) {
      RetryParked(qp.get());
    }
    if (qp->hold_until_ns != 0 && now >= qp->hold_until_ns) {
      qp->hold_until_ns = 0;
      Transmit(qp.get());
    }
  }
  if (now >= context->next_liveness_ns) {
    CheckPeers(context);
    context->next_liveness_ns = now + kLivenessNs;
  }
}

// Called by other threads after they may have created work for a timer
// (answers to wait for, a parked request, a full peer inbox): wake the NIC
// thread so that it sleeps with a timeout.
void EnsureTimer(SoftContext* context) {
  if (context->timer_armed) return;
  if (NextDeadline(context, NowNs()) < 0) return;
  context->timer_armed = true;
  context->inbox->Ring();
}

void NicThread(SoftContext* context) {
  while (!context->stopping.load(std::memory_order_acquire)) {
    const uint32_t doorbell = context->inbox->Doorbell();
    int64_t timeout_ns = -1;
    {
      std::lock_guard<std::mutex> lock(context->mutex);
      Progress(context, 256);
      const int64_t now = NowNs();
      RunTimers(context, now);
      const int64_t deadline = NextDeadline(context, now);
      context->timer_armed = deadline >= 0;
      if (deadline >= 0) timeout_ns = std::max<int64_t>(0, deadline - now);
    }
    if (!context->inbox->Empty()) continue;
    if (timeout_ns == 0) continue;
    context->inbox->Sleep(doorbell, timeout_ns);
  }
}

// ---------------------------------------------------------------------------
// The Verbs interface. Handles are our objects, cast: the opaque Verbs*
// types are never defined here, so the real device may define them.

SoftContext* Soft(VerbsContext* context) {
  return reinterpret_cast<SoftContext*>(context);
}
SoftPd* Soft(VerbsPd* pd) { return reinterpret_cast<SoftPd*>(pd); }
SoftCq* Soft(VerbsCq* cq) { return reinterpret_cast<SoftCq*>(cq); }
SoftChannel* Soft(VerbsChannel* channel) {
  return reinterpret_cast<SoftChannel*>(channel);
}
SoftSrq* Soft(VerbsSrq* srq) { return reinterpret_cast<SoftSrq*>(srq); }
SoftQp* Soft(VerbsQp* qp) { return reinterpret_cast<SoftQp*>(qp); }

// QP attribute masks per transition, as hardware enforces them.
constexpr int kResetToInitRequired =
    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
constexpr int kInitToRtrRequired =
    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
constexpr int kInitToRtrOptional =
    IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX;
constexpr int kRtrToRtsRequired = IBV_QP_STATE | IBV_QP_TIMEOUT |
                                  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
constexpr int kRtsOptional = IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
                             IBV_QP_MIN_RNR_TIMER | IBV_QP_ALT_PATH |
                             IBV_QP_PATH_MIG_STATE;

bool MaskIs(int mask, int required, int optional) {
  return (mask & required) == required && (mask & ~(required | optional)) == 0;
}

class SoftVerbs final : public Verbs {
 public:
  const char* provider() const override { return "softib"; }

  std::vector<std::string> ListDevices() override { return {"softib0"}; }

  VerbsContext* OpenDevice(const std::string& name) override {
    if (name != "softib0") return FailNull<VerbsContext>(ENODEV);
    // Peers read and write our memory with process_vm_readv/writev; under
    // Yama's ptrace_scope=1 that needs our consent (as net/shm does).
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    auto context = std::make_unique<SoftContext>();
    const char* link = std::getenv("MINIMPI_SOFTIB_LINK");
    if (link != nullptr && std::string(link) == "roce") {
      context->roce = true;
    } else if (link != nullptr && *link != '\0' && std::string(link) != "ib") {
      return FailNull<VerbsContext>(EINVAL);  // a typo should not pass
    }
    if (const char* limit = std::getenv("MINIMPI_SOFTIB_MAX_RNR");
        limit != nullptr && *limit != '\0') {
      uint64_t value = 0;
      if (!absl::SimpleAtoi(limit, &value)) {
        return FailNull<VerbsContext>(EINVAL);
      }
      context->max_rnr = value;
    }
    context->id = AcquireContextId();
    if (context->id == 0) return FailNull<VerbsContext>(EAGAIN);
    context->inbox = Inbox::Create(context->id);
    if (context->inbox == nullptr) {
      const int error = errno;
      ReleaseContextId(context->id);
      return FailNull<VerbsContext>(error);
    }
    context->async_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC | EFD_SEMAPHORE);
    if (context->async_fd < 0) {
      const int error = errno;
      context->inbox->Close();
      internal::ForgetInbox(context->id);
      ReleaseContextId(context->id);
      return FailNull<VerbsContext>(error);
    }
    SoftContext* raw = context.release();
    raw->nic = std::thread(NicThread, raw);
    return reinterpret_cast<VerbsContext*>(raw);
  }

  void CloseDevice(VerbsContext* handle) override {
    SoftContext* context = Soft(handle);
    if (context == nullptr) return;
    context->stopping.store(true, std::memory_order_release);
    context->inbox->Close();  // peers now see it dead; wakes the NIC
    context->nic.join();
    internal::ForgetInbox(context->id);
    ReleaseContextId(context->id);
    std::unique_lock<std::mutex> lock(context->mutex);
    close(context->async_fd);
    context->async_fd = -1;
    context->closed = true;
    ReleaseIfClosed(lock, context);
  }

  int QueryDevice(VerbsContext* handle, ibv_device_attr* attr) override {
    if (handle == nullptr || attr == nullptr) return Fail(EINVAL);
    *attr = {};
    std::snprintf(attr->fw_ver, sizeof(attr->fw_ver), "softib-1");
    attr->node_guid = Soft(handle)->id;
    attr->sys_image_guid = Soft(handle)->id;
    attr->max_mr_size = kMaxMrSize;
    attr->page_size_cap = 4096;
    attr->max_qp = 65536;
    attr->max_qp_wr = kMaxQpWr;
    attr->max_sge = kMaxSendSge;
    attr->max_sge_rd = kMaxSendSge;
    attr->max_cq = 65536;
    attr->max_cqe = kMaxCqe;
    attr->max_mr = 1 << 20;
    attr->max_pd = 1 << 16;
    attr->max_qp_rd_atom = kMaxRdAtomic;
    attr->max_res_rd_atom = kMaxRdAtomic * 65536;
    attr->max_qp_init_rd_atom = kMaxRdAtomic;
    attr->atomic_cap = IBV_ATOMIC_NONE;
    attr->max_srq = 65536;
    attr->max_srq_wr = kMaxSrqWr;
    attr->max_srq_sge = kMaxSrqSge;
    attr->max_pkeys = 1;
    attr->phys_port_cnt = 1;
    return 0;
  }

  int QueryPort(VerbsContext* handle, uint8_t port,
                ibv_port_attr* attr) override {
    if (handle == nullptr || attr == nullptr || port != 1) return Fail(EINVAL);
    SoftContext* context = Soft(handle);
    *attr = {};
    attr->state = IBV_PORT_ACTIVE;
    attr->max_mtu = IBV_MTU_4096;
    attr->active_mtu = IBV_MTU_4096;
    attr->gid_tbl_len = context->roce ? 4 : 1;
    attr->max_msg_sz = 1u << 31;
    attr->pkey_tbl_len = 1;
    attr->lid = context->roce ? 0 : static_cast<uint16_t>(context->id);
    attr->sm_lid = context->roce ? 0 : 1;
    attr->active_width = 2;   // 4x
    attr->active_speed = 32;  // EDR
    attr->phys_state = 5;     // LinkUp
    attr->link_layer =
        context->roce ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
    return 0;
  }

  int QueryGid(VerbsContext* handle, uint8_t port, uint32_t index,
               ibv_gid_entry* entry) override {
    if (handle == nullptr || entry == nullptr || port != 1) {
      return Fail(EINVAL);
    }
    SoftContext* context = Soft(handle);
    if (index >= (context->roce ? 4u : 1u)) return Fail(ENODATA);
    *entry = {};
    entry->gid_index = index;
    entry->port_num = port;
    if (!context->roce) {
      entry->gid = MakeGid(context->id, false);
      entry->gid_type = IBV_GID_TYPE_IB;
    } else {
      entry->gid = MakeGid(context->id, /*ipv4_mapped=*/index >= 2);
      entry->gid_type =
          index % 2 == 0 ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_ROCE_V2;
      entry->ndev_ifindex = 1;
    }
    return 0;
  }

  bool GetAsyncEvent(VerbsContext* handle, AsyncEvent* event) override {
    SoftContext* context = Soft(handle);
    std::lock_guard<std::mutex> lock(context->mutex);
    if (context->async_events.empty() || context->async_fd < 0) return false;
    *event = context->async_events.front();
    context->async_events.pop_front();
    uint64_t value;
    (void)!read(context->async_fd, &value, sizeof(value));
    return true;
  }

  int AsyncEventFd(VerbsContext* handle) override {
    return Soft(handle)->async_fd;
  }

  VerbsPd* AllocPd(VerbsContext* handle) override {
    SoftContext* context = Soft(handle);
    if (context == nullptr) return FailNull<VerbsPd>(EINVAL);
    std::lock_guard<std::mutex> lock(context->mutex);
    auto pd = std::make_unique<SoftPd>(SoftPd{context, context->next_pd_id++});
    SoftPd* raw = pd.get();
    context->pds[raw] = std::move(pd);
    return reinterpret_cast<VerbsPd*>(raw);
  }

  void DeallocPd(VerbsPd* handle) override {
    SoftPd* pd = Soft(handle);
    if (pd == nullptr) return;
    SoftContext* context = pd->context;
    std::unique_lock<std::mutex> lock(context->mutex);
    context->pds.erase(pd);
    ReleaseIfClosed(lock, context);
  }

  bool RegMr(VerbsPd* handle, void* address, size_t length, int access,
             VerbsMr* mr) override {
    SoftPd* pd = Soft(handle);
    if (pd == nullptr || mr == nullptr || length > kMaxMrSize) {
      errno = EINVAL;
      return false;
    }
    // As ibv_reg_mr: remote write needs local write.
    if ((access & IBV_ACCESS_REMOTE_WRITE) != 0 &&
        (access & IBV_ACCESS_LOCAL_WRITE) == 0) {
      errno = EINVAL;
      return false;
    }
    SoftContext* context = pd->context;
    const uint32_t pair = next_key_pair.fetch_add(1, std::memory_order_relaxed);
    auto owned = std::make_unique<SoftMr>(
        SoftMr{context, pd->id, reinterpret_cast<uint64_t>(address), length,
               access, pair * 2, pair * 2 + 1});
    SoftMr* soft = owned.get();
    std::lock_guard<std::mutex> lock(context->mutex);
    context->keys[soft->lkey] = soft;
    context->keys[soft->rkey] = soft;
    context->mrs[soft] = std::move(owned);
    mr->lkey = soft->lkey;
    mr->rkey = soft->rkey;
    mr->handle = soft;
    return true;
  }

  int DeregMr(VerbsMr* mr) override {
    if (mr == nullptr || mr->handle == nullptr) return Fail(EINVAL);
    auto* soft = static_cast<SoftMr*>(mr->handle);
    SoftContext* context = soft->context;
    std::unique_lock<std::mutex> lock(context->mutex);
    context->keys.erase(soft->lkey);
    context->keys.erase(soft->rkey);
    context->mrs.erase(soft);
    mr->handle = nullptr;
    ReleaseIfClosed(lock, context);
    return 0;
  }

  VerbsChannel* CreateCompChannel(VerbsContext* handle) override {
    SoftContext* context = Soft(handle);
    if (context == nullptr) return FailNull<VerbsChannel>(EINVAL);
    const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC | EFD_SEMAPHORE);
    if (fd < 0) return nullptr;
    auto channel = std::make_unique<SoftChannel>(SoftChannel{context, fd});
    SoftChannel* raw = channel.get();
    std::lock_guard<std::mutex> lock(context->mutex);
    context->channels[raw] = std::move(channel);
    return reinterpret_cast<VerbsChannel*>(raw);
  }

  void DestroyCompChannel(VerbsChannel* handle) override {
    SoftChannel* channel = Soft(handle);
    if (channel == nullptr) return;
    SoftContext* context = channel->context;
    std::unique_lock<std::mutex> lock(context->mutex);
    for (auto& [cq, owned] : context->cqs) {
      if (cq->channel == channel) cq->channel = nullptr;
    }
    close(channel->fd);
    context->channels.erase(channel);
    ReleaseIfClosed(lock, context);
  }

  int ChannelFd(VerbsChannel* handle) override { return Soft(handle)->fd; }

  bool GetCqEvent(VerbsChannel* handle) override {
    uint64_t value;
    return read(Soft(handle)->fd, &value, sizeof(value)) ==
           static_cast<ssize_t>(sizeof(value));
  }

  VerbsCq* CreateCq(VerbsContext* handle, int entries,
                    VerbsChannel* channel) override {
    SoftContext* context = Soft(handle);
    if (context == nullptr || entries < 1 || entries > kMaxCqe ||
        (channel != nullptr && Soft(channel)->context != context)) {
      return FailNull<VerbsCq>(EINVAL);
    }
    auto cq = std::make_unique<SoftCq>();
    cq->context = context;
    cq->capacity = static_cast<size_t>(entries);
    cq->channel = Soft(channel);
    SoftCq* raw = cq.get();
    std::lock_guard<std::mutex> lock(context->mutex);
    context->cqs[raw] = std::move(cq);
    return reinterpret_cast<VerbsCq*>(raw);
  }

  void DestroyCq(VerbsCq* handle) override {
    SoftCq* cq = Soft(handle);
    if (cq == nullptr) return;
    SoftContext* context = cq->context;
    std::unique_lock<std::mutex> lock(context->mutex);
    for (auto& [qpn, qp] : context->qps) {
      if (qp->send_cq == cq) qp->send_cq = nullptr;
      if (qp->recv_cq == cq) qp->recv_cq = nullptr;
    }
    context->cqs.erase(cq);
    ReleaseIfClosed(lock, context);
  }

  int ReqNotifyCq(VerbsCq* handle) override {
    SoftCq* cq = Soft(handle);
    if (cq == nullptr) return Fail(EINVAL);
    std::lock_guard<std::mutex> lock(cq->context->mutex);
    cq->armed = true;
    return 0;
  }

  int PollCq(VerbsCq* handle, int entries, ibv_wc* wc) override {
    SoftCq* cq = Soft(handle);
    SoftContext* context = cq->context;
    std::lock_guard<std::mutex> lock(context->mutex);
    // The poller lends the NIC its time when it would come back short.
    if (!cq->overrun && cq->entries.size() < static_cast<size_t>(entries)) {
      Progress(context, kPollProgressBudget);
      EnsureTimer(context);
    }
    if (cq->overrun) return -1;
    int n = 0;
    while (n < entries && !cq->entries.empty()) {
      const CqEntry& entry = cq->entries.front();
      wc[n++] = entry.wc;
      if (entry.send_side) {
        // This CQE frees its WQE's slot and those of the unsignaled WQEs
        // posted before it.
        auto it = context->qps.find(entry.wc.qp_num);
        if (it != context->qps.end()) {
          SoftQp* qp = it->second.get();
          qp->reclaimed = std::max(qp->reclaimed, entry.seq + 1);
        }
      }
      cq->entries.pop_front();
    }
    return n;
  }

  VerbsSrq* CreateSrq(VerbsPd* handle, uint32_t max_wr,
                      uint32_t max_sge) override {
    SoftPd* pd = Soft(handle);
    if (pd == nullptr || max_wr < 1 || max_wr > kMaxSrqWr || max_sge < 1 ||
        max_sge > kMaxSrqSge) {
      return FailNull<VerbsSrq>(EINVAL);
    }
    auto srq = std::make_unique<SoftSrq>();
    srq->context = pd->context;
    srq->pd_id = pd->id;
    srq->max_wr = max_wr;
    srq->max_sge = max_sge;
    SoftSrq* raw = srq.get();
    std::lock_guard<std::mutex> lock(pd->context->mutex);
    pd->context->srqs[raw] = std::move(srq);
    return reinterpret_cast<VerbsSrq*>(raw);
  }

  void DestroySrq(VerbsSrq* handle) override {
    SoftSrq* srq = Soft(handle);
    if (srq == nullptr) return;
    SoftContext* context = srq->context;
    std::unique_lock<std::mutex> lock(context->mutex);
    for (auto& [qpn, qp] : context->qps) {
      if (qp->srq == srq) qp->srq = nullptr;
    }
    context->srqs.erase(srq);
    ReleaseIfClosed(lock, context);
  }

  int PostSrqRecv(VerbsSrq* handle, ibv_recv_wr* wr,
                  ibv_recv_wr** bad_wr) override {
    SoftSrq* srq = Soft(handle);
    SoftContext* context = srq->context;
    std::lock_guard<std::mutex> lock(context->mutex);
    int rc = 0;
    for (; wr != nullptr; wr = wr->next) {
      if (wr->num_sge < 0 ||
          static_cast<uint32_t>(wr->num_sge) > srq->max_sge) {
        rc = EINVAL;
        break;
      }
      if (srq->queue.size() >= srq->max_wr) {
        rc = ENOMEM;
        break;
      }
      RecvWqe recv = {};
      recv.wr_id = wr->wr_id;
      recv.num_sge = wr->num_sge;
      std::copy(wr->sg_list, wr->sg_list + wr->num_sge, recv.sge);
      srq->queue.push_back(recv);
    }
    if (rc != 0) {
      if (bad_wr != nullptr) *bad_wr = wr;
      errno = rc;
    }
    // A receive arrived: what was refused for the lack of one goes again.
    for (auto& [qpn, qp] : context->qps) {
      if (qp->srq == srq && !qp->parked.empty()) RetryParked(qp.get());
    }
    return rc;
  }

  VerbsQp* CreateRcQp(VerbsPd* handle, RcQpConfig& config,
                      uint32_t* qp_num) override {
    SoftPd* pd = Soft(handle);
    if (pd == nullptr) return FailNull<VerbsQp>(EINVAL);
    SoftContext* context = pd->context;
    const ibv_qp_cap& want = config.capabilities;
    SoftCq* send_cq = Soft(config.send_cq);
    SoftCq* recv_cq = Soft(config.recv_cq);
    SoftSrq* srq = Soft(config.srq);
    // This device's QPs take their receives from an SRQ only.
    if (send_cq == nullptr || recv_cq == nullptr || srq == nullptr ||
        send_cq->context != context || recv_cq->context != context ||
        srq->context != context || srq->pd_id != pd->id ||
        want.max_send_wr > kMaxQpWr || want.max_send_sge > kMaxSendSge ||
        want.max_inline_data > kMaxInlineData) {
      return FailNull<VerbsQp>(EINVAL);
    }
    auto qp = std::make_unique<SoftQp>();
    qp->context = context;
    qp->qpn = internal::AllocateQpNumber();
    qp->pd_id = pd->id;
    qp->send_cq = send_cq;
    qp->recv_cq = recv_cq;
    qp->srq = srq;
    qp->cap.max_send_wr = std::max<uint32_t>(1, want.max_send_wr);
    qp->cap.max_send_sge = std::max<uint32_t>(1, want.max_send_sge);
    qp->cap.max_inline_data = want.max_inline_data;
    qp->cap.max_recv_wr = 0;
    qp->cap.max_recv_sge = 0;
    config.capabilities = qp->cap;
    SoftQp* raw = qp.get();
    std::lock_guard<std::mutex> lock(context->mutex);
    if (context->qps.count(raw->qpn) != 0) return FailNull<VerbsQp>(ENOMEM);
    context->qps[raw->qpn] = std::move(qp);
    if (qp_num != nullptr) *qp_num = raw->qpn;
    return reinterpret_cast<VerbsQp*>(raw);
  }

  void DestroyQp(VerbsQp* handle) override {
    SoftQp* qp = Soft(handle);
    if (qp == nullptr) return;
    SoftContext* context = qp->context;
    std::unique_lock<std::mutex> lock(context->mutex);
    context->qps.erase(qp->qpn);
    ReleaseIfClosed(lock, context);
  }

  int ModifyQp(VerbsQp* handle, ibv_qp_attr* attr, int mask) override {
    SoftQp* qp = Soft(handle);
    if (qp == nullptr || attr == nullptr || (mask & IBV_QP_STATE) == 0) {
      return Fail(EINVAL);
    }
    SoftContext* context = qp->context;
    std::lock_guard<std::mutex> lock(context->mutex);
    const ibv_qp_state from = qp->state;
    const ibv_qp_state to = attr->qp_state;
    if ((mask & IBV_QP_CUR_STATE) != 0 && attr->cur_qp_state != from) {
      return Fail(EINVAL);
    }
    if (to == IBV_QPS_RESET) {
      if (!MaskIs(mask, IBV_QP_STATE, IBV_QP_CUR_STATE)) return Fail(EINVAL);
      qp->state = IBV_QPS_RESET;
      qp->sq.clear();
      qp->first_posted = 0;
      qp->hold_until_ns = 0;
      qp->retry_deadline_ns = 0;
      qp->reclaimed = qp->posted;
      qp->parked.clear();
      qp->access = 0;
      return 0;
    }
    if (to == IBV_QPS_ERR) {
      if (!MaskIs(mask, IBV_QP_STATE, IBV_QP_CUR_STATE)) return Fail(EINVAL);
      if (from != IBV_QPS_ERR) FailQp(qp);
      return 0;
    }
    if (from == IBV_QPS_RESET && to == IBV_QPS_INIT) {
      if (!MaskIs(mask, kResetToInitRequired, 0) || attr->port_num != 1 ||
          attr->pkey_index != 0) {
        return Fail(EINVAL);
      }
      qp->access = attr->qp_access_flags;
      qp->state = IBV_QPS_INIT;
      return 0;
    }
    if (from == IBV_QPS_INIT && to == IBV_QPS_INIT) {
      if (!MaskIs(mask, IBV_QP_STATE,
                  IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        return Fail(EINVAL);
      }
      if ((mask & IBV_QP_ACCESS_FLAGS) != 0) {
        qp->access = attr->qp_access_flags;
      }
      return 0;
    }
    if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) {
      if (!MaskIs(mask, kInitToRtrRequired, kInitToRtrOptional) ||
          attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096 ||
          attr->max_dest_rd_atomic > kMaxRdAtomic ||
          attr->dest_qp_num > kPsnMask || attr->rq_psn > kPsnMask) {
        return Fail(EINVAL);
      }
      const uint32_t remote = ResolveAddress(context, attr->ah_attr);
      if (remote == 0) return Fail(EINVAL);
      if ((mask & IBV_QP_ACCESS_FLAGS) != 0) {
        qp->access = attr->qp_access_flags;
      }
      qp->remote_id = remote;
      qp->dest_qpn = attr->dest_qp_num;
      qp->expected_psn = attr->rq_psn;
      qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
      qp->state = IBV_QPS_RTR;
      return 0;
    }
    if ((from == IBV_QPS_RTR && to == IBV_QPS_RTS) ||
        (from == IBV_QPS_RTS && to == IBV_QPS_RTS)) {
      const int required =
          from == IBV_QPS_RTR ? kRtrToRtsRequired : int{IBV_QP_STATE};
      if (!MaskIs(mask, required, kRtsOptional) ||
          ((mask & IBV_QP_RETRY_CNT) != 0 && attr->retry_cnt > 7) ||
          ((mask & IBV_QP_TIMEOUT) != 0 && attr->timeout > 31) ||
          ((mask & IBV_QP_RNR_RETRY) != 0 && attr->rnr_retry > 7) ||
          ((mask & IBV_QP_SQ_PSN) != 0 && attr->sq_psn > kPsnMask) ||
          ((mask & IBV_QP_MAX_QP_RD_ATOMIC) != 0 &&
           attr->max_rd_atomic > kMaxRdAtomic)) {
        return Fail(EINVAL);
      }
      if ((mask & IBV_QP_ACCESS_FLAGS) != 0) {
        qp->access = attr->qp_access_flags;
      }
      if (from == IBV_QPS_RTR) {
        qp->next_psn = attr->sq_psn;
        qp->rnr_retry = attr->rnr_retry;
        qp->timeout = attr->timeout;
        qp->retry_cnt = attr->retry_cnt;
        qp->max_rd_atomic = attr->max_rd_atomic;
      }
      qp->state = IBV_QPS_RTS;
      Transmit(qp);  // nothing can be queued yet, but keep it uniform
      return 0;
    }
    return Fail(EINVAL);
  }

  int PostSend(VerbsQp* handle, ibv_send_wr* wr,
               ibv_send_wr** bad_wr) override {
    SoftQp* qp = Soft(handle);
    SoftContext* context = qp->context;
    std::lock_guard<std::mutex> lock(context->mutex);
    if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR) {
      if (bad_wr != nullptr) *bad_wr = wr;
      return Fail(EINVAL);
    }
    int rc = 0;
    for (; wr != nullptr; wr = wr->next) {
      rc = Check(qp, wr);
      if (rc != 0) break;
      SendWqe& wqe = qp->sq.emplace_back();
      wqe.seq = qp->posted++;
      wqe.wr_id = wr->wr_id;
      wqe.opcode = wr->opcode;
      wqe.signaled = (wr->send_flags & IBV_SEND_SIGNALED) != 0;
      wqe.imm_data = wr->imm_data;
      wqe.remote_address = wr->wr.rdma.remote_addr;
      wqe.rkey = wr->wr.rdma.rkey;
      wqe.num_sge = wr->num_sge;
      std::copy(wr->sg_list, wr->sg_list + wr->num_sge, wqe.sge);
      wqe.is_inline = (wr->send_flags & IBV_SEND_INLINE) != 0;
      wqe.length = 0;
      for (int i = 0; i < wr->num_sge; ++i) {
        if (wqe.is_inline) {
          // Inline bytes are taken now: the caller may reuse the buffer
          // as soon as we return.
          std::memcpy(wqe.inline_data + wqe.length,
                      reinterpret_cast<const void*>(wr->sg_list[i].addr),
                      wr->sg_list[i].length);
        }
        wqe.length += wr->sg_list[i].length;
      }
      wqe.psn = 0;
      if (qp->state == IBV_QPS_ERR) {
        wqe.state = WqeState::kDone;
        wqe.status = IBV_WC_WR_FLUSH_ERR;
      } else {
        wqe.state = WqeState::kPosted;
        wqe.status = IBV_WC_SUCCESS;
      }
    }
    if (rc != 0) {
      if (bad_wr != nullptr) *bad_wr = wr;
      errno = rc;
    }
    if (qp->state == IBV_QPS_ERR) {
      qp->first_posted = qp->sq.size();
      ReportCompletions(qp);
    } else {
      Transmit(qp);
      EnsureTimer(context);
    }
    return rc;
  }

 private:
  // Why a work request cannot be posted (0 when it can).
  static int Check(SoftQp* qp, const ibv_send_wr* wr) {
    switch (wr->opcode) {
      case IBV_WR_SEND:
      case IBV_WR_SEND_WITH_IMM:
      case IBV_WR_RDMA_WRITE:
      case IBV_WR_RDMA_WRITE_WITH_IMM:
      case IBV_WR_RDMA_READ:
        break;
      default:
        return EINVAL;
    }
    if (wr->num_sge < 0 ||
        static_cast<uint32_t>(wr->num_sge) > qp->cap.max_send_sge ||
        (wr->num_sge > 0 && wr->sg_list == nullptr)) {
      return EINVAL;
    }
    uint64_t length = 0;
    for (int i = 0; i < wr->num_sge; ++i) length += wr->sg_list[i].length;
    if (length > (uint64_t{1} << 31)) return EINVAL;
    if ((wr->send_flags & IBV_SEND_INLINE) != 0 &&
        (wr->opcode == IBV_WR_RDMA_READ || length > qp->cap.max_inline_data)) {
      return EINVAL;
    }
    if (qp->posted - qp->reclaimed >= qp->cap.max_send_wr) return ENOMEM;
    return 0;
  }

  // The context an address vector names, per link layer; 0 when none.
  static uint32_t ResolveAddress(SoftContext* context, const ibv_ah_attr& av) {
    if (av.port_num > 1) return 0;
    uint32_t id = 0;
    if (context->roce) {
      // Ethernet has no LIDs: the GRH is the address.
      if (!av.is_global || av.grh.sgid_index >= 4) return 0;
      id = DecodeGid(av.grh.dgid);
    } else {
      id = av.dlid;
      if (av.is_global &&
          (av.grh.sgid_index != 0 || DecodeGid(av.grh.dgid) != id)) {
        return 0;
      }
    }
    if (id == 0 || id > internal::kMaxId || FindInbox(id) == nullptr) return 0;
    return id;
  }
};

}  // namespace

std::unique_ptr<Verbs> CreateSoftVerbs() {
  return std::make_unique<SoftVerbs>();
}

SoftVerbsCounters GetSoftVerbsCounters() {
  SoftVerbsCounters counters;
  counters.rnr_naks = rnr_naks.load(std::memory_order_relaxed);
  counters.packets_sent = packets_sent.load(std::memory_order_relaxed);
  counters.outbox_waits = outbox_waits.load(std::memory_order_relaxed);
  counters.peer_failures = peer_failures.load(std::memory_order_relaxed);
  return counters;
}

uint64_t SoftVerbsRnrNakCount() {
  return rnr_naks.load(std::memory_order_relaxed);
}

}  // namespace minimpi::net::ib::testing
