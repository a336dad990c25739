#include "mpi/coll/node_started.h"

#include <algorithm>
#include <cstring>

#include "mpi/coll/services.h"
#include "mpi/coll/tool_variables.h"

namespace minimpi::coll {
namespace {

uint64_t DataBytes(Collective collective, const Arguments& a) {
  return collective == Collective::kBarrier
             ? 0
             : static_cast<uint64_t>(a.count) * a.extent;
}

inline void CopyBytes(void* to, const void* from, size_t bytes) {
  if (bytes != 0) std::memcpy(to, from, bytes);
}

}  // namespace

std::unique_ptr<NodeStartedCall> NodeStartedCall::For(
    Collective collective, Communicator& comm, const Arguments& arguments) {
  if (collective != Collective::kBarrier && collective != Collective::kBcast &&
      collective != Collective::kReduce &&
      collective != Collective::kAllreduce) {
    return nullptr;
  }
  NodeRegion* region = SingleNodeRegionFor(collective, comm, arguments);
  if (region == nullptr) return nullptr;
  // Only what the blocking form runs through one slot: a flat barrier, a
  // bcast or reduction small enough for a slot (never a direct copy).
  const uint64_t bytes = DataBytes(collective, arguments);
  if (collective == Collective::kBarrier) {
    if (region->size() > kFlatBarrierMax) return nullptr;
  } else if (!region->IsSmall(bytes) || region->DirectFor(bytes)) {
    return nullptr;
  }
  NoteNodePath(comm, collective);
  return std::unique_ptr<NodeStartedCall>(
      new NodeStartedCall(collective, comm, *region, arguments));
}

NodeStartedCall::NodeStartedCall(Collective collective, Communicator& comm,
                                 NodeRegion& region, const Arguments& arguments)
    : collective_(collective),
      comm_(comm),
      region_(region),
      arguments_(arguments),
      bytes_(DataBytes(collective, arguments)) {
  comm_.Retain();
  if (arguments_.op != nullptr && !arguments_.op->predefined()) {
    arguments_.op->Retain();
  }
}

NodeStartedCall::~NodeStartedCall() {
  if (arguments_.op != nullptr && !arguments_.op->predefined()) {
    arguments_.op->Release();
  }
  comm_.Release();
}

void NodeStartedCall::Begin() {
  call_ = region_.BeginStartedCall(&ordinal_);
  published_ = false;
  read_ = false;
  outcome_ = NodeOutcome::kDone;
  Publish();
}

bool NodeStartedCall::Publish() {
  if (published_) return true;
  const Arguments& a = arguments_;
  const int me = region_.rank();
  switch (collective_) {
    case Collective::kBarrier:
      // Writes no data: no slot to wait for.
      region_.SignalSlot(call_);
      break;
    case Collective::kBcast:
      if (me == a.root) {
        if (!region_.SlotFree(call_)) return false;
        CopyBytes(region_.SlotData(me, call_), a.receive_buffer, bytes_);
        region_.PostSlot(call_, bytes_);
      }
      break;
    default: {  // kReduce, kAllreduce
      if (!region_.SlotFree(call_)) return false;
      // A reduce's root reads its own input where it lies.
      const bool skips_own_slot =
          collective_ == Collective::kReduce && me == a.root && !a.in_place;
      if (!skips_own_slot) {
        CopyBytes(region_.SlotData(me, call_),
                  a.in_place ? a.receive_buffer : a.send_buffer, bytes_);
      }
      region_.PostSlot(call_, bytes_);
      break;
    }
  }
  published_ = true;
  return true;
}

bool NodeStartedCall::Read() {
  if (read_) return true;
  const Arguments& a = arguments_;
  const int n = region_.size();
  const int me = region_.rank();
  switch (collective_) {
    case Collective::kBarrier:
      for (int r = 0; r < n; ++r) {
        if (r != me && !region_.SlotPosted(r, call_, nullptr)) return false;
      }
      break;
    case Collective::kBcast: {
      if (me == a.root) break;
      uint64_t sent = 0;
      if (!region_.SlotPosted(a.root, call_, &sent)) return false;
      CopyBytes(a.receive_buffer, region_.SlotData(a.root, call_),
                std::min(sent, bytes_));
      if (sent > bytes_) outcome_ = NodeOutcome::kTruncated;
      break;
    }
    default: {  // kReduce, kAllreduce
      if (collective_ == Collective::kReduce && me != a.root) break;
      bool differs = false;
      for (int r = 0; r < n; ++r) {
        uint64_t theirs = 0;
        if (r == me) continue;
        if (!region_.SlotPosted(r, call_, &theirs)) return false;
        differs |= theirs != bytes_;
      }
      if (differs) {
        outcome_ = NodeOutcome::kTruncated;
        break;
      }
      // In rank order, as the blocking form: x0 op (x1 op ... x(n-1)).
      auto items_of = [&](int r) -> const std::byte* {
        if (r == me && !a.in_place) {
          return static_cast<const std::byte*>(a.send_buffer);
        }
        return region_.SlotData(r, call_);
      };
      if (a.count == 0) break;
      CopyBytes(a.receive_buffer, items_of(n - 1), bytes_);
      for (int r = n - 2; r >= 0; --r) {
        a.op->Apply(items_of(r), a.receive_buffer, a.count, a.type);
      }
      break;
    }
  }
  read_ = true;
  return true;
}

bool NodeStartedCall::Advance() {
  if (!Publish() || !Read()) return false;
  // What this rank read stays in the others' slots until it ends the call:
  // only the oldest started call may end (done covers every call before).
  if (!region_.OldestStarted(ordinal_)) return false;
  region_.EndStartedCall(call_);
  return true;
}

void EndStartedCalls(Communicator& comm, NodeRegion& region) {
  Services().vcis.WaitUntil(
      comm.vci, [&region] { return !region.StartedPending(); });
}

}  // namespace minimpi::coll
