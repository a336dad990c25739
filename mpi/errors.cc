#include "mpi/errors.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "mpi/instance.h"

namespace minimpi {

const char* ErrorClassDescription(int error_class) {
  switch (error_class) {
    case MPI_SUCCESS:
      return "MPI_SUCCESS: no error";
    case MPI_ERR_BUFFER:
      return "MPI_ERR_BUFFER: invalid buffer pointer";
    case MPI_ERR_COUNT:
      return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE:
      return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG:
      return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM:
      return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK:
      return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_REQUEST:
      return "MPI_ERR_REQUEST: invalid request";
    case MPI_ERR_ROOT:
      return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP:
      return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP:
      return "MPI_ERR_OP: invalid operation";
    case MPI_ERR_TOPOLOGY:
      return "MPI_ERR_TOPOLOGY: invalid topology";
    case MPI_ERR_DIMS:
      return "MPI_ERR_DIMS: invalid dimension argument";
    case MPI_ERR_ARG:
      return "MPI_ERR_ARG: invalid argument";
    case MPI_ERR_UNKNOWN:
      return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE:
      return "MPI_ERR_TRUNCATE: message truncated";
    case MPI_ERR_OTHER:
      return "MPI_ERR_OTHER: other error";
    case MPI_ERR_INTERN:
      return "MPI_ERR_INTERN: internal error";
    case MPI_ERR_PENDING:
      return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_IN_STATUS:
      return "MPI_ERR_IN_STATUS: error code in status";
    case MPI_ERR_ACCESS:
      return "MPI_ERR_ACCESS: permission denied";
    case MPI_ERR_AMODE:
      return "MPI_ERR_AMODE: invalid file access mode";
    case MPI_ERR_ASSERT:
      return "MPI_ERR_ASSERT: invalid assert argument";
    case MPI_ERR_BAD_FILE:
      return "MPI_ERR_BAD_FILE: invalid file name";
    case MPI_ERR_BASE:
      return "MPI_ERR_BASE: invalid base";
    case MPI_ERR_CONVERSION:
      return "MPI_ERR_CONVERSION: conversion error";
    case MPI_ERR_DISP:
      return "MPI_ERR_DISP: invalid displacement";
    case MPI_ERR_DUP_DATAREP:
      return "MPI_ERR_DUP_DATAREP: data representation already defined";
    case MPI_ERR_FILE_EXISTS:
      return "MPI_ERR_FILE_EXISTS: file exists";
    case MPI_ERR_FILE_IN_USE:
      return "MPI_ERR_FILE_IN_USE: file in use";
    case MPI_ERR_FILE:
      return "MPI_ERR_FILE: invalid file handle";
    case MPI_ERR_INFO_KEY:
      return "MPI_ERR_INFO_KEY: invalid info key";
    case MPI_ERR_INFO_NOKEY:
      return "MPI_ERR_INFO_NOKEY: info key not found";
    case MPI_ERR_INFO_VALUE:
      return "MPI_ERR_INFO_VALUE: invalid info value";
    case MPI_ERR_INFO:
      return "MPI_ERR_INFO: invalid info object";
    case MPI_ERR_IO:
      return "MPI_ERR_IO: I/O error";
    case MPI_ERR_KEYVAL:
      return "MPI_ERR_KEYVAL: invalid attribute key";
    case MPI_ERR_LOCKTYPE:
      return "MPI_ERR_LOCKTYPE: invalid lock type";
    case MPI_ERR_NAME:
      return "MPI_ERR_NAME: invalid service name";
    case MPI_ERR_NO_MEM:
      return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_NOT_SAME:
      return "MPI_ERR_NOT_SAME: arguments not identical";
    case MPI_ERR_NO_SPACE:
      return "MPI_ERR_NO_SPACE: not enough space";
    case MPI_ERR_NO_SUCH_FILE:
      return "MPI_ERR_NO_SUCH_FILE: no such file";
    case MPI_ERR_PORT:
      return "MPI_ERR_PORT: invalid port name";
    case MPI_ERR_PROC_ABORTED:
      return "MPI_ERR_PROC_ABORTED: process aborted";
    case MPI_ERR_QUOTA:
      return "MPI_ERR_QUOTA: quota exceeded";
    case MPI_ERR_READ_ONLY:
      return "MPI_ERR_READ_ONLY: read-only file";
    case MPI_ERR_RMA_ATTACH:
      return "MPI_ERR_RMA_ATTACH: cannot attach memory";
    case MPI_ERR_RMA_CONFLICT:
      return "MPI_ERR_RMA_CONFLICT: conflicting access";
    case MPI_ERR_RMA_RANGE:
      return "MPI_ERR_RMA_RANGE: target out of range";
    case MPI_ERR_RMA_SHARED:
      return "MPI_ERR_RMA_SHARED: memory not shareable";
    case MPI_ERR_RMA_SYNC:
      return "MPI_ERR_RMA_SYNC: wrong synchronization";
    case MPI_ERR_RMA_FLAVOR:
      return "MPI_ERR_RMA_FLAVOR: wrong window flavor";
    case MPI_ERR_SERVICE:
      return "MPI_ERR_SERVICE: invalid service";
    case MPI_ERR_SESSION:
      return "MPI_ERR_SESSION: invalid session";
    case MPI_ERR_SIZE:
      return "MPI_ERR_SIZE: invalid size";
    case MPI_ERR_SPAWN:
      return "MPI_ERR_SPAWN: spawn failed";
    case MPI_ERR_UNSUPPORTED_DATAREP:
      return "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation";
    case MPI_ERR_UNSUPPORTED_OPERATION:
      return "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation";
    case MPI_ERR_VALUE_TOO_LARGE:
      return "MPI_ERR_VALUE_TOO_LARGE: value too large";
    case MPI_ERR_WIN:
      return "MPI_ERR_WIN: invalid window";
    case MPI_ERR_ERRHANDLER:
      return "MPI_ERR_ERRHANDLER: invalid error handler";
    case MPI_ERR_LASTCODE:
      return "MPI_ERR_LASTCODE: last error code";
    default:
      return nullptr;
  }
}

int RaiseError(Communicator* comm, const char* call, int error_class,
               const std::string& problem) {
  Instance& instance = Instance::Get();
  if (comm == nullptr) comm = instance.self();
  MPI_Errhandler handler = comm->errhandler.load(std::memory_order_acquire);
  if (handler == MPI_ERRORS_RETURN) return error_class;
  std::string line =
      absl::StrCat(call, "(rank ", instance.world_rank(), "): ", problem);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  instance.bootstrap().Abort(error_class, line);
  std::abort();  // Abort does not return; this keeps compilers sure of it
}

int RaiseNotInitialized(const char* call) {
  const bool finalized = Instance::state() == LibraryState::kFinalized;
  std::fprintf(stderr, "%s: called %s\n", call,
               finalized ? "after MPI_Finalize" : "before MPI_Init");
  std::fflush(stderr);
  std::exit(1);
}

}  // namespace minimpi
