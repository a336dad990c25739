// Dynamic processes below the bindings: ports (a listening TCP socket each),
// the meeting of two groups through a socket between their roots (accept,
// connect, join, and spawn, whose children connect to a port of their
// parents' root), and the table of peers of other jobs.
//
// How two groups meet: the roots swap the tables of who is in each group
// (job, rank in it, transport address) over the socket; each process makes
// every remote process of another job reachable (net::Transport::AddPeer, as
// a peer index past its own job's ranks, the same index every time it meets
// that process again) or keeps the world rank of one of its own job; the
// groups then synchronize once more through their roots, so nobody sends
// before everybody can receive; and the intercommunicator is built by the
// construction every intercommunicator uses (IntercommThroughLeaders).
//
// Owned by: mpi/bindings. Called by: dynamic_processes.cc and
// environment.cc (a spawned process meets its parents in MPI_Init).
#ifndef MINIMPI_MPI_BINDINGS_DYNAMIC_UTIL_H_
#define MINIMPI_MPI_BINDINGS_DYNAMIC_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "mpi/objects/comm.h"

namespace minimpi {

// The environment variable through which a spawned job learns its parents'
// port (set by MPI_Comm_spawn in the children's environment only).
inline constexpr char kParentPortVariable[] = "MINIMPI_SPAWN_PARENT_PORT";

// Opens a port: a listening socket on the address net/tcp uses. Fails when
// no TCP address can be had.
absl::StatusOr<std::string> OpenPort();
// Closes a port this process opened; NotFound for any other name.
absl::Status ClosePort(const std::string& port_name);

// How the root reaches the other group.
enum class MeetRole { kAccept, kConnect, kJoin };

// Collective over `local`: its rank `root` accepts on / connects to
// `port_name` (kJoin: uses the connected socket `fd`, which stays open), and
// the two groups meet (see the file comment). Errors (a port nobody opened,
// a connection refused, a transport that cannot reach the other job) come
// back at every process of `local`, with the same message. Not published.
absl::StatusOr<std::unique_ptr<Communicator>> MeetOtherGroup(
    Communicator& local, int root, MeetRole role, const std::string& port_name,
    int fd);

// Who a process is across jobs: its job's name hashed (every process
// hashes a name alike) and its rank there.
uint64_t JobHash(const std::string& job);
uint64_t MyJobHash();
// The peer index this process reaches rank `job_rank` of the job hashed
// `job_hash` by: its world rank when the job is ours, else the index it was
// added under (net::Transport::AddPeer), adding it from `address` the first
// time. NotFound when it was never met and `address` is empty.
absl::StatusOr<int> ReachProcess(uint64_t job_hash, int job_rank,
                                 const std::string& address);
// This process's address for other jobs ("" where the transport has none).
std::string MyDynamicAddress();

// The intercommunicator to the parents of a spawned process, made in
// MPI_Init; nullptr when the process was not spawned or it was
// disconnected. ConnectToParents is collective over MPI_COMM_WORLD and
// ends the job when the parents cannot be reached.
void ConnectToParents();
Communicator* Parents();
void ForgetParents(Communicator* comm);

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_DYNAMIC_UTIL_H_
