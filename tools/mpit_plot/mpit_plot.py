#!/usr/bin/env python3
"""Draws what apps/mpit_trace saw: queue lengths over time and partition
arrivals, per communicator, request and rank.

mpit_trace writes one file per rank, DIR/mpit_trace.<rank>, one record a
line, times in microseconds since that rank's MPI_Init:

    rank <r> size <n> interval_us <us>
    pvar <name> class <level|highwatermark|counter|timer|...> bind <comm|request>
    event_type <name> bind <comm|request|none> elements <n> <type>...
    # <name>: <the library's description, which names the elements>
    comm <id> size <n> from <MPI call> parent <id|->
    request <id> <MPI_Psend_init|MPI_Precv_init> partitions <n> comm <id>
    sample <t_us> <pvar> comm|request <id> <value>[,<value>...]
    event <t_us> <event> comm|request|none <id> <payload element>...
    freed <t_us> comm|request <id>
    lost <n>        events the tool had no room for
    dropped <n>     events the library dropped

Samples are written when a value changes (taken by a thread every interval,
and around the blocking receive-side calls the tool wraps). For each
communicator this draws every level and watermark variable as an area
chart, and the unexpected queue as the events tell it
(unexpected_queue_from_events: enqueued minus dequeued, exact even between
samples); for each partitioned request, how
many user partitions arrived in each slice of time.

minimpi's partition_arrived payload is transport_partition,
first_partition, last_partition, round, bytes (one event per transport
partition, which may carry several user partitions): this counts
last - first + 1 user partitions per event and a round as complete when its
events cover every partition. An event with a shorter payload counts as
one partition.

    usage: mpit_plot.py TRACE... [--rank R] [--comm ID] [--var NAME]
                        [--text [--columns N] [--height N]] [--summary]
                        [-o OUT.svg]

TRACE is a trace file or a directory holding mpit_trace.<rank> files.
Writes SVG to OUT.svg or standard output; --text prints ASCII charts
instead; --summary prints one line per peak and per event count, for
scripts:

    rank 0 comm 2 peak unexpected_recvq_length 25
    rank 0 comm 2 events unexp_message_enqueued 25
    rank 0 request 0 events partition_arrived 3
    rank 0 request 0 user_partitions_arrived 24
    rank 0 request 0 rounds_complete 3

Python 3 standard library only.
"""

import argparse
import collections
import math
import os
import re
import sys
from xml.sax.saxutils import escape

ARRIVED = "partition_arrived"
ENQUEUED = "unexp_message_enqueued"
DEQUEUED = "unexp_message_dequeued"
FROM_EVENTS = "unexpected_queue_from_events"
DRAWN_CLASSES = ("level", "highwatermark", "lowwatermark", "size")


class TraceError(Exception):
    pass


class Rank:
    def __init__(self, path):
        self.path = path
        self.rank = None
        self.size = None
        self.pvar_class = {}  # name -> class
        self.objects = collections.OrderedDict()  # ("comm", id) -> description
        # (kind, id) -> {var: [(t_us, value)]}
        self.samples = collections.defaultdict(
            lambda: collections.defaultdict(list))
        # (kind, id) -> {event: [(t_us, [payload words])]}
        self.events = collections.defaultdict(
            lambda: collections.defaultdict(list))
        self.freed = {}  # (kind, id) -> t_us
        self.lost = 0
        self.dropped = 0
        self.end_us = 0.0


def read_trace(path):
    trace = Rank(path)
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            kind = words[0]
            try:
                if kind == "rank":
                    trace.rank, trace.size = int(words[1]), int(words[3])
                elif kind == "pvar":
                    trace.pvar_class[words[1]] = words[3]
                elif kind in ("comm", "request"):
                    trace.objects[(kind, int(words[1]))] = " ".join(words[2:])
                elif kind == "sample":
                    t_us = float(words[1])
                    value = sum(float(v) for v in words[5].split(","))
                    trace.samples[(words[3], int(words[4]))][words[2]].append(
                        (t_us, value))
                    trace.end_us = max(trace.end_us, t_us)
                elif kind == "event":
                    t_us = float(words[1])
                    trace.events[(words[3], int(words[4]))][words[2]].append(
                        (t_us, words[5:]))
                    trace.end_us = max(trace.end_us, t_us)
                elif kind == "freed":
                    trace.freed[(words[2], int(words[3]))] = float(words[1])
                    trace.end_us = max(trace.end_us, float(words[1]))
                elif kind == "lost":
                    trace.lost = int(words[1])
                elif kind == "dropped":
                    trace.dropped = int(words[1])
                # Other kinds: a newer tool's records, not drawn.
            except (IndexError, ValueError) as error:
                raise TraceError("%s:%d: cannot read %r (%s)" %
                                 (path, number, line.strip(), error))
    if trace.rank is None:
        raise TraceError("%s: no 'rank' line (not an mpit_trace file?)" % path)
    return trace


