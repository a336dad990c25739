// Posting: sends (inline or through a registered send buffer), RDMA
// writes, writes with immediate and reads, split by the device's max_sge;
// the send queue, the completion budget, send buffers and credits answer
// kRetry.
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
namespace {

// The most bytes one work request moves: an ibv_sge's length is 32 bits,
// and HCAs cap one message (max_msg_sz) at 2 GiB, some at 1 GiB. Longer
// transfers (MPI's large counts) go as several work requests.
constexpr size_t kMaxWorkRequestBytes = size_t{1} << 30;

// Walks a gathered read: one work request per piece of a remote segment
// whose local side fits in `max_sge` entries. Calls `emit(remote address,
// sges, count)` for each; returns how many there are.
template <typename Emit>
int SplitRead(const IoSegment* local, int local_count, const IoSegment* remote,
              int remote_count, int max_sge, Emit emit) {
  int requests = 0;
  int li = 0;
  size_t local_used = 0;  // bytes of local[li] already covered
  absl::InlinedVector<ibv_sge, kInlinePieces> sges;
  for (int ri = 0; ri < remote_count; ++ri) {
    uint64_t remote_address = remote[ri].address;
    size_t remote_left = remote[ri].length;
    while (remote_left > 0) {
      sges.clear();
      const uint64_t request_address = remote_address;
      size_t request_bytes = 0;
      while (remote_left > 0 && static_cast<int>(sges.size()) < max_sge &&
             li < local_count && request_bytes < kMaxWorkRequestBytes) {
        const size_t take =
            std::min({local[li].length - local_used, remote_left,
                      kMaxWorkRequestBytes - request_bytes});
        if (take > 0) {
          sges.push_back(
              {local[li].address + local_used, static_cast<uint32_t>(take), 0});
        }
        local_used += take;
        remote_left -= take;
        remote_address += take;
        request_bytes += take;
        if (local_used == local[li].length) {
          ++li;
          local_used = 0;
        }
      }
      if (request_bytes == 0) {
        remote_left = 0;  // local side exhausted: lengths disagreed
        break;
      }
      emit(request_address, sges.data(), static_cast<int>(sges.size()));
      ++requests;
    }
  }
  return requests;
}

}  // namespace

IbTransport::Op* IbTransport::StartOp(Vci& state, Connection& connection,
                                      int requests, OpKind kind,
                                      const char* what) {
  if (connection.outstanding + requests > send_queue_depth_ ||
      state.budget_used + requests > completion_budget_ ||
      state.free_ops.empty()) {
    ++state.queue_full_waits;
    return nullptr;
  }
  const uint32_t index = state.free_ops.back();
  state.free_ops.pop_back();
  Op& op = state.ops[index];
  op = Op{};
  op.kind = kind;
  op.in_use = true;
  op.what = what;
  op.connection = &connection;
  op.remaining = requests;
  connection.outstanding += requests;
  state.budget_used += requests;
  return &op;
}

void IbTransport::CancelOp(Vci& state, Op* op) {
  op->connection->outstanding -= op->remaining;
  state.budget_used -= op->remaining;
  op->in_use = false;
  state.free_ops.push_back(IndexOf(state, op));
}

uint32_t IbTransport::IndexOf(const Vci& state, const Op* op) const {
  return static_cast<uint32_t>(op - state.ops.data());
}

char* IbTransport::TakeSendBuffer(Vci& state) {
  if (state.free_send_buffers.empty()) return nullptr;
  char* buffer = state.free_send_buffers.back();
  state.free_send_buffers.pop_back();
  return buffer;
}

bool IbTransport::PostOrRetry(Connection& connection, ibv_send_wr* wr,
                              const char* what) {
  ibv_send_wr* bad = nullptr;
  const int error = verbs_->PostSend(connection.qp, wr, &bad);
  if (error == 0) return true;
  // The accounting above mirrors the send queue's; a full queue here means
  // it and the device disagree, which would lose work: say so.
  Die(absl::StrCat("posting a ", what, " to ", Who(connection.peer.rank),
                   " VCI ", connection.peer.vci,
                   " failed: ", std::strerror(error)));
}

