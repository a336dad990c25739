// Sessions (MPI-4.1 chapter 11): the object behind an MPI_Session handle,
// and the process sets a session names.
//
// A session is a small local object: the thread level it was given, its
// error handler, and whatever per-session state other parts attach to it
// (the buffered-send buffer of MPI_Session_attach_buffer goes here). The
// runtime under it (PMIx, transports, VCIs) is the Instance's, shared with
// the world model and every other session (Instance::AddUser).
//
// Process sets are the same list in every process of the job, in this
// order: "mpi://WORLD", "mpi://SELF", then one per node,
// "mpix://node/<node name>", where the node name is the launcher's
// (MPI_Get_processor_name's, with "#k" for the k-th pretend node of
// MINIMPI_NODE_SPLIT). Names are compared without regard to case.
//
// Owned by: mpi/. Called by: the session bindings.
#ifndef MINIMPI_MPI_OBJECTS_SESSION_H_
#define MINIMPI_MPI_OBJECTS_SESSION_H_

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "mpi/objects/errhandler.h"
#include "mpi/objects/handle_table.h"
#include "mpi/mpi.h"

namespace minimpi {

class Session {
 public:
  // Takes over the caller's reference to `errhandler`.
  Session(int thread_level, Errhandler* errhandler)
      : thread_level_(thread_level), errhandler_(errhandler) {}
  ~Session() { errhandler_->Release(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  int thread_level() const { return thread_level_; }

  // The error handler in force, with a reference the caller must release.
  Errhandler* AcquireErrhandler();
  // Replaces the error handler; takes over the caller's reference to it.
  void SetErrhandler(Errhandler* handler);

  // The handle that names this session (what the handle table issued).
  MPI_Session handle = MPI_SESSION_NULL;

 private:
  const int thread_level_;
  std::mutex errhandler_mutex_;
  Errhandler* errhandler_;  // guarded by errhandler_mutex_
};

// The table of live sessions' handles. Process-wide and never destroyed
// before exit: a session handle may be checked before the runtime is up and
// after it ends (a stale handle is MPI_ERR_SESSION, never a crash).
HandleTable<Session>& Sessions();

struct ProcessSet {
  std::string name;
  std::vector<int> world_ranks;  // in increasing order
};

// The job's process sets (see the file comment). `node_of_rank[r]` is the
// node of world rank r; `node_names[n]` the name of node n.
std::vector<ProcessSet> BuildProcessSets(
    int my_rank, const std::vector<int>& node_of_rank,
    const std::vector<std::string>& node_names);

// The set named `name` (without regard to case), or nullptr.
const ProcessSet* FindProcessSet(const std::vector<ProcessSet>& sets,
                                 std::string_view name);

}  // namespace minimpi

#endif  // MINIMPI_MPI_OBJECTS_SESSION_H_
