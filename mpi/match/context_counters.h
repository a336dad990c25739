// What each matching context has done: its queue lengths and their
// high-water marks, the searches of its posted and unexpected queues, the
// elements those searches inspected and the time they took, and its
// collective messages by kind. One set of counters per context, kept by the
// engine that matches the context (each context is matched on one VCI);
// MINIMPI_MATCH_STATS sums them per engine, and MPI_T reads them per
// communicator (a communicator owns two contexts) or summed per process.
//
// Threads: an engine writes these under its VCI's lock; a tool reads them at
// any moment from another thread. A counter written by one thread at a time
// needs no atomic read-modify-write, only a relaxed load and store that the
// reader may see whenever it looks (a plain add on x86, and race-free for
// ThreadSanitizer).
//
// Owned by: mpi/match. Read by: mpi/p2p (events), the MPI_T catalogue.
#ifndef MINIMPI_MPI_MATCH_CONTEXT_COUNTERS_H_
#define MINIMPI_MPI_MATCH_CONTEXT_COUNTERS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace minimpi::match {

// A count written by one thread at a time and read by any.
class OwnedCount {
 public:
  void Add(uint64_t n = 1) {
    value_.store(value_.load(std::memory_order_relaxed) + n,
                 std::memory_order_relaxed);
  }
  void Subtract(uint64_t n = 1) {
    value_.store(value_.load(std::memory_order_relaxed) - n,
                 std::memory_order_relaxed);
  }
  void RaiseTo(uint64_t candidate) {
    if (candidate > value_.load(std::memory_order_relaxed)) {
      value_.store(candidate, std::memory_order_relaxed);
    }
  }
  void Set(uint64_t value) { value_.store(value, std::memory_order_relaxed); }
  uint64_t Read() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// One queue (posted receives or unexpected messages) of one context.
struct QueueCounters {
  OwnedCount length;          // elements queued now
  OwnedCount high_watermark;  // the most queued at once
  OwnedCount searches;        // searches of this queue
  OwnedCount traversals;      // elements those searches inspected
  OwnedCount matches;         // searches that found an element
  OwnedCount search_ticks;    // time searching, in ReadTicks() units
  OwnedCount inserted;        // elements ever queued

  void Queued() {
    const uint64_t now = length.Read() + 1;
    length.Set(now);
    high_watermark.RaiseTo(now);
    inserted.Add();
  }
  void Dequeued() { length.Subtract(); }
  // Starts the mark again from the length now (a tool's new interval, or a
  // context id taken by a new communicator). Called off the VCI's lock, it
  // may race the engine's own update; both are atomics, so at worst the
  // mark is one update stale.
  void RestartHighWatermark() { high_watermark.Set(length.Read()); }
};

// TrafficKind::Collective's values, kNone (point-to-point) included.
inline constexpr int kNumTrafficKinds = 12;

struct ContextCounters {
  QueueCounters posted;
  QueueCounters unexpected;
  // Messages that arrived, by TrafficKind::Collective (index 0:
  // point-to-point): the collective-queue profile.
  OwnedCount arrivals_by_kind[kNumTrafficKinds];
  // Whether the context carries collective traffic, from its first element
  // (mpi/ gives each kind contexts of its own); MINIMPI_MATCH_STATS sums
  // by it. `used`: some element was counted here.
  std::atomic<bool> used{false};
  std::atomic<bool> collective{false};
  // Opaque to the engine: what the layer above calls this context (the
  // communicator, for events), or null.
  std::atomic<const void*> owner{nullptr};
};

// Every context an engine has seen, indexed by context id. Entries are
// made on first use and live as long as the table, so a reader may keep a
// pointer; lookups take no lock. Ids past the table share one entry.
class ContextCounterTable {
 public:
  static constexpr uint32_t kContextsPerChunk = 64;
  static constexpr uint32_t kMaxChunks = 2048;

  ContextCounterTable() = default;
  ContextCounterTable(const ContextCounterTable&) = delete;
  ContextCounterTable& operator=(const ContextCounterTable&) = delete;
  ~ContextCounterTable() {
    for (auto& chunk : chunks_) delete[] chunk.load(std::memory_order_relaxed);
  }

  // The context's counters, or nullptr if nothing was counted for it yet.
  const ContextCounters* Find(int32_t context) const {
    const auto id = static_cast<uint32_t>(context);  // negative: past the end
    if (id >= kContextsPerChunk * kMaxChunks) return &overflow_;
    const ContextCounters* chunk =
        chunks_[id / kContextsPerChunk].load(std::memory_order_acquire);
    return chunk == nullptr ? nullptr : &chunk[id % kContextsPerChunk];
  }

  // The context's counters, made if need be (once per kContextsPerChunk
  // contexts: the only allocation, and any thread may race to make it).
  // The first call for a context records its kind.
  ContextCounters& FindOrMake(int32_t context, bool collective) {
    ContextCounters& counters = Make(context);
    if (!counters.used.load(std::memory_order_relaxed)) [[unlikely]] {
      counters.collective.store(collective, std::memory_order_relaxed);
      counters.used.store(true, std::memory_order_relaxed);
    }
    return counters;
  }

  // The same without touching its kind (the layer above naming an owner).
  ContextCounters& Make(int32_t context) {
    const auto id = static_cast<uint32_t>(context);  // negative: past the end
    if (id >= kContextsPerChunk * kMaxChunks) [[unlikely]]
      return overflow_;
    std::atomic<ContextCounters*>& slot = chunks_[id / kContextsPerChunk];
    ContextCounters* chunk = slot.load(std::memory_order_acquire);
    if (chunk == nullptr) [[unlikely]]
      chunk = MakeChunk(slot);
    return chunk[id % kContextsPerChunk];
  }

  // Calls visit(context, counters) for every context counted so far (-1:
  // the ids past the table).
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    for (uint32_t c = 0; c < kMaxChunks; ++c) {
      const ContextCounters* chunk = chunks_[c].load(std::memory_order_acquire);
      if (chunk == nullptr) continue;
      for (uint32_t i = 0; i < kContextsPerChunk; ++i) {
        if (chunk[i].used.load(std::memory_order_relaxed)) {
          visit(static_cast<int32_t>(c * kContextsPerChunk + i), chunk[i]);
        }
      }
    }
    if (overflow_.used.load(std::memory_order_relaxed)) visit(-1, overflow_);
  }

 private:
  static ContextCounters* MakeChunk(std::atomic<ContextCounters*>& slot) {
    auto* fresh = new ContextCounters[kContextsPerChunk];
    ContextCounters* expected = nullptr;
    if (slot.compare_exchange_strong(expected, fresh,
                                     std::memory_order_acq_rel)) {
      return fresh;
    }
    delete[] fresh;  // another thread made it first
    return expected;
  }

  std::atomic<ContextCounters*> chunks_[kMaxChunks] = {};
  mutable ContextCounters overflow_;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_CONTEXT_COUNTERS_H_