def trace_files(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            found = [name for name in os.listdir(path)
                     if re.fullmatch(r"mpit_trace\.\d+", name)]
            if not found:
                raise TraceError("%s: no mpit_trace.<rank> files" % path)
            files += [os.path.join(path, name) for name in
                      sorted(found, key=lambda n: int(n.split(".")[1]))]
        else:
            files.append(path)
    return files


def user_partitions(words):
    """(first, last, round) of a partition_arrived payload, or None."""
    if len(words) < 4:
        return None
    try:
        return int(words[1]), int(words[2]), int(words[3])
    except ValueError:
        return None


def arrivals(instances):
    """[(t_us, user partitions)] of a request's partition_arrived events."""
    out = []
    for t_us, words in instances:
        span = user_partitions(words)
        out.append((t_us, span[1] - span[0] + 1 if span else 1))
    return out


def rounds_complete(instances, partitions):
    """How many rounds' events cover every one of `partitions`."""
    covered = collections.defaultdict(set)
    for _, words in instances:
        span = user_partitions(words)
        if span:
            covered[span[2]].update(range(span[0], span[1] + 1))
    return sum(1 for got in covered.values()
               if got == set(range(partitions)))


def request_partitions(description):
    """The partition count in 'MPI_Precv_init partitions 8 comm 2'."""
    match = re.search(r"\bpartitions (\d+)", description)
    return int(match.group(1)) if match else 0


def events_level(events):
    """The unexpected queue from its events: [(t_us, level)], or None."""
    if ENQUEUED not in events and DEQUEUED not in events:
        return None
    steps = sorted([(t, 1) for t, _ in events.get(ENQUEUED, [])] +
                   [(t, -1) for t, _ in events.get(DEQUEUED, [])])
    level, series = 0, [(0.0, 0)]
    for t_us, change in steps:
        level += change
        series.append((t_us, level))
    # Below zero: messages joined the queue before the tool listened (it
    # binds a communicator's events when the constructor has returned, and
    # that call may already have pulled early arrivals in). They were there
    # from the start, so lift the whole series by them.
    missed = -min(level for _, level in series)
    return [(t_us, level + missed) for t_us, level in series]


def series_of(trace, key, var_filter):
    """[(name, [(t_us, value)])] to draw for one communicator or request."""
    drawn = []
    for name, points in sorted(trace.samples.get(key, {}).items()):
        if trace.pvar_class.get(name, "level") not in DRAWN_CLASSES:
            continue
        if var_filter and var_filter not in name:
            continue
        drawn.append((name, points))
    from_events = events_level(trace.events.get(key, {}))
    if from_events is not None and (not var_filter or
                                    var_filter in FROM_EVENTS):
        drawn.append((FROM_EVENTS, from_events))
    return drawn


def selected(trace, args):
    for (kind, ident), description in trace.objects.items():
        if kind == "comm" and args.comm is not None and ident != args.comm:
            continue
        yield kind, ident, description


def summary_lines(trace):
    lines = []
    for (kind, ident) in trace.objects:
        key = (kind, ident)
        for name, points in sorted(trace.samples.get(key, {}).items()):
            if trace.pvar_class.get(name, "level") in DRAWN_CLASSES:
                lines.append("rank %d %s %d peak %s %g" %
                             (trace.rank, kind, ident, name,
                              max(v for _, v in points)))
            else:
                lines.append("rank %d %s %d last %s %g" %
                             (trace.rank, kind, ident, name, points[-1][1]))
        events = trace.events.get(key, {})
        from_events = events_level(events)
        if from_events is not None:
            lines.append("rank %d %s %d peak %s %d" %
                         (trace.rank, kind, ident, FROM_EVENTS,
                          max(v for _, v in from_events)))
        for name, instances in sorted(events.items()):
            lines.append("rank %d %s %d events %s %d" %
                         (trace.rank, kind, ident, name, len(instances)))
        if kind == "request" and ARRIVED in events:
            instances = events[ARRIVED]
            lines.append("rank %d request %d user_partitions_arrived %d" %
                         (trace.rank, ident,
                          sum(n for _, n in arrivals(instances))))
            lines.append("rank %d request %d rounds_complete %d" %
                         (trace.rank, ident, rounds_complete(
                             instances,
                             request_partitions(trace.objects[key]))))
    for name, instances in sorted(trace.events.get(("none", -1), {}).items()):
        lines.append("rank %d none events %s %d" %
                     (trace.rank, name, len(instances)))
    if trace.lost:
        lines.append("rank %d lost %d" % (trace.rank, trace.lost))
    if trace.dropped:
        lines.append("rank %d dropped %d" % (trace.rank, trace.dropped))
    return lines


def value_at(points, t_us):
    """A step function's value at t_us (0 before its first point)."""
    value = 0
    for t, v in points:
        if t > t_us:
            break
        value = v
    return value


def text_chart(points, end_us, columns, height):
    """An area chart: one column per time slice, its peak value."""
    peak = max([v for _, v in points] + [0])
    slice_us = end_us / columns if end_us > 0 else 1.0
    heights = []
    for c in range(columns):
        begin, end = c * slice_us, (c + 1) * slice_us
        inside = [v for t, v in points if begin <= t < end]
        heights.append(max(inside + [value_at(points, begin)]))
    scale = peak / height if peak > height else 1.0
    rows = []
    for row in range(min(height, int(math.ceil(peak))) or 1, 0, -1):
        threshold = row * scale
        label = "%g" % round(threshold, 1) if row in (
            min(height, int(math.ceil(peak))), 1) else ""
        rows.append("%7s |%s" % (label, "".join(
            "#" if h >= threshold - 1e-9 else " " for h in heights)))
    return rows


def arrivals_row(arrived, end_us, columns):
    """Partitions arrived per time slice: a digit, * for 10 or more."""
    counts = [0] * columns
    slice_us = end_us / columns if end_us > 0 else 1.0
    for t, n in arrived:
        counts[min(columns - 1, int(t / slice_us))] += n
    return "".join(" " if n == 0 else (str(n) if n < 10 else "*")
                   for n in counts)


def axis_lines(end_us, columns):
    right = "%.0f us" % end_us
    return ["        +" + "-" * columns,
            "         0" + " " * max(1, columns - 1 - len(right)) + right]


def render_text(traces, args):
    out = []
    for trace in traces:
        end_us = max(trace.end_us, 1.0)
        for kind, ident, description in selected(trace, args):
            key = (kind, ident)
            if kind == "comm":
                for name, points in series_of(trace, key, args.var):
                    peak = max(v for _, v in points)
                    out.append("rank %d comm %d (%s): %s, peak %g" %
                               (trace.rank, ident, description, name, peak))
                    if peak == 0:  # a title says it all
                        continue
                    out += text_chart(points, end_us, args.columns,
                                      args.height)
                    out += axis_lines(end_us, args.columns)
                    out.append("")
            else:
                for name, instances in sorted(
                        trace.events.get(key, {}).items()):
                    arrived = (arrivals(instances) if name == ARRIVED else
                               [(t, 1) for t, _ in instances])
                    out.append("rank %d request %d (%s): %d %s, %d "
                               "partitions" % (trace.rank, ident, description,
                                               len(instances), name,
                                               sum(n for _, n in arrived)))
                    out.append("        |" + arrivals_row(
                        arrived, end_us, args.columns))
                    out += axis_lines(end_us, args.columns)
                    out.append("")
                finals = ["%s %g" % (name, points[-1][1]) for name, points in
                          sorted(trace.samples.get(key, {}).items())]
                if finals:
                    out.append("rank %d request %d at its end: %s" %
                               (trace.rank, ident, ", ".join(finals)))
                    out.append("")
        if trace.lost or trace.dropped:
            out.append("rank %d: %d events lost by the tool, %d dropped by "
                       "the library" % (trace.rank, trace.lost, trace.dropped))
    if not out:
        out.append("no queue samples or events in %s (the MPI offered none "
                   "of the variables and events traced)" %
                   ", ".join(trace.path for trace in traces))
    return "\n".join(out) + "\n"


def render_svg(traces, args):
    width, left, plot_w, panel_h = 900, 70, 800, 90
    panels = []
    for trace in traces:
        end_us = max(trace.end_us, 1.0)
        for kind, ident, description in selected(trace, args):
            key = (kind, ident)
            if kind == "comm":
                for name, points in series_of(trace, key, args.var):
                    if max(v for _, v in points) == 0:
                        continue  # an empty chart: the text form says so
                    panels.append(("queue", trace.rank, ident, description,
                                   name, points, end_us))
            else:
                for name, instances in sorted(
                        trace.events.get(key, {}).items()):
                    panels.append(("arrivals", trace.rank, ident, description,
                                   name, [t for t, _ in instances], end_us))
    height = 20 + len(panels) * (panel_h + 50)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">' %
           (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>']
    y0 = 20
    for kind, rank, ident, description, name, data, end_us in panels:

        def x(t_us):
            return left + plot_w * t_us / end_us

        if kind == "queue":
            peak = max([v for _, v in data] + [1])
            title = "rank %d comm %d (%s): %s, peak %g" % (
                rank, ident, description, name, max(v for _, v in data))
            out.append('<g class="queue" data-rank="%d" data-comm="%d">' %
                       (rank, ident))
            out.append('<text x="%d" y="%d" font-weight="bold">%s</text>' %
                       (left, y0 + 12, escape(title)))
            base = y0 + 20 + panel_h
            path = ["M %.2f %.2f" % (x(0), base)]
            last = 0
            for t, v in data:
                ypix = base - panel_h * v / peak
                path.append("L %.2f %.2f L %.2f %.2f" %
                            (x(t), base - panel_h * last / peak, x(t), ypix))
                last = v
            path.append("L %.2f %.2f Z" % (x(end_us), base - panel_h * last /
                                            peak))
            out.append('<path d="%s" fill="#4e79a7" fill-opacity="0.6" '
                       'stroke="#4e79a7"/>' % " ".join(path))
            out.append('<text x="%d" y="%.2f" text-anchor="end">%g</text>' %
                       (left - 4, base - panel_h + 4, peak))
        else:
            title = "rank %d request %d (%s): %d %s" % (
                rank, ident, description, len(data), name)
            out.append('<g class="arrivals" data-rank="%d" data-request="%d">'
                       % (rank, ident))
            out.append('<text x="%d" y="%d" font-weight="bold">%s</text>' %
                       (left, y0 + 12, escape(title)))
            base = y0 + 20 + panel_h
            for t in data:
                out.append('<line class="arrival" x1="%.2f" y1="%d" x2="%.2f" '
                           'y2="%d" stroke="#59a14f"/>' %
                           (x(t), base - panel_h // 2, x(t), base))
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' %
                   (left, base, left + plot_w, base))
        out.append('<text x="%d" y="%d">0</text>' % (left, base + 14))
        out.append('<text x="%d" y="%d" text-anchor="end">%.0f '
                   'microseconds since MPI_Init</text>' %
                   (left + plot_w, base + 14, end_us))
        out.append("</g>")
        y0 += panel_h + 50
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(
        description="Draw mpit_trace files: queue lengths over time per "
        "communicator and partition arrivals per request.")
    parser.add_argument("traces", nargs="+",
                        help="mpit_trace.<rank> files or directories of them")
    parser.add_argument("--rank", type=int, help="only this rank")
    parser.add_argument("--comm", type=int, help="only this communicator id")
    parser.add_argument("--var", help="only variables whose name contains "
                        "this")
    parser.add_argument("--text", action="store_true",
                        help="ASCII charts instead of SVG")
    parser.add_argument("--summary", action="store_true",
                        help="one line per peak and event count")
    parser.add_argument("--columns", type=int, default=72,
                        help="width of the ASCII charts (default 72)")
    parser.add_argument("--height", type=int, default=8,
                        help="rows of an ASCII queue chart (default 8)")
    parser.add_argument("-o", "--output", help="SVG file (default: stdout)")
    args = parser.parse_args(argv)
    args.columns = max(10, args.columns)
    args.height = max(1, args.height)
    try:
        traces = [read_trace(path) for path in trace_files(args.traces)]
    except (OSError, TraceError) as error:
        print("mpit_plot: %s" % error, file=sys.stderr)
        return 1
    if args.rank is not None:
        traces = [t for t in traces if t.rank == args.rank]
        if not traces:
            print("mpit_plot: no trace of rank %d" % args.rank,
                  file=sys.stderr)
            return 1
    if args.summary:
        sys.stdout.write("".join(line + "\n" for trace in traces
                                 for line in summary_lines(trace)))
        return 0
    if args.text:
        sys.stdout.write(render_text(traces, args))
        return 0
    svg = render_svg(traces, args)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(svg)
    else:
        sys.stdout.write(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
