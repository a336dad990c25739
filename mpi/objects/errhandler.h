// Error handlers: the three predefined ones (MPI_ERRORS_ARE_FATAL,
// MPI_ERRORS_ABORT, MPI_ERRORS_RETURN) and those a program makes with
// MPI_Comm_create_errhandler. A handler is reference counted: every
// communicator it is attached to holds a reference, and so does every handle
// MPI_Comm_get_errhandler returns, because the standard lets a program free
// a handler that communicators still use.
//
// Owned by: mpi/. Called by: mpi/errors.cc (raising) and the bindings.
#ifndef MINIMPI_MPI_OBJECTS_ERRHANDLER_H_
#define MINIMPI_MPI_OBJECTS_ERRHANDLER_H_

#include <atomic>
#include <cstdint>

#include "mpi/mpi.h"

namespace minimpi {

// Ends the handle of a user error handler whose last reference is gone.
// mpi/instance implements it (the handle table is its) and installs itself
// for as long as the library is initialized (Errhandler::SetReleaseSink).
class ErrhandlerReleaseSink {
 public:
  virtual void ErrhandlerReleased(MPI_Errhandler handle) = 0;

 protected:
  ~ErrhandlerReleaseSink() = default;
};

class Errhandler {
 public:
  enum class Action : uint8_t { kFatal, kAbort, kReturn, kUser };

  // The predefined handlers live as long as the process.
  static Errhandler* Fatal();
  static Errhandler* Abort();
  static Errhandler* Return();
  // A user handler with one reference (its handle's).
  static Errhandler* NewUser(MPI_Comm_errhandler_function* function);

  Action action() const { return action_; }
  MPI_Comm_errhandler_function* function() const { return function_; }
  bool predefined() const { return action_ != Action::kUser; }

  // The handle that names this handler: a predefined constant, or the one
  // the handle table issued (set by the binding that created it).
  MPI_Errhandler handle() const { return handle_; }
  void set_handle(MPI_Errhandler handle) { handle_ = handle; }

  // Predefined handlers ignore both.
  void Retain();
  void Release();
  // Where a released user handler's handle is ended; nullptr (before
  // MPI_Init, from MPI_Finalize on): nowhere.
  static void SetReleaseSink(ErrhandlerReleaseSink* sink) {
    release_sink_.store(sink, std::memory_order_release);
  }

 private:
  static std::atomic<ErrhandlerReleaseSink*> release_sink_;
  Errhandler(Action action, MPI_Comm_errhandler_function* function,
             MPI_Errhandler handle)
      : action_(action), function_(function), handle_(handle) {}

  const Action action_;
  MPI_Comm_errhandler_function* const function_;
  MPI_Errhandler handle_;
  std::atomic<int> references_{1};
};

}  // namespace minimpi

#endif  // MINIMPI_MPI_OBJECTS_ERRHANDLER_H_
