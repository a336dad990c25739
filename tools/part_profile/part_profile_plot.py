#!/usr/bin/env python3
"""Draws one round of a minimpi partitioned send from its profile.

minimpi writes the profile when MINIMPI_PART_PROFILE=FILE is set: one file
per rank, FILE.<rank>, one event per line, times in nanoseconds since that
process's MPI_Init:

    request <id> send|recv partitions <n> bytes <total> aggregator <name> transport_partitions <k>
    start <id> <round> <t_ns>
    ready <id> <round> <partition> <t_ns>
    write <id> <round> <first_partition> <count> <t_posted_ns>
    done <id> <round> <t_ns>

For one request and round (default: the last full round of the first send
request -- a full round has its start, a ready for every partition, writes
covering every partition, and its done) this draws one row per user
partition:

    compute   from the round's start to the partition's MPI_Pready
    waiting   from its MPI_Pready to the posting of the write that carried it
              (what aggregation costs that partition)
    transfer  from that posting to the round's done, or, when done is not
              later than the posting (minimpi stamps done when the last
              write is posted), to the round's next event after it (a
              sliver when there is none)

with an axis in microseconds since the round's start, a legend, and a
caption giving the writes posted and the partitions per write.

    usage: part_profile_plot.py PROFILE [--request ID] [--round N]
                                [--from-us T] [-o OUT.svg]
                                [--text [--columns N]]

PROFILE is a file, or the FILE given to MINIMPI_PART_PROFILE (then FILE.0,
rank 0's, is read). Writes SVG to OUT.svg or standard output; --text prints
the same chart in ASCII instead. --from-us T starts the axis T microseconds
after MPI_Start (compute usually dwarfs the interesting end of a round).
Python 3 standard library only.
"""

import argparse
import collections
import math
import os
import sys
from xml.sax.saxutils import escape

COLOURS = {"compute": "#4e79a7", "waiting": "#f28e2b", "transfer": "#59a14f"}
TEXT_MARKS = {"compute": "=", "waiting": "-", "transfer": "#"}


class ProfileError(Exception):
    pass


Request = collections.namedtuple(
    "Request", "id kind partitions bytes aggregator transport_partitions")


class Round:
    def __init__(self):
        self.start = None
        self.done = None
        self.ready = {}  # partition -> t_ns
        self.writes = []  # (first, count, t_posted_ns)


def read_profile(path):
    """Returns (requests in file order, {id: {round: Round}})."""
    requests = collections.OrderedDict()
    rounds = collections.defaultdict(dict)
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            try:
                kind = words[0]
                if kind == "request":
                    fields = dict(zip(words[3::2], words[4::2]))
                    requests[int(words[1])] = Request(
                        int(words[1]), words[2], int(fields["partitions"]),
                        int(fields["bytes"]), fields.get("aggregator", "?"),
                        int(fields.get("transport_partitions", 0)))
                    continue
                if kind not in ("start", "ready", "write", "done"):
                    continue  # newer event kinds: not drawn
                rid, rnd = int(words[1]), int(words[2])
                r = rounds[rid].get(rnd)
                if kind == "start" and r is not None and r.start is not None:
                    # The same round number started again: keep the later
                    # one (a profile should never do this; say so).
                    print("part_profile_plot: %s:%d: request %d starts round "
                          "%d a second time; drawing the later one" %
                          (path, number, rid, rnd), file=sys.stderr)
                    r = None
                if r is None:
                    r = rounds[rid][rnd] = Round()
                if kind == "start":
                    r.start = int(words[3])
                elif kind == "ready":
                    r.ready[int(words[3])] = int(words[4])
                elif kind == "write":
                    r.writes.append(
                        (int(words[3]), int(words[4]), int(words[5])))
                else:
                    r.done = int(words[3])
            except (IndexError, KeyError, ValueError) as error:
                raise ProfileError("%s:%d: cannot read %r (%s)" %
                                   (path, number, line.strip(), error))
    return requests, rounds


def is_full(request, r):
    if r.start is None or r.done is None:
        return False
    if any(p not in r.ready for p in range(request.partitions)):
        return False
    covered = set()
    for first, count, _ in r.writes:
        covered.update(range(first, first + count))
    return all(p in covered for p in range(request.partitions))


