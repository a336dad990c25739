// Sessions (MPI-4.1 chapter 11): MPI_Session_init and _finalize, process
// sets, session error handlers. The two constructors that need no parent
// communicator, MPI_Comm_create_from_group and
// MPI_Intercomm_create_from_groups, are in comm_from_group.cc.
//
// A session is one more user of the runtime the world model uses
// (Instance::AddUser): the first of MPI_Init and MPI_Session_init brings it
// up, and it stays up until the process exits, so sessions may begin and
// end any number of times, before, beside and after the world model.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/buffered_send.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/errhandler_util.h"
#include "mpi/bindings/session_util.h"
#include "mpi/coll/algorithms.h"
#include "mpi/coll/basic.h"
#include "mpi/objects/group.h"
#include "mpi/objects/info.h"
#include "mpi/objects/session.h"

using minimpi::Communicator;
using minimpi::Errhandler;
using minimpi::Group;
using minimpi::Info;
using minimpi::Instance;
using minimpi::LibraryState;
using minimpi::Session;

namespace minimpi {

absl::Status AddRuntimeUser(int thread_level) {
  return Instance::AddUser(thread_level, [](Instance& instance) {
    return coll::ConfigureAlgorithms(instance.settings().collective_algorithms);
  });
}

namespace {

// The live sessions, oldest first: errors tied to no object go to the
// newest one's handler while the world model is not initialized.
std::mutex live_sessions_mutex;
std::vector<Session*>& LiveSessions() {
  static auto* sessions = new std::vector<Session*>();
  return *sessions;
}

}  // namespace

Errhandler* AcquireLatestSessionErrhandler(MPI_Session* session) {
  std::lock_guard<std::mutex> lock(live_sessions_mutex);
  if (LiveSessions().empty()) {
    *session = MPI_SESSION_NULL;
    return Errhandler::Fatal();  // predefined: Retain/Release are no-ops
  }
  Session* latest = LiveSessions().back();
  *session = latest->handle;
  return latest->AcquireErrhandler();
}

// Raises `error_class` on `handler`, which a user function receives with
// `session`. Before the runtime ever came up (a failing MPI_Session_init)
// there is no job to abort: a fatal handler prints the line and exits.
int RaiseOnHandler(Errhandler* handler, MPI_Session session, const char* call,
                   int error_class, const std::string& problem) {
  if (Instance::state() == LibraryState::kNotInitialized) {
    if (handler->action() == Errhandler::Action::kReturn) return error_class;
    std::fprintf(stderr, "%s: %s\n", call, problem.c_str());
    std::fflush(stderr);
    std::exit(1);
  }
  // A session handler takes (MPI_Session*, int*, ...), the same shape as a
  // window's, so the window's dispatch serves it.
  return RaiseWindowError(handler, reinterpret_cast<MPI_Win>(session), call,
                          error_class, problem);
}

// An error tied to no session or communicator: MPI_COMM_WORLD's (or
// MPI_COMM_SELF's) handler while the world model is initialized, else the
// newest live session's.
int RaiseUnattached(const char* call, int error_class,
                    const std::string& problem) {
  if (Instance::world_active()) {
    return RaiseError(nullptr, call, error_class, problem);
  }
  MPI_Session session;
  Errhandler* handler = AcquireLatestSessionErrhandler(&session);
  const int result =
      RaiseOnHandler(handler, session, call, error_class, problem);
  handler->Release();
  return result;
}

// The error handler a handle names; predefined ones even before the
// runtime is up (MPI_Session_init's argument).
Errhandler* FindErrhandler(MPI_Errhandler handle) {
  if (IsPredefinedHandle(handle) ||
      Instance::state() == LibraryState::kNotInitialized) {
    if (handle == MPI_ERRORS_ARE_FATAL) return Errhandler::Fatal();
    if (handle == MPI_ERRORS_RETURN) return Errhandler::Return();
    if (handle == MPI_ERRORS_ABORT) return Errhandler::Abort();
    return nullptr;
  }
  return LookupErrhandler(handle);
}

namespace {

const char* ThreadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

// The level an info's "thread_level" value asks for (the constant's name,
// without regard to case), or MPI_THREAD_SINGLE, MPI_Init's level, when it
// names none: a hint an implementation may ignore, as MPI-4.1 11.3.1 says.
int RequestedThreadLevel(const Info* info) {
  if (info == nullptr) return MPI_THREAD_SINGLE;
  const std::optional<std::string> value = info->Get("thread_level");
  if (!value.has_value()) return MPI_THREAD_SINGLE;
  for (int level : {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED,
                    MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE}) {
    if (absl::EqualsIgnoreCase(*value, ThreadLevelName(level))) return level;
  }
  return MPI_THREAD_SINGLE;
}

int RaiseOnSession(Session* session, const char* call, int error_class,
                   const std::string& problem) {
  Errhandler* handler = session->AcquireErrhandler();
  const int result =
      RaiseOnHandler(handler, session->handle, call, error_class, problem);
  handler->Release();
  return result;
}

// The session a handle names; MPI_ERR_SESSION otherwise (never a crash:
// the table checks kind, range and generation).
int CheckSession(const char* call, MPI_Session handle, Session** session) {
  *session = Sessions().Lookup(HandleValue(handle));
  if (*session != nullptr) [[likely]]
    return MPI_SUCCESS;
  return RaiseUnattached(call, MPI_ERR_SESSION,
                         handle == MPI_SESSION_NULL
                             ? "invalid session (MPI_SESSION_NULL)"
                             : "invalid session (finalized, or never a "
                               "session)");
}

// The info argument of a session call: MPI_INFO_NULL or an info object.
int CheckSessionInfo(const char* call, Session* session, MPI_Info handle,
                     Info** info) {
  *info = nullptr;
  if (handle == MPI_INFO_NULL) return MPI_SUCCESS;
  *info = LookupInfo(handle);
  if (*info != nullptr) return MPI_SUCCESS;
  return RaiseOnSession(session, call, MPI_ERR_INFO,
                        "invalid info object (freed or never created)");
}

// The job's process sets; the same in every process, fixed for the job.
const std::vector<ProcessSet>& JobProcessSets() {
  static const std::vector<ProcessSet>* sets = [] {
    runtime::Bootstrap& bootstrap = Instance::Get().bootstrap();
    std::vector<int> node_of_rank(bootstrap.size());
    for (int rank = 0; rank < bootstrap.size(); ++rank) {
      node_of_rank[rank] = bootstrap.node_of(rank);
    }
    std::vector<std::string> node_names(bootstrap.num_nodes());
    for (int rank = bootstrap.size() - 1; rank >= 0; --rank) {
      node_names[node_of_rank[rank]] = bootstrap.node_name(rank);
    }
    return new std::vector<ProcessSet>(
        BuildProcessSets(bootstrap.rank(), node_of_rank, node_names));
  }();
  return *sets;
}

int CheckProcessSetName(const char* call, Session* session,
                        const char* pset_name, const ProcessSet** set) {
  if (pset_name == nullptr) {
    return RaiseOnSession(session, call, MPI_ERR_ARG, "null pset_name");
  }
  *set = FindProcessSet(JobProcessSets(), pset_name);
  if (*set != nullptr) return MPI_SUCCESS;
  return RaiseOnSession(
      session, call, MPI_ERR_ARG,
      absl::StrFormat("no process set named \"%s\" (MPI_Session_get_nth_pset "
                      "lists them)",
                      pset_name));
}

}  // namespace

int RaiseOnSessionHandle(MPI_Session session, const char* call, int error_class,
                         const std::string& problem) {
  Session* s = Sessions().Lookup(HandleValue(session));
  if (s == nullptr) return RaiseUnattached(call, error_class, problem);
  return RaiseOnSession(s, call, error_class, problem);
}

}  // namespace minimpi

