/* The MPI-5 standard ABI's header (MPI-5.0 chapter 20), for programs built
 * against the standard ABI and linked with libmpi_abi.so.1.
 *
 * minimpi's own mpi.h already has every handle value, constant, type and
 * MPI_Status layout of the standard ABI (mpi/abi_constants_test.cc checks
 * each value against the standard's table), so this header is mpi.h: one
 * source, no second copy to drift. Programs may include either.
 *
 * MPI_VERSION stays 4.1, what MPI_Get_version reports: minimpi implements
 * MPI-4.1 plus the ABI's calls (MPI_ABI_VERSION 1.0), not all of MPI-5.0. */
#ifndef MINIMPI_MPI_ABI_H_
#define MINIMPI_MPI_ABI_H_

#include "mpi.h"

#endif /* MINIMPI_MPI_ABI_H_ */
