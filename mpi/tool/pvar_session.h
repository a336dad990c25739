// Performance-variable sessions and handles (MPI-4.1 15.3.7): what a
// tool's handle remembers so that a module's monotonic totals read as the
// standard's per-handle values. Counters, timers and aggregates read
// relative to the handle's start or reset (a started handle adds what
// accrued since, a stopped one keeps the sum); watermarks keep the handle's
// own mark; levels, sizes, percentages, states and generic variables read
// the value now, or the value at stop for a stopped handle.
//
// Not thread safe: mpi/bindings/tool.cc serializes the MPI_T calls that
// reach it. Objects are the library's objects behind a tool's handle
// (Communicator*, request, Window*), opaque here.
//
// Owned by: mpi/tool. Called by: mpi/bindings/tool.cc, tests.
#ifndef MINIMPI_MPI_TOOL_PVAR_SESSION_H_
#define MINIMPI_MPI_TOOL_PVAR_SESSION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "mpi.h"
#include "mpi/tool/registry.h"

namespace minimpi::tool {

class PvarHandle {
 public:
  // `variable` must outlive the handle (the catalogue's entries do).
  PvarHandle(int index, const PerformanceVariable* variable,
             const void* object);
  ~PvarHandle();
  PvarHandle(const PvarHandle&) = delete;
  PvarHandle& operator=(const PvarHandle&) = delete;

  int index() const { return index_; }
  const void* object() const { return object_; }
  int count() const { return count_; }
  const PerformanceVariable& variable() const { return *variable_; }
  bool started() const { return started_; }
  // Bytes of one element as read (8, or 4 for an int state).
  size_t element_size() const;
  // The tool's handle of the bound object (an MPI_Comm, MPI_Request or
  // MPI_Win value), kept so the bindings can check before each use that it
  // still names object(): a handle on a freed object must not be read.
  void set_user_handle(void* handle) { user_handle_ = handle; }
  void* user_handle() const { return user_handle_; }

  // Each returns MPI_SUCCESS or the MPI_T error class.
  int Start();  // MPI_T_ERR_PVAR_NO_STARTSTOP for a continuous variable
  int Stop();
  int Read(void* buffer);         // count elements
  int Write(const void* buffer);  // MPI_T_ERR_PVAR_NO_WRITE when readonly
  int Reset();                    // MPI_T_ERR_PVAR_NO_WRITE when readonly
  int ReadReset(void* buffer);    // MPI_T_ERR_PVAR_NO_ATOMIC unless atomic

 private:
  enum class Kind { kRelative, kHighMark, kLowMark, kInstantaneous };
  // The module's values now, as 8-byte slots (a double's bits for timers).
  std::vector<uint64_t> ReadNow() const;
  void Enable(bool on);
  void Restart(const std::vector<uint64_t>& now);
  // The handle's view: sum, mark or value, given the module's values now.
  std::vector<uint64_t> View(const std::vector<uint64_t>& now);
  void Store(const std::vector<uint64_t>& values, void* buffer) const;

  const int index_;
  const PerformanceVariable* const variable_;
  const void* const object_;
  const int count_;
  const Kind kind_;
  void* user_handle_ = nullptr;
  bool started_ = false;
  bool enabled_ = false;
  // kRelative: the sum kept from earlier intervals and the module's value
  // at the start of this one; kHighMark/kLowMark: the mark in `kept_`;
  // kInstantaneous: the value at stop in `kept_`.
  std::vector<uint64_t> kept_;
  std::vector<uint64_t> base_;
};

class PvarSession {
 public:
  // Makes a handle; the session owns it. Returns nullptr for an object the
  // variable cannot have (count_for says a negative count).
  PvarHandle* AddHandle(int index, const PerformanceVariable* variable,
                        const void* object);
  // True if `handle` is one of this session's live handles.
  bool Owns(const void* handle) const;
  void FreeHandle(PvarHandle* handle);
  const std::vector<std::unique_ptr<PvarHandle>>& handles() const {
    return handles_;
  }

 private:
  std::vector<std::unique_ptr<PvarHandle>> handles_;
};

}  // namespace minimpi::tool

#endif  // MINIMPI_MPI_TOOL_PVAR_SESSION_H_