using minimpi::RaiseOnSession;

extern "C" {

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler,
                      MPI_Session* session) {
  constexpr const char* kCall = "MPI_Session_init";
  Errhandler* handler = errhandler == MPI_ERRHANDLER_NULL
                            ? Errhandler::Fatal()
                            : minimpi::FindErrhandler(errhandler);
  if (handler == nullptr) {
    return minimpi::RaiseUnattached(
        kCall, MPI_ERR_ARG, "invalid error handler (freed or never created)");
  }
  if (session == nullptr) {
    return minimpi::RaiseOnHandler(handler, MPI_SESSION_NULL, kCall,
                                   MPI_ERR_ARG, "null session pointer");
  }
  *session = MPI_SESSION_NULL;
  const Info* hints = nullptr;
  if (info != MPI_INFO_NULL) {
    hints = minimpi::LookupInfo(info);
    if (hints == nullptr) {
      return minimpi::RaiseOnHandler(
          handler, MPI_SESSION_NULL, kCall, MPI_ERR_INFO,
          "invalid info object (freed or never created)");
    }
  }
  const int level = minimpi::RequestedThreadLevel(hints);
  absl::Status started = minimpi::AddRuntimeUser(level);
  if (!started.ok()) {
    return minimpi::RaiseOnHandler(
        handler, MPI_SESSION_NULL, kCall, MPI_ERR_OTHER,
        absl::StrCat("cannot start minimpi: ", started.message()));
  }
  handler->Retain();  // the session's reference
  auto* created = new Session(level, handler);
  const uintptr_t handle = minimpi::Sessions().Insert(created);
  if (handle == 0) {
    delete created;
    Instance::RemoveUser([](Instance&) {});
    return minimpi::RaiseOnHandler(handler, MPI_SESSION_NULL, kCall,
                                   MPI_ERR_OTHER, "too many sessions exist");
  }
  created->handle = reinterpret_cast<MPI_Session>(handle);
  {
    std::lock_guard<std::mutex> lock(minimpi::live_sessions_mutex);
    minimpi::LiveSessions().push_back(created);
  }
  *session = created->handle;
  return MPI_SUCCESS;
}

