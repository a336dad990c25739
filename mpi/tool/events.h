// Event registrations (MPI_T_event_handle_alloc and friends) and the
// delivery of raised events to their callbacks (MPI-4.1 15.3.8).
//
// Delivery: Event::Raise runs on a data path with its locks held. A
// registration's callback registered with MPI_T_CB_REQUIRE_THREAD_SAFE or
// stricter runs there at once (told MPI_T_CB_REQUIRE_THREAD_SAFE). Callbacks
// that need more freedom (MPI_T_CB_REQUIRE_NONE or _MPI_RESTRICTED) get a
// copy of the instance queued on their registration, bounded by
// SetEventQueueLimit; an instance past the bound is counted and reported to
// the registration's dropped handler. Queued instances are delivered by
// DeliverPendingEvents, which the bindings call on entry to every MPI_T call
// and when a blocking MPI call returns, only when EventsPending() (one
// relaxed load) says something waits.
//
// Owned by: mpi/tool. Called by: mpi/bindings/tool.cc, blocking bindings.
#ifndef MINIMPI_MPI_TOOL_EVENTS_H_
#define MINIMPI_MPI_TOOL_EVENTS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "mpi.h"
#include "mpi/tool/registry.h"

namespace minimpi::tool {

// The callback slots of a registration, one per safety level.
inline constexpr int kNumSafetyLevels = 4;
// MPI_T_CB_REQUIRE_* to 0..3, or -1 for a value that is none of them.
int SafetySlot(int cb_safety);
int SafetyOfSlot(int slot);

// One raised event as a callback sees it (MPI_T_event_instance).
struct EventInstance {
  int event_index = -1;
  const void* object = nullptr;
  const unsigned char* payload = nullptr;    // payload_bytes long
  std::vector<unsigned char> owned_payload;  // a queued instance's copy
  int64_t timestamp_ns = 0;
};

class EventRegistration
    : public std::enable_shared_from_this<EventRegistration> {
 public:
  EventRegistration(int event_index, const void* object)
      : event_index_(event_index), object_(object) {}
  // Runs the free callback (MPI_T_event_handle_free's), if one was given,
  // when no callback can run any more.
  ~EventRegistration();

  int event_index() const { return event_index_; }
  const void* object() const { return object_; }

  struct Callback {
    MPI_T_event_cb_function* function = nullptr;
    void* user_data = nullptr;
  };
  // Sets (or with a null function clears) the callback of one safety
  // level; returns false for an unknown level.
  bool SetCallback(int cb_safety, MPI_T_event_cb_function* function,
                   void* user_data);
  bool HasCallback(int cb_safety);
  void SetDroppedHandler(MPI_T_event_dropped_cb_function* handler);
  void SetFreeCallback(MPI_T_event_free_cb_function* function, void* user_data);

  // Called by Event::Raise: runs a thread-safe callback now or queues.
  void Deliver(const EventInstance& instance);
  // Runs the queued instances and reports dropped ones.
  void DeliverQueued();

 private:
  const int event_index_;
  const void* const object_;
  std::mutex mutex_;
  Callback callbacks_[kNumSafetyLevels];
  MPI_T_event_dropped_cb_function* dropped_handler_ = nullptr;
  MPI_T_event_free_cb_function* free_callback_ = nullptr;
  void* free_user_data_ = nullptr;
  std::vector<EventInstance> queue_;
  uint64_t dropped_ = 0;
};

// Makes a registration of event `event_index` bound to `object` (nullptr
// for an unbound event) and lists it where Raise finds it.
std::shared_ptr<EventRegistration> AddEventRegistration(int event_index,
                                                        const void* object);
// Unlists a registration: no new instance reaches it. Its free callback
// runs when the last reference goes (at once unless a callback is running).
void RemoveEventRegistration(const std::shared_ptr<EventRegistration>& r);
// Keeps Event::active() in step with the registrations' callbacks.
void UpdateEventListeners(int event_index);

// Queued instances plus unreported drops, over all registrations.
extern std::atomic<uint64_t> pending_event_count;
// True when some registration has queued instances or drops to report.
inline bool EventsPending() {
  return pending_event_count.load(std::memory_order_relaxed) > 0;
}
// Delivers what is queued, unless this thread is already inside a callback.
void DeliverPendingEvents();
// What a blocking MPI call does as it returns, holding no lock: one relaxed
// load when nothing is queued.
inline void DeliverEventsIfPending() {
  if (EventsPending()) [[unlikely]]
    DeliverPendingEvents();
}
void SetEventQueueLimit(size_t limit);
inline constexpr size_t kDefaultEventQueueLimit = 4096;

// The instance a callback running on this thread was given; nullptr when
// `handle` is no such instance (MPI_T_event_read etc. outside a callback).
const EventInstance* CurrentEventInstance(MPI_T_event_instance handle);

// The one event source: the steady clock, in nanoseconds.
int64_t EventTimestampNow();

}  // namespace minimpi::tool

#endif  // MINIMPI_MPI_TOOL_EVENTS_H_
