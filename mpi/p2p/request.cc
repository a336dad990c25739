#include "mpi/p2p/request.h"

namespace minimpi::p2p {

RequestPool::~RequestPool() = default;

Request* RequestPool::Allocate() {
  if (free_list_ == nullptr) {
    free_list_ = returned_.exchange(nullptr, std::memory_order_acquire);
  }
  if (free_list_ == nullptr) {
    auto chunk = std::make_unique<Request[]>(kChunk);
    for (size_t i = 0; i < kChunk; ++i) {
      chunk[i].pool = this;
      chunk[i].next_free = free_list_;
      free_list_ = &chunk[i];
    }
    chunks_.push_back(std::move(chunk));
  }
  Request* request = free_list_;
  free_list_ = request->next_free;
  // Reset everything a previous use may have left behind.
  RequestPool* pool = request->pool;
  request->~Request();
  new (request) Request();
  request->pool = pool;
  return request;
}

void RequestPool::Release(Request* request) {
  Request* head = returned_.load(std::memory_order_relaxed);
  do {
    request->next_free = head;
  } while (!returned_.compare_exchange_weak(
      head, request, std::memory_order_release, std::memory_order_relaxed));
}

}  // namespace minimpi::p2p
