// A doubly linked list threaded through links inside the element, so
// queueing never allocates. `kLinks` names the member that holds the links
// (QueueLinks or OrderLinks); an element can sit on one list per member.
#ifndef MINIMPI_MPI_MATCH_INTRUSIVE_LIST_H_
#define MINIMPI_MPI_MATCH_INTRUSIVE_LIST_H_

#include <cstddef>

namespace minimpi::match {

template <typename T, auto kLinks = &T::links>
class IntrusiveList {
 public:
  IntrusiveList() = default;
  // Elements point back at their list: it must not move.
  IntrusiveList(const IntrusiveList&) = delete;
  IntrusiveList& operator=(const IntrusiveList&) = delete;

  T* front() const { return head_; }
  static T* next(const T* element) {
    return static_cast<T*>((element->*kLinks).next);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Whether `element` is on this list.
  bool Holds(const T* element) const {
    return (element->*kLinks).queue == this;
  }
  // The list an element is on, or nullptr.
  static IntrusiveList* Of(const T* element) {
    return static_cast<IntrusiveList*>((element->*kLinks).queue);
  }

  void PushBack(T* element) {
    auto& links = element->*kLinks;
    links.next = nullptr;
    links.previous = tail_;
    links.queue = this;
    if (tail_ != nullptr) {
      (tail_->*kLinks).next = element;
    } else {
      head_ = element;
    }
    tail_ = element;
    if constexpr (requires { links.queued; }) links.queued = true;
    ++size_;
  }

  void Remove(T* element) {
    auto& links = element->*kLinks;
    T* previous = static_cast<T*>(links.previous);
    T* following = static_cast<T*>(links.next);
    if (previous != nullptr) {
      (previous->*kLinks).next = following;
    } else {
      head_ = following;
    }
    if (following != nullptr) {
      (following->*kLinks).previous = previous;
    } else {
      tail_ = previous;
    }
    links.next = links.previous = links.queue = nullptr;
    if constexpr (requires { links.queued; }) links.queued = false;
    --size_;
  }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
  size_t size_ = 0;
};

}  // namespace minimpi::match

#endif  // MINIMPI_MPI_MATCH_INTRUSIVE_LIST_H_
