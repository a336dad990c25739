// Reduction operations: MPI_Op_create, MPI_Op_free, MPI_Op_commutative and
// MPI_Reduce_local. None of them names a communicator, so errors go to
// MPI_COMM_SELF's error handler.
#include <vector>

#include "absl/strings/str_cat.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/object_handles.h"
#include "mpi/datatype/pack.h"
#include "mpi/objects/op.h"

using minimpi::LookupOp;
using minimpi::Op;
using minimpi::RaiseError;

namespace {

int InvalidOpError(const char* call, MPI_Op handle) {
  return RaiseError(nullptr, call, MPI_ERR_OP,
                    handle == MPI_OP_NULL ? "invalid operation (MPI_OP_NULL)"
                                          : "invalid operation");
}

// MPI_Op_create and MPI_Op_create_c: FunctionType is the user function's
// (an int or an MPI_Count length).
template <typename FunctionType>
int CreateOp(const char* call, FunctionType* user_fn, int commute, MPI_Op* op) {
  MINIMPI_REQUIRE_INIT(call);
  if (user_fn == nullptr) {
    return RaiseError(nullptr, call, MPI_ERR_ARG, "null user function");
  }
  if (op == nullptr) {
    return RaiseError(nullptr, call, MPI_ERR_ARG,
                      "null pointer for the new operation");
  }
  *op = minimpi::RegisterUserOp(minimpi::NewUserOp(user_fn, commute != 0));
  return MPI_SUCCESS;
}

// MPI_Reduce_local and MPI_Reduce_local_c.
int ReduceLocal(const char* call, const void* inbuf, void* inoutbuf,
                MPI_Count count, MPI_Datatype datatype, MPI_Op op) {
  MINIMPI_REQUIRE_INIT(call);
  if (LookupOp(op) == nullptr) return InvalidOpError(call, op);
  const minimpi::Datatype* type;
  if (int error = minimpi::CheckBuffer(call, nullptr, inoutbuf, count, datatype,
                                       &type)) {
    return error;
  }
  if (int error =
          minimpi::CheckBuffer(call, nullptr, inbuf, count, datatype, &type)) {
    return error;
  }
  // There is no "other" buffer for MPI_IN_PLACE to stand for here.
  if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE) {
    return RaiseError(nullptr, call, MPI_ERR_BUFFER,
                      "MPI_IN_PLACE is not allowed");
  }
  const Op* reduction;
  if (int error = minimpi::CheckOp(call, nullptr, op, datatype, &reduction)) {
    return error;
  }
  if (count == 0) return MPI_SUCCESS;
  if (!reduction->predefined() || type->predefined()) {
    reduction->Apply(inbuf, inoutbuf, count, datatype);
    return MPI_SUCCESS;
  }
  // A predefined operation on a derived type works on its base items: in
  // place when the memory is an array of them, else through copies.
  const minimpi::Datatype& base =
      *minimpi::Datatype::FindPredefined(type->layout().reduction_base());
  const int64_t items = count * type->layout().reduction_base_count();
  if (type->dense() && base.dense()) {
    reduction->Apply(inbuf, inoutbuf, items, base.handle());
    return MPI_SUCCESS;
  }
  const int64_t bytes = count * type->size();
  std::vector<std::byte> in(items * base.extent()),
      inout(items * base.extent());
  namespace datatype = minimpi::datatype;
  datatype::TypedCopy(inbuf, count, &type->layout(), in.data(), items,
                      &base.layout(), bytes);
  datatype::TypedCopy(inoutbuf, count, &type->layout(), inout.data(), items,
                      &base.layout(), bytes);
  reduction->Apply(in.data(), inout.data(), items, base.handle());
  datatype::TypedCopy(inout.data(), items, &base.layout(), inoutbuf, count,
                      &type->layout(), bytes);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return CreateOp("MPI_Op_create", user_fn, commute, op);
}

int PMPI_Op_create_c(MPI_User_function_c* user_fn, int commute, MPI_Op* op) {
  return CreateOp("MPI_Op_create_c", user_fn, commute, op);
}

int PMPI_Op_free(MPI_Op* op) {
  MINIMPI_REQUIRE_INIT("MPI_Op_free");
  if (op == nullptr) {
    return RaiseError(nullptr, "MPI_Op_free", MPI_ERR_ARG,
                      "null pointer to the operation");
  }
  const Op* found = LookupOp(*op);
  if (found == nullptr) return InvalidOpError("MPI_Op_free", *op);
  if (found->predefined()) {
    return RaiseError(
        nullptr, "MPI_Op_free", MPI_ERR_OP,
        absl::StrCat("cannot free the predefined operation ", found->name()));
  }
  minimpi::FreeUserOp(*op);
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int* commute) {
  MINIMPI_REQUIRE_INIT("MPI_Op_commutative");
  const Op* found = LookupOp(op);
  if (found == nullptr) return InvalidOpError("MPI_Op_commutative", op);
  if (commute == nullptr) {
    return RaiseError(nullptr, "MPI_Op_commutative", MPI_ERR_ARG,
                      "null pointer for the result");
  }
  *commute = found->commutative() ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count,
                      MPI_Datatype datatype, MPI_Op op) {
  return ReduceLocal("MPI_Reduce_local", inbuf, inoutbuf, count, datatype, op);
}

int PMPI_Reduce_local_c(const void* inbuf, void* inoutbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op) {
  return ReduceLocal("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype,
                     op);
}

}  // extern "C"

MINIMPI_EXPORT(Op_create)
MINIMPI_EXPORT(Op_free)
MINIMPI_EXPORT(Op_commutative)
MINIMPI_EXPORT(Reduce_local)
MINIMPI_EXPORT(Op_create_c)
MINIMPI_EXPORT(Reduce_local_c)
