#include "mpi/instance/instance.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "mpi/instance/choice_lists.h"
#include "mpi/objects/datatype.h"
#include "mpi/datatype/predefined.h"
#include "mpi/objects/group.h"
#include "mpi/objects/op.h"
#include "runtime/topology.h"

namespace minimpi {

std::atomic<LibraryState> Instance::state_{LibraryState::kNotInitialized};
std::atomic<LibraryState> Instance::world_state_{LibraryState::kNotInitialized};
Instance* Instance::instance_ = nullptr;
std::mutex Instance::users_mutex_;
int Instance::users_ = 0;

namespace {
// Local ids 0 and 1 are MPI_COMM_WORLD and MPI_COMM_SELF in every process,
// 2 the hidden world sessions build on.
constexpr int32_t kWorldId = 0;
constexpr int32_t kSelfId = 1;
constexpr int32_t kHiddenWorldId = 2;

// How one-sided communication applies an accumulate's op at the target
// (rma::ApplyOpFunction): MPI_REPLACE copies, the predefined ops reduce.
bool ApplyAccumulateOp(uint32_t op_handle, uint32_t basic_handle,
                       const void* in, void* inout, int64_t bytes) {
  const auto op = reinterpret_cast<MPI_Op>(static_cast<uintptr_t>(op_handle));
  const auto basic =
      reinterpret_cast<MPI_Datatype>(static_cast<uintptr_t>(basic_handle));
  if (op == MPI_REPLACE) {
    std::memcpy(inout, in, static_cast<size_t>(bytes));
    return true;
  }
  if (op == MPI_NO_OP) return true;
  const datatype::PredefinedType* type = datatype::FindPredefined(basic);
  const Op* reduction = LookupPredefinedOp(op);
  if (type == nullptr || reduction == nullptr || !reduction->Supports(basic)) {
    return false;
  }
  if (!type->is_pair) {
    reduction->Apply(in, inout, static_cast<int>(bytes / type->size), basic);
    return true;
  }
  // A pair's members are contiguous in packed data and at the target, but
  // the op works on the C struct, padding included.
  alignas(16) std::byte value[32], result[32];
  for (int64_t at = 0; at + type->size <= bytes; at += type->size) {
    std::memcpy(value, static_cast<const std::byte*>(in) + at, type->size);
    std::memcpy(result, static_cast<std::byte*>(inout) + at, type->size);
    reduction->Apply(value, result, 1, basic);
    std::memcpy(static_cast<std::byte*>(inout) + at, result, type->size);
  }
  return true;
}
}  // namespace

absl::Status Instance::AddUser(
    int thread_level, absl::FunctionRef<absl::Status(Instance&)> started) {
  std::lock_guard<std::mutex> lock(users_mutex_);
  if (instance_ == nullptr) {
    std::unique_ptr<Instance> instance(new Instance());
    absl::Status status = instance->Setup(thread_level);
    if (!status.ok()) return status;
    instance_ = instance.release();
    Communicator::SetReleaseSink(instance_);
    Errhandler::SetReleaseSink(instance_);
    coll::InstallServices(&*instance_->collective_services_);
    status = started(*instance_);
    if (!status.ok()) return status;
    // Once up, the runtime lives until the process exits (see RemoveUser).
    std::atexit(&Instance::TearDown);
  }
  ++users_;
  state_.store(LibraryState::kInitialized, std::memory_order_release);
  return absl::OkStatus();
}

void Instance::RemoveUser(absl::FunctionRef<void(Instance&)> last_ends) {
  std::lock_guard<std::mutex> lock(users_mutex_);
  if (users_ == 1) last_ends(*instance_);
  if (--users_ == 0) {
    state_.store(LibraryState::kFinalized, std::memory_order_release);
  }
}

absl::Status Instance::Setup(int thread_level) {
  main_thread_ = std::this_thread::get_id();
  auto settings = runtime::Settings::FromEnvironment(LibraryChoiceLists());
  if (!settings.ok()) return settings.status();
  settings_ = *settings;
  set_match_stats(settings_.match_stats);

  auto bootstrap = runtime::Bootstrap::Init(settings_.node_split);
  if (!bootstrap.ok()) return bootstrap.status();
  bootstrap_ = std::move(bootstrap).value();
  world_rank_ = bootstrap_->rank();

  const int threads_per_rank = vci::ThreadsPerRankFromEnvironment();
  const int cores = runtime::NumCores();
  const int sharing = bootstrap_->ranks_sharing_cores();
  // auto binds where a rank that keeps its own core gains and nothing can
  // lose: a rank that wanders shares a core with its peer now and then,
  // and a ping-pong then waits on the scheduler (measured on 2 vCPUs under
  // load: 8-byte rate 20-40x lower unbound). One rank alone gains nothing;
  // ranks beyond the cores would be pinned into sharing; and the threads
  // of a rank (OpenMP's, or those of an MPI_THREAD_MULTIPLE program) would
  // all inherit its one core. Under srun, binding is Slurm's to decide
  // (--cpu-bind), as Open MPI leaves it there too: a Slurm node is not
  // known to be the job's alone (the simulated cluster's nodes share one
  // machine's cores, and bound ranks that poll through then queued two to
  // a core until tests timed out).
  const bool launched_by_slurm = std::getenv("SLURM_STEP_ID") != nullptr;
  const bool bind =
      settings_.bind_to == "core" ||
      (settings_.bind_to == "auto" && !launched_by_slurm && sharing >= 2 &&
       sharing <= cores && threads_per_rank == 1 &&
       thread_level < MPI_THREAD_MULTIPLE);
  if (bind) {
    absl::Status bound = runtime::BindToCore(bootstrap_->core_slot());
    if (!bound.ok()) return bound;
  }

  auto transport = net::CreateTransport(*bootstrap_, settings_);
  if (!transport.ok()) return transport.status();
  transport_ = std::move(transport).value();

  // A rank bound to a core has that core to itself (each rank is bound to
  // another one); otherwise the node's ranks share the cores this process
  // may use.
  const vci::WaitPolicy wait_policy =
      vci::WaitPolicy::Choose(settings_, bind ? 1 : cores, bind ? 1 : sharing,
                              threads_per_rank, transport_->has_doorbell(),
                              /*own_core=*/bind);
  // The VCIs first; each kind of traffic then registers with them.
  auto vcis = vci::VciSet::Create(transport_.get(), settings_, wait_policy);
  if (!vcis.ok()) return vcis.status();
  vcis_ = std::move(vcis).value();
  vcis_->FillLinks(bootstrap_->size());
  auto p2p =
      p2p::PointToPoint::Create(vcis_.get(), settings_, bootstrap_->size());
  if (!p2p.ok()) return p2p.status();
  p2p_ = std::move(p2p).value();
  auto partitioned =
      part::Partitioned::Create(*vcis_, *p2p_, settings_, bootstrap_->rank());
  if (!partitioned.ok()) return partitioned.status();
  partitioned_ = std::move(partitioned).value();
  auto one_sided = rma::OneSided::Create(
      *vcis_, &ApplyAccumulateOp,
      {.progress_thread = settings_.rma_progress == "thread",
       .progress_us = settings_.rma_progress_us});
  if (!one_sided.ok()) return one_sided.status();
  one_sided_ = std::move(one_sided).value();
  collective_services_.emplace(coll::CollectiveServices{
      .p2p = *p2p_,
      .vcis = *vcis_,
      .transport = *transport_,
      .bootstrap = *bootstrap_,
      .settings = settings_,
  });

  const int size = bootstrap_->size();
  world_ = std::make_unique<Communicator>();
  world_->local_id = kWorldId;
  world_->rank = world_rank_;
  world_->size = size;
  world_->world_ranks.resize(size);
  std::iota(world_->world_ranks.begin(), world_->world_ranks.end(), 0);
  world_->remote_ids.assign(size, kWorldId);
  world_->vci = 0;
  world_->predefined = true;
  world_->handle = MPI_COMM_WORLD;
  world_->set_name("MPI_COMM_WORLD");

  self_ = std::make_unique<Communicator>();
  self_->local_id = kSelfId;
  self_->rank = 0;
  self_->size = 1;
  self_->world_ranks = {world_rank_};
  self_->remote_ids = {kSelfId};
  self_->vci = VciFor(kSelfId);
  self_->predefined = true;
  self_->handle = MPI_COMM_SELF;
  self_->set_name("MPI_COMM_SELF");

  hidden_world_ = std::make_unique<Communicator>();
  hidden_world_->local_id = kHiddenWorldId;
  hidden_world_->rank = world_rank_;
  hidden_world_->size = size;
  hidden_world_->world_ranks = world_->world_ranks;
  hidden_world_->remote_ids.assign(size, kHiddenWorldId);
  hidden_world_->vci = VciFor(kHiddenWorldId);
  hidden_world_->predefined = true;
  hidden_world_->handle = MPI_COMM_NULL;  // never handed to the program
  hidden_world_->set_name("minimpi hidden world");
  next_id_ = kHiddenWorldId + 1;
  NameContextsForTools(*world_);
  NameContextsForTools(*self_);
  return absl::OkStatus();
}

void Instance::NameContextsForTools(const Communicator& comm) {
  p2p_->SetContextOwner(comm.vci, comm.point_to_point_context(), &comm);
  p2p_->SetContextOwner(comm.vci, comm.collective_context(), &comm);
}

void Instance::TearDown() {
  {
    // A process that exits with a user still live (no MPI_Finalize) keeps
    // everything, as it always did: its peers may still be using it.
    std::lock_guard<std::mutex> lock(users_mutex_);
    if (users_ != 0 || instance_ == nullptr) return;
  }
  state_.store(LibraryState::kFinalized, std::memory_order_release);
  // From here on a release gives back nothing: what it would give back to
  // is going away.
  Communicator::SetReleaseSink(nullptr);
  Errhandler::SetReleaseSink(nullptr);
  coll::InstallServices(nullptr);
  Instance* instance = instance_;
  instance_ = nullptr;
  if (instance->match_stats()) {
    // One write per rank, so ranks' blocks do not interleave.
    const std::string text = absl::StrCat(
        "minimpi: rank ", instance->world_rank_, " matching statistics\n",
        instance->p2p_->MatchStatistics());
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  // Groups the program did not free (issue 8).
  instance->groups_.ForEach([](Group* group) { delete group; });
  // Derived datatypes the program never freed (typebind): each open handle
  // gives its reference back, so the objects and their layouts are freed.
  instance->datatypes_.ForEach([](Datatype* type) { type->Release(); });
  instance->one_sided_.reset();
  instance->partitioned_.reset();
  instance->p2p_.reset();
  instance->vcis_.reset();
  instance->transport_.reset();
  (void)instance->bootstrap_->Finalize();
  delete instance;
}

void Instance::CommunicatorReleased(int32_t local_id, int endpoint_vci) {
  // The id's contexts (Communicator::point_to_point_context and
  // collective_context) name nobody until a communicator takes the id.
  p2p_->ForgetContexts(2 * local_id, 2 * local_id + 1);
  ReleaseLocalId(local_id);
  if (endpoint_vci >= 0) vcis_->ReleaseEndpointVci(endpoint_vci);
}

void Instance::ErrhandlerReleased(MPI_Errhandler handle) {
  errhandlers_.Remove(reinterpret_cast<uintptr_t>(handle));
}

int32_t Instance::AllocateLocalId() {
  std::lock_guard<std::mutex> lock(ids_mutex_);
  // Keep a few freed ids aside before reusing any (see ReleaseLocalId).
  constexpr size_t kReuseAfter = 16;
  if (free_ids_.size() > kReuseAfter) {
    int32_t id = free_ids_.front();
    free_ids_.pop_front();
    return id;
  }
  return next_id_++;
}

void Instance::ReleaseLocalId(int32_t id) {
  std::lock_guard<std::mutex> lock(ids_mutex_);
  free_ids_.push_back(id);
}

}  // namespace minimpi
