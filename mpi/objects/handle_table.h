// Handles are untrusted input. A program may pass a handle it already freed,
// a copy of one, or a value that was never a handle at all, and MPI requires
// an error class for that, not a crash. So object handles are not pointers:
// a handle encodes which kind of object it names, a slot index and the
// slot's generation at the time the handle was made:
//
//   bits 63..60  zero
//   bits 59..56  HandleKind (never zero, so every object handle lies far
//                above the predefined constants of the standard ABI, which
//                are all below 0x1000)
//   bits 55..32  generation of the slot (24 bits, wraps)
//   bits 31..0   index of the slot
//
// Freeing an object bumps its slot's generation, so every copy of the old
// handle stops resolving; garbage fails the kind, range or generation check
// without any memory being touched outside the table.
//
// HandleTable<T> is the table for one kind of object. Lookup is lock-free (a
// range check, two loads and a compare): it sits on the path of every call
// that names a communicator or a datatype. Insert and Remove take a mutex;
// they happen when objects are created and freed.
//
// Requests do not live here: they come from per-VCI pools (mpi/p2p), which
// encode their handles the same way with the VCI in the index.
//
// Owned by: mpi/. Called by: the objects behind handles and the bindings.
#ifndef MINIMPI_MPI_OBJECTS_HANDLE_TABLE_H_
#define MINIMPI_MPI_OBJECTS_HANDLE_TABLE_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

namespace minimpi {

enum class HandleKind : uint8_t {
  kCommunicator = 1,
  kGroup = 2,
  kDatatype = 3,
  kOp = 4,
  kRequest = 5,
  kInfo = 6,
  kErrhandler = 7,
  kMessage = 8,
  kWindow = 9,
  kSession = 10,
};

namespace handle_internal {
inline constexpr int kKindShift = 56;
inline constexpr int kGenerationShift = 32;
inline constexpr uint64_t kGenerationMask = (uint64_t{1} << 24) - 1;
inline constexpr uint64_t kIndexMask = (uint64_t{1} << 32) - 1;
}  // namespace handle_internal

inline uintptr_t EncodeHandle(HandleKind kind, uint32_t generation,
                              uint32_t index) {
  using namespace handle_internal;
  return (uint64_t{static_cast<uint8_t>(kind)} << kKindShift) |
         ((generation & kGenerationMask) << kGenerationShift) | index;
}

inline bool HandleIsKind(uintptr_t handle, HandleKind kind) {
  return (handle >> handle_internal::kKindShift) == static_cast<uint8_t>(kind);
}
inline uint32_t HandleGeneration(uintptr_t handle) {
  using namespace handle_internal;
  return static_cast<uint32_t>((handle >> kGenerationShift) & kGenerationMask);
}
inline uint32_t HandleIndex(uintptr_t handle) {
  return static_cast<uint32_t>(handle & handle_internal::kIndexMask);
}
inline uint32_t NextGeneration(uint32_t generation) {
  return static_cast<uint32_t>((generation + 1) &
                               handle_internal::kGenerationMask);
}

template <typename T>
class HandleTable {
 public:
  // Slots come in chunks allocated as the table grows; the chunk directory
  // has a fixed size so readers never see it move.
  static constexpr uint32_t kChunkBits = 10;
  static constexpr uint32_t kChunkSlots = 1u << kChunkBits;
  static constexpr uint32_t kMaxChunks = 4096;  // 4 Mi live objects

  explicit HandleTable(HandleKind kind) : kind_(kind) {
    for (auto& chunk : chunks_) chunk.store(nullptr, std::memory_order_relaxed);
  }
  ~HandleTable() {
    for (auto& chunk : chunks_) delete[] chunk.load(std::memory_order_relaxed);
  }
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  // Registers `object` and returns the handle that names it; 0 when the
  // table is full.
  uintptr_t Insert(T* object) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint32_t index;
    if (!free_indices_.empty()) {
      index = free_indices_.back();
      free_indices_.pop_back();
    } else {
      if (next_index_ == kMaxChunks * kChunkSlots) return 0;
      index = next_index_++;
      std::atomic<Slot*>& chunk = chunks_[index >> kChunkBits];
      if (chunk.load(std::memory_order_relaxed) == nullptr) {
        chunk.store(new Slot[kChunkSlots], std::memory_order_release);
      }
    }
    Slot& slot = SlotAt(index);
    slot.object.store(object, std::memory_order_relaxed);
    ++live_;
    // Release: a reader that sees this generation also sees the object.
    const uint32_t generation = slot.generation.load(std::memory_order_relaxed);
    slot.live.store(true, std::memory_order_release);
    return EncodeHandle(kind_, generation, index);
  }

