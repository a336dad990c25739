#include "mpi/p2p/buffered_sends.h"

#include <algorithm>
#include <cstring>

#include "mpi/datatype/pack.h"

namespace minimpi::p2p {

using vci::Progressable;
using vci::Request;
using vci::RequestKind;
using vci::SendArguments;
using vci::SendMode;

// One buffered message: posts the send of the packed copy and, once it has
// completed, gives the space back and ends its (already freed) request,
// which deletes it.
class BufferedSends::Message : public Progressable {
 public:
  Message(PointToPoint& p2p, std::shared_ptr<BufferedSends> owner,
          std::byte* data, bool on_heap, uint64_t sequence,
          const SendArguments& send)
      : p2p_(p2p),
        owner_(std::move(owner)),
        data_(data),
        on_heap_(on_heap),
        sequence_(sequence),
        send_(send) {}

  void Advance(int /*vci*/) override {
    PointToPoint& p2p = p2p_;
    if (inner_ == nullptr) inner_ = p2p.IsendLocked(send_, this);
    if (!PointToPoint::IsComplete(inner_)) {
      in_advance = false;
      return;
    }
    p2p.Retire(inner_);
    owner_->Finished(p2p, data_, on_heap_, sequence_);
    // The last reference to owner_ may go with this message: nothing below
    // touches it.
    in_advance = false;
    p2p.CompleteCollectiveLocked(request);  // deletes this: return at once
  }

 private:
  PointToPoint& p2p_;
  const std::shared_ptr<BufferedSends> owner_;
  std::byte* const data_;
  const bool on_heap_;  // MPI_BUFFER_AUTOMATIC: data_ is its own block
  const uint64_t sequence_;
  const SendArguments send_;
  Request* inner_ = nullptr;
};

// MPI_Buffer_iflush's request: it posts nothing; the message that leaves
// last among those it waits for completes it (Finished).
class BufferedSends::FlushRequest : public Progressable {
 public:
  FlushRequest(PointToPoint& p2p, BufferedSends* owner, uint64_t below)
      : p2p_(p2p), owner_(owner), below_(below) {}

  uint64_t below() const { return below_; }

  // Runs once, from StartSchedule.
  void Advance(int /*vci*/) override {
    bool done;
    {
      std::lock_guard<std::mutex> lock(owner_->mutex_);
      done = owner_->DoneBelowLocked(below_);
      if (!done) owner_->flushes_.push_back(this);
    }
    // The request is not the program's yet, so a message finishing on
    // another thread meanwhile cannot have it freed under us.
    in_advance = false;
    if (done) p2p_.CompleteCollectiveLocked(request);
  }

 private:
  PointToPoint& p2p_;
  BufferedSends* const owner_;
  const uint64_t below_;
};

BufferedSends& ProcessBufferedSends() {
  // Never destroyed: messages may still leave during exit.
  static auto* sends =
      new std::shared_ptr<BufferedSends>(std::make_shared<BufferedSends>());
  return **sends;
}

bool BufferedSends::Attach(std::byte* base, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (buffer_ != nullptr || automatic_ || detaching_) return false;
  buffer_ = std::make_unique<BsendBuffer>(base, size);
  return true;
}

bool BufferedSends::AttachAutomatic() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (buffer_ != nullptr || automatic_ || detaching_) return false;
  automatic_ = true;
  return true;
}

std::optional<BufferedSends::Detached> BufferedSends::Detach(
    PointToPoint& p2p) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if ((buffer_ == nullptr && !automatic_) || detaching_) return std::nullopt;
    detaching_ = true;
  }
  p2p.vcis().WaitUntil(-1, [this] {
    std::lock_guard<std::mutex> lock(mutex_);
    return in_flight_.empty();
  });
  std::lock_guard<std::mutex> lock(mutex_);
  Detached detached;
  detached.automatic = automatic_;
  if (buffer_ != nullptr) {
    detached.base = buffer_->base();
    detached.size = buffer_->size();
  }
  buffer_.reset();
  automatic_ = false;
  detaching_ = false;
  return detached;
}

BufferedSends::SendResult BufferedSends::Send(PointToPoint& p2p,
                                              const SendArguments& send) {
  std::byte* data = nullptr;
  bool on_heap = false;
  uint64_t sequence = 0;
  for (int attempt = 0;; ++attempt) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (detaching_ || (buffer_ == nullptr && !automatic_)) {
        return SendResult::kNoBuffer;
      }
      on_heap = automatic_;
      if (!on_heap) data = buffer_->Allocate(send.bytes);
      if (on_heap || data != nullptr) {
        sequence = next_sequence_++;
        in_flight_.insert(sequence);
        break;
      }
    }
    if (attempt > 0) return SendResult::kNoRoom;
    // Messages whose sends have completed give their space back when
    // progress sees them; one round, which never blocks.
    p2p.vcis().ProgressAll();
  }
  if (on_heap) data = new std::byte[std::max<size_t>(send.bytes, 1)];
  if (send.layout != nullptr) {
    datatype::Pack(send.buffer, send.count, send.layout, 0, data,
                   static_cast<int64_t>(send.bytes));
  } else if (send.bytes > 0) {
    std::memcpy(data, send.buffer, send.bytes);
  }
  SendArguments packed = send;
  packed.buffer = data;
  packed.layout = nullptr;
  packed.count = 0;
  packed.mode = SendMode::kStandard;
  auto* message =
      new Message(p2p, shared_from_this(), data, on_heap, sequence, packed);
  // Nobody waits for the message: its request is freed now and released
  // when it completes.
  p2p.Free(p2p.StartSchedule(message, send.vci, RequestKind::kCompound));
  return SendResult::kSent;
}

void BufferedSends::Finished(PointToPoint& p2p, std::byte* data, bool on_heap,
                             uint64_t sequence) {
  std::vector<FlushRequest*> completed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (on_heap) {
      delete[] data;
    } else {
      buffer_->Free(data);
    }
    in_flight_.erase(sequence);
    for (size_t i = 0; i < flushes_.size();) {
      if (DoneBelowLocked(flushes_[i]->below())) {
        completed.push_back(flushes_[i]);
        flushes_[i] = flushes_.back();
        flushes_.pop_back();
      } else {
        ++i;
      }
    }
  }
  for (FlushRequest* flush : completed) p2p.CompleteUnowned(flush->request);
}

bool BufferedSends::DoneBelowLocked(uint64_t sequence) const {
  return in_flight_.empty() || *in_flight_.begin() >= sequence;
}

void BufferedSends::Flush(PointToPoint& p2p) {
  uint64_t below;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    below = next_sequence_;
  }
  p2p.vcis().WaitUntil(-1, [this, below] {
    std::lock_guard<std::mutex> lock(mutex_);
    return DoneBelowLocked(below);
  });
}

Request* BufferedSends::StartFlush(PointToPoint& p2p, int vci) {
  uint64_t below;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    below = next_sequence_;
  }
  return p2p.StartSchedule(new FlushRequest(p2p, this, below), vci,
                           RequestKind::kCompound);
}

size_t BufferedSends::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_.size();
}

}  // namespace minimpi::p2p
