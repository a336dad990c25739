// The VCIs: making them, endpoints' VCIs, the progress loop and the
// dispatch of completions (this file); how a waiting thread idles and
// sleeps (waiting.cc).
#include "mpi/vci/vci_set.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "mpi/vci/tool_variables.h"

namespace minimpi::vci {
namespace {

constexpr int kCompletionsPerPoll = 64;

}  // namespace

absl::StatusOr<std::unique_ptr<VciSet>> VciSet::Create(
    net::Transport* transport, const runtime::Settings& settings,
    const WaitPolicy& wait_policy) {
  if (transport->num_vcis() < settings.num_vcis) {
    return absl::InternalError("the transport has fewer VCIs than asked for");
  }
  std::unique_ptr<VciSet> vcis(new VciSet(transport, settings, wait_policy));
  for (int v = 0; v < vcis->num_shared_; ++v) {
    vcis->vcis_[v].store(new Vci, std::memory_order_release);
  }
  vcis->in_use_.store(vcis->num_shared_, std::memory_order_release);
  // A stack whose top is the lowest free VCI: endpoints take the lowest, so
  // ProgressAll sweeps as few as possible.
  for (int v = vcis->capacity_ - 1; v >= vcis->num_shared_; --v) {
    vcis->free_endpoint_vcis_.push_back(v);
  }
  return vcis;
}

VciSet::VciSet(net::Transport* transport, const runtime::Settings& settings,
               const WaitPolicy& wait_policy)
    : transport_(transport),
      wait_policy_(wait_policy),
      has_doorbell_(transport->has_doorbell()),
      endpoints_progress_process_(settings.endpoint_progress == "process"),
      num_shared_(settings.num_vcis),
      capacity_(transport->num_vcis()),
      vcis_(new std::atomic<Vci*>[transport->num_vcis()]),
      endpoint_references_(new std::atomic<int>[transport->num_vcis()]) {
  for (int v = 0; v < capacity_; ++v) {
    vcis_[v].store(nullptr, std::memory_order_relaxed);
    endpoint_references_[v].store(0, std::memory_order_relaxed);
  }
  ShowToTools(this);
}

VciSet::~VciSet() {
  StopShowingToTools(this);
  for (int v = 0; v < capacity_; ++v) {
    delete vcis_[v].load(std::memory_order_acquire);
  }
}

absl::Status VciSet::Register(const Registration& registration) {
  const int index = Index(registration.traffic);
  if (registration.handler == nullptr || handlers_[index] != nullptr) {
    return absl::InternalError("a kind of traffic registered twice");
  }
  for (uint8_t type : registration.message_types) {
    if (by_message_type_[type] != nullptr) {
      return absl::InternalError("two kinds of traffic claim a message type");
    }
  }
  if (registration.receives_writes_with_immediate &&
      writes_with_immediate_ != nullptr) {
    return absl::InternalError(
        "two kinds of traffic claim writes with immediate");
  }
  // Every VCI made so far (endpoints' included, should a kind register
  // late) gets the handler's state before any of its traffic can arrive.
  std::lock_guard<std::mutex> lock(endpoint_vcis_mutex_);
  for (int v = 0; v < in_use(); ++v) {
    Vci* made = vcis_[v].load(std::memory_order_relaxed);
    if (made == nullptr) continue;
    absl::Status attached = registration.handler->AttachVci(v, *made);
    if (!attached.ok()) return attached;
  }
  for (uint8_t type : registration.message_types) {
    by_message_type_[type] = registration.handler;
  }
  if (registration.receives_writes_with_immediate) {
    writes_with_immediate_ = registration.handler;
  }
  always_progress_[index] = registration.always_progress;
  handlers_[index] = registration.handler;
  // Kept in Traffic order, so point-to-point takes its turn first.
  registered_[num_registered_++] = index;
  std::sort(registered_.data(), registered_.data() + num_registered_);
  return absl::OkStatus();
}

void VciSet::Unregister(Traffic traffic) {
  TrafficHandler* handler = handlers_[Index(traffic)];
  if (handler == nullptr) return;
  for (TrafficHandler*& owner : by_message_type_) {
    if (owner == handler) owner = nullptr;
  }
  if (writes_with_immediate_ == handler) writes_with_immediate_ = nullptr;
  handlers_[Index(traffic)] = nullptr;
  int* end = registered_.data() + num_registered_;
  end = std::remove(registered_.data(), end, Index(traffic));
  num_registered_ = static_cast<int>(end - registered_.data());
}

absl::Status VciSet::MakeVci(int vci) {
  auto made = std::make_unique<Vci>();
  made->outbox->set_links(&links_);
  for (TrafficHandler* handler : handlers_) {
    if (handler == nullptr) continue;
    absl::Status attached = handler->AttachVci(vci, *made);
    if (!attached.ok()) return attached;
  }
  // Release: whoever later finds this VCI sees it whole, each kind's state
  // included.
  vcis_[vci].store(made.release(), std::memory_order_release);
  if (in_use_.load(std::memory_order_relaxed) <= vci) {
    in_use_.store(vci + 1, std::memory_order_release);
  }
  return absl::OkStatus();
}

int VciSet::AcquireEndpointVci() {
  std::lock_guard<std::mutex> lock(endpoint_vcis_mutex_);
  if (free_endpoint_vcis_.empty()) return -1;
  const int v = free_endpoint_vcis_.back();
  if (vcis_[v].load(std::memory_order_relaxed) == nullptr && !MakeVci(v).ok()) {
    return -1;  // what a kind of traffic needs was checked at setup
  }
  free_endpoint_vcis_.pop_back();
  endpoint_references_[v].store(1, std::memory_order_relaxed);
  return v;
}

void VciSet::RetainEndpointVci(int vci) {
  endpoint_references_[vci].fetch_add(1, std::memory_order_relaxed);
}

void VciSet::ReleaseEndpointVci(int vci) {
  if (endpoint_references_[vci].fetch_sub(1, std::memory_order_acq_rel) != 1) {
    return;
  }
  std::lock_guard<std::mutex> lock(endpoint_vcis_mutex_);
  free_endpoint_vcis_.push_back(vci);
  // Lowest first next time.
  std::sort(free_endpoint_vcis_.begin(), free_endpoint_vcis_.end(),
            std::greater<int>());
}

bool VciSet::TryProgress(int vci) {
  Vci& v = At(vci);
  if (!v.mutex.try_lock()) return false;
  bool progressed = PollLocked(vci);
  v.mutex.unlock();
  // What it completed may be what a sleeping thread of ours waits for (the
  // unlock orders the completion before this look at the doorbell).
  if (progressed) transport_->RingDoorbell(vci);
  return progressed;
}

bool VciSet::ProgressAll() {
  bool progressed = false;
  const int in_use = this->in_use();
  for (int v = 0; v < in_use; ++v) {
    // A VCI that never carried anything has nothing to poll.
    if (vcis_[v].load(std::memory_order_acquire) != nullptr &&
        transport_->MayHaveWork(v)) {
      progressed |= TryProgress(v);
    }
  }
  return progressed;
}

bool VciSet::ProgressBeyond(int vci) {
  if (vci >= 0 && IsEndpointVci(vci) && !endpoints_progress_process_) {
    return false;
  }
  return ProgressAll();
}

void VciSet::TestRound(int vci, absl::FunctionRef<bool()> done) {
  if (vci < 0) {
    ProgressAll();
    return;
  }
  TryProgress(vci);
  if (!done()) ProgressBeyond(vci);
}

bool VciSet::PollLocked(int vci) {
  bool progressed = transport_->Poll(vci, *this, kCompletionsPerPoll) > 0;
  Outbox& outbox = *At(vci).outbox;
  if (!outbox.empty()) progressed |= outbox.RetryLocked(*transport_, vci);
  for (int i = 0; i < num_registered_; ++i) {
    const int index = registered_[i];
    if (HandlerActive(index)) {
      progressed |= handlers_[index]->ProgressLocked(vci);
    }
  }
  return progressed;
}

void VciSet::OnCompletion(int vci, const net::Completion& completion) {
  TrafficHandler* handler = nullptr;
  switch (completion.type) {
    case net::CompletionType::kReceive: {
      const uint8_t type = *static_cast<const uint8_t*>(completion.data);
      handler = by_message_type_[type];
      if (handler == nullptr) {
        std::fprintf(stderr, "minimpi: corrupt message header (type %d)\n",
                     type);
        std::abort();
      }
      At(vci).counters->messages_received.Add(
          links_.Of(*transport_, completion.peer));
      handler->OnMessageLocked(vci, completion.from(),
                               static_cast<const std::byte*>(completion.data),
                               completion.length);
      return;
    }
    case net::CompletionType::kLocalDone:
      handler = handlers_[completion.context & kTrafficTagMask];
      if (handler == nullptr) {
        std::fprintf(stderr, "minimpi: a local completion nobody posted\n");
        std::abort();
      }
      handler->OnLocalDoneLocked(vci, completion.context);
      return;
    case net::CompletionType::kWriteImmediate:
      if (writes_with_immediate_ != nullptr) {
        writes_with_immediate_->OnWriteImmediateLocked(
            vci, completion.from(), completion.immediate, completion.length);
      }
      return;
  }
}

}  // namespace minimpi::vci
