"""The library's layers, for the visibility lists of the BUILD files.

The order, top to bottom (docs/architecture.md, "Layers and the way data
flows"): the bindings (//mpi), mpi/instance, mpi/coll and mpi/ep,
mpi/objects, the kinds of traffic, mpi/vci, then mpi/match, mpi/datatype,
mpi/topo and mpi/tool, net, runtime. Each package's default_visibility
names the packages above it that use it; a group that several lists name
whole lives here.
"""

# The kinds of traffic: each a handler of its messages and completions on
# the VCIs (point-to-point, partitioned, one-sided).
KINDS_OF_TRAFFIC = [
    "//mpi/p2p:__pkg__",
    "//mpi/part:__pkg__",
    "//mpi/rma:__pkg__",
]
