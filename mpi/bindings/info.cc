// Info objects: MPI_Info_* and MPI_INFO_ENV. The store is mpi/objects/info.h.
//
// These calls are valid before MPI_Init and after MPI_Finalize. An error
// then has no communicator to be raised on; it goes to MPI's initial
// handler, MPI_ERRORS_ARE_FATAL: one line naming the call and the problem,
// and the process exits.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "mpi/bindings/comm_util.h"

using minimpi::Info;
using minimpi::Instance;
using minimpi::LibraryState;

namespace {

int RaiseInfoError(const char* call, int error_class,
                   const std::string& problem) {
  if (Instance::state() == LibraryState::kInitialized) {
    return minimpi::RaiseError(nullptr, call, error_class, problem);
  }
  std::fprintf(stderr, "%s(MPI %s): %s\n", call,
               Instance::state() == LibraryState::kFinalized
                   ? "finalized"
                   : "not initialized",
               problem.c_str());
  std::fflush(stderr);
  std::exit(1);
}

// The info object `handle` names; MPI_ERR_INFO otherwise. MPI_INFO_ENV
// learns the job size once there is one.
int CheckInfoHandle(const char* call, MPI_Info handle, Info** info) {
  *info = minimpi::LookupInfo(handle);
  if (*info == nullptr) {
    return RaiseInfoError(call, MPI_ERR_INFO,
                          handle == MPI_INFO_NULL
                              ? "invalid info object (MPI_INFO_NULL)"
                              : "invalid info object (freed or never "
                                "created)");
  }
  if (handle == MPI_INFO_ENV &&
      Instance::state() == LibraryState::kInitialized) {
    // What only an initialized MPI knows: the job size, and the node's name
    // as the launcher gave it (MPI_Get_processor_name's), which may differ
    // from the OS's hostname read before MPI_Init.
    if (!(*info)->Get("maxprocs").has_value()) {
      (*info)->Set("maxprocs", std::to_string(Instance::Get().world()->size));
    }
    const std::string& host = Instance::Get().bootstrap().hostname();
    if ((*info)->Get("host") != host) (*info)->Set("host", host);
  }
  return MPI_SUCCESS;
}

int CheckWritable(const char* call, const Info* info) {
  if (!info->predefined()) return MPI_SUCCESS;
  return RaiseInfoError(call, MPI_ERR_INFO,
                        "MPI_INFO_ENV cannot be changed or freed");
}

int CheckKey(const char* call, const char* key) {
  std::string problem;
  if (int error_class = Info::CheckKey(key, &problem)) {
    return RaiseInfoError(call, error_class, problem);
  }
  return MPI_SUCCESS;
}

int NullPointer(const char* call, const char* what) {
  return RaiseInfoError(call, MPI_ERR_ARG,
                        absl::StrFormat("null %s pointer", what));
}

int NewInfo(const char* call, std::vector<Info::Entry> entries,
            MPI_Info* result) {
  *result = minimpi::NewInfoHandle(std::make_unique<Info>(std::move(entries)));
  if (*result == MPI_INFO_NULL) {
    return RaiseInfoError(call, MPI_ERR_NO_MEM,
                          "no room for another info object");
  }
  return MPI_SUCCESS;
}

// Copies up to `room` characters of `value` and a terminator.
void CopyTruncated(const std::string& value, size_t room, char* out) {
  const size_t copied = std::min(value.size(), room);
  std::memcpy(out, value.data(), copied);
  out[copied] = '\0';
}

}  // namespace

extern "C" {

int PMPI_Info_create(MPI_Info* info) {
  if (info == nullptr) return NullPointer("MPI_Info_create", "info");
  return NewInfo("MPI_Info_create", {}, info);
}

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  constexpr const char* kCall = "MPI_Info_set";
  Info* object;
  if (int error = CheckInfoHandle(kCall, info, &object)) return error;
  if (int error = CheckWritable(kCall, object)) return error;
  if (int error = CheckKey(kCall, key)) return error;
  std::string problem;
  if (int error_class = Info::CheckValue(value, &problem)) {
    return RaiseInfoError(kCall, error_class, problem);
  }
  object->Set(key, value);
  return MPI_SUCCESS;
}

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value,
                  int* flag) {
  constexpr const char* kCall = "MPI_Info_get";
  Info* object;
  if (int error = CheckInfoHandle(kCall, info, &object)) return error;
  if (int error = CheckKey(kCall, key)) return error;
  if (valuelen < 0) {
    return RaiseInfoError(kCall, MPI_ERR_ARG,
                          absl::StrFormat("invalid valuelen %d", valuelen));
  }
  if (flag == nullptr) return NullPointer(kCall, "flag");
  const std::optional<std::string> found = object->Get(key);
  *flag = found.has_value();
  if (found) {
    if (value == nullptr) return NullPointer(kCall, "value");
    // valuelen excludes the terminator (MPI-4.1 10): the buffer holds
    // valuelen + 1 characters; a longer value is truncated.
    CopyTruncated(*found, static_cast<size_t>(valuelen), value);
  }
  return MPI_SUCCESS;
}

