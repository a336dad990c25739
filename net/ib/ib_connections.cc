// Connections: a VCI's queues made on first use (Ready), one RC queue
// pair per pair of VCIs that talk (CreateConnectionLocked), and the
// request/accept/ready handshake through the connection manager
// (OnConnectMessage, ConnectLocked; connection_protocol.h decides).
#include <dlfcn.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "net/ib/ib_transport.h"
#include "net/ib/ib_transport_internal.h"

namespace minimpi::net::ib {

IbTransport::Vci& IbTransport::Ready(int vci) {
  Vci& state = vcis_[vci];
  if (state.ready.load(std::memory_order_acquire)) return state;
  {
    std::lock_guard<std::mutex> lock(state.setup_mutex);
    if (state.ready.load(std::memory_order_relaxed)) return state;
    Vci& bell = vcis_[DoorbellOf(vci)];
    VerbsChannel* channel = nullptr;
    {
      std::lock_guard<std::mutex> bell_lock(bell.doorbell_mutex);
      channel = bell.channel.load(std::memory_order_relaxed);
      if (channel == nullptr) {
        channel = verbs_->CreateCompChannel(context_);
        if (channel == nullptr) {
          Die(absl::StrCat("cannot create a completion channel: ",
                           std::strerror(errno)));
        }
        bell.channel.store(channel, std::memory_order_release);
      }
    }
    state.cq = verbs_->CreateCq(context_, cq_entries_, channel);
    state.srq = verbs_->CreateSrq(
        pd_, static_cast<uint32_t>(receive_queue_capacity_), 1);
    if (state.cq == nullptr || state.srq == nullptr) {
      Die(absl::StrCat("cannot create the queues of VCI ", vci, ": ",
                       std::strerror(errno)));
    }
    state.receive_stride = RoundUp(max_message_ + sizeof(uint32_t), 64);
    const size_t stride = RoundUp(max_message_, 64);
    state.send_pool.reset(
        static_cast<char*>(std::aligned_alloc(64, stride * kSendBuffers)));
    if (!verbs_->RegMr(pd_, state.send_pool.get(), stride * kSendBuffers,
                       kReceiveAccess, &state.send_mr)) {
      Die(absl::StrCat("cannot register send buffers: ", std::strerror(errno)));
    }
    for (int i = kSendBuffers - 1; i >= 0; --i) {
      state.free_send_buffers.push_back(state.send_pool.get() + i * stride);
    }
    state.ops.resize(completion_budget_);
    for (int i = completion_budget_ - 1; i >= 0; --i) {
      state.free_ops.push_back(static_cast<uint32_t>(i));
    }
    state.ready.store(true, std::memory_order_release);
  }
  // A thread asleep on this doorbell (or, across nodes, on shared
  // memory's) before this VCI had a CQ must look at it now.
  RingDoorbell(vci);
  if (Transport* other = also_ring_.load(std::memory_order_acquire)) {
    other->RingDoorbell(vci);
  }
  return state;
}

IbTransport::Connection* IbTransport::CreateConnectionLocked(Vci& state,
                                                             PeerVci peer) {
  auto connection = std::make_unique<Connection>();
  Connection& c = *connection;
  c.vci = static_cast<int>(&state - vcis_.get());
  c.peer = peer;
  // The connection's receive buffers, posted to the VCI's shared queue,
  // while it has room (MINIMPI_IB_RECEIVE_BUFFERS). Past that the peer
  // still gets its credits, which then share the buffers already posted:
  // a full queue is met by the hardware's receiver-not-ready retry
  // (rnr_retry 7, unlimited), so nothing is lost, only delayed, and only
  // when more peers than the buffers cover send at the same moment.
  const int room = receive_queue_capacity_ -
                   state.receive_buffers.load(std::memory_order_relaxed);
  const int added = std::clamp(room, 0, credits_);
  if (added > 0) {
    const size_t stride = state.receive_stride;
    std::unique_ptr<char, FreeDeleter> chunk(
        static_cast<char*>(std::aligned_alloc(64, stride * added)));
    VerbsMr chunk_mr;
    if (chunk == nullptr || !verbs_->RegMr(pd_, chunk.get(), stride * added,
                                           kReceiveAccess, &chunk_mr)) {
      Die(absl::StrCat("cannot register receive buffers: ",
                       std::strerror(errno)));
    }
    for (int i = 0; i < added; ++i) {
      char* buffer = chunk.get() + i * stride;
      std::memcpy(buffer + max_message_, &chunk_mr.lkey, sizeof(uint32_t));
      RepostReceive(state, buffer);
    }
    state.receive_mrs.push_back(chunk_mr);
    state.receive_chunks.push_back(std::move(chunk));
    state.receive_buffers.fetch_add(added, std::memory_order_relaxed);
  }
  if (added < credits_) ++state.overcommitted;
  c.granted = static_cast<uint32_t>(credits_);
  c.return_credits = ReturnCredits(c.granted);

  // Word 0: the peer's running total of returned credits, written by it.
  // Word 8: ours for it, the source of our returning writes.
  c.credit_word_storage = std::make_unique<uint32_t[]>(16);
  if (!verbs_->RegMr(pd_, c.credit_word_storage.get(), 16 * sizeof(uint32_t),
                     kRemoteAccess, &c.credit_word_mr)) {
    Die(absl::StrCat("cannot register a credit word: ", std::strerror(errno)));
  }

  RcQpConfig config;
  config.send_cq = state.cq;
  config.recv_cq = state.cq;
  config.srq = state.srq;
  config.capabilities.max_send_wr = static_cast<uint32_t>(send_queue_depth_);
  config.capabilities.max_send_sge = static_cast<uint32_t>(max_send_sge_);
  config.capabilities.max_inline_data = max_inline_;
  c.qp = verbs_->CreateRcQp(pd_, config, &c.qp_num);
  if (c.qp == nullptr) {
    Die(absl::StrCat("cannot create a queue pair for ", Who(peer.rank), ": ",
                     std::strerror(errno)));
  }
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = port_.port;
  attr.qp_access_flags =
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (verbs_->ModifyQp(c.qp, &attr,
                       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                           IBV_QP_ACCESS_FLAGS) != 0) {
    Die(absl::StrCat("cannot move the queue pair for ", Who(peer.rank),
                     " to INIT: ", std::strerror(errno)));
  }
  static thread_local std::mt19937 random(std::random_device{}());
  c.psn = random() & 0xffffff;

  Connection* raw = connection.get();
  state.by_peer[uint64_t(peer.rank) * num_vcis_ + peer.vci] = raw;
  state.by_qp_number[c.qp_num] = raw;
  state.connections.push_back(std::move(connection));
  return raw;
}

ConnectMessage IbTransport::Describe(const Connection& connection,
                                     ConnectType type) const {
  ConnectMessage message;
  message.type = type;
  message.mtu = static_cast<uint8_t>(port_.mtu);
  message.lid = port_.lid;
  message.from_rank = rank_;
  message.from_vci = connection.vci;
  message.to_vci = connection.peer.vci;
  message.qp_num = connection.qp_num;
  message.psn = connection.psn;
  message.global = port_.gid_index >= 0 ? 1 : 0;
  std::memcpy(message.gid, port_.gid.raw, sizeof(message.gid));
  message.credits = connection.granted;
  message.credit_address =
      reinterpret_cast<uint64_t>(connection.credit_word_storage.get());
  message.credit_rkey = connection.credit_word_mr.rkey;
  return message;
}

void IbTransport::ConnectLocked(Connection& c, const ConnectMessage& m) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = std::min(port_.mtu, static_cast<ibv_mtu>(m.mtu));
  attr.dest_qp_num = m.qp_num;
  attr.rq_psn = m.psn;
  attr.max_dest_rd_atomic = max_read_atomic_;
  attr.min_rnr_timer = 12;  // 0.64 ms; credits keep receivers from running dry
  attr.ah_attr.port_num = port_.port;
  if (port_.ethernet) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, m.gid, sizeof(m.gid));
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(port_.gid_index);
    attr.ah_attr.grh.hop_limit = 64;
  } else {
    attr.ah_attr.dlid = m.lid;
  }
  if (verbs_->ModifyQp(c.qp, &attr,
                       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                           IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) !=
      0) {
    Die(absl::StrCat("cannot connect the queue pair to ", Who(c.peer.rank),
                     " VCI ", c.peer.vci, " (RTR, MTU ",
                     MtuBytes(attr.path_mtu), "): ", std::strerror(errno)));
  }
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;  // 67 ms per transport retry
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;  // never give up on a receiver that is not ready
  attr.sq_psn = c.psn;
  attr.max_rd_atomic = max_read_atomic_;
  if (verbs_->ModifyQp(c.qp, &attr,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                           IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                           IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
    Die(absl::StrCat("cannot connect the queue pair to ", Who(c.peer.rank),
                     " VCI ", c.peer.vci, " (RTS): ", std::strerror(errno)));
  }
  c.send_credits = SendCredits(m.credits);
  c.peer_credit_word = {m.credit_address, m.credit_rkey};
}

