// Info objects (MPI-4.1 section 10): ordered (key, value) string pairs.
// Keys keep the order they were first set in (MPI_Info_get_nthkey); setting
// a key again replaces its value in place.
//
// Info calls are valid before MPI_Init and after MPI_Finalize, so the table
// of info handles is process-wide, not part of the Instance. MPI_INFO_ENV
// is one process-wide object describing how the program was started.
//
// Owned by: mpi/. Called by: the info bindings, and the communicator
// bindings for hints.
#ifndef MINIMPI_MPI_OBJECTS_INFO_H_
#define MINIMPI_MPI_OBJECTS_INFO_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mpi/objects/handle_table.h"
#include "mpi/mpi.h"

namespace minimpi {

class Info {
 public:
  using Entry = std::pair<std::string, std::string>;

  Info() = default;
  explicit Info(std::vector<Entry> entries) : entries_(std::move(entries)) {}
  Info(const Info&) = delete;
  Info& operator=(const Info&) = delete;

  // MPI_SUCCESS, or the error class of a key (MPI_ERR_INFO_KEY: empty or
  // longer than MPI_MAX_INFO_KEY - 1 characters) or value
  // (MPI_ERR_INFO_VALUE: longer than MPI_MAX_INFO_VAL - 1), with what is
  // wrong in *problem. A null pointer is refused too.
  static int CheckKey(const char* key, std::string* problem);
  static int CheckValue(const char* value, std::string* problem);

  void Set(std::string_view key, std::string_view value);
  std::optional<std::string> Get(std::string_view key) const;
  // False when the key is not there.
  bool Delete(std::string_view key);
  int size() const;
  // The n-th key in order, if 0 <= n < size().
  std::optional<std::string> NthKey(int n) const;
  // A snapshot of every entry, in order (MPI_Info_dup, hints).
  std::vector<Entry> Entries() const;

  // Whether this is the predefined MPI_INFO_ENV (read-only, never freed).
  bool predefined() const { return predefined_; }

  // The environment object behind MPI_INFO_ENV (MPI-4.1 section 11.2.8):
  // command, argv, host, arch, wdir and thread_level, read from this
  // process; maxprocs is added by the bindings once the job size is known.
  static Info* Environment();
  // The same keys for MPI_Info_create_env: command and argv from `argv`
  // when given, else from how the process was started.
  static std::vector<Entry> EnvironmentEntries(int argc, char** argv);

 private:
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;  // guarded by mutex_
  bool predefined_ = false;
};

// The process-wide table of info handles.
HandleTable<Info>& InfoTable();
// The info object a handle names (MPI_INFO_ENV included), or nullptr for
// MPI_INFO_NULL, a freed handle or garbage.
Info* LookupInfo(MPI_Info handle);
// Registers a new info object; MPI_INFO_NULL if the table is full.
MPI_Info NewInfoHandle(std::unique_ptr<Info> info);

}  // namespace minimpi

#endif  // MINIMPI_MPI_OBJECTS_INFO_H_