  // The object `handle` names, or nullptr for a handle of another kind, out
  // of range, never issued, or already removed.
  T* Lookup(uintptr_t handle) const {
    if (!HandleIsKind(handle, kind_)) return nullptr;
    const uint32_t index = HandleIndex(handle);
    if ((index >> kChunkBits) >= kMaxChunks) return nullptr;
    const Slot* chunk =
        chunks_[index >> kChunkBits].load(std::memory_order_acquire);
    if (chunk == nullptr) return nullptr;
    const Slot& slot = chunk[index & (kChunkSlots - 1)];
    if (!slot.live.load(std::memory_order_acquire) ||
        slot.generation.load(std::memory_order_relaxed) !=
            HandleGeneration(handle)) {
      return nullptr;
    }
    return slot.object.load(std::memory_order_relaxed);
  }

  // The handle that names the live object in slot `index` now, or 0 when
  // the slot holds none (handle conversions, which keep the index and only
  // some bits of the generation, rebuild the handle from it).
  uintptr_t LiveHandleAt(uint32_t index) const {
    if ((index >> kChunkBits) >= kMaxChunks) return 0;
    const Slot* chunk =
        chunks_[index >> kChunkBits].load(std::memory_order_acquire);
    if (chunk == nullptr) return 0;
    const Slot& slot = chunk[index & (kChunkSlots - 1)];
    if (!slot.live.load(std::memory_order_acquire)) return 0;
    return EncodeHandle(kind_, slot.generation.load(std::memory_order_relaxed),
                        index);
  }

  // Invalidates `handle` (and every copy of it) and returns the object it
  // named, for the caller to release; nullptr when it named nothing.
  T* Remove(uintptr_t handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    T* object = Lookup(handle);
    if (object == nullptr) return nullptr;
    const uint32_t index = HandleIndex(handle);
    Slot& slot = SlotAt(index);
    slot.live.store(false, std::memory_order_release);
    slot.generation.store(
        NextGeneration(slot.generation.load(std::memory_order_relaxed)),
        std::memory_order_relaxed);
    slot.object.store(nullptr, std::memory_order_relaxed);
    free_indices_.push_back(index);
    --live_;
    return object;
  }

  // Every live object, for teardown at MPI_Finalize. Not safe against
  // concurrent Insert/Remove.
  template <typename Visit>
  void ForEach(Visit visit) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint32_t index = 0; index < next_index_; ++index) {
      Slot& slot = SlotAt(index);
      if (slot.live.load(std::memory_order_relaxed)) {
        visit(slot.object.load(std::memory_order_relaxed));
      }
    }
  }

  size_t live() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_;
  }

 private:
  struct Slot {
    std::atomic<T*> object{nullptr};
    std::atomic<uint32_t> generation{0};
    std::atomic<bool> live{false};
  };

  Slot& SlotAt(uint32_t index) {
    return chunks_[index >> kChunkBits].load(
        std::memory_order_relaxed)[index & (kChunkSlots - 1)];
  }

  const HandleKind kind_;
  std::atomic<Slot*> chunks_[kMaxChunks];
  mutable std::mutex mutex_;
  std::vector<uint32_t> free_indices_;  // guarded by mutex_
  uint32_t next_index_ = 0;             // guarded by mutex_
  size_t live_ = 0;                     // guarded by mutex_
};

}  // namespace minimpi

#endif  // MINIMPI_MPI_OBJECTS_HANDLE_TABLE_H_
