// The values of the MINIMPI_* variables that pick an implementation, from
// the one table each owner keeps: net's transports (net/transport.h),
// mpi/match's engines (match_engine.h), mpi/part's aggregators
// (aggregator.h) and backends (backend_choice.h). runtime::Settings checks
// and describes these variables with them, since runtime, the bottom layer,
// cannot see the owners; adding an entry to a table is all it takes for the
// settings, MPI_T and minimpi_info to accept and list it.
//
// Owned by: mpi/instance. Called by: the instance (MPI_Init), the bindings
// (MPI_T's control variables) and minimpi_info.
#ifndef MINIMPI_MPI_INSTANCE_CHOICE_LISTS_H_
#define MINIMPI_MPI_INSTANCE_CHOICE_LISTS_H_

#include "runtime/settings.h"

namespace minimpi {

// Built once, from the owners' tables, in their order.
const runtime::ChoiceLists& LibraryChoiceLists();

}  // namespace minimpi

#endif  // MINIMPI_MPI_INSTANCE_CHOICE_LISTS_H_