void IbTransport::OnConnectMessage(const ConnectMessage& m) {
  if (m.from_rank < 0 || m.from_rank >= size_ || m.from_vci < 0 ||
      m.from_vci >= num_vcis_ || m.to_vci < 0 || m.to_vci >= num_vcis_) {
    Die(absl::StrCat("a malformed connection message (from rank ", m.from_rank,
                     " VCI ", m.from_vci, " to VCI ", m.to_vci, ")"));
  }
  Vci& state = Ready(m.to_vci);
  const PeerVci theirs{m.from_rank, m.from_vci};
  const PeerVci mine{rank_, m.to_vci};
  const uint64_t key = uint64_t(theirs.rank) * num_vcis_ + theirs.vci;
  {
    std::lock_guard<std::mutex> lock(state.setup_mutex);
    auto found = state.by_peer.find(key);
    Connection* c = found == state.by_peer.end() ? nullptr : found->second;
    const PairState now = c == nullptr
                              ? PairState::kNone
                              : c->state.load(std::memory_order_relaxed);
    switch (m.type) {
      case ConnectType::kRequest: {
        const RequestAction action = DecideOnRequest(now, mine, theirs);
        if (action == RequestAction::kIgnore) return;
        if (action == RequestAction::kCreateAndAccept) {
          c = CreateConnectionLocked(state, theirs);
        }
        ConnectLocked(*c, m);
        // Usable for our sends only once the requester says its QP is
        // connected too (kReady): a packet reaching a QP not yet ready to
        // receive would be dropped and retried by the hardware for tens of
        // milliseconds.
        c->state.store(PairState::kAccepted, std::memory_order_release);
        manager_->Post(theirs.rank, Describe(*c, ConnectType::kAccept));
        return;
      }
      case ConnectType::kAccept: {
        if (c == nullptr || !ShouldConnectOnAccept(now)) return;
        ConnectLocked(*c, m);
        c->state.store(PairState::kConnected, std::memory_order_release);
        manager_->Post(theirs.rank, Describe(*c, ConnectType::kReady));
        break;
      }
      case ConnectType::kReady: {
        if (c == nullptr || now != PairState::kAccepted) return;
        c->state.store(PairState::kConnected, std::memory_order_release);
        break;
      }
    }
  }
  // The owner may be asleep waiting to send on this connection.
  RingDoorbell(m.to_vci);
}

