// Reduction operations: the predefined ones (MPI_SUM ... MPI_MAXLOC) on every
// datatype the standard allows them on, and user operations from
// MPI_Op_create, commutative or not.
//
// The convention is MPI's: Apply(in, inout) leaves inout[i] = in[i] (op)
// inout[i]. For a non-commutative operation the caller keeps rank order by
// passing the lower ranks' partial result as `in` and the higher ranks' as
// `inout`.
//
// Owned by: mpi/. Called by: mpi/coll (reductions inside collectives) and the
// bindings (MPI_Reduce_local, MPI_Op_create, MPI_Op_free, argument checks).
#ifndef MINIMPI_MPI_OBJECTS_OP_H_
#define MINIMPI_MPI_OBJECTS_OP_H_

#include <atomic>
#include <cstdint>

#include "mpi/objects/datatype.h"
#include "mpi/mpi.h"

namespace minimpi {

class Op {
 public:
  virtual ~Op() = default;
  virtual const char* name() const = 0;
  virtual bool commutative() const = 0;
  virtual bool predefined() const = 0;
  // Whether this operation is defined on `type` (MPI_ERR_OP otherwise).
  virtual bool Supports(MPI_Datatype type) const = 0;
  // inout[i] = in[i] (op) inout[i] for `count` items of `type`. Only called
  // when Supports(type). Any count: a user function from MPI_Op_create,
  // whose length is an int, is called once per INT_MAX items.
  virtual void Apply(const void* in, void* inout, int64_t count,
                     MPI_Datatype type) const = 0;

  // User operations are reference counted: the handle holds one reference
  // and every schedule that will apply the operation holds another, because
  // MPI lets a program free an operation that a pending nonblocking
  // collective still uses. Predefined operations ignore both calls.
  void Retain() const;
  void Release() const;

 protected:
  mutable std::atomic<int> references_{1};
};

// The predefined operation a handle names, or nullptr (a user operation's
// handle, MPI_OP_NULL, garbage). User operations' handles live in the
// bindings' handle table (mpi/bindings/object_handles.h: LookupOp).
const Op* LookupPredefinedOp(MPI_Op handle);
// False for values no user operation's handle can take (the predefined
// range).
bool MayNameUserOp(MPI_Op handle);

// A user operation (MPI_Op_create), holding one reference.
Op* NewUserOp(MPI_User_function* function, bool commutative);
// MPI_Op_create_c: the function's length is an MPI_Count.
Op* NewUserOp(MPI_User_function_c* function, bool commutative);

// The extent of the derived datatype a handle names (0 for none). A user
// operation from MPI_Op_create steps through a count past INT_MAX in
// pieces, and a piece of a derived type starts a whole number of extents
// in. The handle tables are the bindings', so they install the resolver;
// predefined types need none.
using DatatypeExtentResolver = int64_t (*)(MPI_Datatype handle);
void SetUserOpExtentResolver(DatatypeExtentResolver resolver);

}  // namespace minimpi

#endif  // MINIMPI_MPI_OBJECTS_OP_H_
