// MPI_T from many threads at once (run under ThreadSanitizer in CI): tools'
// threads create sessions, read variables and (un)register callbacks while
// a data-path thread bumps a counter the way modules do (a relaxed
// load+store under its own lock) and raises an event. No MPI_Init: MPI_T
// works before it. Variables and the event are this test's own.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpi.h"
#include "mpi/tool/registry.h"

namespace minimpi::tool {
namespace {

constexpr int kToolThreads = 4;
constexpr int kRounds = 200;
constexpr int kRaises = 20000;

// The module's side: a counter written only under `data_lock`.
std::mutex data_lock;
std::atomic<uint64_t> messages{0};
Event* message_event = nullptr;

std::atomic<uint64_t> thread_safe_calls{0};
std::atomic<uint64_t> deferred_calls{0};

void CountThreadSafe(MPI_T_event_instance instance, MPI_T_event_registration,
                     MPI_T_cb_safety, void*) {
  uint64_t payload = 0;
  ASSERT_EQ(MPI_T_event_read(instance, 0, &payload), MPI_SUCCESS);
  thread_safe_calls.fetch_add(1, std::memory_order_relaxed);
}

void CountDeferred(MPI_T_event_instance instance, MPI_T_event_registration,
                   MPI_T_cb_safety, void*) {
  MPI_Count stamp = 0;
  ASSERT_EQ(MPI_T_event_get_timestamp(instance, &stamp), MPI_SUCCESS);
  deferred_calls.fetch_add(1, std::memory_order_relaxed);
}

void RegisterOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    PerformanceVariable v;
    v.name = "tool_threads_test_messages";
    v.description = "messages the test's data path sent";
    v.category = "tool_threads_test";
    v.var_class = MPI_T_PVAR_CLASS_COUNTER;
    v.read = [](const void*, void* values) {
      static_cast<uint64_t*>(values)[0] =
          messages.load(std::memory_order_relaxed);
    };
    RegisterPerformanceVariable(std::move(v));
    EventType type;
    type.name = "tool_threads_test_message";
    type.category = "tool_threads_test";
    type.elements = {{MPI_UNSIGNED_LONG_LONG, 0, "sequence"}};
    type.payload_bytes = sizeof(uint64_t);
    message_event = RegisterEventType(std::move(type));
  });
}

void DataPath(std::atomic<bool>* tools_done) {
  for (uint64_t i = 0; i < kRaises || !tools_done->load(); ++i) {
    std::lock_guard<std::mutex> lock(data_lock);
    messages.store(messages.load(std::memory_order_relaxed) + 1,
                   std::memory_order_relaxed);
    if (message_event->active()) message_event->Raise(nullptr, &i);
  }
}

void Tool() {
  int provided = 0;
  ASSERT_EQ(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
  int pvar = -1, event = -1, cvar = -1, count = 0;
  ASSERT_EQ(MPI_T_pvar_get_index("tool_threads_test_messages",
                                 MPI_T_PVAR_CLASS_COUNTER, &pvar),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_T_event_get_index("tool_threads_test_message", &event),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_T_cvar_get_index("MINIMPI_NUM_VCIS", &cvar), MPI_SUCCESS);
  for (int round = 0; round < kRounds; ++round) {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
    ASSERT_EQ(MPI_T_pvar_session_create(&session), MPI_SUCCESS);
    ASSERT_EQ(MPI_T_pvar_handle_alloc(session, pvar, nullptr, &handle, &count),
              MPI_SUCCESS);
    unsigned long long first = 0, second = 0;
    ASSERT_EQ(MPI_T_pvar_read(session, handle, &first), MPI_SUCCESS);
    ASSERT_EQ(MPI_T_pvar_read(session, handle, &second), MPI_SUCCESS);
    EXPECT_GE(second, first);  // relative to the handle, never backwards
    MPI_T_event_registration registration;
    ASSERT_EQ(
        MPI_T_event_handle_alloc(event, nullptr, MPI_INFO_NULL, &registration),
        MPI_SUCCESS);
    ASSERT_EQ(
        MPI_T_event_register_callback(
            registration,
            round % 2 ? MPI_T_CB_REQUIRE_THREAD_SAFE : MPI_T_CB_REQUIRE_NONE,
            MPI_INFO_NULL, nullptr,
            round % 2 ? CountThreadSafe : CountDeferred),
        MPI_SUCCESS);
    MPI_T_cvar_handle cvar_handle;
    ASSERT_EQ(MPI_T_cvar_handle_alloc(cvar, nullptr, &cvar_handle, &count),
              MPI_SUCCESS);
    int vcis = 0;
    ASSERT_EQ(MPI_T_cvar_read(cvar_handle, &vcis), MPI_SUCCESS);
    EXPECT_EQ(vcis, 4);
    ASSERT_EQ(MPI_T_cvar_handle_free(&cvar_handle), MPI_SUCCESS);
    std::this_thread::yield();
    ASSERT_EQ(MPI_T_event_handle_free(registration, nullptr, nullptr),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_T_pvar_handle_free(session, &handle), MPI_SUCCESS);
    ASSERT_EQ(MPI_T_pvar_session_free(&session), MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_T_finalize(), MPI_SUCCESS);
}

TEST(ToolThreads, ToolsAndADataPathAtOnce) {
  RegisterOnce();
  int provided = 0;
  ASSERT_EQ(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
  std::atomic<bool> tools_done{false};
  std::thread data(DataPath, &tools_done);
  std::vector<std::thread> tools;
  for (int i = 0; i < kToolThreads; ++i) tools.emplace_back(Tool);
  for (std::thread& tool : tools) tool.join();
  tools_done = true;
  data.join();
  // Every tool thread finalized its own init: ours still stands.
  int num = 0;
  EXPECT_EQ(MPI_T_pvar_get_num(&num), MPI_SUCCESS);
  EXPECT_EQ(MPI_T_finalize(), MPI_SUCCESS);
  EXPECT_EQ(MPI_T_pvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
  EXPECT_GE(messages.load(), static_cast<uint64_t>(kRaises));
  // Callbacks ran; exact counts depend on the interleaving.
  EXPECT_GT(thread_safe_calls.load() + deferred_calls.load(), 0u);
}

}  // namespace
}  // namespace minimpi::tool
