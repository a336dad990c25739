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
#include "runtime/topology.h"

namespace minimpi::p2p {
namespace {

constexpr int kCompletionsPerPoll = 64;

MessageHeader MakeHeader(MessageType type, const SendArguments& arguments) {
  MessageHeader header{};
  header.type = type;
  header.collective = static_cast<uint8_t>(arguments.kind.collective);
  header.comm_size = static_cast<uint16_t>(
      std::min<uint32_t>(arguments.kind.comm_size, UINT16_MAX));
  header.context = arguments.remote_context;
  header.source = arguments.source_rank;
  header.tag = arguments.tag;
  header.length = arguments.bytes;
  return header;
}

MessageHeader MakeControl(MessageType type, uint64_t sender_request) {
  MessageHeader header{};
  header.type = type;
  header.sender_request = sender_request;
  return header;
}

void FillStatus(Request* request, const MessageHeader& header,
                size_t delivered) {
  request->status.source = header.source;
  request->status.tag = header.tag;
  request->status.bytes = delivered;
  request->status.arrived_bytes = header.length;
  request->status.error =
      header.length > request->capacity ? Error::kTruncated : Error::kNone;
}

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

// --- Sending -----------------------------------------------------------------

void PointToPoint::Send(const SendArguments& arguments) {
  if (arguments.bytes <= eager_max_ &&
      arguments.mode != SendMode::kSynchronous) {
    // The common small message: into the peer's ring and done; no request.
    Vci& vci = VciAt(arguments.vci);
    Request* request;
    {
      std::lock_guard<std::mutex> lock(vci.mutex);
      const MessageHeader header = MakeHeader(MessageType::kEager, arguments);
      if (TrySendLocked(arguments.vci, arguments.destination(), header,
                        arguments.buffer, arguments.bytes,
                        arguments.layout != nullptr ? &arguments : nullptr)) {
        return;
      }
      // No room: the message waits in the queue with a request to wait on,
      // and this thread waits by progressing, without the VCI's lock.
      request = NewSendLocked(arguments, /*persistent=*/false);
      request->state.store(RequestState::kActive, std::memory_order_relaxed);
      SendDataLocked(request, header, request->send.buffer, request->send.bytes,
                     /*complete_when_sent=*/true);
    }
    Wait(request);
    Retire(request);
    return;
  }
  Request* request = Isend(arguments);
  Wait(request);
  Retire(request);
}

Request* PointToPoint::Isend(const SendArguments& arguments) {
  Vci& vci = VciAt(arguments.vci);
  std::lock_guard<std::mutex> lock(vci.mutex);
  Request* request = NewSendLocked(arguments, /*persistent=*/false);
  PostSendLocked(request);
  return request;
}

Request* PointToPoint::NewPersistentSend(const SendArguments& arguments) {
  Vci& vci = VciAt(arguments.vci);
  std::lock_guard<std::mutex> lock(vci.mutex);
  return NewSendLocked(arguments, /*persistent=*/true);
}

Request* PointToPoint::NewSendLocked(const SendArguments& arguments,
                                     bool persistent) {
  Request* request = VciAt(arguments.vci).requests.Allocate();
  request->kind = RequestKind::kSend;
  request->persistent = persistent;
  request->vci = arguments.vci;
  request->send = arguments;
  if (arguments.layout != nullptr) {
    request->layout_hold = datatype::LayoutRef::Share(arguments.layout);
  }
  return request;
}

void PointToPoint::PostSendLocked(Request* request) {
  const SendArguments& arguments = request->send;
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  request->status = Status{};
  request->cancel_requested = false;
  if (arguments.bytes <= eager_max_) {
    if (arguments.mode == SendMode::kSynchronous) {
      MessageHeader header = MakeHeader(MessageType::kEagerSync, arguments);
      header.sender_request = reinterpret_cast<uint64_t>(request);
      SendDataLocked(request, header, arguments.buffer, arguments.bytes,
                     /*complete_when_sent=*/false);
      return;  // completes on kSyncAck
    }
    SendDataLocked(request, MakeHeader(MessageType::kEager, arguments),
                   arguments.buffer, arguments.bytes,
                   /*complete_when_sent=*/true);
    return;
  }
  PostRendezvousRequestLocked(request);
}

namespace {

// The memory a (buffer, count, layout) touches, as one region to register
// for remote access: from the lowest byte of the first item to the highest
// of the last.
void SpanOf(const void* buffer, int64_t count, const datatype::Layout* layout,
            size_t bytes, std::byte** start, size_t* length) {
  auto* base = static_cast<std::byte*>(const_cast<void*>(buffer));
  if (layout == nullptr || count == 0) {
    *start = base;
    *length = bytes;
    return;
  }
  const int64_t last_item = (count - 1) * layout->extent();
  const int64_t low = layout->true_lb() + std::min<int64_t>(0, last_item);
  const int64_t high = layout->true_ub() + std::max<int64_t>(0, last_item);
  *start = base + low;
  *length = static_cast<size_t>(high - low);
}

// Whether a layout's pieces are too small to move one segment each: then a
// contiguous staging copy (one memcpy per piece) is far cheaper than a
// cross-memory or RDMA segment per piece.
bool HasSmallPieces(const datatype::Layout& layout, size_t min_piece) {
  const auto blocks = static_cast<size_t>(layout.num_blocks());
  return blocks > 0 && static_cast<size_t>(layout.size()) / blocks < min_piece;
}

net::MemoryRegion RegisterOrDie(net::Transport& transport, std::byte* start,
                                size_t length, const char* what) {
  auto region = transport.RegisterMemory(start, length);
  if (!region.ok()) {
    std::fprintf(stderr, "minimpi: cannot register a %s buffer: %s\n", what,
                 std::string(region.status().message()).c_str());
    std::abort();
  }
  return *region;
}

}  // namespace

void PointToPoint::PostRendezvousRequestLocked(Request* request) {
  // The receiver reads the data in one copy and answers kRendezvousDone,
  // which also makes every mode synchronous.
  const SendArguments& arguments = request->send;
  MessageHeader header = MakeHeader(MessageType::kRendezvousRequest, arguments);
  header.sender_request = reinterpret_cast<uint64_t>(request);
  const void* data = arguments.buffer;
  const datatype::Layout* layout = arguments.layout;
  const std::byte* payload = nullptr;
  size_t payload_length = 0;
  if (layout != nullptr) {
    const std::span<const datatype::Run> runs = layout->runs();
    const size_t description =
        sizeof(SenderLayout) + runs.size() * sizeof(datatype::Run);
    if (description <= eager_max_ &&
        !HasSmallPieces(*layout, gather_min_piece_)) {
      // Describe the memory: the receiver gathers the pieces in place.
      request->rendezvous_staging = new std::byte[description];
      const SenderLayout head{arguments.count, layout->extent(),
                              static_cast<int64_t>(runs.size()), 0};
      std::memcpy(request->rendezvous_staging, &head, sizeof(head));
      std::memcpy(request->rendezvous_staging + sizeof(head), runs.data(),
                  runs.size() * sizeof(datatype::Run));
      payload = request->rendezvous_staging;
      payload_length = description;
      header.flags = kSenderLayoutInPayload;
    } else {
      // Too irregular to describe in one message, or pieces so small that
      // reading them one by one costs more than packing: pack it once
      // here, and the receiver reads the packed copy.
      request->rendezvous_staging = new std::byte[arguments.bytes];
      datatype::Pack(arguments.buffer, arguments.count, layout, 0,
                     request->rendezvous_staging,
                     static_cast<int64_t>(arguments.bytes));
      data = request->rendezvous_staging;
      layout = nullptr;
    }
  }
  std::byte* start;
  size_t length;
  SpanOf(data, arguments.count, layout, arguments.bytes, &start, &length);
  request->send_region = RegisterOrDie(*transport_, start, length, "send");
  request->rendezvous_data = data;
  request->pending_events = 1;  // kRendezvousDone; a split adds the write
  header.sender_address = reinterpret_cast<uint64_t>(data);
  header.remote_key = request->send_region.remote_key;
  SendDataLocked(request, header, payload, payload_length,
                 /*complete_when_sent=*/false);
}

namespace {
size_t HeaderBytes(const MessageHeader& header) {
  return header.type == MessageType::kEager ? kEagerHeaderBytes
                                            : sizeof(header);
}
}  // namespace

bool PointToPoint::TrySendLocked(int vci, net::PeerVci peer,
                                 const MessageHeader& header,
                                 const void* payload, size_t payload_length,
                                 const SendArguments* packed) {
  const Vci& v = VciAt(vci);
  if (!v.backlogged_peers.empty()) [[unlikely]] {
    // Behind an earlier message to the same VCI: keep the order.
    const auto queue = v.outgoing.find(ConnectionKey(peer));
    if (queue != v.outgoing.end() && queue->second.head != nullptr) {
      return false;
    }
  }
  if (packed != nullptr) {
    // Non-contiguous eager data is packed once, straight into the
    // transport's buffer.
    return transport_->SendPacked(vci, peer, &header, HeaderBytes(header),
                                  packed->bytes, [packed](void* destination) {
                                    datatype::Pack(
                                        packed->buffer, packed->count,
                                        packed->layout, 0, destination,
                                        static_cast<int64_t>(packed->bytes));
                                  }) == net::PostResult::kOk;
  }
  return transport_->Send(vci, peer, &header, HeaderBytes(header), payload,
                          payload_length) == net::PostResult::kOk;
}

void PointToPoint::EnqueueLocked(int vci, net::PeerVci peer,
                                 const Vci::OutgoingMessage& message) {
  Vci& v = VciAt(vci);
  Vci::OutgoingMessage* entry;
  if (!v.spare_outgoing.empty()) {
    entry = v.spare_outgoing.back();
    v.spare_outgoing.pop_back();
  } else {
    entry = new Vci::OutgoingMessage();
  }
  *entry = message;
  entry->next = nullptr;
  Vci::OutgoingQueue& queue = v.outgoing[ConnectionKey(peer)];
  if (queue.head == nullptr) {
    queue.head = entry;
    v.backlogged_peers.push_back(peer);
  } else {
    queue.tail->next = entry;
  }
  queue.tail = entry;
}

void PointToPoint::SendDataLocked(Request* request, const MessageHeader& header,
                                  const void* payload, size_t payload_length,
                                  bool complete_when_sent) {
  const int vci = request->send.vci;
  const net::PeerVci peer = request->send.destination();
  // Eager data of a non-contiguous send is packed from the request (a
  // rendezvous request's payload is its own description).
  const bool pack = header.type != MessageType::kRendezvousRequest &&
                    request->send.layout != nullptr;
  if (TrySendLocked(vci, peer, header, payload, payload_length,
                    pack ? &request->send : nullptr)) {
    if (complete_when_sent) Complete(request);
    return;
  }
  Vci::OutgoingMessage message;
  message.header = header;
  message.request = request;
  message.payload = payload;
  message.payload_length = payload_length;
  message.pack_from_request = pack;
  message.complete_when_sent = complete_when_sent;
  EnqueueLocked(vci, peer, message);
}

void PointToPoint::SendControlLocked(int vci, net::PeerVci peer,
                                     const MessageHeader& header) {
  if (TrySendLocked(vci, peer, header, nullptr, 0)) return;
  Vci::OutgoingMessage message;
  message.header = header;
  EnqueueLocked(vci, peer, message);
}

void PointToPoint::SendOwedControlLocked(int vci, net::PeerVci peer,
                                         const MessageHeader& header,
                                         Request* request,
                                         bool finishes_event) {
  if (TrySendLocked(vci, peer, header, nullptr, 0)) {
    SettleOwedLocked(request, finishes_event);
    return;
  }
  Vci::OutgoingMessage message;
  message.header = header;
  message.owed_by = request;
  message.owed_finishes_event = finishes_event;
  EnqueueLocked(vci, peer, message);
}

void PointToPoint::SettleOwedLocked(Request* request, bool finishes_event) {
  if (finishes_event) {
    FinishRendezvousEvent(request);
  } else {
    Complete(request);
  }
}

bool PointToPoint::RetryOutgoingLocked(int vci) {
  Vci& v = VciAt(vci);
  bool progressed = false;
  for (size_t i = 0; i < v.backlogged_peers.size();) {
    const net::PeerVci peer = v.backlogged_peers[i];
    Vci::OutgoingQueue& queue = v.outgoing[ConnectionKey(peer)];
    while (Vci::OutgoingMessage* message = queue.head) {
      const SendArguments* packed =
          message->pack_from_request ? &message->request->send : nullptr;
      // Not TrySendLocked: this message is the head of the backlog.
      const bool sent =
          packed != nullptr
              ? transport_->SendPacked(
                    vci, peer, &message->header, HeaderBytes(message->header),
                    packed->bytes,
                    [packed](void* destination) {
                      datatype::Pack(packed->buffer, packed->count,
                                     packed->layout, 0, destination,
                                     static_cast<int64_t>(packed->bytes));
                    }) == net::PostResult::kOk
              : transport_->Send(vci, peer, &message->header,
                                 HeaderBytes(message->header), message->payload,
                                 message->payload_length) ==
                    net::PostResult::kOk;
      if (!sent) break;
      progressed = true;
      queue.head = message->next;
      Request* request = message->request;
      const bool complete = message->complete_when_sent;
      Request* owed_by = message->owed_by;
      const bool finishes_event = message->owed_finishes_event;
      v.spare_outgoing.push_back(message);
      if (complete) Complete(request);
      if (owed_by != nullptr) SettleOwedLocked(owed_by, finishes_event);
    }
    if (queue.head == nullptr) {
      queue.tail = nullptr;
      v.backlogged_peers[i] = v.backlogged_peers.back();
      v.backlogged_peers.pop_back();
    } else {
      ++i;
    }
  }
  return progressed;
}

// --- Receiving ---------------------------------------------------------------

Request* PointToPoint::Irecv(const ReceiveArguments& arguments) {
  Vci& vci = VciAt(arguments.vci);
  std::lock_guard<std::mutex> lock(vci.mutex);
  Request* request = NewReceiveLocked(arguments, /*persistent=*/false);
  PostReceiveLocked(request);
  return request;
}

Request* PointToPoint::NewPersistentReceive(const ReceiveArguments& arguments) {
  Vci& vci = VciAt(arguments.vci);
  std::lock_guard<std::mutex> lock(vci.mutex);
  return NewReceiveLocked(arguments, /*persistent=*/true);
}

Request* PointToPoint::NewReceiveLocked(const ReceiveArguments& arguments,
                                        bool persistent) {
  Request* request = VciAt(arguments.vci).requests.Allocate();
  request->kind = RequestKind::kReceive;
  request->persistent = persistent;
  request->vci = arguments.vci;
  request->receive_buffer = arguments.buffer;
  request->capacity = arguments.capacity;
  request->receive_layout = arguments.layout;
  request->receive_count = arguments.count;
  if (arguments.layout != nullptr) {
    request->layout_hold = datatype::LayoutRef::Share(arguments.layout);
  }
  request->wanted = {arguments.context, arguments.source, arguments.tag};
  request->traffic = arguments.kind;
  return request;
}

void PointToPoint::Start(Request* request) {
  Vci& vci = VciAt(request->vci);
  std::lock_guard<std::mutex> lock(vci.mutex);
  if (request->kind == RequestKind::kCompleted) {
    request->state.store(RequestState::kComplete, std::memory_order_release);
    return;
  }
  if (request->kind == RequestKind::kSend &&
      request->send.mode == SendMode::kBuffered) {
    // The bindings handed the data to BufferedSends already: the buffer
    // may be reused at once.
    request->status = Status{};
    request->state.store(RequestState::kComplete, std::memory_order_release);
    return;
  }
  if (request->kind == RequestKind::kReceive) {
    PostReceiveLocked(request);
  } else {
    PostSendLocked(request);
  }
}

Request* PointToPoint::StartSchedule(Progressable* schedule, int vci,
                                     RequestKind kind) {
  Vci& v = VciAt(vci);
  std::lock_guard<std::mutex> lock(v.mutex);
  Request* request = v.requests.Allocate();
  request->kind = kind;
  request->vci = vci;
  request->schedule = schedule;
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  schedule->request = request;
  RunAdvance(schedule, vci);  // may complete the request already
  return request;
}

Request* PointToPoint::StartNestedLocked(Progressable* schedule, int vci,
                                         Progressable* parent) {
  Request* request = VciAt(vci).requests.Allocate();
  request->kind = RequestKind::kCollective;
  request->vci = vci;
  request->schedule = schedule;
  request->parent = parent;
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  schedule->request = request;
  RunAdvance(schedule, vci);
  return request;
}

void PointToPoint::RunAdvance(Progressable* schedule, int vci) {
  schedule->in_advance = true;
  schedule->Advance(*this, vci);
  // Not touched after a finishing Advance: `in_advance` is cleared by the
  // schedule's own Advance before it completes its request (see Schedule).
}

Request* PointToPoint::IsendLocked(const SendArguments& arguments,
                                   Progressable* parent) {
  Request* request = NewSendLocked(arguments, /*persistent=*/false);
  request->parent = parent;
  PostSendLocked(request);
  return request;
}

Request* PointToPoint::IrecvLocked(const ReceiveArguments& arguments,
                                   Progressable* parent) {
  Request* request = NewReceiveLocked(arguments, /*persistent=*/false);
  request->parent = parent;
  PostReceiveLocked(request);
  return request;
}

void PointToPoint::CompleteCollectiveLocked(Request* request) {
  Complete(request);
}

void PointToPoint::CompleteUnowned(Request* request) {
  if (request->parent != nullptr) {
    std::fprintf(stderr,
                 "minimpi: internal error: CompleteUnowned on a step of a "
                 "schedule\n");
    std::abort();
  }
  Complete(request);
}

Request* PointToPoint::NewCompletedRequest(const Status& status, int vci) {
  Vci& v = VciAt(vci);
  std::lock_guard<std::mutex> lock(v.mutex);
  Request* request = v.requests.Allocate();
  request->kind = RequestKind::kCompleted;
  request->vci = vci;
  request->status = status;
  request->state.store(RequestState::kComplete, std::memory_order_release);
  return request;
}

Request* PointToPoint::NewPartitionedRequest(int vci, void* extension) {
  Vci& v = VciAt(vci);
  std::lock_guard<std::mutex> lock(v.mutex);
  Request* request = v.requests.Allocate();
  request->kind = RequestKind::kPartitioned;
  request->persistent = true;
  request->vci = vci;
  request->status = Status{};
  request->extension = extension;
  request->state.store(RequestState::kInactive, std::memory_order_release);
  return request;
}

Request* PointToPoint::NewGeneralized(void* extension) {
  Vci& v = VciAt(0);
  std::lock_guard<std::mutex> lock(v.mutex);
  Request* request = v.requests.Allocate();
  request->kind = RequestKind::kGeneralized;
  request->persistent = false;
  request->vci = 0;
  request->status = Status{};
  request->extension = extension;
  request->state.store(RequestState::kActive, std::memory_order_release);
  return request;
}

void PointToPoint::PostReceiveLocked(Request* request) {
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  request->status = Status{};
  match::UnexpectedMessage* message =
      VciAt(request->vci).engine->MatchPosted(request);
  if (message != nullptr) {
    DeliverUnexpectedLocked(request, static_cast<UnexpectedRecord*>(message));
  }
}

void PointToPoint::DeliverUnexpectedLocked(Request* request,
                                           UnexpectedRecord* message) {
  const MessageHeader& header = message->header;
  if (header.type == MessageType::kRendezvousRequest) {
    StartRendezvousReadLocked(request, message->source, header,
                              message->payload(), message->payload_length);
  } else {
    size_t delivered = std::min<size_t>(header.length, request->capacity);
    CopyIntoReceive(request, message->payload(), delivered);
    FillStatus(request, header, delivered);
    if (header.type == MessageType::kEagerSync) {
      SendOwedControlLocked(
          request->vci, message->source,
          MakeControl(MessageType::kSyncAck, header.sender_request), request,
          /*finishes_event=*/false);
    } else {
      Complete(request);
    }
  }
  FreeRecordLocked(VciAt(request->vci), message);
}

void PointToPoint::CopyIntoReceive(Request* request, const std::byte* payload,
                                   size_t delivered) {
  if (delivered == 0) return;
  if (request->receive_layout == nullptr) {
    std::memcpy(request->receive_buffer, payload, delivered);
    return;
  }
  datatype::Unpack(payload, static_cast<int64_t>(delivered),
                   request->receive_buffer, request->receive_count,
                   request->receive_layout, 0);
}

void PointToPoint::StartRendezvousReadLocked(Request* request,
                                             net::PeerVci peer,
                                             const MessageHeader& header,
                                             const std::byte* payload,
                                             size_t payload_length) {
  size_t delivered = std::min<size_t>(header.length, request->capacity);
  FillStatus(request, header, delivered);
  request->rendezvous_peer = peer;
  request->rendezvous_sender_request = header.sender_request;
  if (delivered == 0) {
    SendOwedControlLocked(
        request->vci, peer,
        MakeControl(MessageType::kRendezvousDone, header.sender_request),
        request, /*finishes_event=*/false);
    return;
  }
  if ((header.flags & kSenderLayoutInPayload) != 0 ||
      request->receive_layout != nullptr) {
    StartGatheredReadLocked(request, peer, header, payload, payload_length,
                            delivered);
    return;
  }
  auto region = transport_->RegisterMemory(request->receive_buffer, delivered);
  if (!region.ok()) {
    std::fprintf(stderr, "minimpi: cannot register a receive buffer: %s\n",
                 std::string(region.status().message()).c_str());
    std::abort();
  }
  request->receive_region = *region;
  size_t read_length = delivered;
  request->pending_events = 1;  // our read
  if (split_min_ > 0 && delivered >= split_min_) {
    // Page-aligned split: the sender's half starts on a page boundary.
    constexpr size_t kPage = 4096;
    read_length = std::max(kPage, (delivered / 2) & ~(kPage - 1));
    request->pending_events = 2;  // our read and the sender's write
    MessageHeader clear{};
    clear.type = MessageType::kClearToSend;
    clear.length = delivered;
    clear.sender_request = header.sender_request;
    clear.receiver_request = reinterpret_cast<uint64_t>(request);
    clear.sender_address = reinterpret_cast<uint64_t>(request->receive_buffer);
    clear.remote_key = region->remote_key;
    clear.split_offset = read_length;
    // Before our own read, so the sender copies while we do.
    SendControlLocked(request->vci, peer, clear);
  }
  PostCopyLocked(request->vci,
                 {request, peer, /*write=*/false, request->receive_buffer,
                  &request->receive_region,
                  net::RemoteBuffer{header.sender_address, header.remote_key},
                  read_length});
}

void PointToPoint::StartRendezvousWriteLocked(
    int vci, net::PeerVci peer, const MessageHeader& clear_to_send) {
  auto* request = reinterpret_cast<Request*>(clear_to_send.sender_request);
  request->receiver_request = clear_to_send.receiver_request;
  ++request->pending_events;  // our write
  const uint64_t offset = clear_to_send.split_offset;
  // The data the receiver was told about: the send buffer, or the packed
  // staging copy of a non-contiguous one.
  PostCopyLocked(
      vci,
      {request, peer, /*write=*/true,
       const_cast<std::byte*>(
           static_cast<const std::byte*>(request->rendezvous_data) + offset),
       &request->send_region,
       net::RemoteBuffer{clear_to_send.sender_address + offset,
                         clear_to_send.remote_key},
       clear_to_send.length - offset});
}

void PointToPoint::PostCopyLocked(int vci, const Vci::PendingCopy& copy) {
  Vci& v = VciAt(vci);
  // Keep order behind copies already waiting for resources.
  if (v.pending_copies.empty()) {
    const uint64_t context = reinterpret_cast<uint64_t>(copy.request);
    net::PostResult result =
        copy.write
            ? transport_->RdmaWrite(vci, copy.peer, copy.local, *copy.region,
                                    copy.remote, copy.length, context)
            : transport_->RdmaRead(vci, copy.peer, copy.local, *copy.region,
                                   copy.remote, copy.length, context);
    if (result == net::PostResult::kOk) return;
  }
  v.pending_copies.push_back(copy);
}

void PointToPoint::FinishRendezvousEvent(Request* request) {
  if (--request->pending_events > 0) return;
  if (request->kind == RequestKind::kSend) {
    transport_->DeregisterMemory(request->send_region);
    delete[] request->rendezvous_staging;
    request->rendezvous_staging = nullptr;
  } else {
    transport_->DeregisterMemory(request->receive_region);
  }
  Complete(request);
}

// --- Gathered reads (non-contiguous rendezvous) ----------------------------

// The state of one gathered read: where the next bytes come from (the
// sender's memory, walked with its layout as it described it) and go to.
struct GatheredRead {
  GatheredRead(void* receive_buffer, int64_t receive_count,
               const datatype::Layout* receive_layout, uint64_t sender_address,
               int64_t sender_count, datatype::LayoutRef sender,
               size_t delivered)
      : sender_layout(std::move(sender)),
        local(receive_buffer, receive_count, receive_layout),
        remote(reinterpret_cast<const void*>(sender_address), sender_count,
               sender_layout.get()),
        remaining(static_cast<int64_t>(delivered)) {}

