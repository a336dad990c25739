// Completions: polling a VCI's completion queue, reposting receive
// buffers at once, returning credits by RDMA write, and ending the job on
// a failed completion.
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

void IbTransport::RepostReceive(Vci& state, char* buffer) {
  uint32_t lkey;
  std::memcpy(&lkey, buffer + max_message_, sizeof(lkey));
  ibv_sge sge = {reinterpret_cast<uint64_t>(buffer),
                 static_cast<uint32_t>(max_message_), lkey};
  ibv_recv_wr wr{};
  wr.wr_id = ReceiveWorkId(buffer);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (verbs_->PostSrqRecv(state.srq, &wr, &bad) != 0) {
    Die(absl::StrCat("reposting a receive buffer failed: ",
                     std::strerror(errno)));
  }
}

void IbTransport::GiveBackCredits(Vci& state, Connection& c) {
  Op* op = StartOp(state, c, 1, OpKind::kCreditReturn, "credit return");
  if (op == nullptr) {
    if (!c.in_credit_backlog) {
      c.in_credit_backlog = true;
      state.credit_backlog.push_back(&c);
    }
    return;
  }
  uint32_t* source = c.credit_word_storage.get() + 8;
  *source = c.return_credits.TakeTotal();
  ibv_sge sge = {reinterpret_cast<uint64_t>(source), sizeof(uint32_t),
                 c.credit_word_mr.lkey};
  ibv_send_wr wr{};
  wr.wr_id = OperationWorkId(IndexOf(state, op));
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED |
                  (max_inline_ >= sizeof(uint32_t) ? IBV_SEND_INLINE : 0);
  wr.wr.rdma.remote_addr = c.peer_credit_word.address;
  wr.wr.rdma.rkey = c.peer_credit_word.remote_key;
  ++state.credit_returns;
  PostOrRetry(c, &wr, "credit return");
}

void IbTransport::FlushCreditBacklog(Vci& state) {
  if (state.credit_backlog.empty()) return;
  std::vector<Connection*> waiting;
  waiting.swap(state.credit_backlog);
  for (Connection* c : waiting) {
    c->in_credit_backlog = false;
    if (c->return_credits.owed() > 0) GiveBackCredits(state, *c);
  }
}

int IbTransport::Poll(int vci, CompletionHandler& handler,
                      int max_completions) {
  Vci& state = vcis_[vci];
  if (!state.ready.load(std::memory_order_acquire)) return 0;
  int handled = 0;
  int work = 0;
  ibv_wc wcs[16];
  while (handled < max_completions) {
    const int n =
        verbs_->PollCq(state.cq, std::min(16, max_completions - handled), wcs);
    if (n < 0) {
      Die(absl::StrCat("polling VCI ", vci,
                       "'s completion queue failed (overrun?)"));
    }
    if (n == 0) break;
    work += n;
    for (int i = 0; i < n; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.status != IBV_WC_SUCCESS) {
        // A credit return fails when its peer already tore its queue pair
        // down, at the end of a job (the peer needs no credits then); a
        // live peer's failures show on the data it moves, so only those
        // end the job.
        const bool credit_return =
            IsOperationWorkId(wc.wr_id) &&
            OperationIndex(wc.wr_id) < state.ops.size() &&
            state.ops[OperationIndex(wc.wr_id)].kind == OpKind::kCreditReturn;
        if (!credit_return) DieOnCompletion(state, wc);
      }
      if (!IsOperationWorkId(wc.wr_id)) {
        char* buffer = reinterpret_cast<char*>(wc.wr_id);
        Connection* c = ByQpNumber(state, wc.qp_num);
        if (c == nullptr) {
          Die(absl::StrCat("a completion from an unknown queue pair (",
                           wc.qp_num, ") on VCI ", vci));
        }
        if (!c->owner_synchronized) {
          // The connection manager's thread connected this QP before the
          // peer could send on it (the peer sends only after our Accept or
          // Ready, posted after the state's release store). This acquire
          // pairs with that store, so what the thread wrote (the peer's
          // credit word, the credits) is visible to this thread too.
          const PairState seen = c->state.load(std::memory_order_acquire);
          c->owner_synchronized =
              seen == PairState::kAccepted || seen == PairState::kConnected;
        }
        Completion completion;
        completion.peer = c->peer.rank;
        completion.peer_vci = c->peer.vci;
        if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
          completion.type = CompletionType::kWriteImmediate;
          completion.length = wc.byte_len;
          completion.immediate = DecodeImmediate(wc.imm_data);
        } else {
          completion.type = CompletionType::kReceive;
          completion.data = buffer;
          completion.length = wc.byte_len;
        }
        handler.OnCompletion(vci, completion);
        ++handled;
        RepostReceive(state, buffer);
        c->return_credits.Reposted();
        if (c->return_credits.ShouldReturn()) GiveBackCredits(state, *c);
        continue;
      }
      Op& op = state.ops[OperationIndex(wc.wr_id)];
      op.connection->outstanding -= 1;
      state.budget_used -= 1;
      if (--op.remaining > 0) continue;
      const OpKind kind = op.kind;
      const uint64_t context = op.context;
      const PeerVci peer = op.connection->peer;
      if (op.send_buffer != nullptr) {
        state.free_send_buffers.push_back(op.send_buffer);
      }
      op.in_use = false;
      state.free_ops.push_back(OperationIndex(wc.wr_id));
      if (kind == OpKind::kUser) {
        Completion completion;
        completion.type = CompletionType::kLocalDone;
        completion.peer = peer.rank;
        completion.peer_vci = peer.vci;
        completion.context = context;
        handler.OnCompletion(vci, completion);
        ++handled;
      }
    }
  }
  FlushCreditBacklog(state);
  return handled > 0 ? handled : (work > 0 ? 1 : 0);
}

}  // namespace minimpi::net::ib
