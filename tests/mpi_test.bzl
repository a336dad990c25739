"""Macros that turn multi-rank MPI programs into Bazel tests.

mpi_test() builds one program linked with //mpi:mpi and makes one sh_test
per rank count, each running tests/run_mpi_test.sh through minimpi's
mpiexec.  mpi_test_suite() does that for every program and case in
tests/tests.bzl and writes the manifest tests/run_all.sh reads, so Bazel and
the srun runner share one list.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary")

_LAUNCHER = "//tools/mpiexec"
_RUNNER = "//tests:run_mpi_test.sh"
_SOFT_VERBS = "//net/ib/testing:libminimpi_softib.so"
_DEFAULT_TIMEOUT_S = 120

def mpi_program(name, srcs, threaded = False, openmp = False, deps = []):
    """A test program linked with minimpi (C sources compile as C11).

    `openmp` compiles and links it with -fopenmp (and -pthread)."""
    copts = ["-std=c11"] if all([s.endswith(".c") for s in srcs]) else []
    linkopts = ["-pthread"] if threaded or openmp else []
    if openmp:
        copts = copts + ["-fopenmp"]
        linkopts = linkopts + ["-fopenmp"]
    cc_binary(
        name = name,
        srcs = srcs + ["//tests:endpoints_util.h", "//tests:rma_util.h", "//tests:test_util.h"],
        copts = copts,
        linkopts = linkopts,
        deps = ["//mpi"] + deps,
        testonly = True,
    )

def _quote(text):
    # sh_test args go through Bourne tokenization and make-variable
    # expansion: single quotes keep a regex one argument, $$ keeps a $.
    if "'" in text:
        fail("stderr regex must not contain a single quote: " + text)
    return "'" + text.replace("$", "$$") + "'"

def mpi_test_runs(
        name,
        program,
        ranks = [1, 2, 4, 8],
        args = [],
        expect = "success",
        stderr = "",
        timeout = _DEFAULT_TIMEOUT_S,
        threaded = False,
        env = [],
        tags = []):
    """One sh_test per rank count, `<name>_<ranks>`, running `program`.

    `env` lists NAME=VALUE settings the job runs with."""
    if expect not in ("success", "failure"):
        fail("expect must be success or failure, got " + expect)
    test_tags = ["multirank"] + (["threaded"] if threaded else []) + tags

    # Ranks share memory segments and a PMIx server's rendezvous files;
    # the sandbox would hide them from each other.
    test_tags = test_tags + ["no-sandbox"]
    tests = []
    for count in ranks:
        test_name = "%s_%d" % (name, count)
        native.sh_test(
            name = test_name,
            srcs = [_RUNNER],
            args = ["--env=" + entry for entry in env] + [
                "--timeout=%d" % timeout,
                "$(location %s)" % _LAUNCHER,
                str(count),
                expect,
                _quote(stderr) if stderr else "-",
                "$(location %s)" % program,
            ] + args,
            # The software verbs device, for cases that set
            # MINIMPI_IB_TEST_DEVICE (run_mpi_test.sh resolves its path).
            data = [_LAUNCHER, program] + (
                [_SOFT_VERBS] if [e for e in env if e.startswith("MINIMPI_IB_TEST_DEVICE=")] else []
            ),
            # Oversubscribed ranks on few cores: give Bazel's own timeout room
            # beyond the runner's hang guard.
            size = "medium" if timeout <= 240 else "large",
            tags = test_tags,
        )
        tests.append(":" + test_name)
    return tests

def mpi_test(name, srcs, ranks = [1, 2, 4, 8], threaded = False, **kwargs):
    """A program `name` plus its runs `name_<ranks>` (see mpi_test_runs)."""
    mpi_program(name = name, srcs = srcs, threaded = threaded)
    return mpi_test_runs(name = name, program = ":" + name, ranks = ranks, threaded = threaded, **kwargs)

def _manifest_impl(ctx):
    ctx.actions.write(ctx.outputs.out, ctx.attr.content)

_manifest = rule(
    implementation = _manifest_impl,
    attrs = {"content": attr.string()},
    outputs = {"out": "%{name}.txt"},
)

def mpi_test_suite(name, programs, cases):
    """Programs and runs for every entry of tests.bzl, a test_suite `name`
    of them all, a filegroup `<name>_programs`, and `<name>_manifest.txt`:
    one tab-separated line per run:
    case ranks expect timeout stderr-regex-or-"-" program env-or-"-" args...
    (env: comma-separated NAME=VALUE settings)"""
    all_tests = []
    lines = []
    for program, spec in programs.items():
        mpi_program(
            name = program,
            srcs = spec["srcs"],
            threaded = spec.get("threaded", False),
            openmp = spec.get("openmp", False),
        )
    for case in cases:
        program = case["program"]
        if program not in programs:
            fail("case %s names unknown program %s" % (case["name"], program))
        if "\t" in case.get("stderr", "") or "\n" in case.get("stderr", ""):
            fail("stderr regex of %s must not contain tabs or newlines" % case["name"])
        all_tests += mpi_test_runs(
            name = case["name"],
            program = ":" + program,
            ranks = case["ranks"],
            args = case.get("args", []),
            expect = case.get("expect", "success"),
            stderr = case.get("stderr", ""),
            timeout = case.get("timeout", _DEFAULT_TIMEOUT_S),
            threaded = programs[program].get("threaded", False),
            env = case.get("env", []),
        )
        for count in case["ranks"]:
            lines.append("\t".join([
                "%s_%d" % (case["name"], count),
                str(count),
                case.get("expect", "success"),
                str(case.get("timeout", _DEFAULT_TIMEOUT_S)),
                case.get("stderr", "") or "-",
                program,
                ",".join(case.get("env", [])) or "-",
            ] + case.get("args", [])))
    native.test_suite(name = name, tests = all_tests)
    native.filegroup(
        name = name + "_programs",
        srcs = [":" + p for p in programs.keys()],
        testonly = True,
    )
    _manifest(name = name + "_manifest", content = "\n".join(lines) + "\n")