PostResult IbTransport::PostSendMessage(
    int vci, PeerVci peer, const void* header, size_t header_length,
    const void* payload, size_t payload_length,
    absl::FunctionRef<void(void*)>* write_payload) {
  Vci& state = Ready(vci);
  Connection* c = Connected(state, peer);
  if (c == nullptr) return PostResult::kRetry;
  const size_t total = header_length + payload_length;
  if (total > max_message_) {
    Die(absl::StrCat("a message of ", total, " bytes exceeds the largest (",
                     max_message_, ")"));
  }
  if (c->send_credits.Available(c->CreditsReturned()) == 0) {
    ++state.credit_waits;
    state.starving.store(true, std::memory_order_relaxed);
    return PostResult::kRetry;
  }
  const bool inline_send = total <= max_inline_;
  char* buffer = nullptr;
  if (!inline_send) {
    buffer = TakeSendBuffer(state);
    if (buffer == nullptr) {
      ++state.queue_full_waits;
      return PostResult::kRetry;
    }
  }
  Op* op = StartOp(state, *c, 1, OpKind::kSend, "send");
  if (op == nullptr) {
    if (buffer != nullptr) state.free_send_buffers.push_back(buffer);
    return PostResult::kRetry;
  }
  state.starving.store(false, std::memory_order_relaxed);
  c->send_credits.Take(c->CreditsReturned());

  alignas(8) char packed[256];
  ibv_sge sges[2];
  int count = 0;
  if (inline_send) {
    if (write_payload != nullptr) {
      // Packed data is written once, next to its header, and the device
      // copies both at post.
      std::memcpy(packed, header, header_length);
      (*write_payload)(packed + header_length);
      sges[count++] = {reinterpret_cast<uint64_t>(packed),
                       static_cast<uint32_t>(total), 0};
    } else {
      if (header_length > 0) {
        sges[count++] = {reinterpret_cast<uint64_t>(header),
                         static_cast<uint32_t>(header_length), 0};
      }
      if (payload_length > 0) {
        sges[count++] = {reinterpret_cast<uint64_t>(payload),
                         static_cast<uint32_t>(payload_length), 0};
      }
    }
  } else {
    std::memcpy(buffer, header, header_length);
    if (write_payload != nullptr) {
      (*write_payload)(buffer + header_length);
    } else if (payload_length > 0) {
      std::memcpy(buffer + header_length, payload, payload_length);
    }
    op->send_buffer = buffer;
    sges[count++] = {reinterpret_cast<uint64_t>(buffer),
                     static_cast<uint32_t>(total), state.send_mr.lkey};
  }
  ibv_send_wr wr{};
  wr.wr_id = OperationWorkId(IndexOf(state, op));
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = count > 0 ? sges : nullptr;
  wr.num_sge = count;
  wr.send_flags = IBV_SEND_SIGNALED | (inline_send ? IBV_SEND_INLINE : 0);
  PostOrRetry(*c, &wr, "send");
  return PostResult::kOk;
}

PostResult IbTransport::Send(int vci, PeerVci peer, const void* header,
                             size_t header_length, const void* payload,
                             size_t payload_length) {
  return PostSendMessage(vci, peer, header, header_length, payload,
                         payload_length, nullptr);
}

PostResult IbTransport::SendPacked(
    int vci, PeerVci peer, const void* header, size_t header_length,
    size_t payload_length,
    absl::FunctionRef<void(void* destination)> write_payload) {
  absl::FunctionRef<void(void*)> writer = write_payload;
  return PostSendMessage(vci, peer, header, header_length, nullptr,
                         payload_length, &writer);
}

PostResult IbTransport::RdmaWritev(int vci, PeerVci peer,
                                   const IoSegment* local, int local_count,
                                   const MemoryRegion& local_region,
                                   RemoteBuffer remote,
                                   const uint32_t* immediate,
                                   uint64_t context) {
  Vci& state = Ready(vci);
  Connection* c = Connected(state, peer);
  if (c == nullptr) return PostResult::kRetry;
  // A write with immediate consumes one of the peer's receive buffers.
  if (immediate != nullptr &&
      c->send_credits.Available(c->CreditsReturned()) == 0) {
    ++state.credit_waits;
    state.starving.store(true, std::memory_order_relaxed);
    return PostResult::kRetry;
  }
  // Empty pieces take no scatter/gather entry (a zero-byte write has none);
  // pieces longer than a work request may carry are cut.
  absl::InlinedVector<IoSegment, kInlinePieces> pieces;
  pieces.reserve(local_count);
  for (int i = 0; i < local_count; ++i) {
    for (size_t at = 0; at < local[i].length; at += kMaxWorkRequestBytes) {
      pieces.push_back({local[i].address + at,
                        std::min(local[i].length - at, kMaxWorkRequestBytes)});
    }
  }
  local = pieces.data();
  local_count = static_cast<int>(pieces.size());
  // Consecutive pieces share a work request up to max_send_sge_ of them
  // and kMaxWorkRequestBytes in all: (first piece, piece count) each.
  absl::InlinedVector<std::pair<int, int>, kInlinePieces> groups;
  for (int first = 0; first < local_count;) {
    int count = 0;
    size_t bytes = 0;
    while (first + count < local_count && count < max_send_sge_ &&
           bytes + local[first + count].length <= kMaxWorkRequestBytes) {
      bytes += local[first + count].length;
      ++count;
    }
    groups.push_back({first, count});
    first += count;
  }
  if (groups.empty()) groups.push_back({0, 0});
  const int requests = static_cast<int>(groups.size());
  const char* what =
      immediate != nullptr ? "RDMA write with immediate" : "RDMA write";
  Op* op = StartOp(state, *c, requests, OpKind::kUser, what);
  if (op == nullptr) return PostResult::kRetry;
  op->context = context;
  if (immediate != nullptr) {
    state.starving.store(false, std::memory_order_relaxed);
    c->send_credits.Take(c->CreditsReturned());
  }
  absl::InlinedVector<ibv_sge, kInlinePieces> sges(std::max(local_count, 1));
  absl::InlinedVector<ibv_send_wr, kInlinePieces> wrs(requests);
  uint64_t remote_address = remote.address;
  for (int r = 0; r < requests; ++r) {
    const auto [first, count] = groups[r];
    size_t bytes = 0;
    for (int i = 0; i < count; ++i) {
      sges[first + i] = {local[first + i].address,
                         static_cast<uint32_t>(local[first + i].length),
                         local_region.local_key};
      bytes += local[first + i].length;
    }
    ibv_send_wr& wr = wrs[r];
    wr.wr_id = OperationWorkId(IndexOf(state, op));
    wr.sg_list = count > 0 ? &sges[first] : nullptr;
    wr.num_sge = std::max(count, 0);
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote_address;
    wr.wr.rdma.rkey = remote.remote_key;
    remote_address += bytes;
    if (r + 1 < requests) wr.next = &wrs[r + 1];
  }
  if (immediate != nullptr) {
    // The last write carries the immediate: RC places the earlier ones
    // first, so the peer's notification means all bytes are there.
    wrs.back().opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wrs.back().imm_data = EncodeImmediate(*immediate);
  }
  PostOrRetry(*c, wrs.data(), what);
  return PostResult::kOk;
}

