// A memory registration cache for net/ib that never hands out a stale
// registration: one made for memory that was since freed and whose address
// was reused for other memory (the kernel pinned the old pages; the new
// ones at the same virtual address are not what the NIC would access).
//
// The design is deliberately conservative. A registration is only ever
// shared or reused while the memory under it is known to be alive:
//
//  - Live entries (reference count > 0) are shared: an Acquire whose range
//    an existing live entry covers entirely takes another reference to it.
//    A live registration cannot be stale, because MPI forbids freeing a
//    buffer that an operation in progress is using.
//  - When the last reference to an entry over user memory goes, the entry
//    is deregistered at once. The library cannot see the user's free()
//    (short of patching malloc), so it keeps nothing past the last use, and
//    the reuse of a freed address always gets a fresh registration.
//  - Memory whose lifetime the library controls itself (MPI_Alloc_mem's) is
//    declared with AddOwnedRange. Entries that lie inside an owned range are
//    kept idle after their last release, least recently used first out past
//    a byte limit, and reused by later Acquires they cover.
//    RemoveOwnedRange (MPI_Free_mem) deregisters the idle entries over the
//    range and marks the live ones to go at their last release.
//  - InvalidateRange is for memory the caller otherwise knows to be gone:
//    idle entries over it go now, live ones at their last release.
//  An entry marked to go is never shared or retained again.
//
// Ranges are registered widened to whole pages (sysconf(_SC_PAGESIZE)):
// pinning works on pages anyway, and a widened entry covers more later
// requests. Sharing a page with other memory is safe: a page that holds any
// live byte stays mapped. For the same reason an entry is retained when it
// lies within the page-widened extent of an owned range, and the ranges
// that InvalidateRange and RemoveOwnedRange are given are widened to pages
// before looking for overlapping entries.
//
// The cache is pure logic over two callbacks (register, deregister), so it
// is tested without a device; net/ib passes closures over Verbs::RegMr and
// Verbs::DeregMr with its protection domain and access flags.
//
// Thread safety: every method may be called from any thread (net/ib calls
// it from several VCIs' threads). One mutex guards the cache and is held
// across the callbacks too, so registrations are serialized; the kernel
// serializes most of ibv_reg_mr's pinning on the address space anyway.
//
// Owned by: net/ib. Called by: net/ib/ib_transport.cc.
#ifndef MINIMPI_NET_IB_REGISTRATION_CACHE_H_
#define MINIMPI_NET_IB_REGISTRATION_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <utility>

#include "absl/status/statusor.h"
#include "net/ib/verbs.h"

namespace minimpi::net::ib {

// One use of a cached registration, returned by RegistrationCache::Acquire
// and given back to RegistrationCache::Release exactly once. A plain value:
// copying it does not take another reference.
class Registration {
 public:
  Registration() = default;

  // The keys to use in work requests (lkey) and to give peers (rkey).
  const VerbsMr& mr() const { return mr_; }
  // The registered extent: page-aligned, covering what was asked for.
  void* base() const { return reinterpret_cast<void*>(base_); }
  size_t length() const { return length_; }
  // Identifies the cache entry; 0 for a default-constructed Registration.
  uint64_t id() const { return id_; }

 private:
  friend class RegistrationCache;
  Registration(const VerbsMr& mr, uintptr_t base, size_t length, uint64_t id)
      : mr_(mr), base_(base), length_(length), id_(id) {}

  VerbsMr mr_;
  uintptr_t base_ = 0;
  size_t length_ = 0;
  uint64_t id_ = 0;
};

class RegistrationCache {
 public:
  // Registers [address, address + length), filling `mr`; false with errno
  // set on failure.
  using RegisterFn =
      std::function<bool(void* address, size_t length, VerbsMr* mr)>;
  // Deregisters what RegisterFn registered.
  using DeregisterFn = std::function<void(VerbsMr* mr)>;

