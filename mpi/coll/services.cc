#include "mpi/coll/services.h"

namespace minimpi::coll::internal {

std::atomic<const CollectiveServices*> installed_services{nullptr};

}  // namespace minimpi::coll::internal
