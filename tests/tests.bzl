"""The one list of multi-rank test programs and the runs made of them.

Read by tests/BUILD (one sh_test per case and rank count, named like
`ring_4`, plus a manifest for tests/run_all.sh), and by tests/run_all.sh
when it cross-checks the programs against another MPI without Bazel.  Keep
this file plain literals (no function calls): run_all.sh evaluates it as
Python to find the cases.

MPI_TEST_PROGRAMS: program name -> {"srcs": [...], "threaded": bool}.
MPI_TEST_CASES: each case runs `program args...` once per rank count:
  name     test name prefix (the sh_test is `<name>_<ranks>`)
  program  a key of MPI_TEST_PROGRAMS
  ranks    rank counts that make sense for the program
  args     program arguments (optional)
  expect   "success" (default) or "failure": the job must exit non-zero
  stderr   for "failure": an extended regex one line of stderr must match
           (minimpi's message format; other MPIs word theirs differently)
  timeout  hang guard in seconds for one run (default 120)
  env      NAME=VALUE settings the job runs with (optional), e.g. to force
           a protocol path
"""

MPI_TEST_PROGRAMS = {
    "ring": {"srcs": ["ring.c"], "threaded": False},
    "pingpong": {"srcs": ["pingpong.c"], "threaded": False},
    "wildcard": {"srcs": ["wildcard.c"], "threaded": False},
    "probe": {"srcs": ["probe.c"], "threaded": False},
    "cancel": {"srcs": ["cancel.c"], "threaded": False},
    "persistent": {"srcs": ["persistent.c"], "threaded": False},
    "waitany": {"srcs": ["waitany.c"], "threaded": False},
    "ssend": {"srcs": ["ssend.c"], "threaded": False},
    "comm": {"srcs": ["comm.c"], "threaded": False},
    "threads": {"srcs": ["threads.cc"], "threaded": True},
    "env": {"srcs": ["env.c"], "threaded": True},
    "errors_return": {"srcs": ["errors_return.c"], "threaded": False},
    "fatal_errors": {"srcs": ["fatal_errors.c"], "threaded": False},
    "rank_dies": {"srcs": ["rank_dies.c"], "threaded": False},
}