PostResult IbTransport::RdmaWrite(int vci, PeerVci peer, const void* local,
                                  const MemoryRegion& local_region,
                                  RemoteBuffer remote, size_t length,
                                  uint64_t context) {
  const IoSegment segment = {reinterpret_cast<uint64_t>(local), length};
  return RdmaWritev(vci, peer, &segment, 1, local_region, remote, nullptr,
                    context);
}

PostResult IbTransport::RdmaWriteImmediate(
    int vci, PeerVci peer, const void* local, const MemoryRegion& local_region,
    RemoteBuffer remote, size_t length, uint32_t immediate, uint64_t context) {
  const IoSegment segment = {reinterpret_cast<uint64_t>(local), length};
  return RdmaWritev(vci, peer, &segment, 1, local_region, remote, &immediate,
                    context);
}

PostResult IbTransport::RdmaReadv(int vci, PeerVci peer, const IoSegment* local,
                                  int local_count,
                                  const MemoryRegion& local_region,
                                  const IoSegment* remote, int remote_count,
                                  uint32_t remote_key, uint64_t context) {
  Vci& state = Ready(vci);
  Connection* c = Connected(state, peer);
  if (c == nullptr) return PostResult::kRetry;
  int requests = SplitRead(local, local_count, remote, remote_count,
                           max_send_sge_, [](uint64_t, const ibv_sge*, int) {});
  const bool empty = requests == 0;
  if (empty) requests = 1;  // nothing to read: one empty read completes it
  Op* op = StartOp(state, *c, requests, OpKind::kUser, "RDMA read");
  if (op == nullptr) return PostResult::kRetry;
  op->context = context;
  absl::InlinedVector<ibv_sge, kInlinePieces> sges;
  sges.reserve(local_count + remote_count + 1);
  absl::InlinedVector<ibv_send_wr, kInlinePieces> wrs;
  wrs.reserve(requests);
  absl::InlinedVector<std::pair<size_t, int>, kInlinePieces> sge_ranges;
  if (empty) {
    wrs.emplace_back();
    wrs.back().wr.rdma.remote_addr = remote_count > 0 ? remote[0].address : 0;
    sge_ranges.push_back({0, 0});
  } else {
    SplitRead(local, local_count, remote, remote_count, max_send_sge_,
              [&](uint64_t address, const ibv_sge* pieces, int count) {
                sge_ranges.push_back({sges.size(), count});
                for (int i = 0; i < count; ++i) {
                  sges.push_back(pieces[i]);
                  sges.back().lkey = local_region.local_key;
                }
                wrs.emplace_back();
                wrs.back().wr.rdma.remote_addr = address;
              });
  }
  for (size_t r = 0; r < wrs.size(); ++r) {
    ibv_send_wr& wr = wrs[r];
    wr.wr_id = OperationWorkId(IndexOf(state, op));
    wr.sg_list =
        sge_ranges[r].second > 0 ? &sges[sge_ranges[r].first] : nullptr;
    wr.num_sge = sge_ranges[r].second;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.rkey = remote_key;
    if (r + 1 < wrs.size()) wr.next = &wrs[r + 1];
  }
  PostOrRetry(*c, wrs.data(), "RDMA read");
  return PostResult::kOk;
}

PostResult IbTransport::RdmaRead(int vci, PeerVci peer, void* local,
                                 const MemoryRegion& local_region,
                                 RemoteBuffer remote, size_t length,
                                 uint64_t context) {
  const IoSegment local_segment = {reinterpret_cast<uint64_t>(local), length};
  const IoSegment remote_segment = {remote.address, length};
  return RdmaReadv(vci, peer, &local_segment, 1, local_region, &remote_segment,
                   1, remote.remote_key, context);
}

}  // namespace minimpi::net::ib