def choose(requests, rounds, request_id, round_number):
    if request_id is None:
        sends = [r for r in requests.values() if r.kind == "send"]
        if not sends:
            raise ProfileError("no send request in the profile")
        request = sends[0]
    elif request_id in requests:
        request = requests[request_id]
    else:
        raise ProfileError("no request %d in the profile (there are: %s)" %
                           (request_id, " ".join(map(str, requests)) or "none"))
    mine = rounds.get(request.id, {})
    if round_number is None:
        full = [n for n, r in mine.items() if is_full(request, r)]
        if not full:
            raise ProfileError("request %d has no full round" % request.id)
        round_number = max(full)
    elif round_number not in mine or mine[round_number].start is None:
        raise ProfileError("request %d has no round %d" %
                           (request.id, round_number))
    return request, round_number, mine[round_number]


def segments(request, r):
    """Per partition: [(kind, begin_ns, end_ns)], plus the writes in order."""
    writes = sorted(r.writes, key=lambda w: w[2])
    later = sorted([w[2] for w in writes] + list(r.ready.values()) +
                   ([r.done] if r.done is not None else []))
    span_end = max([r.start] + later)
    rows = []
    for p in range(request.partitions):
        row = []
        ready = r.ready.get(p)
        if ready is not None:
            row.append(("compute", r.start, ready))
        carried = [w for w in writes if w[0] <= p < w[0] + w[1]]
        if ready is not None and carried:
            posted = carried[0][2]
            row.append(("waiting", ready, max(ready, posted)))
            end = r.done if r.done is not None and r.done > posted else None
            if end is None:
                end = next((t for t in later if t > posted), None)
            if end is None:  # the round's last event: a sliver
                end = posted + max(1, (span_end - r.start) // 100)
            row.append(("transfer", posted, end))
        rows.append(row)
    return rows, writes


def caption_lines(request, round_number, writes):
    sizes = [count for _, count, _ in writes]
    per_write = (sum(sizes) / len(sizes)) if sizes else 0
    if len(sizes) <= 16:
        listed = ", ".join(map(str, sizes)) or "none"
    else:  # a histogram: "1 x120, 2 x4"
        counts = collections.Counter(sizes)
        listed = ", ".join("%d x%d" % (size, counts[size])
                           for size in sorted(counts))
    first = ("request %d (%s, %d partitions, %d B, aggregator %s, "
             "%d transport partitions), round %d" %
             (request.id, request.kind, request.partitions, request.bytes,
              request.aggregator, request.transport_partitions, round_number))
    second = ("%d writes posted, %.1f partitions per write (%s)" %
              (len(writes), per_write, listed))
    return first, second


def nice_step(span):
    """A 1, 2 or 5 times a power of ten giving about 6 ticks over span."""
    if span <= 0:
        return 1.0
    raw = span / 6.0
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def clip(rows, t_lo):
    """Drops what ends before t_lo and cuts what straddles it."""
    return [[(kind, max(begin, t_lo), end) for kind, begin, end in row
             if end > t_lo] for row in rows]


def render_svg(request, round_number, r, rows, writes, from_ns=0):
    t0 = r.start + from_ns
    rows = clip(rows, t0)
    t_end = max([end for row in rows for _, _, end in row] + [t0 + 1])
    span_us = (t_end - t0) / 1000.0
    n = request.partitions
    row_h = max(3, min(16, 640 // max(n, 1)))
    left, right, top = 70, 30, 60
    plot_w = 800
    width = left + plot_w + right
    plot_h = row_h * n
    height = top + plot_h + 110

    def x(t_ns):
        return left + plot_w * ((t_ns - t0) / 1000.0) / span_us

    out = []
    out.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
               'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">' %
               (width, height, width, height))
    out.append('<rect width="100%" height="100%" fill="white"/>')
    first, second = caption_lines(request, round_number, writes)
    out.append('<text x="%d" y="20" font-size="13" font-weight="bold">%s</text>'
               % (left, escape("Partitioned send: " + first)))
    out.append('<text x="%d" y="38" class="caption">%s</text>' %
               (left, escape(second)))
    for p, row in enumerate(rows):
        y = top + p * row_h
        out.append('<g class="partition" data-partition="%d">' % p)
        if row_h >= 8 and (n <= 32 or p % max(1, n // 16) == 0):
            out.append('<text x="%d" y="%d" text-anchor="end">%d</text>' %
                       (left - 6, y + row_h - 2, p))
        for kind, begin, end in row:
            out.append('<rect class="%s" x="%.2f" y="%d" width="%.2f" '
                       'height="%d" fill="%s"><title>partition %d %s: '
                       '%.2f-%.2f us</title></rect>' %
                       (kind, x(begin), y + 1, max(0.5, x(end) - x(begin)),
                        max(1, row_h - 2), COLOURS[kind], p, kind,
                        (begin - r.start) / 1000.0, (end - r.start) / 1000.0))
        out.append('</g>')
    # Axis in microseconds since the round's start.
    axis_y = top + plot_h + 6
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' %
               (left, axis_y, left + plot_w, axis_y))
    step = nice_step(span_us)
    tick = 0.0
    while tick <= span_us + 1e-9:
        tx = left + plot_w * tick / span_us
        out.append('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="black"/>'
                   % (tx, axis_y, tx, axis_y + 4))
        out.append('<text x="%.2f" y="%d" text-anchor="middle">%g</text>' %
                   (tx, axis_y + 16, round(tick + from_ns / 1000.0, 6)))
        tick += step
    out.append('<text x="%d" y="%d" text-anchor="middle">microseconds since '
               'MPI_Start (round %d)</text>' %
               (left + plot_w // 2, axis_y + 32, round_number))
    out.append('<text x="%d" y="%d" transform="rotate(-90 %d %d)" '
               'text-anchor="middle">user partition</text>' %
               (16, top + plot_h // 2, 16, top + plot_h // 2))
    # Legend.
    legend_y = axis_y + 52
    labels = [("compute", "compute (start to MPI_Pready)"),
              ("waiting", "waiting (MPI_Pready to its write posted)"),
              ("transfer", "transfer (write posted to done)")]
    lx = left
    for kind, label in labels:
        out.append('<rect class="legend" x="%d" y="%d" width="12" height="12" '
                   'fill="%s"/>' % (lx, legend_y, COLOURS[kind]))
        out.append('<text x="%d" y="%d">%s</text>' %
                   (lx + 16, legend_y + 10, escape(label)))
        lx += 260
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_text(request, round_number, r, rows, writes, columns, from_ns=0):
    t0 = r.start + from_ns
    rows = clip(rows, t0)
    t_end = max([end for row in rows for _, _, end in row] + [t0 + 1])
    span = float(t_end - t0)
    first, second = caption_lines(request, round_number, writes)
    lines = [first, second]
    for p, row in enumerate(rows):
        cells = [" "] * columns
        # Waiting last: it is what aggregation costs, and often short.
        order = {"compute": 0, "transfer": 1, "waiting": 2}
        for kind, begin, end in sorted(row, key=lambda seg: order[seg[0]]):
            if kind == "waiting" and end <= begin:
                continue
            a = int((begin - t0) / span * columns)
            b = max(a + 1, int(math.ceil((end - t0) / span * columns)))
            for c in range(max(0, a), min(columns, b)):
                cells[c] = TEXT_MARKS[kind]
        lines.append("%5d |%s|" % (p, "".join(cells)))
    axis = "%g us" % (from_ns / 1000.0)
    end_label = "%.1f us" % ((span + from_ns) / 1000.0)
    lines.append("      " + axis + " " * max(1, columns + 2 - len(axis) -
                                            len(end_label)) + end_label)
    lines.append("      legend: %s compute (start to MPI_Pready), "
                 "%s waiting (MPI_Pready to its write posted), "
                 "%s transfer (write posted to done)" %
                 (TEXT_MARKS["compute"], TEXT_MARKS["waiting"],
                  TEXT_MARKS["transfer"]))
    return "\n".join(lines) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(
        description="Draw one round of a minimpi partitioned send profile "
        "(MINIMPI_PART_PROFILE) as SVG or ASCII.")
    parser.add_argument("profile", help="FILE.<rank>, or FILE (reads FILE.0)")
    parser.add_argument("--request", type=int, help="request id "
                        "(default: the first send request)")
    parser.add_argument("--round", type=int, help="round "
                        "(default: the request's last full round)")
    parser.add_argument("-o", "--output", help="SVG file (default: stdout)")
    parser.add_argument("--text", action="store_true",
                        help="print an ASCII chart instead of SVG")
    parser.add_argument("--columns", type=int, default=72,
                        help="width of the ASCII chart (default 72)")
    parser.add_argument("--from-us", type=float, default=0,
                        help="start the time axis this many microseconds "
                        "after MPI_Start, to zoom in on the end of a round")
    args = parser.parse_args(argv)
    path = args.profile
    if not os.path.exists(path) and os.path.exists(path + ".0"):
        path += ".0"
    try:
        requests, rounds = read_profile(path)
        request, number, r = choose(requests, rounds, args.request, args.round)
    except (OSError, ProfileError) as error:
        print("part_profile_plot: %s" % error, file=sys.stderr)
        return 1
    rows, writes = segments(request, r)
    if args.text:
        sys.stdout.write(render_text(request, number, r, rows, writes,
                                     max(10, args.columns),
                                     int(args.from_us * 1000)))
        return 0
    svg = render_svg(request, number, r, rows, writes,
                     int(args.from_us * 1000))
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(svg)
    else:
        sys.stdout.write(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
