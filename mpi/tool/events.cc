// Event delivery. The lists of registrations are read by Raise only while
// a tool listens (Event::active()), so their lock never costs a data path
// anything when no tool is attached.
#include "mpi/tool/events.h"

#include <chrono>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "mpi/tool/catalogue.h"

namespace minimpi::tool {

std::atomic<uint64_t> pending_event_count{0};

namespace {

struct Listeners {
  std::shared_mutex mutex;
  std::map<int, std::vector<std::shared_ptr<EventRegistration>>> by_event;
};

Listeners& TheListeners() {
  static Listeners* listeners = new Listeners;
  return *listeners;
}

std::atomic<size_t> queue_limit{kDefaultEventQueueLimit};
// Serializes the delivery of queued instances, so a callback that asked
// for no thread safety never runs twice at once.
std::mutex delivery_mutex;

// The instances whose callbacks run on this thread, innermost last.
thread_local std::vector<const EventInstance*> running_instances;
// True while this thread is inside Event::Raise (on a data path).
thread_local bool raising = false;

MPI_T_event_registration HandleOf(EventRegistration* registration) {
  return reinterpret_cast<MPI_T_event_registration>(registration);
}

void RunCallback(EventRegistration* registration,
                 const EventRegistration::Callback& callback,
                 const EventInstance& instance, int cb_safety) {
  running_instances.push_back(&instance);
  callback.function(reinterpret_cast<MPI_T_event_instance>(
                        const_cast<EventInstance*>(&instance)),
                    HandleOf(registration),
                    static_cast<MPI_T_cb_safety>(cb_safety),
                    callback.user_data);
  running_instances.pop_back();
}

// Slots 2 and 3: callbacks that may run on a data path, with its locks.
constexpr int kThreadSafeSlot = 2;

}  // namespace

int SafetySlot(int cb_safety) {
  switch (cb_safety) {
    case MPI_T_CB_REQUIRE_NONE:
      return 0;
    case MPI_T_CB_REQUIRE_MPI_RESTRICTED:
      return 1;
    case MPI_T_CB_REQUIRE_THREAD_SAFE:
      return 2;
    case MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE:
      return 3;
    default:
      return -1;
  }
}

int SafetyOfSlot(int slot) {
  static constexpr int kLevels[kNumSafetyLevels] = {
      MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
      MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE};
  return kLevels[slot];
}

int64_t EventTimestampNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

EventRegistration::~EventRegistration() {
  if (free_callback_ == nullptr) return;
  const int cb_safety = running_instances.empty() && !raising
                            ? MPI_T_CB_REQUIRE_NONE
                            : MPI_T_CB_REQUIRE_THREAD_SAFE;
  free_callback_(HandleOf(this), static_cast<MPI_T_cb_safety>(cb_safety),
                 free_user_data_);
}

bool EventRegistration::SetCallback(int cb_safety,
                                    MPI_T_event_cb_function* function,
                                    void* user_data) {
  const int slot = SafetySlot(cb_safety);
  if (slot < 0) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  callbacks_[slot] = {function, function == nullptr ? nullptr : user_data};
  return true;
}

bool EventRegistration::HasCallback(int cb_safety) {
  const int slot = SafetySlot(cb_safety);
  std::lock_guard<std::mutex> lock(mutex_);
  return slot >= 0 && callbacks_[slot].function != nullptr;
}

void EventRegistration::SetDroppedHandler(
    MPI_T_event_dropped_cb_function* handler) {
  std::lock_guard<std::mutex> lock(mutex_);
  dropped_handler_ = handler;
}

void EventRegistration::SetFreeCallback(MPI_T_event_free_cb_function* function,
                                        void* user_data) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_callback_ = function;
  free_user_data_ = user_data;
}

void EventRegistration::Deliver(const EventInstance& instance) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (int slot = kThreadSafeSlot; slot < kNumSafetyLevels; ++slot) {
    if (callbacks_[slot].function == nullptr) continue;
    const Callback callback = callbacks_[slot];
    lock.unlock();
    RunCallback(this, callback, instance, MPI_T_CB_REQUIRE_THREAD_SAFE);
    return;
  }
  if (callbacks_[0].function == nullptr && callbacks_[1].function == nullptr) {
    return;
  }
  if (queue_.size() >= queue_limit.load(std::memory_order_relaxed)) {
    if (dropped_++ == 0) pending_event_count.fetch_add(1);
    return;
  }
  EventInstance& copy = queue_.emplace_back();
  copy.event_index = instance.event_index;
  copy.object = instance.object;
  copy.timestamp_ns = instance.timestamp_ns;
  copy.owned_payload.assign(
      instance.payload,
      instance.payload + EventTypeAt(instance.event_index).payload_bytes);
  pending_event_count.fetch_add(1);
}

