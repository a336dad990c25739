// A doubly linked list threaded through an element's QueueLinks, so queueing
// never allocates. T must have a `QueueLinks links` member.
#ifndef MINIMPI_MPI_MATCH_INTRUSIVE_LIST_H_
#define MINIMPI_MPI_MATCH_INTRUSIVE_LIST_H_

#include <cstddef>

namespace minimpi::match {

template <typename T>
class IntrusiveList {
 public:
  T* front() const { return head_; }
  static T* next(const T* element) {
    return static_cast<T*>(element->links.next);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  void PushBack(T* element) {
    element->links.next = nullptr;
    element->links.previous = tail_;
    if (tail_ != nullptr) {
      tail_->links.next = element;
    } else {
      head_ = element;
    }
    tail_ = element;
    element->links.queued = true;
    ++size_;
  }

  void Remove(T* element) {
    T* previous = static_cast<T*>(element->links.previous);
    T* following = static_cast<T*>(element->links.next);
    if (previous != nullptr) {
      previous->links.next = following;
    } else {
      head_ = following;
    }
    if (following != nullptr) {
      following->links.previous = previous;
    } else {
      tail_ = previous;
    }
    element->links.next = element->links.previous = nullptr;
    element->links.queued = false;
    --size_;
  }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
  size_t size_ = 0;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_INTRUSIVE_LIST_H_
