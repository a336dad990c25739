#include "net/ib/registration_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace minimpi::net::ib {
namespace {

constexpr uintptr_t kMaxAddress = std::numeric_limits<uintptr_t>::max();

uintptr_t PageSize() {
  const long page_size = sysconf(_SC_PAGESIZE);
  return page_size > 0 ? static_cast<uintptr_t>(page_size) : 4096;
}

// [address, address + length) with a zero length counting as one byte,
// clamped at the top of the address space.
std::pair<uintptr_t, uintptr_t> Span(void* address, size_t length) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(address);
  const size_t span = std::max<size_t>(length, 1);
  const uintptr_t end = span > kMaxAddress - begin ? kMaxAddress : begin + span;
  return {begin, end};
}

}  // namespace

RegistrationCache::RegistrationCache(RegisterFn register_fn,
                                     DeregisterFn deregister_fn,
                                     size_t idle_byte_limit)
    : register_fn_(std::move(register_fn)),
      deregister_fn_(std::move(deregister_fn)),
      idle_byte_limit_(idle_byte_limit),
      page_size_(PageSize()) {}

RegistrationCache::~RegistrationCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [key, entry] : entries_) deregister_fn_(&entry.mr);
}

absl::StatusOr<Registration> RegistrationCache::Acquire(void* address,
                                                        size_t length) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(address);
  const size_t span = std::max<size_t>(length, 1);
  // Room for the range and for rounding its end up to a page.
  if (span > kMaxAddress - begin || begin + span > kMaxAddress - page_size_) {
    return absl::InvalidArgumentError(
        absl::StrCat("net/ib: cannot register 0x", absl::Hex(begin), " (",
                     length, " bytes): the range wraps around"));
  }
  const uintptr_t end = begin + span;

  std::lock_guard<std::mutex> lock(mutex_);
  // A covering entry starts at or before `begin`. Prefer a live one, so
  // that idle ones stay evictable.
  EntryMap::iterator found = entries_.end();
  EntryMap::iterator idle_found = entries_.end();
  for (auto it = FirstCandidate(begin);
       it != entries_.end() && it->first.first <= begin; ++it) {
    const Entry& entry = it->second;
    if (entry.doomed || entry.end < end) continue;
    if (entry.references > 0) {
      found = it;
      break;
    }
    if (idle_found == entries_.end()) idle_found = it;
  }
  if (found == entries_.end()) found = idle_found;
  if (found != entries_.end()) {
    Entry& entry = found->second;
    if (entry.idle) {
      idle_lru_.erase(entry.lru_position);
      entry.idle = false;
      stats_.idle_bytes -= entry.end - found->first.first;
      --stats_.idle_entries;
      ++stats_.live_entries;
    }
    ++entry.references;
    ++stats_.hits;
    return Registration(entry.mr, found->first.first,
                        entry.end - found->first.first, found->first.second);
  }

  const uintptr_t page_begin = begin & ~(page_size_ - 1);
  const uintptr_t page_end = (end + page_size_ - 1) & ~(page_size_ - 1);
  const size_t page_length = page_end - page_begin;
  VerbsMr mr;
  errno = 0;
  if (!register_fn_(reinterpret_cast<void*>(page_begin), page_length, &mr)) {
    const int error = errno;
    const absl::StatusCode code = error != 0 ? absl::ErrnoToStatusCode(error)
                                             : absl::StatusCode::kInternal;
    return absl::Status(
        code, absl::StrCat("net/ib: registering memory at 0x", absl::Hex(begin),
                           " (", length, " bytes, as ", page_length,
                           " bytes from 0x", absl::Hex(page_begin),
                           ") failed: ", std::string(std::strerror(error))));
  }
  const Key key(page_begin, next_id_++);
  Entry& entry = entries_[key];
  entry.end = page_end;
  entry.mr = mr;
  entry.references = 1;
  max_entry_length_ = std::max(max_entry_length_, page_length);
  ++stats_.registrations;
  ++stats_.live_entries;
  return Registration(mr, page_begin, page_length, key.second);
}

