// MPI_Init and friends: the environment, errors, error handlers, datatypes.
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/buffered_send.h"  // compat
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/dynamic_util.h"
#include "mpi/bindings/session_util.h"
#include "mpi/coll/algorithms.h"
#include "mpi/coll/basic.h"

using minimpi::Communicator;
using minimpi::Instance;
using minimpi::LibraryState;
using minimpi::RaiseError;

namespace {

// The thread level MPI_Init_thread promised (MPI_Query_thread reports it).
// The runtime is fully thread-safe whatever the level; programs still get
// the level they asked for, as from MPICH and Open MPI, since some take a
// higher one as a hint to start threads of their own.
std::atomic<int> provided_thread_level{MPI_THREAD_SINGLE};

// The level granted for `required`: the level itself, or for a value that
// names none, the highest level not above it (MPI_THREAD_SINGLE below all
// of them, MPI_THREAD_MULTIPLE above), as MPICH clamps a request above its
// highest level.
int GrantedThreadLevel(int required) {
  if (required >= MPI_THREAD_MULTIPLE) return MPI_THREAD_MULTIPLE;
  if (required >= MPI_THREAD_SERIALIZED) return MPI_THREAD_SERIALIZED;
  if (required >= MPI_THREAD_FUNNELED) return MPI_THREAD_FUNNELED;
  return MPI_THREAD_SINGLE;
}

int InitializeOrDie(const char* call, int thread_level) {
  if (Instance::world_state() != LibraryState::kNotInitialized) {
    // Calling MPI_Init twice, or after MPI_Finalize, is erroneous; there may
    // be no handler to raise on, so say it and stop. (Sessions do not count:
    // the world model starts beside them.)
    std::fprintf(stderr, "%s: MPI is already %s\n", call,
                 Instance::world_state() == LibraryState::kInitialized
                     ? "initialized"
                     : "finalized");
    std::exit(1);
  }
  absl::Status status = minimpi::AddRuntimeUser(thread_level);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: cannot start minimpi: %s\n", call,
                 std::string(status.message()).c_str());
    std::exit(1);
  }
  Instance::set_world_state(LibraryState::kInitialized);
  // A spawned job meets its parents before MPI_Init returns.
  minimpi::ConnectToParents();
  return MPI_SUCCESS;
}

void CopyString(const std::string& from, char* to, int capacity, int* length) {
  size_t n = std::min(from.size(), static_cast<size_t>(capacity - 1));
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
  *length = static_cast<int>(n);
}

}  // namespace

