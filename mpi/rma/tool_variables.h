// What one-sided communication shows a tool through MPI_T
// (mpi/tool/registry.h), per window (bound to MPI_T_BIND_MPI_WIN; the
// object a handle reads is the rma::Window behind the MPI_Win):
//   rma_operations      COUNTER, 6 elements: the operations this process
//                       issued on the window, by kind (put, get,
//                       accumulate, get_accumulate, fetch_and_op,
//                       compare_and_swap; MPI_Rput counts as a put, and so
//                       on; operations on MPI_PROC_NULL are not counted);
//   rma_lock_waits      COUNTER: passive-target lock requests of this
//                       process that the target queued behind another
//                       holder;
//   rma_lock_wait_time  TIMER: seconds MPI_Win_lock (and lock_all) waited
//                       for grants, queued or not.
//
// Owned by: mpi/rma. Called by: mpi/bindings/tool_catalogue.cc.
#ifndef MINIMPI_MPI_RMA_TOOL_VARIABLES_H_
#define MINIMPI_MPI_RMA_TOOL_VARIABLES_H_

namespace minimpi::rma {

void RegisterOneSidedToolVariables();

}  // namespace minimpi::rma

#endif  // MINIMPI_MPI_RMA_TOOL_VARIABLES_H_
