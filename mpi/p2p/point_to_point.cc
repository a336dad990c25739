// mpi/p2p's object: making it and its VCIs, endpoints' VCIs, the pool of
// unexpected-message records, matching statistics, and how a waiting
// thread idles and sleeps. The protocols are in send.cc, receive.cc,
// rendezvous.cc and probe_cancel.cc; completion, progress and the dispatch
// of arrivals in progress.cc.
#include "mpi/p2p/point_to_point.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mpi/p2p/p2p_internal.h"
#include "runtime/topology.h"

namespace minimpi::p2p {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

absl::StatusOr<std::unique_ptr<PointToPoint>> PointToPoint::Create(
    net::Transport* transport, const runtime::Settings& settings,
    const WaitPolicy& wait_policy, int world_size) {
  if (transport->num_vcis() < settings.num_vcis) {
    return absl::InternalError("the transport has fewer VCIs than asked for");
  }
  std::unique_ptr<PointToPoint> p2p(
      new PointToPoint(transport, settings, wait_policy, world_size));
  for (int v = 0; v < p2p->num_shared_vcis_; ++v) {
    absl::StatusOr<std::unique_ptr<Vci>> vci = p2p->NewVci();
    if (!vci.ok()) return vci.status();
    p2p->vcis_[v].store(vci->release(), std::memory_order_release);
  }
  p2p->vcis_in_use_.store(p2p->num_shared_vcis_, std::memory_order_release);
  // A stack whose top is the lowest free VCI: endpoints take the lowest, so
  // ProgressAll sweeps as few as possible.
  for (int v = p2p->capacity_ - 1; v >= p2p->num_shared_vcis_; --v) {
    p2p->free_endpoint_vcis_.push_back(v);
  }
  return p2p;
}

absl::StatusOr<std::unique_ptr<Vci>> PointToPoint::NewVci() const {
  auto vci = std::make_unique<Vci>();
  auto engine = match::CreateMatchEngine(engine_name_, engine_options_);
  if (!engine.ok()) return engine.status();
  vci->engine = std::move(engine).value();
  return vci;
}

int PointToPoint::AcquireEndpointVci() {
  std::lock_guard<std::mutex> lock(endpoint_vcis_mutex_);
  if (free_endpoint_vcis_.empty()) return -1;
  const int v = free_endpoint_vcis_.back();
  if (vcis_[v].load(std::memory_order_relaxed) == nullptr) {
    absl::StatusOr<std::unique_ptr<Vci>> vci = NewVci();
    if (!vci.ok()) return -1;  // the engine name was checked at setup
    // Release: whoever later finds this VCI through a handle sees it whole.
    vcis_[v].store(vci->release(), std::memory_order_release);
    if (vcis_in_use_.load(std::memory_order_relaxed) <= v) {
      vcis_in_use_.store(v + 1, std::memory_order_release);
    }
  }
  free_endpoint_vcis_.pop_back();
  endpoint_references_[v].store(1, std::memory_order_relaxed);
  return v;
}

void PointToPoint::RetainEndpointVci(int vci) {
  endpoint_references_[vci].fetch_add(1, std::memory_order_relaxed);
}

void PointToPoint::ReleaseEndpointVci(int vci) {
  if (endpoint_references_[vci].fetch_sub(1, std::memory_order_acq_rel) != 1) {
    return;
  }
  std::lock_guard<std::mutex> lock(endpoint_vcis_mutex_);
  free_endpoint_vcis_.push_back(vci);
  // Lowest first next time.
  std::sort(free_endpoint_vcis_.begin(), free_endpoint_vcis_.end(),
            std::greater<int>());
}

PointToPoint::PointToPoint(net::Transport* transport,
                           const runtime::Settings& settings,
                           const WaitPolicy& wait_policy, int world_size)
    : transport_(transport),
      eager_max_(std::min(settings.eager_max, transport->max_message_size() -
                                                  sizeof(MessageHeader))),
      split_min_(settings.rendezvous_split_min),
      gather_min_piece_(settings.gather_min_piece),
      wait_policy_(wait_policy),
      has_doorbell_(transport->has_doorbell()),
      world_size_(world_size),
      endpoints_progress_process_(settings.endpoint_progress == "process"),
      engine_name_(settings.match),
      num_shared_vcis_(settings.num_vcis),
      capacity_(transport->num_vcis()),
      vcis_(new std::atomic<Vci*>[transport->num_vcis()]),
      endpoint_references_(new std::atomic<int>[transport->num_vcis()]) {
  for (int v = 0; v < capacity_; ++v) {
    vcis_[v].store(nullptr, std::memory_order_relaxed);
    endpoint_references_[v].store(0, std::memory_order_relaxed);
  }
  engine_options_.theta = settings.match_theta;
  engine_options_.kc = settings.match_kc;
  engine_options_.kp = settings.match_kp;
  engine_options_.ranks = world_size;
  engine_options_.time_searches = settings.match_stats;
}

std::string PointToPoint::MatchStatistics() {
  std::string text;
  for (int v = 0; v < vcis_in_use_.load(std::memory_order_acquire); ++v) {
    if (FindVci(v) == nullptr) continue;
    Vci* vci = &VciAt(v);
    std::lock_guard<std::mutex> lock(vci->mutex);
    const match::MatchStats stats = vci->engine->stats();
    const uint64_t searches = stats.point_to_point.posted.searches +
                              stats.point_to_point.unexpected.searches +
                              stats.collective.posted.searches +
                              stats.collective.unexpected.searches;
    if (searches == 0) continue;
    absl::StrAppend(&text, "VCI ", v, ": ",
                    match::FormatMatchStats(vci->engine->name(), stats));
  }
  return text;
}

PointToPoint::~PointToPoint() {
  // Unexpected messages nobody received are the user's loss, not a leak of
  // ours: free their records.
  for (int v = 0; v < capacity_; ++v) {
    std::unique_ptr<Vci> vci(vcis_[v].load(std::memory_order_acquire));
    if (vci == nullptr) continue;
    while (auto* message = vci->engine->PopAnyUnexpected()) {
      auto* record = static_cast<UnexpectedRecord*>(message);
      record->~UnexpectedRecord();
      std::free(record);
    }
    for (UnexpectedRecord* record : vci->spare_records) {
      record->~UnexpectedRecord();
      std::free(record);
    }
    // Messages still queued at teardown were never going to be received.
    for (auto& [key, queue] : vci->outgoing) {
      while (Vci::OutgoingMessage* message = queue.head) {
        queue.head = message->next;
        delete message;
      }
    }
    for (Vci::OutgoingMessage* message : vci->spare_outgoing) delete message;
  }
}

namespace {
constexpr size_t kMaxSpareRecords = 1024;  // bounds what a burst leaves behind
}  // namespace

UnexpectedRecord* PointToPoint::NewRecordLocked(Vci& vci,
                                                size_t payload_bytes) {
  const bool pooled = payload_bytes <= UnexpectedRecord::kPooledPayloadBytes;
  if (pooled && !vci.spare_records.empty()) {
    UnexpectedRecord* record = vci.spare_records.back();
    vci.spare_records.pop_back();
    record->links = {};
    record->owner = 0;
    return record;
  }
  const size_t capacity =
      pooled ? UnexpectedRecord::kPooledPayloadBytes : payload_bytes;
  void* memory = std::malloc(sizeof(UnexpectedRecord) + capacity);
  if (memory == nullptr) {
    std::fprintf(stderr, "minimpi: out of memory queueing a message\n");
    std::abort();
  }
  auto* record = new (memory) UnexpectedRecord();
  record->payload_capacity = capacity;
  return record;
}

void PointToPoint::FreeRecordLocked(Vci& vci, UnexpectedRecord* record) {
  if (record->payload_capacity == UnexpectedRecord::kPooledPayloadBytes &&
      vci.spare_records.size() < kMaxSpareRecords) {
    vci.spare_records.push_back(record);
    return;
  }
  record->~UnexpectedRecord();
  std::free(record);
}

bool PointToPoint::IdleStep(IdleRounds& idle, int vci,
                            absl::FunctionRef<bool()> done) {
  // A rank that shares this core and is awake cannot run while this thread
  // polls: if it is the peer, polling only delays the answer.
  if (idle.AtSpinStart() && has_doorbell_ &&
      wait_policy_.then != WaitPolicy::Then::kSpin) {
    // Two ranks that wake each other stay on one core while the machine is
    // busy. When that lasts (many waits in a row), the later one moves, at
    // most every few milliseconds, so the two never chase each other
    // around; a brief encounter only skips the spin.
    thread_local int shared_core_waits = 0;
    thread_local int64_t last_move_ns = 0;
    constexpr int kWaitsBeforeMoving = 32;
    constexpr int64_t kMoveIntervalNs = 5'000'000;
    bool move_away = false;
    if (transport_->PeerMayShareCore(&move_away)) {
      shared_core_waits = move_away ? shared_core_waits + 1 : 0;
      bool moved = false;
      if (wait_policy_.move_off_shared_core &&
          shared_core_waits >= kWaitsBeforeMoving) {
        const int64_t now = NowNs();
        if (now - last_move_ns > kMoveIntervalNs) {
          last_move_ns = now;
          shared_core_waits = 0;
          moved = runtime::MoveOffCurrentCpu();
        }
      }
      if (!moved) idle.SkipSpin();
    } else {
      shared_core_waits = 0;
    }
  }
  switch (idle.Idle(NowNs)) {
    case IdleRounds::Action::kPoll:
      return false;
    case IdleRounds::Action::kPause:
      CpuRelax();
      return false;
    case IdleRounds::Action::kYield:
      sched_yield();
      return false;
    case IdleRounds::Action::kSleep:
      return SleepUntilRung(vci, done);
  }
  return false;
}

bool PointToPoint::SleepUntilRung(int vci, absl::FunctionRef<bool()> done) {
  if (!has_doorbell_) {
    sched_yield();
    return false;
  }
  // A wait on every VCI (vci < 0) sleeps on the shared VCIs' doorbell.
  const int bell = vci < 0 ? 0 : vci;
  const uint64_t token = transport_->ArmDoorbell(bell);
  // The last look, after arming: at every VCI whose arrivals ring this
  // doorbell. Whatever arrives after it rings. Only a look under each
  // VCI's lock proves there is nothing; when another thread holds one
  // (and may be about to leave without looking again), sleep briefly.
  bool verified = true;
  bool progressed = false;
  bool may_sleep = true;
  auto look = [&](int v) {
    Vci& state = VciAt(v);
    if (!state.mutex.try_lock()) {
      verified = false;
      return;
    }
    progressed |= PollLocked(v);
    if (extension_ != nullptr &&
        extension_requests_.load(std::memory_order_relaxed) != 0) {
      may_sleep &= extension_->MaySleepLocked(v);
    }
    state.mutex.unlock();
  };
  if (vci >= 0 && IsEndpointVci(vci)) {
    look(vci);
    // Other VCIs this wait progresses ring other doorbells.
    if (endpoints_progress_process_) verified = false;
  } else {
    for (int v = 0; v < num_shared_vcis_; ++v) {
      if (transport_->MayHaveWork(v)) look(v);
    }
    if (vci < 0 &&
        vcis_in_use_.load(std::memory_order_acquire) > num_shared_vcis_) {
      verified = false;  // endpoints' VCIs have doorbells of their own
    }
  }
  if (progressed) {
    // It may have completed another thread's request.
    transport_->RingDoorbell(bell);
    return false;
  }
  if (!may_sleep || done()) return false;
  // An unverified sleep is cut short: what it may have missed is work
  // another thread was doing anyway.
  constexpr int64_t kUnverifiedSleepNs = 50'000;
  const int64_t timeout =
      verified ? wait_policy_.sleep_max_ns
               : std::min(wait_policy_.sleep_max_ns, kUnverifiedSleepNs);
  transport_->SleepOnDoorbell(bell, token, timeout);
  return true;
}

}  // namespace minimpi::p2p