IbTransport::Connection* IbTransport::Connected(Vci& state, PeerVci peer) {
  const uint64_t key = uint64_t(peer.rank) * num_vcis_ + peer.vci;
  auto found = state.owner_by_peer.find(key);
  if (found != state.owner_by_peer.end()) {
    Connection* c = found->second;
    return c->state.load(std::memory_order_acquire) == PairState::kConnected
               ? c
               : nullptr;
  }
  Connection* c = nullptr;
  {
    std::lock_guard<std::mutex> lock(state.setup_mutex);
    auto shared = state.by_peer.find(key);
    if (shared != state.by_peer.end()) {
      c = shared->second;
    } else {
      c = CreateConnectionLocked(state, peer);
      if (peer.rank == rank_ && peer.vci == c->vci) {
        // A VCI talking to itself: its QP connects to itself.
        ConnectLocked(*c, Describe(*c, ConnectType::kRequest));
        c->state.store(PairState::kConnected, std::memory_order_release);
      } else {
        c->state.store(PairState::kRequested, std::memory_order_release);
        manager_->Post(peer.rank, Describe(*c, ConnectType::kRequest));
      }
    }
  }
  state.owner_by_peer[key] = c;
  state.owner_by_qp_number[c->qp_num] = c;
  return c->state.load(std::memory_order_acquire) == PairState::kConnected
             ? c
             : nullptr;
}

IbTransport::Connection* IbTransport::ByQpNumber(Vci& state, uint32_t qp_num) {
  auto found = state.owner_by_qp_number.find(qp_num);
  if (found != state.owner_by_qp_number.end()) return found->second;
  std::lock_guard<std::mutex> lock(state.setup_mutex);
  auto shared = state.by_qp_number.find(qp_num);
  if (shared == state.by_qp_number.end()) return nullptr;
  state.owner_by_qp_number[qp_num] = shared->second;
  return shared->second;
}

}  // namespace minimpi::net::ib