// Communicators made from the session's groups are not freed here, as with
// MPICH by default: the program must free them first (MPI-4.1 11.3.1);
// ones it did not free stay usable while another user of the runtime (a
// session, the world model) is live. The last user's finalize synchronizes
// the job (a barrier over the hidden world), as MPICH's does.
int PMPI_Session_finalize(MPI_Session* session) {
  constexpr const char* kCall = "MPI_Session_finalize";
  if (session == nullptr) {
    return minimpi::RaiseUnattached(kCall, MPI_ERR_ARG, "null session pointer");
  }
  Session* s;
  if (int error = minimpi::CheckSession(kCall, *session, &s)) return error;
  {
    std::lock_guard<std::mutex> lock(minimpi::live_sessions_mutex);
    std::vector<Session*>& live = minimpi::LiveSessions();
    live.erase(std::find(live.begin(), live.end(), s));
  }
  minimpi::Sessions().Remove(minimpi::HandleValue(*session));
  // Its buffered sends live on in the communicators that still hold them.
  minimpi::ForgetSessionBufferedSends(*session);
  Instance::RemoveUser([](Instance& instance) {
    minimpi::coll::Barrier(instance.p2p(), *instance.hidden_world());
  });
  delete s;
  *session = MPI_SESSION_NULL;
  return MPI_SUCCESS;
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info,
                               int* npset_names) {
  constexpr const char* kCall = "MPI_Session_get_num_psets";
  Session* s;
  if (int error = minimpi::CheckSession(kCall, session, &s)) return error;
  Info* unused;
  if (int error = minimpi::CheckSessionInfo(kCall, s, info, &unused)) {
    return error;
  }
  if (npset_names == nullptr) {
    return RaiseOnSession(s, kCall, MPI_ERR_ARG, "null npset_names");
  }
  *npset_names = static_cast<int>(minimpi::JobProcessSets().size());
  return MPI_SUCCESS;
}

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n,
                              int* pset_len, char* pset_name) {
  constexpr const char* kCall = "MPI_Session_get_nth_pset";
  Session* s;
  if (int error = minimpi::CheckSession(kCall, session, &s)) return error;
  Info* unused;
  if (int error = minimpi::CheckSessionInfo(kCall, s, info, &unused)) {
    return error;
  }
  const std::vector<minimpi::ProcessSet>& sets = minimpi::JobProcessSets();
  if (n < 0 || n >= static_cast<int>(sets.size())) {
    return RaiseOnSession(
        s, kCall, MPI_ERR_ARG,
        absl::StrFormat("invalid n %d (there are %d process sets)", n,
                        sets.size()));
  }
  if (pset_len == nullptr || *pset_len < 0) {
    return RaiseOnSession(s, kCall, MPI_ERR_ARG,
                          "pset_len must point to a length of 0 or more");
  }
  const std::string& name = sets[n].name;
  // A length of 0 asks for the name's length, its terminating null included.
  if (*pset_len == 0) {
    *pset_len = static_cast<int>(name.size()) + 1;
    return MPI_SUCCESS;
  }
  if (pset_name == nullptr) {
    return RaiseOnSession(s, kCall, MPI_ERR_ARG, "null pset_name");
  }
  const size_t copied =
      std::min(name.size(), static_cast<size_t>(*pset_len - 1));
  std::memcpy(pset_name, name.data(), copied);
  pset_name[copied] = '\0';
  return MPI_SUCCESS;
}

