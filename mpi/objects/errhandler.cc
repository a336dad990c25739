#include "mpi/objects/errhandler.h"

namespace minimpi {

std::atomic<ErrhandlerReleaseSink*> Errhandler::release_sink_{nullptr};

Errhandler* Errhandler::Fatal() {
  static Errhandler handler(Action::kFatal, nullptr, MPI_ERRORS_ARE_FATAL);
  return &handler;
}

Errhandler* Errhandler::Abort() {
  static Errhandler handler(Action::kAbort, nullptr, MPI_ERRORS_ABORT);
  return &handler;
}

Errhandler* Errhandler::Return() {
  static Errhandler handler(Action::kReturn, nullptr, MPI_ERRORS_RETURN);
  return &handler;
}

Errhandler* Errhandler::NewUser(MPI_Comm_errhandler_function* function) {
  return new Errhandler(Action::kUser, function, MPI_ERRHANDLER_NULL);
}

void Errhandler::Retain() {
  if (!predefined()) references_.fetch_add(1, std::memory_order_relaxed);
}

void Errhandler::Release() {
  if (predefined()) return;
  if (references_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The last reference: every copy of the handle stops working.
  if (ErrhandlerReleaseSink* sink =
          release_sink_.load(std::memory_order_acquire)) {
    sink->ErrhandlerReleased(handle_);
  }
  delete this;
}

}  // namespace minimpi