int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen,
                         char* value, int* flag) {
  constexpr const char* kCall = "MPI_Info_get_string";
  Info* object;
  if (int error = CheckInfoHandle(kCall, info, &object)) return error;
  if (int error = CheckKey(kCall, key)) return error;
  if (buflen == nullptr) return NullPointer(kCall, "buflen");
  if (flag == nullptr) return NullPointer(kCall, "flag");
  if (*buflen < 0) {
    return RaiseInfoError(kCall, MPI_ERR_ARG,
                          absl::StrFormat("invalid buflen %d", *buflen));
  }
  const std::optional<std::string> found = object->Get(key);
  *flag = found.has_value();
  if (!found) return MPI_SUCCESS;
  // buflen counts the terminator: a buffer of buflen holds buflen - 1
  // characters; on return it says how much the whole value needs.
  if (*buflen > 0) {
    if (value == nullptr) return NullPointer(kCall, "value");
    CopyTruncated(*found, static_cast<size_t>(*buflen - 1), value);
  }
  *buflen = static_cast<int>(found->size()) + 1;
  return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen,
                           int* flag) {
  constexpr const char* kCall = "MPI_Info_get_valuelen";
  Info* object;
  if (int error = CheckInfoHandle(kCall, info, &object)) return error;
  if (int error = CheckKey(kCall, key)) return error;
  if (valuelen == nullptr) return NullPointer(kCall, "valuelen");
  if (flag == nullptr) return NullPointer(kCall, "flag");
  const std::optional<std::string> found = object->Get(key);
  *flag = found.has_value();
  if (found) *valuelen = static_cast<int>(found->size());
  return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char* key) {
  constexpr const char* kCall = "MPI_Info_delete";
  Info* object;
  if (int error = CheckInfoHandle(kCall, info, &object)) return error;
  if (int error = CheckWritable(kCall, object)) return error;
  if (int error = CheckKey(kCall, key)) return error;
  if (!object->Delete(key)) {
    return RaiseInfoError(
        kCall, MPI_ERR_INFO_NOKEY,
        absl::StrFormat("no key \"%s\" in the info object", key));
  }
  return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  constexpr const char* kCall = "MPI_Info_dup";
  Info* object;
  if (int error = CheckInfoHandle(kCall, info, &object)) return error;
  if (newinfo == nullptr) return NullPointer(kCall, "newinfo");
  return NewInfo(kCall, object->Entries(), newinfo);
}

int PMPI_Info_free(MPI_Info* info) {
  constexpr const char* kCall = "MPI_Info_free";
  if (info == nullptr) return NullPointer(kCall, "info");
  Info* object;
  if (int error = CheckInfoHandle(kCall, *info, &object)) return error;
  if (int error = CheckWritable(kCall, object)) return error;
  delete minimpi::InfoTable().Remove(minimpi::HandleValue(*info));
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  constexpr const char* kCall = "MPI_Info_get_nkeys";
  Info* object;
  if (int error = CheckInfoHandle(kCall, info, &object)) return error;
  if (nkeys == nullptr) return NullPointer(kCall, "nkeys");
  *nkeys = object->size();
  return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  constexpr const char* kCall = "MPI_Info_get_nthkey";
  Info* object;
  if (int error = CheckInfoHandle(kCall, info, &object)) return error;
  if (key == nullptr) return NullPointer(kCall, "key");
  const std::optional<std::string> found = object->NthKey(n);
  if (!found) {
    return RaiseInfoError(kCall, MPI_ERR_ARG,
                          absl::StrFormat("invalid key index %d (the object "
                                          "has %d keys)",
                                          n, object->size()));
  }
  CopyTruncated(*found, MPI_MAX_INFO_KEY - 1, key);
  return MPI_SUCCESS;
}

int PMPI_Info_create_env(int argc, char* argv[], MPI_Info* info) {
  constexpr const char* kCall = "MPI_Info_create_env";
  if (info == nullptr) return NullPointer(kCall, "info");
  // No maxprocs: the job size is known only once MPI is initialized, and
  // this call must give the same answer before MPI_Init and after (MPICH's
  // infocreateenv checks that). MPI_INFO_ENV, used after MPI_Init, has it.
  return NewInfo(kCall, Info::EnvironmentEntries(argc, argv), info);
}

}  // extern "C"

MINIMPI_EXPORT(Info_create)
MINIMPI_EXPORT(Info_set)
MINIMPI_EXPORT(Info_get)
MINIMPI_EXPORT(Info_get_string)
MINIMPI_EXPORT(Info_get_valuelen)
MINIMPI_EXPORT(Info_delete)
MINIMPI_EXPORT(Info_dup)
MINIMPI_EXPORT(Info_free)
MINIMPI_EXPORT(Info_get_nkeys)
MINIMPI_EXPORT(Info_get_nthkey)
MINIMPI_EXPORT(Info_create_env)
