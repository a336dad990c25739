#include "mpi/objects/comm.h"

namespace minimpi {

std::atomic<CommunicatorReleaseSink*> Communicator::release_sink_{nullptr};

Communicator::Communicator() = default;

Communicator::~Communicator() {
  if (local_group != nullptr) local_group->Release();
  errhandler_->Release();
}

void Communicator::Retain() {
  if (!predefined) references_.fetch_add(1, std::memory_order_relaxed);
}

void Communicator::Release() {
  if (predefined) return;
  if (references_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // Nothing uses the id any more: a later communicator may take it, and a
  // later endpoint the VCI.
  if (CommunicatorReleaseSink* sink =
          release_sink_.load(std::memory_order_acquire)) {
    sink->CommunicatorReleased(local_id, on_endpoints() ? vci : -1);
  }
  delete this;
}

std::string Communicator::name() const {
  std::lock_guard<std::mutex> lock(description_mutex_);
  return name_;
}

void Communicator::set_name(std::string name) {
  std::lock_guard<std::mutex> lock(description_mutex_);
  name_ = std::move(name);
}

Communicator::Hints Communicator::DefaultHints() {
  Hints hints;
  for (const char* key :
       {"mpi_assert_no_any_tag", "mpi_assert_no_any_source",
        "mpi_assert_exact_length", "mpi_assert_allow_overtaking"}) {
    hints.emplace_back(key, "false");
  }
  return hints;
}

Communicator::Hints Communicator::hints() const {
  std::lock_guard<std::mutex> lock(description_mutex_);
  return hints_;
}

void Communicator::set_hints(Hints hints) {
  std::lock_guard<std::mutex> lock(description_mutex_);
  hints_ = std::move(hints);
}

Errhandler* Communicator::AcquireErrhandler() {
  std::lock_guard<std::mutex> lock(errhandler_mutex_);
  errhandler_->Retain();
  return errhandler_;
}

void Communicator::SetErrhandler(Errhandler* handler) {
  Errhandler* previous;
  {
    std::lock_guard<std::mutex> lock(errhandler_mutex_);
    previous = errhandler_;
    errhandler_ = handler;
  }
  previous->Release();
}

}  // namespace minimpi
