"""Compiler options for minimpi's own libraries (everything in libmpi.so)."""

# On x86-64 the assembler keeps every jump from crossing or ending on a
# 32-byte boundary. Intel cores of the Skylake family (the Xeons this project
# is measured on) no longer cache the decoded instructions of such jumps
# (the JCC erratum's microcode fix), and which of the hot path's jumps land
# there changes with every unrelated edit: two builds with the very same
# instructions per message measured the 8-byte ping-pong 0.53 and 0.64 us.
# With jumps kept inside boundaries both measured 0.57 us
# (docs/benchmarks.md, "The house"), so a timing A/B compares code, not
# luck.
#
# Objects of known size up to 1 KiB are zeroed with 16-byte stores, not
# `rep stos`, which GCC's generic tuning picks even for 128 bytes. A string
# instruction has a start-up cost of tens of cycles on the AMD EPYC the 2-core
# machine runs: resetting a 416-byte request with it took 7-8% of both ranks'
# time in the 8-byte message rate (perf), and each blocking collective zeroes
# its arguments the same way (docs/benchmarks.md, "Small-message cost, fourth
# stop"). Larger or unknown sizes still call the C library's memset.
MINIMPI_COPTS = select({
    "@platforms//cpu:x86_64": [
        "-Wa,-mbranches-within-32B-boundaries",
        "-mmemset-strategy=vector_loop:1024:noalign,libcall:-1:noalign",
    ],
    "//conditions:default": [],
})