void EventRegistration::DeliverQueued() {
  std::unique_lock<std::mutex> lock(mutex_);
  std::vector<EventInstance> queued;
  queued.swap(queue_);
  const uint64_t dropped = dropped_;
  dropped_ = 0;
  pending_event_count.fetch_sub(queued.size() + (dropped > 0 ? 1 : 0));
  // The least restrictive callback: here no lock is held and the caller
  // is a thread inside MPI that may call anything.
  const Callback callback =
      callbacks_[0].function != nullptr ? callbacks_[0] : callbacks_[1];
  const int cb_safety = callbacks_[0].function != nullptr
                            ? MPI_T_CB_REQUIRE_NONE
                            : MPI_T_CB_REQUIRE_MPI_RESTRICTED;
  MPI_T_event_dropped_cb_function* dropped_handler = dropped_handler_;
  lock.unlock();
  if (dropped > 0 && dropped_handler != nullptr) {
    dropped_handler(static_cast<MPI_Count>(dropped), HandleOf(this), 0,
                    static_cast<MPI_T_cb_safety>(cb_safety),
                    callback.user_data);
  }
  if (callback.function == nullptr) return;
  for (EventInstance& instance : queued) {
    instance.payload = instance.owned_payload.data();
    RunCallback(this, callback, instance, cb_safety);
  }
}

std::shared_ptr<EventRegistration> AddEventRegistration(int event_index,
                                                        const void* object) {
  auto registration = std::make_shared<EventRegistration>(event_index, object);
  Listeners& l = TheListeners();
  std::unique_lock<std::shared_mutex> lock(l.mutex);
  l.by_event[event_index].push_back(registration);
  return registration;
}

void RemoveEventRegistration(const std::shared_ptr<EventRegistration>& r) {
  {
    Listeners& l = TheListeners();
    std::unique_lock<std::shared_mutex> lock(l.mutex);
    auto& list = l.by_event[r->event_index()];
    for (auto it = list.begin(); it != list.end(); ++it) {
      if (it->get() == r.get()) {
        list.erase(it);
        break;
      }
    }
  }
  // What was queued for it is no longer anyone's.
  for (int slot = 0; slot < kNumSafetyLevels; ++slot) {
    r->SetCallback(SafetyOfSlot(slot), nullptr, nullptr);
  }
  r->SetDroppedHandler(nullptr);
  r->DeliverQueued();
  UpdateEventListeners(r->event_index());
}

void UpdateEventListeners(int event_index) {
  Listeners& l = TheListeners();
  std::unique_lock<std::shared_mutex> lock(l.mutex);
  int listening = 0;
  for (const auto& r : l.by_event[event_index]) {
    for (int slot = 0; slot < kNumSafetyLevels; ++slot) {
      if (r->HasCallback(SafetyOfSlot(slot))) {
        ++listening;
        break;
      }
    }
  }
  EventAt(event_index)->listeners().store(listening, std::memory_order_relaxed);
}

void DeliverPendingEvents() {
  if (!EventsPending() || !running_instances.empty()) return;
  std::unique_lock<std::mutex> delivering(delivery_mutex, std::try_to_lock);
  if (!delivering.owns_lock()) return;  // another thread is at it
  absl::InlinedVector<std::shared_ptr<EventRegistration>, 8> all;
  {
    Listeners& l = TheListeners();
    std::unique_lock<std::shared_mutex> lock(l.mutex);
    for (const auto& [index, list] : l.by_event) {
      all.insert(all.end(), list.begin(), list.end());
    }
  }
  for (const auto& registration : all) registration->DeliverQueued();
}

void SetEventQueueLimit(size_t limit) {
  queue_limit.store(limit, std::memory_order_relaxed);
}

const EventInstance* CurrentEventInstance(MPI_T_event_instance handle) {
  for (const EventInstance* instance : running_instances) {
    if (reinterpret_cast<const void*>(instance) ==
        reinterpret_cast<const void*>(handle)) {
      return instance;
    }
  }
  return nullptr;
}

void Event::Raise(const void* object, const void* payload) const {
  if (!active()) return;
  EventInstance instance;
  instance.event_index = index_;
  instance.object = object;
  instance.payload = static_cast<const unsigned char*>(payload);
  instance.timestamp_ns = EventTimestampNow();
  absl::InlinedVector<std::shared_ptr<EventRegistration>, 4> listening;
  {
    Listeners& l = TheListeners();
    std::shared_lock<std::shared_mutex> lock(l.mutex);
    auto it = l.by_event.find(index_);
    if (it == l.by_event.end()) return;
    for (const auto& r : it->second) {
      if (r->object() == object) listening.push_back(r);
    }
  }
  raising = true;
  for (const auto& r : listening) r->Deliver(instance);
  listening.clear();  // a registration freed meanwhile goes here
  raising = false;
}

}  // namespace minimpi::tool
