#include "mpi/vci/request.h"

#include <cstdio>
#include <cstdlib>
#include <new>

namespace minimpi::vci {

RequestPool::RequestPool()
    : chunks_(static_cast<std::atomic<Request*>*>(
          std::calloc(kMaxChunks, sizeof(std::atomic<Request*>)))) {
  static_assert(sizeof(std::atomic<Request*>) == sizeof(Request*));
  if (chunks_ == nullptr) {
    std::fprintf(stderr, "minimpi: out of memory creating a request pool\n");
    std::abort();
  }
}

RequestPool::~RequestPool() {
  for (uint32_t c = 0; c < num_chunks_; ++c) {
    delete[] chunks_[c].load(std::memory_order_relaxed);
  }
  std::free(chunks_);
}

void RequestPool::Refill() {
  free_list_ = returned_.exchange(nullptr, std::memory_order_acquire);
  if (free_list_ != nullptr) return;
  if (num_chunks_ == kMaxChunks) {
    std::fprintf(stderr,
                 "minimpi: more than %u requests in flight on one VCI\n",
                 kMaxRequests);
    std::abort();
  }
  Request* chunk = new Request[kChunk];
  const uint32_t first = num_chunks_ * kChunk;
  for (uint32_t i = kChunk; i-- > 0;) {
    chunk[i].pool = this;
    chunk[i].index = first + i;
    chunk[i].next_free = free_list_;
    free_list_ = &chunk[i];
  }
  // Release: a reader that finds the chunk sees its initialised requests.
  chunks_[num_chunks_++].store(chunk, std::memory_order_release);
}

void RequestPool::Unlink(Request* request) {
  // Everything a use may have left behind goes, except where the request
  // lives and its slot's generation, which moves on: every handle of the
  // request dies.
  RequestPool* const pool = request->pool;
  const uint32_t index = request->index;
  const uint32_t generation =
      request->generation.load(std::memory_order_relaxed) + 1;
  // Almost every request holds no layout: skip the out-of-line release.
  // With the hold empty, nothing else of the old request needs destroying.
  if (request->layout_hold) request->layout_hold = datatype::LayoutRef();
  new (request) Request();
  request->pool = pool;
  request->index = index;
  request->generation.store(generation, std::memory_order_relaxed);
  request->state.store(RequestState::kFree, std::memory_order_relaxed);
}

void RequestPool::Return(Request* first, Request* last) {
  Request* head = returned_.load(std::memory_order_relaxed);
  do {
    last->next_free = head;
  } while (!returned_.compare_exchange_weak(
      head, first, std::memory_order_release, std::memory_order_relaxed));
}

Request* RequestPool::SlotAt(uint32_t index) const {
  if (index >= kMaxRequests) return nullptr;
  Request* chunk = chunks_[index >> kChunkBits].load(std::memory_order_acquire);
  return chunk == nullptr ? nullptr : &chunk[index & (kChunk - 1)];
}

int CommonVci(std::span<Request* const> requests) {
  int vci = -1;
  for (const Request* request : requests) {
    if (!IsActive(request)) continue;
    if (vci >= 0 && request->vci != vci) return -1;
    vci = request->vci;
  }
  return vci;
}

}  // namespace minimpi::vci
