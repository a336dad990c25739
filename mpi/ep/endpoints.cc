#include "mpi/ep/endpoints.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace minimpi::ep {
namespace {

// What each caller announces first: how many endpoints it makes, and
// whether it got a VCI for each.
struct Request {
  int32_t count;
  int32_t granted;
};

// One endpoint, as every rank of the new communicator must know it.
struct EndpointAddress {
  int32_t world_rank;
  int32_t vci;
  int32_t local_id;
};

}  // namespace

absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateEndpoints(
    Communicator& parent, int my_num_ep, const EndpointServices& services) {
  vci::VciSet& vcis = services.vcis;

  // Our endpoints' VCIs and ids first, so the exchange carries them.
  std::vector<EndpointAddress> mine;
  bool granted = true;
  for (int i = 0; i < my_num_ep && granted; ++i) {
    const int vci = vcis.AcquireEndpointVci();
    if (vci < 0) {
      granted = false;
      break;
    }
    mine.push_back({services.world_rank, vci, services.allocate_local_id()});
  }
  const auto release_mine = [&] {
    for (const EndpointAddress& endpoint : mine) {
      vcis.ReleaseEndpointVci(endpoint.vci);
      services.release_local_id(endpoint.local_id);
    }
  };

  const Request request{my_num_ep, granted ? 1 : 0};
  std::vector<Request> requests(parent.size);
  services.allgather_bytes(parent, &request, sizeof(request), requests.data());
  int most = 0;
  int64_t total = 0;
  int refused = 0;
  for (const Request& r : requests) {
    most = std::max(most, r.count);
    total += r.count;
    refused += r.granted == 0;
  }
  if (refused > 0) {
    release_mine();
    return absl::ResourceExhaustedError(
        absl::StrCat(refused, " of ", parent.size,
                     " callers found no free VCI for their endpoints (at most "
                     "MINIMPI_EP_VCIS=",
                     vcis.capacity() - vcis.num_vcis(),
                     " endpoints per process may exist at once)"));
  }
  if (total > INT32_MAX / 2) {
    release_mine();
    return absl::InvalidArgumentError("too many endpoints in total");
  }

  // Everyone's endpoints, padded to the largest count so one allgather
  // does: entry [p * most + i] is parent rank p's endpoint i.
  std::vector<EndpointAddress> padded(std::max(most, 1));
  std::copy(mine.begin(), mine.end(), padded.begin());
  std::vector<EndpointAddress> all(size_t(parent.size) * padded.size());
  services.allgather_bytes(parent, padded.data(),
                           padded.size() * sizeof(EndpointAddress), all.data());

  std::vector<int> world_ranks, remote_vcis;
  std::vector<int32_t> remote_ids;
  int my_first_rank = 0;
  for (int p = 0; p < parent.size; ++p) {
    if (p == parent.rank) my_first_rank = static_cast<int>(world_ranks.size());
    for (int i = 0; i < requests[p].count; ++i) {
      const EndpointAddress& endpoint = all[size_t(p) * padded.size() + i];
      world_ranks.push_back(endpoint.world_rank);
      remote_vcis.push_back(endpoint.vci);
      remote_ids.push_back(endpoint.local_id);
    }
  }

  std::vector<std::unique_ptr<Communicator>> endpoints;
  for (int i = 0; i < my_num_ep; ++i) {
    auto comm = std::make_unique<Communicator>();
    comm->local_id = mine[i].local_id;
    comm->rank = my_first_rank + i;
    comm->size = static_cast<int>(total);
    comm->world_ranks = world_ranks;
    comm->remote_ids = remote_ids;
    comm->remote_vcis = remote_vcis;
    comm->vci = mine[i].vci;  // the reference Acquire took is this comm's
    comm->SetErrhandler(parent.AcquireErrhandler());
    comm->set_hints(Communicator::DefaultHints());
    endpoints.push_back(std::move(comm));
  }
  return endpoints;
}

}  // namespace minimpi::ep