void RegistrationCache::Release(const Registration& registration) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(Key(registration.base_, registration.id_));
  if (it == entries_.end() || it->second.references <= 0) {
    std::fprintf(stderr,
                 "net/ib RegistrationCache::Release: registration %llu at "
                 "0x%llx is unknown or already released\n",
                 static_cast<unsigned long long>(registration.id_),
                 static_cast<unsigned long long>(registration.base_));
    std::abort();
  }
  Entry& entry = it->second;
  if (--entry.references > 0) return;
  --stats_.live_entries;
  const uintptr_t base = it->first.first;
  if (entry.doomed || idle_byte_limit_ == 0 ||
      !InsideOwnedRange(base, entry.end)) {
    Deregister(it);
    return;
  }
  idle_lru_.push_front(it->first);
  entry.lru_position = idle_lru_.begin();
  entry.idle = true;
  stats_.idle_bytes += entry.end - base;
  ++stats_.idle_entries;
  EvictIdleBeyondLimit();
}

void RegistrationCache::AddOwnedRange(void* address, size_t length) {
  const auto [begin, end] = Span(address, length);
  std::lock_guard<std::mutex> lock(mutex_);
  RemoveOwnedOverlapping(begin, end);
  owned_[begin] = end;
}

void RegistrationCache::RemoveOwnedRange(void* address, size_t length) {
  const auto [begin, end] = Span(address, length);
  std::lock_guard<std::mutex> lock(mutex_);
  RemoveOwnedOverlapping(begin, end);
  ForgetOverlapping(begin, end);
}

void RegistrationCache::InvalidateRange(void* address, size_t length) {
  const auto [begin, end] = Span(address, length);
  std::lock_guard<std::mutex> lock(mutex_);
  ForgetOverlapping(begin, end);
}

RegistrationCache::Stats RegistrationCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

RegistrationCache::EntryMap::iterator RegistrationCache::FirstCandidate(
    uintptr_t begin) {
  const uintptr_t lowest =
      begin > max_entry_length_ ? begin - max_entry_length_ : 0;
  return entries_.lower_bound(Key(lowest, 0));
}

bool RegistrationCache::InsideOwnedRange(uintptr_t begin, uintptr_t end) const {
  // `begin` is page-aligned (entries are). Owned ranges do not overlap, so
  // of those whose first page is at or before `begin`, the last one ends
  // furthest: it is the only candidate.
  const uintptr_t limit =
      begin > kMaxAddress - page_size_ ? kMaxAddress : begin + page_size_;
  auto it = owned_.lower_bound(limit);
  if (it == owned_.begin()) return false;
  --it;
  const uintptr_t owned_page_begin = it->first & ~(page_size_ - 1);
  const uintptr_t owned_page_end =
      it->second > kMaxAddress - page_size_
          ? kMaxAddress
          : (it->second + page_size_ - 1) & ~(page_size_ - 1);
  return owned_page_begin <= begin && end <= owned_page_end;
}

void RegistrationCache::ForgetOverlapping(uintptr_t begin, uintptr_t end) {
  const uintptr_t page_begin = begin & ~(page_size_ - 1);
  const uintptr_t page_end = end > kMaxAddress - page_size_
                                 ? kMaxAddress
                                 : (end + page_size_ - 1) & ~(page_size_ - 1);
  auto it = FirstCandidate(page_begin);
  while (it != entries_.end() && it->first.first < page_end) {
    auto next = std::next(it);
    Entry& entry = it->second;
    if (entry.end > page_begin) {
      if (entry.idle) {
        Deregister(it);
      } else {
        entry.doomed = true;
      }
    }
    it = next;
  }
}

void RegistrationCache::RemoveOwnedOverlapping(uintptr_t begin, uintptr_t end) {
  auto it = owned_.upper_bound(begin);
  if (it != owned_.begin() && std::prev(it)->second > begin) --it;
  while (it != owned_.end() && it->first < end) {
    ForgetOverlapping(it->first, it->second);
    it = owned_.erase(it);
  }
}

void RegistrationCache::Deregister(EntryMap::iterator it) {
  Entry& entry = it->second;
  if (entry.idle) {
    idle_lru_.erase(entry.lru_position);
    stats_.idle_bytes -= entry.end - it->first.first;
    --stats_.idle_entries;
  }
  deregister_fn_(&entry.mr);
  ++stats_.deregistrations;
  entries_.erase(it);
}

void RegistrationCache::EvictIdleBeyondLimit() {
  while (stats_.idle_bytes > idle_byte_limit_ && !idle_lru_.empty()) {
    Deregister(entries_.find(idle_lru_.back()));
  }
}

}  // namespace minimpi::net::ib