extern "C" {

int PMPI_Init(int* /*argc*/, char*** /*argv*/) {
  // MPI_Init is MPI_Init_thread(MPI_THREAD_SINGLE), as in MPICH and Open MPI.
  provided_thread_level.store(MPI_THREAD_SINGLE, std::memory_order_relaxed);
  return InitializeOrDie("MPI_Init", MPI_THREAD_SINGLE);
}

int PMPI_Init_thread(int* /*argc*/, char*** /*argv*/, int required,
                     int* provided) {
  const int level = GrantedThreadLevel(required);
  int result = InitializeOrDie("MPI_Init_thread", level);
  provided_thread_level.store(level, std::memory_order_relaxed);
  if (provided != nullptr) *provided = level;
  return result;
}

int PMPI_Finalize(void) {
  MINIMPI_REQUIRE_INIT("MPI_Finalize");
  if (!Instance::world_active()) {
    // Only sessions are live (the error goes to the newest one's handler):
    // there is no world model to end.
    return RaiseError(nullptr, "MPI_Finalize", MPI_ERR_OTHER,
                      Instance::world_state() == LibraryState::kFinalized
                          ? "MPI_Finalize was called already"
                          : "MPI_Init was not called (only sessions are "
                            "initialized; end them with "
                            "MPI_Session_finalize)");
  }
  Instance& instance = Instance::Get();
  // First of all, MPI_COMM_SELF's attributes are deleted, most recently set
  // first, as if it were freed (MPI-4.1 11.2.4): programs use that as a
  // finalize hook, so MPI is still fully usable in the callbacks. Then
  // MPI_COMM_WORLD's. A failing callback is reported, and MPI still ends.
  int result = MPI_SUCCESS;
  for (Communicator* comm : {instance.self(), instance.world()}) {
    const minimpi::AttributeFailure failure =
        comm->attributes.DeleteAll(minimpi::HandleValue(comm->handle));
    if (!failure.ok() && result == MPI_SUCCESS) {
      result = minimpi::RaiseAttributeFailure("MPI_Finalize", comm, failure,
                                              "delete");
    }
  }
  // compat: buffered messages leave before the job ends, as
  // MPI_Buffer_detach would wait for them.
  minimpi::FlushBufferedSends();
  // No rank leaves while another may still read its memory or send to it.
  minimpi::coll::Barrier(instance.p2p(), *instance.world());
  Instance::set_world_state(LibraryState::kFinalized);
  // The barrier above is the last user's synchronization when no session
  // is live.
  Instance::RemoveUser([](Instance&) {});
  return result;
}

// Both report the world model only (MPI-4.1 11.2.1): sessions begun or
// ended do not change them.
int PMPI_Initialized(int* flag) {
  *flag = Instance::world_state() != LibraryState::kNotInitialized;
  return MPI_SUCCESS;
}

int PMPI_Finalized(int* flag) {
  *flag = Instance::world_state() == LibraryState::kFinalized;
  return MPI_SUCCESS;
}

int PMPI_Query_thread(int* provided) {
  MINIMPI_REQUIRE_INIT("MPI_Query_thread");
  *provided = provided_thread_level.load(std::memory_order_relaxed);
  return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int* flag) {
  MINIMPI_REQUIRE_INIT("MPI_Is_thread_main");
  *flag = std::this_thread::get_id() == Instance::Get().main_thread();
  return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode) {
  if (Instance::state() != LibraryState::kInitialized) std::exit(errorcode);
  Instance& instance = Instance::Get();
  (void)comm;  // the whole job ends, whichever communicator was named
  std::string line = absl::StrFormat("MPI_Abort(rank %d): errorcode %d",
                                     instance.world_rank(), errorcode);
  instance.bootstrap().Abort(errorcode, line);
  std::abort();  // Abort does not return; this keeps compilers sure of it
}

int PMPI_Get_version(int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int PMPI_Get_library_version(char* version, int* resultlen) {
  CopyString(
      absl::StrCat("minimpi ", MINIMPI_VERSION, " (MPI ", MPI_VERSION, ".",
                   MPI_SUBVERSION,
                   " subset; PMIx bootstrap; shm inside a node with "
                   "single-copy rendezvous, ib (verbs) or tcp between nodes; "
                   "MPI_THREAD_MULTIPLE)"),
      version, MPI_MAX_LIBRARY_VERSION_STRING, resultlen);
  return MPI_SUCCESS;
}

int PMPI_Get_processor_name(char* name, int* resultlen) {
  // The node's name as the launcher gave it (and as MPI_COMM_TYPE_SHARED
  // groups ranks), so names and shared-memory splits always agree; before
  // MPI_Init there is only the OS's name.
  if (Instance::state() == LibraryState::kInitialized) {
    CopyString(Instance::Get().bootstrap().hostname(), name,
               MPI_MAX_PROCESSOR_NAME, resultlen);
    return MPI_SUCCESS;
  }
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::strcpy(host, "unknown");
  CopyString(host, name, MPI_MAX_PROCESSOR_NAME, resultlen);
  return MPI_SUCCESS;
}

double PMPI_Wtime(void) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * now.tv_nsec;
}

double PMPI_Wtick(void) {
  timespec resolution;
  clock_getres(CLOCK_MONOTONIC, &resolution);
  return static_cast<double>(resolution.tv_sec) + 1e-9 * resolution.tv_nsec;
}

// MPI_Pcontrol is a hook for profiling libraries that intercept MPI_*
// (they define MPI_Pcontrol themselves); the library itself has no
// profiling to turn on or off, so the call does nothing, at any time.
int PMPI_Pcontrol(const int /*level*/, ...) { return MPI_SUCCESS; }

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  *flag = status->MPI_internal[2] != 0;
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Init)
MINIMPI_EXPORT(Init_thread)
MINIMPI_EXPORT(Finalize)
MINIMPI_EXPORT(Initialized)
MINIMPI_EXPORT(Finalized)
MINIMPI_EXPORT(Query_thread)
MINIMPI_EXPORT(Is_thread_main)
MINIMPI_EXPORT(Pcontrol)
MINIMPI_EXPORT(Abort)
MINIMPI_EXPORT(Get_version)
MINIMPI_EXPORT(Get_library_version)
MINIMPI_EXPORT(Get_processor_name)
MINIMPI_EXPORT(Wtime)
MINIMPI_EXPORT(Wtick)
MINIMPI_EXPORT(Test_cancelled)