  datatype::LayoutRef sender_layout;  // empty: the sender's data is contiguous
  datatype::SegmentCursor local;
  datatype::SegmentCursor remote;
  int64_t remaining;    // bytes not yet posted
  int outstanding = 0;  // posted reads not yet complete
  // Owned contiguous copy the read lands in, unpacked into the receive
  // buffer at the end; null when the read lands in place.
  std::byte* staging = nullptr;
  bool stalled = false;  // on the VCI's stalled_reads list
};

void PointToPoint::StartGatheredReadLocked(Request* request, net::PeerVci peer,
                                           const MessageHeader& header,
                                           const std::byte* payload,
                                           size_t payload_length,
                                           size_t delivered) {
  datatype::LayoutRef sender_layout;
  int64_t sender_count = static_cast<int64_t>(header.length);
  if ((header.flags & kSenderLayoutInPayload) != 0) {
    SenderLayout head;
    if (payload_length < sizeof(head)) {
      std::fprintf(stderr, "minimpi: corrupt rendezvous request\n");
      std::abort();
    }
    std::memcpy(&head, payload, sizeof(head));
    std::vector<datatype::Run> runs(head.num_runs);
    if (payload_length < sizeof(head) + runs.size() * sizeof(datatype::Run)) {
      std::fprintf(stderr, "minimpi: corrupt rendezvous layout\n");
      std::abort();
    }
    std::memcpy(runs.data(), payload + sizeof(head),
                runs.size() * sizeof(datatype::Run));
    sender_layout = datatype::RunsOnly(runs, head.extent);
    sender_count = head.count;
  }
  // Small receive pieces: read into a contiguous staging copy and unpack
  // it when the read is over (FinishGatheredReadLocked).
  std::byte* staging = nullptr;
  if (request->receive_layout != nullptr &&
      HasSmallPieces(*request->receive_layout, gather_min_piece_)) {
    staging = new std::byte[delivered];
  }
  std::byte* start;
  size_t length;
  if (staging != nullptr) {
    start = staging;
    length = delivered;
  } else {
    SpanOf(request->receive_buffer, request->receive_count,
           request->receive_layout, delivered, &start, &length);
  }
  request->receive_region =
      RegisterOrDie(*transport_, start, length, "receive");
  // A cursor over contiguous memory counts bytes.
  const int64_t receive_count = staging != nullptr
                                    ? static_cast<int64_t>(delivered)
                                : request->receive_layout != nullptr
                                    ? request->receive_count
                                    : static_cast<int64_t>(request->capacity);
  request->gathered_read = new GatheredRead(
      staging != nullptr ? staging : request->receive_buffer, receive_count,
      staging != nullptr ? nullptr : request->receive_layout,
      header.sender_address, sender_count, std::move(sender_layout), delivered);
  request->gathered_read->staging = staging;
  request->rendezvous_remote_key = header.remote_key;
  request->pending_events = 1;  // the gathered read is over
  if (!PumpGatheredReadLocked(request)) {
    request->gathered_read->stalled = true;
    VciAt(request->vci).stalled_reads.push_back(request);
  }
}

bool PointToPoint::PumpGatheredReadLocked(Request* request) {
  GatheredRead& read = *request->gathered_read;
  Vci& v = VciAt(request->vci);
  const int max_segments = std::min(transport_->max_io_segments(), 1024);
  v.local_segments.resize(max_segments);
  v.remote_segments.resize(max_segments);
  v.local_io.resize(max_segments);
  v.remote_io.resize(max_segments);
  // One post moves at most this much, so a huge message is several posts
  // whose completions keep progress moving.
  constexpr int64_t kBytesPerPost = int64_t{16} << 20;
  while (read.remaining > 0) {
    const int64_t local_position = read.local.position();
    const int64_t remote_position = read.remote.position();
    const datatype::SegmentPairing pairing =
        datatype::PairSegments(read.local, read.remote, v.local_segments.data(),
                               v.remote_segments.data(), max_segments,
                               std::min(read.remaining, kBytesPerPost));
    if (pairing.bytes == 0) {
      // Both sides hold at least `remaining` more bytes by construction.
      std::fprintf(stderr,
                   "minimpi: internal error: a gathered read ran out of "
                   "segments with %lld bytes to go\n",
                   static_cast<long long>(read.remaining));
      std::abort();
    }
    for (int i = 0; i < pairing.local_segments; ++i) {
      v.local_io[i] = {reinterpret_cast<uint64_t>(v.local_segments[i].address),
                       static_cast<size_t>(v.local_segments[i].length)};
    }
    for (int i = 0; i < pairing.remote_segments; ++i) {
      v.remote_io[i] = {
          reinterpret_cast<uint64_t>(v.remote_segments[i].address),
          static_cast<size_t>(v.remote_segments[i].length)};
    }
    const net::PostResult result = transport_->RdmaReadv(
        request->vci, request->rendezvous_peer, v.local_io.data(),
        pairing.local_segments, request->receive_region, v.remote_io.data(),
        pairing.remote_segments, request->rendezvous_remote_key,
        reinterpret_cast<uint64_t>(request));
    if (result == net::PostResult::kRetry) {
      // Not posted: rewind, and let progress try again.
      read.local.Seek(local_position);
      read.remote.Seek(remote_position);
      return false;
    }
    read.remaining -= pairing.bytes;
    ++read.outstanding;
  }
  return true;
}

void PointToPoint::FinishGatheredReadLocked(int vci, Request* request) {
  GatheredRead& read = *request->gathered_read;
  --read.outstanding;
  if (read.remaining > 0 || read.outstanding > 0) return;
  if (read.staging != nullptr) {
    datatype::Unpack(read.staging, static_cast<int64_t>(request->status.bytes),
                     request->receive_buffer, request->receive_count,
                     request->receive_layout, 0);
    // The staging copy was the registered region: give it back before the
    // memory goes (FinishRendezvousEvent then has nothing left to release).
    transport_->DeregisterMemory(request->receive_region);
    request->receive_region = {};
    delete[] read.staging;
  }
  delete request->gathered_read;
  request->gathered_read = nullptr;
  SendOwedControlLocked(vci, request->rendezvous_peer,
                        MakeControl(MessageType::kRendezvousDone,
                                    request->rendezvous_sender_request),
                        request, /*finishes_event=*/true);
}

// --- Probes ------------------------------------------------------------------

namespace {
void StatusFromHeader(const MessageHeader& header, Status* status) {
  status->source = header.source;
  status->tag = header.tag;
  status->bytes = header.length;
  status->error = Error::kNone;
  status->cancelled = false;
}
}  // namespace

UnexpectedRecord* PointToPoint::FindUnexpected(const match::Envelope& wanted,
                                               int vci, bool poll, bool take,
                                               Status* status) {
  Vci& v = VciAt(vci);
  std::lock_guard<std::mutex> lock(v.mutex);
  if (poll) PollLocked(vci);
  auto* message = static_cast<UnexpectedRecord*>(v.engine->Probe(wanted));
  if (message == nullptr) return nullptr;
  if (take) v.engine->RemoveUnexpected(message);
  StatusFromHeader(message->header, status);
  return message;
}

bool PointToPoint::Iprobe(const match::Envelope& wanted, int vci,
                          Status* status) {
  return FindUnexpected(wanted, vci, /*poll=*/true, /*take=*/false, status) !=
         nullptr;
}

void PointToPoint::Probe(const match::Envelope& wanted, int vci,
                         Status* status) {
  // The wait polls; done() only looks. It may be asked again after it said
  // yes: keep the first answer.
  bool found = false;
  WaitUntil(vci, [&] {
    return found || (found = FindUnexpected(wanted, vci, /*poll=*/false,
                                            /*take=*/false, status) != nullptr);
  });
}

UnexpectedRecord* PointToPoint::Improbe(const match::Envelope& wanted, int vci,
                                        Status* status) {
  return FindUnexpected(wanted, vci, /*poll=*/true, /*take=*/true, status);
}

UnexpectedRecord* PointToPoint::Mprobe(const match::Envelope& wanted, int vci,
                                       Status* status) {
  // The wait polls; done() only looks, and never takes a second message.
  UnexpectedRecord* message = nullptr;
  WaitUntil(vci, [&] {
    if (message == nullptr) {
      message =
          FindUnexpected(wanted, vci, /*poll=*/false, /*take=*/true, status);
    }
    return message != nullptr;
  });
  return message;
}

Request* PointToPoint::Imrecv(UnexpectedRecord* message,
                              const ReceiveArguments& receive,
                              uintptr_t owner) {
  Vci& vci = VciAt(message->vci);
  std::lock_guard<std::mutex> lock(vci.mutex);
  Request* request = vci.requests.Allocate();
  request->kind = RequestKind::kReceive;
  request->vci = message->vci;
  request->receive_buffer = receive.buffer;
  request->capacity = receive.capacity;
  request->receive_layout = receive.layout;
  request->receive_count = receive.count;
  if (receive.layout != nullptr) {
    request->layout_hold = datatype::LayoutRef::Share(receive.layout);
  }
  request->owner = owner;
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  DeliverUnexpectedLocked(request, message);
  return request;
}

void PointToPoint::FreeProbedMessage(UnexpectedRecord* message) {
  Vci& vci = VciAt(message->vci);
  std::lock_guard<std::mutex> lock(vci.mutex);
  FreeRecordLocked(vci, message);
}

bool PointToPoint::CancelReceive(Request* request) {
  Vci& vci = VciAt(request->vci);
  std::lock_guard<std::mutex> lock(vci.mutex);
  if (!vci.engine->CancelPosted(request)) return false;
  request->status = Status{};
  request->status.cancelled = true;
  Complete(request);
  return true;
}

void PointToPoint::CancelSend(Request* request) {
  Vci& v = VciAt(request->vci);
  std::lock_guard<std::mutex> lock(v.mutex);
  if (IsComplete(request) || request->cancel_requested) return;
  const net::PeerVci peer = request->send.destination();
  // Still in this VCI's backlog to the peer: take it out; nobody saw it.
  if (auto found = v.outgoing.find(ConnectionKey(peer));
      found != v.outgoing.end()) {
    Vci::OutgoingQueue& queue = found->second;
    Vci::OutgoingMessage* previous = nullptr;
    for (Vci::OutgoingMessage* message = queue.head; message != nullptr;
         previous = message, message = message->next) {
      if (message->request != request) continue;
      (previous == nullptr ? queue.head : previous->next) = message->next;
      if (queue.tail == message) queue.tail = previous;
      // An emptied queue leaves its peer on backlogged_peers; the next
      // retry drops it.
      v.spare_outgoing.push_back(message);
      CompleteCancelledSendLocked(request);
      return;
    }
  }
  // The message has left: ask the receiver, behind it on the same ring.
  request->cancel_requested = true;
  MessageHeader cancel = MakeControl(MessageType::kCancelSend,
                                     reinterpret_cast<uint64_t>(request));
  cancel.context = request->send.remote_context;
  cancel.source = request->send.source_rank;
  cancel.tag = request->send.tag;
  SendControlLocked(request->send.vci, peer, cancel);
}

void PointToPoint::CompleteCancelledSendLocked(Request* request) {
  if (request->send.bytes > eager_max_) {  // a rendezvous: see PostSendLocked
    transport_->DeregisterMemory(request->send_region);
  }
  delete[] request->rendezvous_staging;
  request->rendezvous_staging = nullptr;
  request->rendezvous_data = nullptr;
  request->pending_events = 0;
  request->status = Status{};
  request->status.cancelled = true;
  Complete(request);
}

void PointToPoint::HandleCancelSendLocked(int vci, net::PeerVci peer,
                                          const MessageHeader& header) {
  Vci& v = VciAt(vci);
  MessageHeader answer =
      MakeControl(MessageType::kCancelAnswer, header.sender_request);
  // Messages from one sender with one envelope match in order, so the
  // message is withdrawable only while it is the earliest of them; behind
  // an earlier one it is left to complete (the standard lets a cancel fail).
  const match::Envelope wanted{header.context, header.source, header.tag};
  if (auto* record = static_cast<UnexpectedRecord*>(v.engine->Probe(wanted));
      record != nullptr && record->source == peer &&
      record->header.sender_request == header.sender_request) {
    v.engine->RemoveUnexpected(record);
    FreeRecordLocked(v, record);
    answer.flags = kCancelled;
  }
  SendControlLocked(vci, peer, answer);
}

// --- Completion and progress -------------------------------------------------

void PointToPoint::Complete(Request* request) {
  if (Progressable* parent = request->parent) {
    // A collective's step: its schedule advances at the end of this
    // progress round (never inside the transport's poll, which may not be
    // re-entered). The schedule, not a user, retires the request.
    if (!parent->queued_for_advance && !parent->in_advance) {
      parent->queued_for_advance = true;
      VciAt(request->vci).ready.push_back(parent);
    }
  }
  // The last touch of the request on this path: once kComplete is visible the
  // waiting thread may read the status and recycle it.
  RequestState previous = request->state.exchange(RequestState::kComplete,
                                                  std::memory_order_acq_rel);
  if (previous == RequestState::kActiveFreed) {
    // Nobody will retire it: do what Retire would. A collective's schedule
    // is deleted from inside its own last Advance, which returns at once.
    delete request->schedule;
    request->schedule = nullptr;
    request->pool->Release(request);
  }
}

void PointToPoint::Wait(Request* request) {
  WaitUntil(request->vci, [request] { return IsComplete(request); });
}

void PointToPoint::Retire(Request* request) {
  if (request->schedule != nullptr) {
    delete request->schedule;
    request->schedule = nullptr;
  }
  if (request->persistent) {
    request->state.store(RequestState::kInactive, std::memory_order_release);
  } else {
    request->pool->Release(request);
  }
}

void PointToPoint::Free(Request* request) {
  // The user's handle dies now, even when the request lives on until it
  // completes.
  RequestPool::Invalidate(request);
  RequestState expected = RequestState::kActive;
  if (request->state.compare_exchange_strong(
          expected, RequestState::kActiveFreed, std::memory_order_acq_rel)) {
    return;  // released by Complete
  }
  // Inactive or already complete: nobody will retire it, so do what Retire
  // would (a completed schedule, e.g. MPI_Isendrecv's, goes too).
  delete request->schedule;
  request->schedule = nullptr;
  request->pool->Release(request);
}

bool PointToPoint::TryProgress(int vci) {
  Vci& v = VciAt(vci);
  if (!v.mutex.try_lock()) return false;
  bool progressed = PollLocked(vci);
  v.mutex.unlock();
  // What it completed may be what a sleeping thread of ours waits for (the
  // unlock orders the completion before this look at the doorbell).
  if (progressed) transport_->RingDoorbell(vci);
  return progressed;
}

bool PointToPoint::ProgressAll() {
  bool progressed = false;
  const int in_use = vcis_in_use_.load(std::memory_order_acquire);
  for (int v = 0; v < in_use; ++v) {
    // A VCI that never carried anything has nothing to poll.
    if (FindVci(v) != nullptr && transport_->MayHaveWork(v)) {
      progressed |= TryProgress(v);
    }
  }
  return progressed;
}

bool PointToPoint::ProgressBeyond(int vci) {
  if (vci >= 0 && IsEndpointVci(vci) && !endpoints_progress_process_) {
    return false;
  }
  return ProgressAll();
}

bool PointToPoint::PollLocked(int vci) {
  Vci& v = VciAt(vci);
  bool progressed = transport_->Poll(vci, *this, kCompletionsPerPoll) > 0;
  if (extension_ != nullptr &&
      extension_requests_.load(std::memory_order_relaxed) != 0) {
    progressed |= extension_->ProgressLocked(vci);
  }
  if (!v.backlogged_peers.empty()) progressed |= RetryOutgoingLocked(vci);
  for (size_t i = 0; i < v.stalled_reads.size();) {
    Request* request = v.stalled_reads[i];
    if (!PumpGatheredReadLocked(request)) {
      ++i;
      continue;
    }
    request->gathered_read->stalled = false;
    v.stalled_reads[i] = v.stalled_reads.back();
    v.stalled_reads.pop_back();
    progressed = true;
  }
  while (!v.pending_copies.empty()) {
    const Vci::PendingCopy& copy = v.pending_copies.front();
    const uint64_t context = reinterpret_cast<uint64_t>(copy.request);
    net::PostResult result =
        copy.write
            ? transport_->RdmaWrite(vci, copy.peer, copy.local, *copy.region,
                                    copy.remote, copy.length, context)
            : transport_->RdmaRead(vci, copy.peer, copy.local, *copy.region,
                                   copy.remote, copy.length, context);
    if (result == net::PostResult::kRetry) break;
    v.pending_copies.pop_front();
    progressed = true;
  }
  // Advance schedules whose steps completed. Advancing may complete more
  // steps at once (eager sends), which queues them again: loop until quiet.
  // A nested PollLocked (a send waiting for ring space) leaves this to the
  // outer one.
  if (!v.ready.empty() && !v.advancing) {
    v.advancing = true;
    while (!v.ready.empty()) {
      Progressable* schedule = v.ready.back();
      v.ready.pop_back();
      schedule->queued_for_advance = false;
      RunAdvance(schedule, vci);
    }
    v.advancing = false;
    progressed = true;
  }
  return progressed;
}

void PointToPoint::OnCompletion(int vci, const net::Completion& completion) {
  switch (completion.type) {
    case net::CompletionType::kReceive: {
      const auto* bytes = static_cast<const std::byte*>(completion.data);
      MessageHeader header{};
      size_t header_bytes;
      if (static_cast<MessageType>(bytes[0]) == MessageType::kEager) {
        header_bytes = kEagerHeaderBytes;
        std::memcpy(&header, bytes, kEagerHeaderBytes);
        header.length = completion.length - kEagerHeaderBytes;
      } else {
        header_bytes = sizeof(header);
        std::memcpy(&header, bytes, sizeof(header));
      }
      const std::byte* payload = bytes + header_bytes;
      switch (header.type) {
        case MessageType::kEager:
        case MessageType::kEagerSync:
        case MessageType::kRendezvousRequest:
          HandleArrival(vci, completion.from(), header, payload,
                        completion.length - header_bytes);
          return;
        case MessageType::kSyncAck:
          Complete(reinterpret_cast<Request*>(header.sender_request));
          return;
        case MessageType::kRendezvousDone:
          FinishRendezvousEvent(
              reinterpret_cast<Request*>(header.sender_request));
          return;
        case MessageType::kClearToSend:
          StartRendezvousWriteLocked(vci, completion.from(), header);
          return;
        case MessageType::kWriteDone:
          FinishRendezvousEvent(
              reinterpret_cast<Request*>(header.receiver_request));
          return;
        case MessageType::kCancelSend:
          HandleCancelSendLocked(vci, completion.from(), header);
          return;
        case MessageType::kPartitionedInit:
        case MessageType::kPartitionedClear:
        case MessageType::kPartitionedFree:
          if (extension_ != nullptr) {
            extension_->OnControlLocked(vci, completion.from(), header);
          }
          return;
        case MessageType::kCancelAnswer:
          // Not withdrawn: the request completes (or has completed) on its
          // own, and may already be recycled, so it is not touched.
          if ((header.flags & kCancelled) != 0) {
            CompleteCancelledSendLocked(
                reinterpret_cast<Request*>(header.sender_request));
          }
          return;
      }
      std::fprintf(stderr, "minimpi: corrupt message header (type %d)\n",
                   static_cast<int>(header.type));
      std::abort();
    }
    case net::CompletionType::kLocalDone: {
      if ((completion.context & kExtensionContextBit) != 0) {
        extension_->OnWriteDoneLocked(vci, completion.context);
        return;
      }
      auto* request = reinterpret_cast<Request*>(completion.context);
      if (request->kind == RequestKind::kReceive &&
          request->gathered_read != nullptr) {
        FinishGatheredReadLocked(vci, request);
        return;
      }
      if (request->kind == RequestKind::kReceive) {
        // Our read is over: the sender's buffer is free as far as we go.
        SendOwedControlLocked(vci, request->rendezvous_peer,
                              MakeControl(MessageType::kRendezvousDone,
                                          request->rendezvous_sender_request),
                              request, /*finishes_event=*/true);
      } else {
        MessageHeader done{};
        done.type = MessageType::kWriteDone;
        done.receiver_request = request->receiver_request;
        SendOwedControlLocked(vci, request->send.destination(), done, request,
                              /*finishes_event=*/true);
      }
      return;
    }
    case net::CompletionType::kWriteImmediate:
      // Point-to-point posts no writes with immediate; partitioned does.
      if (extension_ != nullptr) {
        extension_->OnWriteImmediateLocked(
            vci, completion.from(), completion.immediate, completion.length);
      }
      return;
  }
}

void PointToPoint::HandleArrival(int vci, net::PeerVci peer,
                                 const MessageHeader& header,
                                 const std::byte* payload,
                                 size_t payload_length) {
  Vci& v = VciAt(vci);
  match::Envelope arrived{header.context, header.source, header.tag};
  const match::TrafficKind traffic{
      static_cast<match::TrafficKind::Collective>(header.collective),
      static_cast<uint32_t>(std::min<uint64_t>(header.length, UINT32_MAX)),
      header.comm_size};
  match::PostedReceive* posted = v.engine->MatchArrival(arrived, traffic);
  if (posted != nullptr) {
    auto* request = static_cast<Request*>(posted);
    if (header.type == MessageType::kRendezvousRequest) {
      StartRendezvousReadLocked(request, peer, header, payload, payload_length);
      return;
    }
    size_t delivered = std::min<size_t>(header.length, request->capacity);
    CopyIntoReceive(request, payload, delivered);
    FillStatus(request, header, delivered);
    if (header.type == MessageType::kEagerSync) {
      SendOwedControlLocked(
          vci, peer, MakeControl(MessageType::kSyncAck, header.sender_request),
          request, /*finishes_event=*/false);
    } else {
      Complete(request);
    }
    return;
  }
  // Unexpected: keep the envelope and the payload (an eager message's
  // data, or a rendezvous request's description of the sender's layout).
  const size_t kept = payload_length;
  UnexpectedRecord* record = NewRecordLocked(v, kept);
  record->arrived = arrived;
  record->traffic = traffic;
  record->header = header;
  record->source = peer;
  record->vci = vci;
  record->payload_length = kept;
  if (kept > 0) std::memcpy(record->payload(), payload, kept);
  v.engine->AddUnexpected(record);
}

}  // namespace minimpi::p2p
