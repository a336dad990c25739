// The catalogue, pvar handles and event delivery, with variables and
// events this test registers and values it sets by hand.
#include "mpi/tool/registry.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/tool/catalogue.h"
#include "mpi/tool/events.h"
#include "mpi/tool/pvar_session.h"

namespace minimpi::tool {
namespace {

// A module's counters as the test moves them: two elements per object.
struct FakeObject {
  uint64_t counts[2] = {0, 0};
  uint64_t level = 0;
  uint64_t high_mark = 0;
  double seconds = 0;
};

int RegisterCounter(const std::string& name, bool continuous) {
  PerformanceVariable v;
  v.name = name;
  v.description = "test counter";
  v.category = "test_registry";
  v.var_class = MPI_T_PVAR_CLASS_COUNTER;
  v.binding = Binding::kComm;
  v.count = 2;
  v.continuous = continuous;
  v.readonly = false;
  v.atomic = true;
  v.read = [](const void* object, void* values) {
    const auto* o = static_cast<const FakeObject*>(object);
    static_cast<uint64_t*>(values)[0] = o->counts[0];
    static_cast<uint64_t*>(values)[1] = o->counts[1];
  };
  return RegisterPerformanceVariable(std::move(v));
}

TEST(Catalogue, FindsByNameAndClassAndFilesCategories) {
  const int index = RegisterCounter("test_find_counter", true);
  EXPECT_EQ(
      FindPerformanceVariable("test_find_counter", MPI_T_PVAR_CLASS_COUNTER),
      index);
  EXPECT_EQ(
      FindPerformanceVariable("test_find_counter", MPI_T_PVAR_CLASS_LEVEL), -1);
  EXPECT_EQ(PerformanceVariableAt(index).name, "test_find_counter");
  const int category = FindCategory("test_registry");
  ASSERT_GE(category, 0);
  const Category c = CategoryAt(category);
  EXPECT_NE(std::find(c.performance_variables.begin(),
                      c.performance_variables.end(), index),
            c.performance_variables.end());
  const int stamp = CategoryStamp();
  RegisterCounter("test_find_counter_2", true);
  EXPECT_NE(CategoryStamp(), stamp);
}

TEST(Catalogue, LevelsAreReadOnly) {
  PerformanceVariable v;
  v.name = "test_level_forced_readonly";
  v.var_class = MPI_T_PVAR_CLASS_LEVEL;
  v.readonly = false;
  v.read = [](const void*, void* values) {
    static_cast<uint64_t*>(values)[0] = 0;
  };
  const int index = RegisterPerformanceVariable(std::move(v));
  EXPECT_TRUE(PerformanceVariableAt(index).readonly);
}

TEST(PvarHandle, ContinuousCounterReadsFromAllocAndReset) {
  const int index = RegisterCounter("test_continuous_counter", true);
  FakeObject object;
  object.counts[0] = 100;
  object.counts[1] = 7;
  PvarSession session;
  PvarHandle* handle =
      session.AddHandle(index, &PerformanceVariableAt(index), &object);
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(handle->count(), 2);
  EXPECT_EQ(handle->Start(), MPI_T_ERR_PVAR_NO_STARTSTOP);
  EXPECT_EQ(handle->Stop(), MPI_T_ERR_PVAR_NO_STARTSTOP);
  object.counts[0] += 5;
  object.counts[1] += 1;
  uint64_t values[2];
  ASSERT_EQ(handle->Read(values), MPI_SUCCESS);
  EXPECT_EQ(values[0], 5u);
  EXPECT_EQ(values[1], 1u);
  ASSERT_EQ(handle->ReadReset(values), MPI_SUCCESS);
  EXPECT_EQ(values[0], 5u);
  object.counts[0] += 3;
  ASSERT_EQ(handle->Read(values), MPI_SUCCESS);
  EXPECT_EQ(values[0], 3u);
  EXPECT_EQ(values[1], 0u);
  const uint64_t written[2] = {1000, 2000};
  ASSERT_EQ(handle->Write(written), MPI_SUCCESS);
  object.counts[1] += 4;
  ASSERT_EQ(handle->Read(values), MPI_SUCCESS);
  EXPECT_EQ(values[0], 1000u);
  EXPECT_EQ(values[1], 2004u);
}

TEST(PvarHandle, StoppedCounterKeepsItsSum) {
  const int index = RegisterCounter("test_startstop_counter", false);
  FakeObject object;
  PvarSession session;
  PvarHandle* handle =
      session.AddHandle(index, &PerformanceVariableAt(index), &object);
  object.counts[0] = 50;  // before the start: not counted
  ASSERT_EQ(handle->Start(), MPI_SUCCESS);
  object.counts[0] = 60;
  ASSERT_EQ(handle->Stop(), MPI_SUCCESS);
  object.counts[0] = 90;  // while stopped: not counted
  uint64_t values[2];
  ASSERT_EQ(handle->Read(values), MPI_SUCCESS);
  EXPECT_EQ(values[0], 10u);
  ASSERT_EQ(handle->Start(), MPI_SUCCESS);
  object.counts[0] = 95;
  ASSERT_EQ(handle->Read(values), MPI_SUCCESS);
  EXPECT_EQ(values[0], 15u);
  EXPECT_TRUE(session.Owns(handle));
  session.FreeHandle(handle);
  EXPECT_FALSE(session.Owns(handle));
}

TEST(PvarHandle, ReadOnlyAndNotAtomic) {
  PerformanceVariable v;
  v.name = "test_readonly_counter";
  v.var_class = MPI_T_PVAR_CLASS_COUNTER;
  v.read = [](const void*, void* values) {
    static_cast<uint64_t*>(values)[0] = 1;
  };
  const int index = RegisterPerformanceVariable(std::move(v));
  PvarSession session;
  PvarHandle* handle =
      session.AddHandle(index, &PerformanceVariableAt(index), nullptr);
  uint64_t value = 0;
  EXPECT_EQ(handle->Write(&value), MPI_T_ERR_PVAR_NO_WRITE);
  EXPECT_EQ(handle->Reset(), MPI_T_ERR_PVAR_NO_WRITE);
  EXPECT_EQ(handle->ReadReset(&value), MPI_T_ERR_PVAR_NO_WRITE);

  PerformanceVariable w;
  w.name = "test_writable_not_atomic";
  w.var_class = MPI_T_PVAR_CLASS_COUNTER;
  w.readonly = false;
  w.read = [](const void*, void* values) {
    static_cast<uint64_t*>(values)[0] = 1;
  };
  const int writable = RegisterPerformanceVariable(std::move(w));
  PvarHandle* second =
      session.AddHandle(writable, &PerformanceVariableAt(writable), nullptr);
  EXPECT_EQ(second->ReadReset(&value), MPI_T_ERR_PVAR_NO_ATOMIC);
}

TEST(PvarHandle, LevelStoppedReadsValueAtStop) {
  PerformanceVariable v;
  v.name = "test_level";
  v.var_class = MPI_T_PVAR_CLASS_LEVEL;
  v.binding = Binding::kComm;
  v.continuous = false;
  v.read = [](const void* object, void* values) {
    static_cast<uint64_t*>(values)[0] =
        static_cast<const FakeObject*>(object)->level;
  };
  const int index = RegisterPerformanceVariable(std::move(v));
  FakeObject object;
  PvarSession session;
  PvarHandle* handle =
      session.AddHandle(index, &PerformanceVariableAt(index), &object);
  ASSERT_EQ(handle->Start(), MPI_SUCCESS);
  object.level = 4;
  uint64_t value = 0;
  handle->Read(&value);
  EXPECT_EQ(value, 4u);
  ASSERT_EQ(handle->Stop(), MPI_SUCCESS);
  object.level = 9;
  handle->Read(&value);
  EXPECT_EQ(value, 4u);
}

TEST(PvarHandle, HighWatermarkPerHandleWithEnableHook) {
  static std::atomic<int> enabled{0};
  PerformanceVariable v;
  v.name = "test_high_mark";
  v.var_class = MPI_T_PVAR_CLASS_HIGHWATERMARK;
  v.binding = Binding::kComm;
  v.continuous = false;
  v.readonly = false;
  v.read = [](const void* object, void* values) {
    static_cast<uint64_t*>(values)[0] =
        static_cast<const FakeObject*>(object)->high_mark;
  };
  v.reset_mark = [](const void* object) {
    auto* o = const_cast<FakeObject*>(static_cast<const FakeObject*>(object));
    o->high_mark = o->level;
  };
  v.enable = [](bool on) { enabled += on ? 1 : -1; };
  const int index = RegisterPerformanceVariable(std::move(v));
  FakeObject object;
  object.high_mark = 40;  // a peak before any handle
  object.level = 3;
  PvarSession session;
  PvarHandle* a =
      session.AddHandle(index, &PerformanceVariableAt(index), &object);
  PvarHandle* b =
      session.AddHandle(index, &PerformanceVariableAt(index), &object);
  ASSERT_EQ(a->Start(), MPI_SUCCESS);
  EXPECT_EQ(enabled.load(), 1);
  ASSERT_EQ(b->Start(), MPI_SUCCESS);
  EXPECT_EQ(enabled.load(), 1);  // once for the variable
  uint64_t value = 0;
  a->Read(&value);
  EXPECT_EQ(value, 3u);  // the start restarted the mark at the level
  object.high_mark = 12;
  a->Read(&value);
  EXPECT_EQ(value, 12u);
  ASSERT_EQ(a->Stop(), MPI_SUCCESS);
  ASSERT_EQ(b->Stop(), MPI_SUCCESS);
  EXPECT_EQ(enabled.load(), 0);
  object.high_mark = 99;
  a->Read(&value);
  EXPECT_EQ(value, 12u);
}

TEST(PvarHandle, TimerInDoubleSeconds) {
  PerformanceVariable v;
  v.name = "test_timer";
  v.var_class = MPI_T_PVAR_CLASS_TIMER;
  v.type = ValueType::kDouble;
  v.binding = Binding::kComm;
  v.read = [](const void* object, void* values) {
    static_cast<double*>(values)[0] =
        static_cast<const FakeObject*>(object)->seconds;
  };
  const int index = RegisterPerformanceVariable(std::move(v));
  FakeObject object;
  object.seconds = 1.5;
  PvarSession session;
  PvarHandle* handle =
      session.AddHandle(index, &PerformanceVariableAt(index), &object);
  object.seconds = 2.25;
  double value = 0;
  handle->Read(&value);
  EXPECT_DOUBLE_EQ(value, 0.75);
}

struct Payload {
  int source;
  int tag;
  uint64_t bytes;
};

struct Seen {
  std::vector<int> sources;
  std::vector<int> safeties;
  uint64_t dropped = 0;
  int freed = 0;
};

void Record(MPI_T_event_instance instance, MPI_T_event_registration,
            MPI_T_cb_safety safety, void* user_data) {
  auto* seen = static_cast<Seen*>(user_data);
  const EventInstance* current = CurrentEventInstance(instance);
  ASSERT_NE(current, nullptr);
  Payload payload;
  std::memcpy(&payload, current->payload, sizeof payload);
  seen->sources.push_back(payload.source);
  seen->safeties.push_back(safety);
  EXPECT_GT(current->timestamp_ns, 0);
}

void RecordDropped(MPI_Count count, MPI_T_event_registration, int source,
                   MPI_T_cb_safety, void* user_data) {
  EXPECT_EQ(source, 0);
  static_cast<Seen*>(user_data)->dropped += count;
}

void RecordFree(MPI_T_event_registration, MPI_T_cb_safety, void* user_data) {
  ++static_cast<Seen*>(user_data)->freed;
}

Event* RegisterTestEvent(const std::string& name) {
  EventType type;
  type.name = name;
  type.description = "test event";
  type.category = "test_registry";
  type.elements = {{MPI_INT, offsetof(Payload, source), "source"},
                   {MPI_INT, offsetof(Payload, tag), "tag"},
                   {MPI_UNSIGNED_LONG_LONG, offsetof(Payload, bytes), "bytes"}};
  type.payload_bytes = sizeof(Payload);
  return RegisterEventType(std::move(type));
}

TEST(Events, ThreadSafeCallbacksRunAtOnceOthersWhenDelivered) {
  Event* event = RegisterTestEvent("test_event_delivery");
  EXPECT_EQ(FindEventType("test_event_delivery"), event->index());
  EXPECT_FALSE(event->active());
  Seen now_seen, later_seen;
  auto now = AddEventRegistration(event->index(), nullptr);
  auto later = AddEventRegistration(event->index(), nullptr);
  now->SetCallback(MPI_T_CB_REQUIRE_THREAD_SAFE, Record, &now_seen);
  later->SetCallback(MPI_T_CB_REQUIRE_NONE, Record, &later_seen);
  UpdateEventListeners(event->index());
  EXPECT_TRUE(event->active());
  const Payload payload{3, 17, 4096};
  event->Raise(nullptr, &payload);
  ASSERT_EQ(now_seen.sources.size(), 1u);
  EXPECT_EQ(now_seen.sources[0], 3);
  EXPECT_EQ(now_seen.safeties[0], MPI_T_CB_REQUIRE_THREAD_SAFE);
  EXPECT_TRUE(later_seen.sources.empty());
  EXPECT_TRUE(EventsPending());
  DeliverPendingEvents();
  ASSERT_EQ(later_seen.sources.size(), 1u);
  EXPECT_EQ(later_seen.safeties[0], MPI_T_CB_REQUIRE_NONE);
  EXPECT_FALSE(EventsPending());
  RemoveEventRegistration(now);
  RemoveEventRegistration(later);
  EXPECT_FALSE(event->active());
}

TEST(Events, OverflowGoesToTheDroppedHandlerAndFreeRunsOnce) {
  Event* event = RegisterTestEvent("test_event_overflow");
  Seen seen;
  {
    auto r = AddEventRegistration(event->index(), nullptr);
    r->SetCallback(MPI_T_CB_REQUIRE_MPI_RESTRICTED, Record, &seen);
    r->SetDroppedHandler(RecordDropped);
    UpdateEventListeners(event->index());
    SetEventQueueLimit(4);
    for (int i = 0; i < 10; ++i) {
      const Payload payload{i, 0, 0};
      event->Raise(nullptr, &payload);
    }
    DeliverPendingEvents();
    SetEventQueueLimit(kDefaultEventQueueLimit);
    EXPECT_EQ(seen.sources, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(seen.dropped, 6u);
    r->SetFreeCallback(RecordFree, &seen);
    RemoveEventRegistration(r);
    EXPECT_EQ(seen.freed, 0);  // `r` still holds it
  }
  EXPECT_EQ(seen.freed, 1);
}

TEST(Events, BoundRegistrationsSeeOnlyTheirObject) {
  Event* event = RegisterTestEvent("test_event_bound");
  Seen seen;
  int object_a = 0, object_b = 0;
  auto r = AddEventRegistration(event->index(), &object_a);
  r->SetCallback(MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, Record, &seen);
  UpdateEventListeners(event->index());
  const Payload a{1, 0, 0}, b{2, 0, 0};
  event->Raise(&object_b, &b);
  event->Raise(&object_a, &a);
  EXPECT_EQ(seen.sources, (std::vector<int>{1}));
  RemoveEventRegistration(r);
}

TEST(Events, InstanceHandlesAreValidOnlyInsideTheCallback) {
  EventInstance instance;
  EXPECT_EQ(
      CurrentEventInstance(reinterpret_cast<MPI_T_event_instance>(&instance)),
      nullptr);
}

}  // namespace
}  // namespace minimpi::tool