int PMPI_Session_get_pset_info(MPI_Session session, const char* pset_name,
                               MPI_Info* info) {
  constexpr const char* kCall = "MPI_Session_get_pset_info";
  Session* s;
  if (int error = minimpi::CheckSession(kCall, session, &s)) return error;
  const minimpi::ProcessSet* set;
  if (int error = minimpi::CheckProcessSetName(kCall, s, pset_name, &set)) {
    return error;
  }
  if (info == nullptr) {
    return RaiseOnSession(s, kCall, MPI_ERR_ARG, "null info pointer");
  }
  auto result = std::make_unique<Info>();
  result->Set("mpi_size", std::to_string(set->world_ranks.size()));
  *info = minimpi::NewInfoHandle(std::move(result));
  if (*info == MPI_INFO_NULL) {
    return RaiseOnSession(s, kCall, MPI_ERR_OTHER, "too many info objects");
  }
  return MPI_SUCCESS;
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
  constexpr const char* kCall = "MPI_Session_get_info";
  Session* s;
  if (int error = minimpi::CheckSession(kCall, session, &s)) return error;
  if (info_used == nullptr) {
    return RaiseOnSession(s, kCall, MPI_ERR_ARG, "null info_used pointer");
  }
  auto result = std::make_unique<Info>();
  result->Set("thread_level", minimpi::ThreadLevelName(s->thread_level()));
  *info_used = minimpi::NewInfoHandle(std::move(result));
  if (*info_used == MPI_INFO_NULL) {
    return RaiseOnSession(s, kCall, MPI_ERR_OTHER, "too many info objects");
  }
  return MPI_SUCCESS;
}

int PMPI_Group_from_session_pset(MPI_Session session, const char* pset_name,
                                 MPI_Group* newgroup) {
  constexpr const char* kCall = "MPI_Group_from_session_pset";
  Session* s;
  if (int error = minimpi::CheckSession(kCall, session, &s)) return error;
  const minimpi::ProcessSet* set;
  if (int error = minimpi::CheckProcessSetName(kCall, s, pset_name, &set)) {
    return error;
  }
  if (newgroup == nullptr) {
    return RaiseOnSession(s, kCall, MPI_ERR_ARG, "null newgroup pointer");
  }
  *newgroup = minimpi::NewGroupHandle(set->world_ranks, s->handle);
  if (*newgroup == MPI_GROUP_NULL) {
    return RaiseOnSession(s, kCall, MPI_ERR_OTHER, "too many groups exist");
  }
  return MPI_SUCCESS;
}