  struct Stats {
    uint64_t registrations = 0;    // RegisterFn calls that succeeded
    uint64_t hits = 0;             // Acquires served by an existing entry
    uint64_t deregistrations = 0;  // DeregisterFn calls
    size_t live_entries = 0;       // entries with references
    size_t idle_entries = 0;       // retained entries without references
    size_t idle_bytes = 0;         // their registered bytes
  };

  // Idle entries (owned memory only) beyond `idle_byte_limit` bytes in all
  // are deregistered, least recently used first; 0 retains nothing.
  RegistrationCache(RegisterFn register_fn, DeregisterFn deregister_fn,
                    size_t idle_byte_limit);
  // Deregisters every entry, live ones included.
  ~RegistrationCache();

  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // A registration covering [address, address + length): an existing entry
  // that covers it entirely when one is live or retained, otherwise a new
  // one over the range widened to whole pages. A zero length counts as one
  // byte (the page holding `address` is registered). Errors: the range
  // wraps around the address space (InvalidArgument), or RegisterFn failed
  // (the address, the length and strerror(errno) in the message).
  absl::StatusOr<Registration> Acquire(void* address, size_t length);

  // Gives back what Acquire returned. At the last release the entry is
  // retained idle if it lies inside an owned range (and was not marked to
  // go), deregistered otherwise. Releasing an unknown or already released
  // Registration is a bug in the caller: it aborts with a message.
  void Release(const Registration& registration);

  // Declares [address, address + length) as memory the library allocated
  // and will announce the freeing of with RemoveOwnedRange. Owned ranges do
  // not overlap: an owned range that the new one overlaps is taken to be
  // gone (as by RemoveOwnedRange) first.
  void AddOwnedRange(void* address, size_t length);
  // The owned memory overlapping [address, address + length) is being
  // freed: no longer owned; entries over it deregistered now if idle, at
  // their last release if live.
  void RemoveOwnedRange(void* address, size_t length);

  // The memory [address, address + length) is gone: entries overlapping it
  // deregistered now if idle, at their last release if live. Owned ranges
  // stay as they are (for owned memory, use RemoveOwnedRange).
  void InvalidateRange(void* address, size_t length);

  Stats stats() const;

 private:
  // Entries sort by base address; the id keeps overlapping entries with
  // the same base apart.
  using Key = std::pair<uintptr_t, uint64_t>;

  struct Entry {
    uintptr_t end = 0;  // one past the registered extent
    VerbsMr mr;
    int references = 0;
    // Marked to go: never shared or retained again, deregistered at the
    // last release.
    bool doomed = false;
    // Retained without references, at `lru_position` in idle_lru_.
    bool idle = false;
    std::list<Key>::iterator lru_position;
  };
  using EntryMap = std::map<Key, Entry>;

  // The first entry that may overlap or cover a range starting at `begin`.
  EntryMap::iterator FirstCandidate(uintptr_t begin);
  // Whether [begin, end) lies within the page-widened extent of an owned
  // range.
  bool InsideOwnedRange(uintptr_t begin, uintptr_t end) const;
  // Deregisters idle entries overlapping [begin, end) and dooms live ones.
  void ForgetOverlapping(uintptr_t begin, uintptr_t end);
  // Removes owned ranges overlapping [begin, end) and forgets the entries
  // over them (and over [begin, end) itself).
  void RemoveOwnedOverlapping(uintptr_t begin, uintptr_t end);
  void Deregister(EntryMap::iterator entry);
  void EvictIdleBeyondLimit();

  const RegisterFn register_fn_;
  const DeregisterFn deregister_fn_;
  const size_t idle_byte_limit_;
  const uintptr_t page_size_;

  mutable std::mutex mutex_;
  EntryMap entries_;
  // The longest entry ever made: no entry starting before
  // begin - max_entry_length_ can reach begin.
  size_t max_entry_length_ = 0;
  uint64_t next_id_ = 1;
  // Idle entries, most recently used first.
  std::list<Key> idle_lru_;
  // Owned ranges: begin -> end, not overlapping.
  std::map<uintptr_t, uintptr_t> owned_;
  Stats stats_;
};

}  // namespace minimpi::net::ib

#endif  // MINIMPI_NET_IB_REGISTRATION_CACHE_H_