MPI_TEST_CASES = [
    {"name": "ring", "program": "ring", "ranks": [1, 2, 3, 4, 8]},
    {"name": "pingpong", "program": "pingpong", "ranks": [2, 4]},
    # The same traffic down the other protocol paths: one-sided rendezvous
    # (no split), everything eager up to 64 KiB, rings of two cells (constant
    # back-pressure), and a single VCI.
    {"name": "pingpong_unsplit", "program": "pingpong", "ranks": [2], "env": ["MINIMPI_RNDV_SPLIT_MIN=0"]},
    {
        "name": "pingpong_big_eager_tiny_rings",
        "program": "pingpong",
        "ranks": [2],
        "env": ["MINIMPI_EAGER_MAX=65536", "MINIMPI_SHM_RING_CELLS=2"],
    },
    {"name": "threads_one_vci", "program": "threads", "ranks": [2], "args": ["4", "100"], "env": ["MINIMPI_NUM_VCIS=1"]},
    {"name": "wildcard", "program": "wildcard", "ranks": [1, 2, 3, 4, 8]},
    {"name": "probe", "program": "probe", "ranks": [1, 2, 4]},
    {"name": "cancel", "program": "cancel", "ranks": [1, 2]},
    {"name": "persistent", "program": "persistent", "ranks": [2, 3, 4]},
    {"name": "waitany", "program": "waitany", "ranks": [1, 2, 4]},
    {"name": "ssend", "program": "ssend", "ranks": [2, 4]},
    {"name": "comm", "program": "comm", "ranks": [1, 2, 3, 4, 8]},
    {"name": "threads", "program": "threads", "ranks": [1, 2], "args": ["8", "400"]},
    {"name": "threads_small", "program": "threads", "ranks": [4, 8], "args": ["4", "100"]},
    {"name": "env_single", "program": "env", "ranks": [1, 2], "args": ["single"]},
    {"name": "env_multiple", "program": "env", "ranks": [1, 2], "args": ["multiple"]},
    {"name": "errors_return", "program": "errors_return", "ranks": [1, 2, 4]},
    {
        "name": "fatal_send_bad_rank",
        "program": "fatal_errors",
        "ranks": [4],
        "args": ["send_bad_rank"],
        "expect": "failure",
        "stderr": "MPI_Send\\(rank 3\\): invalid destination 4 \\(communicator size 4\\)",
        "timeout": 30,
    },
    {
        "name": "fatal_recv_bad_source",
        "program": "fatal_errors",
        "ranks": [2],
        "args": ["recv_bad_source"],
        "expect": "failure",
        "stderr": "MPI_Recv\\(rank 1\\): invalid source",
        "timeout": 30,
    },
    {
        "name": "fatal_bad_tag",
        "program": "fatal_errors",
        "ranks": [2],
        "args": ["bad_tag"],
        "expect": "failure",
        "stderr": "MPI_Send\\(rank 1\\): invalid tag",
        "timeout": 30,
    },
    {
        "name": "fatal_bad_count",
        "program": "fatal_errors",
        "ranks": [2],
        "args": ["bad_count"],
        "expect": "failure",
        "stderr": "MPI_Send\\(rank 1\\): invalid count",
        "timeout": 30,
    },
    {
        "name": "fatal_comm_null",
        "program": "fatal_errors",
        "ranks": [2],
        "args": ["comm_null"],
        "expect": "failure",
        "stderr": "MPI_Send\\(rank 1\\): invalid communicator",
        "timeout": 30,
    },
    {
        "name": "fatal_datatype_null",
        "program": "fatal_errors",
        "ranks": [2],
        "args": ["datatype_null"],
        "expect": "failure",
        "stderr": "MPI_Send\\(rank 1\\): invalid datatype",
        "timeout": 30,
    },
    {
        "name": "fatal_start_null_request",
        "program": "fatal_errors",
        "ranks": [2],
        "args": ["start_null_request"],
        "expect": "failure",
        "stderr": "MPI_Start\\(rank 1\\): invalid request",
        "timeout": 30,
    },
    {
        "name": "fatal_null_buffer",
        "program": "fatal_errors",
        "ranks": [2],
        "args": ["null_buffer"],
        "expect": "failure",
        "stderr": "MPI_Send\\(rank 1\\): null buffer",
        "timeout": 30,
    },
    {
        "name": "fatal_truncate",
        "program": "fatal_errors",
        "ranks": [2],
        "args": ["truncate"],
        "expect": "failure",
        "stderr": "MPI_Recv\\(rank 1\\): message truncated",
        "timeout": 30,
    },
    {
        "name": "fatal_errors_abort",
        "program": "fatal_errors",
        "ranks": [2],
        "args": ["errors_abort"],
        "expect": "failure",
        "stderr": "MPI_Send\\(rank 1\\): invalid destination",
        "timeout": 30,
    },
    {
        "name": "abort",
        "program": "fatal_errors",
        "ranks": [1, 4],
        "args": ["abort"],
        "expect": "failure",
        "timeout": 30,
    },
    {
        "name": "rank_exits",
        "program": "rank_dies",
        "ranks": [2, 4],
        "args": ["exit"],
        "expect": "failure",
        "timeout": 30,
    },
    {
        "name": "rank_killed",
        "program": "rank_dies",
        "ranks": [2, 4],
        "args": ["kill"],
        "expect": "failure",
        "timeout": 30,
    },
    {
        "name": "rank_exit_code",
        "program": "rank_dies",
        "ranks": [2],
        "args": ["exit_code"],
        "expect": "failure",
        "timeout": 30,
    },
]