int PMPI_Session_create_errhandler(
    MPI_Session_errhandler_function* session_errhandler_fn,
    MPI_Errhandler* errhandler) {
  constexpr const char* kCall = "MPI_Session_create_errhandler";
  MINIMPI_REQUIRE_INIT(kCall);
  if (session_errhandler_fn == nullptr) {
    return minimpi::RaiseUnattached(kCall, MPI_ERR_ARG,
                                    "null handler function");
  }
  if (errhandler == nullptr) {
    return minimpi::RaiseUnattached(kCall, MPI_ERR_ARG, "null output argument");
  }
  // Stored as the communicator kind; a session's error calls it with the
  // session (RaiseOnHandler).
  Errhandler* handler = Errhandler::NewUser(
      reinterpret_cast<MPI_Comm_errhandler_function*>(session_errhandler_fn));
  const uintptr_t handle = Instance::Get().errhandlers().Insert(handler);
  if (handle == 0) {
    handler->Release();
    return minimpi::RaiseUnattached(kCall, MPI_ERR_OTHER,
                                    "too many error handlers exist");
  }
  handler->set_handle(reinterpret_cast<MPI_Errhandler>(handle));
  *errhandler = handler->handle();
  return MPI_SUCCESS;
}

int PMPI_Session_set_errhandler(MPI_Session session,
                                MPI_Errhandler errhandler) {
  constexpr const char* kCall = "MPI_Session_set_errhandler";
  Session* s;
  if (int error = minimpi::CheckSession(kCall, session, &s)) return error;
  Errhandler* handler = minimpi::FindErrhandler(errhandler);
  if (handler == nullptr) {
    return RaiseOnSession(s, kCall, MPI_ERR_ARG,
                          "invalid error handler (freed or never created)");
  }
  handler->Retain();  // the session's reference
  s->SetErrhandler(handler);
  return MPI_SUCCESS;
}

int PMPI_Session_get_errhandler(MPI_Session session,
                                MPI_Errhandler* errhandler) {
  constexpr const char* kCall = "MPI_Session_get_errhandler";
  Session* s;
  if (int error = minimpi::CheckSession(kCall, session, &s)) return error;
  if (errhandler == nullptr) {
    return RaiseOnSession(s, kCall, MPI_ERR_ARG, "null output argument");
  }
  // The returned handle holds a reference of its own, which the program
  // gives back with MPI_Errhandler_free.
  *errhandler = s->AcquireErrhandler()->handle();
  return MPI_SUCCESS;
}

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode) {
  constexpr const char* kCall = "MPI_Session_call_errhandler";
  Session* s;
  if (int error = minimpi::CheckSession(kCall, session, &s)) return error;
  // The handler gets `errorcode` itself, as MPI_Win_call_errhandler's does;
  // a user handler that returns, or MPI_ERRORS_RETURN, makes the call
  // succeed.
  std::string text;
  if (!minimpi::ErrorStringOf(errorcode, &text)) {
    text = absl::StrFormat("error code %d", errorcode);
  }
  Errhandler* handler = s->AcquireErrhandler();
  minimpi::RaiseWindowErrorCode(handler, reinterpret_cast<MPI_Win>(s->handle),
                                kCall, errorcode,
                                absl::StrFormat("user-raised error: %s", text));
  handler->Release();
  return MPI_SUCCESS;
}

}  // extern "C"

MINIMPI_EXPORT(Session_init)
MINIMPI_EXPORT(Session_finalize)
MINIMPI_EXPORT(Session_get_num_psets)
MINIMPI_EXPORT(Session_get_nth_pset)
MINIMPI_EXPORT(Session_get_pset_info)
MINIMPI_EXPORT(Session_get_info)
MINIMPI_EXPORT(Group_from_session_pset)
MINIMPI_EXPORT(Session_create_errhandler)
MINIMPI_EXPORT(Session_set_errhandler)
MINIMPI_EXPORT(Session_get_errhandler)
MINIMPI_EXPORT(Session_call_errhandler)
