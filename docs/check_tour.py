#!/usr/bin/env python3
# Checks that docs/tour.md names only files, functions and types that exist.
# Run it as docs/check_tour.sh (the entry point; it starts this file).
#
# What counts as a reference (the convention stated at the top of the tour):
#   - an inline code span (single backticks, outside fenced code blocks) that
#     is a path from the repository root, containing at least one "/":
#       `mpi/p2p/point_to_point.cc`                        the file must exist
#       `mpi/match/`                                       a directory must
#       `mpi/p2p/point_to_point.cc: PointToPoint::Isend`   the file must
#                                                          define Isend
#   - a gdb command `break NAME [if COND]` (inline, or a line of a fenced
#     block that starts with break or tbreak): NAME must be defined somewhere
#     in the tree.
#
# "Defines" is a textual test, not a compiler's. The last component N must
# occur in the file, outside comments, in a definition-like way: a type
# (`class N`, `struct N`, `enum class N`, `namespace N`), `using N =`,
# `#define N`, a function (`Type N(` or `Type Class::N(`, but not
# `return N(`), or a variable, field, constant or enumerator (`Type N;`,
# `Type N = ...`, `N,` alone on its line). When the reference is qualified
# (`Q::N`), Q must appear in the same file as `Q::N` or be defined there as a
# class, struct or namespace, so a method is looked for beside its class.
# A `break` command's N must be defined so in some source file that also has
# Q beside it and opens the namespaces the name gives (`break a::b::C::N`:
# the file opens namespace a::b, where C is a class, or a::b::C), so a
# missing or wrong namespace is caught; a name without namespaces
# (`break C::N`, `break N`) is one gdb finds in any namespace.
#
# "Outside comments" means: `// ...` to the end of the line is dropped, and
# so is a line that starts (after white space) with `/*` or `*`. Each test
# is made line by line. The source files are the *.cc, *.h and *.c files
# under the tree's top-level directories (symbolic links followed, as
# Bazel's runfiles are made of them), except bazel-* and third_party.
#
# usage: docs/check_tour.sh [--root DIR] [TOUR]
#          DIR: the tree the references are relative to (default: the
#          repository holding this script); TOUR: default DIR/docs/tour.md
#        docs/check_tour.sh --self-test
#          checks the checker: small made-up tours, each with one good and
#          one bad reference, must report exactly the bad one, and one with
#          only the good ones must pass
# Exit status: 0 all references hold; 1 some are broken (each is printed) or
# the self-test failed; 2 usage error.
#
# Needs python3 only (its standard library). It reads the tour once and each
# source file at most once, whatever the number of references (the earlier
# shell version started grep and sed per reference and per file, minutes on
# a busy 2-core machine). Under `bazel test //docs:tour_test` the tree is the
# test's runfiles, which hold just the files docs/BUILD lists (each
# package's :srcs_for_docs): a file of another package shows up as missing
# until its package offers that filegroup.

import os
import re
import shutil
import sys
import tempfile

# --- Patterns ---------------------------------------------------------------

# POSIX [[:space:]] and its complement, in ASCII (as grep and awk read these
# files in the C locale's terms).
SP = r"[ \t\n\r\f\v]"
NOT_SP_EQ = r"[^ \t\n\r\f\v=]"
WORD_END = r"([^A-Za-z0-9_]|$)"


def type_pattern(n):
    """N defined as a type or namespace (not an alias, `=`)."""
    return (r"(class|struct|union|enum|namespace)" + SP + r"+"
            + r"(alignas\([^)]*\)" + SP + r"+)?([A-Za-z0-9_]+::)*" + n
            + r"(" + SP + r"+($|" + NOT_SP_EQ + r")|[^A-Za-z0-9_ \t\n\r\f\v=]|$)")


def definition_pattern(n):
    """N defined in any of the ways the header lists."""
    return "|".join([
        type_pattern(n),
        r"using" + SP + r"+" + n + SP + r"*=",
        r"#" + SP + r"*define" + SP + r"+" + n + WORD_END,
        r"[A-Za-z0-9_*&>]" + SP + r"+([A-Za-z0-9_]+::)*" + n + SP + r"*\(",
        r"[A-Za-z0-9_*&>]" + SP + r"+" + n + SP + r"*(=[^=]|;|\{|\[)",
        r"^" + SP + r"*" + n + SP + r"*(=[^=]|," + SP + r"*(//.*)?$|$)",
    ])


def use_pattern(n):
    """Uses that look like definitions: `return N(...)`, `return N;`."""
    return (r"(^|[^A-Za-z0-9_])return" + SP + r"+([A-Za-z0-9_]+::)*" + n
            + WORD_END)


def qualifier_pattern(q, n):
    """Q, the component before N, seen beside N."""
    return (r"(^|[^A-Za-z0-9_])" + q + r"::" + n + WORD_END + "|"
            + type_pattern(q))


NAME_RE = r"[A-Za-z_][A-Za-z0-9_]*"
SYMBOL_RE = NAME_RE + r"(::" + NAME_RE + r")*"
PATH_RE = r"[A-Za-z0-9_][A-Za-z0-9_.+-]*((/[A-Za-z0-9_.+-]+)+/?|/)"
SYMBOL = re.compile(SYMBOL_RE)
REFERENCE = re.compile(PATH_RE + r"(: " + SYMBOL_RE + r")?")
BREAK_TEXT = re.compile(r"t?break" + SP)

_compiled = {}


def compiled(pattern):
    regex = _compiled.get(pattern)
    if regex is None:
        regex = _compiled[pattern] = re.compile(pattern)
    return regex


# --- Extraction -------------------------------------------------------------

FENCE = re.compile(r"^" + SP + r"*(```|~~~)")
FENCED_BREAK = re.compile(r"^" + SP + r"*t?break" + SP + r"+[^ \t\n\r\f\v]")
BLANK = re.compile(r"^" + SP + r"*$")
SPACES = re.compile(SP + r"+")


def lines_of(text):
    """The lines of a text as grep, sed and awk see them."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def extract(tour_text):
    """Yields (kind, line, text): "S" for every inline code span outside
    fenced blocks, "B" for every break/tbreak line inside them. A span may
    run over several lines (Markdown joins them with a space); it is
    reported at the line where it starts, its white space collapsed. A blank
    line or a fence ends an unclosed span."""
    fence = False
    is_open = False
    span = ""
    start = 0
    for number, line in enumerate(lines_of(tour_text), 1):
        if FENCE.match(line):
            fence = not fence
            is_open = False
            continue
        if fence:
            if FENCED_BREAK.match(line):
                yield "B", number, line.lstrip(" \t\n\r\f\v").rstrip("\t")
            continue
        if BLANK.match(line):
            is_open = False
            continue
        parts = line.split("`")
        n = len(parts)
        for i, part in enumerate(parts, 1):
            if is_open:
                span += part
                if i < n:
                    text = SPACES.sub(" ", span)
                    if text.startswith(" "):
                        text = text[1:]
                    if text.endswith(" "):
                        text = text[:-1]
                    yield "S", start, text
                    is_open = False
                else:
                    span += " "
            elif i < n:
                is_open = True
                span = ""
                start = number


# --- Sources ----------------------------------------------------------------

COMMENT_LINE = re.compile(r"^" + SP + r"*(/\*|\*)")
NAMESPACE_OPEN = re.compile(
    r"^" + SP + r"*(inline" + SP + r"+)?namespace" + SP
    + r"+[A-Za-z_][A-Za-z0-9_:]*" + SP + r"*\{")
NAMESPACE_OPEN_HEAD = re.compile(
    r"^" + SP + r"*(inline" + SP + r"+)?namespace" + SP + r"+")
NAMESPACE_OPEN_TAIL = re.compile(SP + r"*\{.*")
NAMESPACE_CLOSE = re.compile(
    r"^" + SP + r"*}" + SP + r"*//" + SP + r"*namespace" + SP + r"+[A-Za-z_]")
NAMESPACE_CLOSE_HEAD = re.compile(r".*namespace" + SP + r"+")
NAMESPACE_CLOSE_TAIL = re.compile(r"[^A-Za-z0-9_:].*")


class Source:
    """One source file, read once: its text, its lines, its lines without
    comments, and the namespaces it opens (computed when first asked)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.text = f.read().decode("utf-8", "surrogateescape")
        self.lines = lines_of(self.text)
        self.code = [line.split("//", 1)[0] for line in self.lines
                     if not COMMENT_LINE.match(line)]
        self._namespaces = None

    def has(self, pattern, name=None, raw=False):
        """Whether a line (outside comments unless raw) matches the pattern
        and, given name, is not a `return name`."""
        regex = compiled(pattern)
        exclude = compiled(use_pattern(name)) if name else None
        for line in self.lines if raw else self.code:
            if regex.search(line) and not (exclude and exclude.search(line)):
                return True
        return False

    def namespaces(self):
        """The named namespaces the file opens, as the full path at the point
        each opens (`namespace a::b {`, or `namespace a {` then
        `namespace b {`, both give a::b); a `}  // namespace a` comment closes
        one. Anonymous namespaces are left out."""
        if self._namespaces is not None:
            return self._namespaces
        stack = []
        top = 0
        opened = []
        for line in self.lines:
            if NAMESPACE_OPEN.search(line):
                name = NAMESPACE_OPEN_HEAD.sub("", line, count=1)
                name = NAMESPACE_OPEN_TAIL.sub("", name, count=1)
                del stack[top:]
                stack.extend(name.split("::"))
                top = len(stack)
                opened.append("::".join(stack[:top]))
                continue
            if NAMESPACE_CLOSE.search(line):
                name = NAMESPACE_CLOSE_HEAD.sub("", line, count=1)
                name = NAMESPACE_CLOSE_TAIL.sub("", name, count=1)
                top = max(0, top - len(name.split("::")))
        self._namespaces = opened
        return opened


class Tree:
    """The tree the references are relative to; each file is read once."""

    def __init__(self, root):
        self.root = root
        self._sources = {}
        self._files = None
        self._found = {}

    def source(self, path):
        key = os.path.realpath(path)
        source = self._sources.get(key)
        if source is None:
            source = self._sources[key] = Source(path)
        return source

    def files(self):
        """The *.cc, *.h and *.c files of the top-level directories (not
        Bazel's output links, not third_party), links followed."""
        if self._files is not None:
            return self._files
        files = []
        seen = set()

        def walk(directory):
            real = os.path.realpath(directory)
            if real in seen:  # a loop, or a directory reached twice
                return
            seen.add(real)
            try:
                names = sorted(os.listdir(directory))
            except OSError:
                return
            for name in names:
                path = os.path.join(directory, name)
                if os.path.isdir(path):
                    walk(path)
                elif (name.endswith((".cc", ".h", ".c"))
                      and os.path.isfile(path)):
                    files.append(path)

        try:
            top = sorted(os.listdir(self.root))
        except OSError:
            top = []
        for name in top:
            path = os.path.join(self.root, name)
            if (name.startswith(".") or name.startswith("bazel-")
                    or name == "third_party" or not os.path.isdir(path)):
                continue
            walk(path)
        self._files = files
        return files

    def files_with(self, pattern, word, name=None):
        """The source files with a line matching the pattern outside
        comments (and, given name, not only as `return name`). Every pattern
        given here contains `word` literally, so a file without it is
        skipped unread by the regular expressions."""
        key = (pattern, name)
        found = self._found.get(key)
        if found is None:
            found = []
            for path in self.files():
                try:
                    source = self.source(path)
                except OSError:
                    continue
                if word not in source.text:
                    continue
                if (source.has(pattern, raw=True)
                        and source.has(pattern, name)):
                    found.append(source)
            self._found[key] = found
        return found


# --- Checks -----------------------------------------------------------------

def check_reference(tree, reference):
    """Why a file reference is broken, or None."""
    path, sep, symbol = reference.partition(": ")
    if not sep:
        symbol = ""
    full = os.path.join(tree.root, path)
    if path.endswith("/"):
        return None if os.path.isdir(full) else "no such directory"
    if not os.path.isfile(full):
        return "no such file"
    if not symbol:
        return None
    last = symbol.rsplit("::", 1)[-1]
    source = tree.source(full)
    if not source.has(definition_pattern(last), last):
        return f"{last} is not defined in {path}"
    if symbol != last:
        qualifier = symbol.rsplit("::", 1)[0].rsplit("::", 1)[-1]
        if not source.has(qualifier_pattern(qualifier, last)):
            return f"{path} defines {last}, but not as {qualifier}::{last}"
    return None


def check_break(tree, command):
    """Why a gdb `break NAME [if ...]` command is broken, or None."""
    fields = re.split(r"[ \t\n]+", command.strip(" \t\n"))
    name = fields[1] if len(fields) > 1 else ""
    if not SYMBOL.fullmatch(name):
        return "not a function name this check understands"
    last = name.rsplit("::", 1)[-1]
    files = tree.files_with(definition_pattern(last), last, last)
    if not files:
        return f"{last} is defined in no source file"
    if name == last:
        return None
    rest = name.rsplit("::", 1)[0]
    qualifier = rest.rsplit("::", 1)[-1]
    outer = rest[:-len(qualifier)]
    if outer.endswith("::"):
        outer = outer[:-2]
    # A file that defines N beside Q, inside the namespaces the name gives:
    # the file opens `rest` (Q is a namespace) or `outer` (Q is a class in
    # it). A bare Class::Method is found by gdb in any namespace, as long as
    # Q is no namespace of that file.
    beside = found = False
    for source in files:
        if not source.has(qualifier_pattern(qualifier, last)):
            continue
        beside = True
        opened = source.namespaces()
        components = {c for path in opened for c in path.split(":")}
        if (rest in opened or (outer and outer in opened)
                or (not outer and qualifier not in components)):
            found = True
            break
    if not beside:
        return f"no file that defines {last} has it as {qualifier}::{last}"
    if not found:
        return f"no file defines {name} in those namespaces"
    if not outer:
        return None
    for component in outer.split("::"):
        if not tree.files_with(type_pattern(component), component):
            return f"{component} is no namespace, class or struct of the tree"
    return None


def check_tour(root, tour, out=sys.stdout):
    """Checks every reference of `tour` against `root`. Prints each broken
    one and a summary; returns 1 when any is broken (or none was found), 2
    when there is no tour."""
    if not os.path.isfile(tour):
        print(f"check_tour: {tour}: no such file", file=sys.stderr)
        return 2
    with open(tour, "rb") as f:
        text = f.read().decode("utf-8", "surrogateescape")
    tree = Tree(root)
    references = breaks = broken = 0
    for kind, line, text in extract(text):
        if kind == "B" or BREAK_TEXT.match(text):
            breaks += 1
            why = check_break(tree, text)
        elif REFERENCE.fullmatch(text):
            references += 1
            why = check_reference(tree, text)
        else:
            continue
        if why:
            broken += 1
            print(f"{tour}:{line}: broken reference `{text}`: {why}", file=out)
    if references + breaks == 0:
        print(f"check_tour: {tour}: no references found"
              " (is the convention still followed?)", file=out)
        return 1
    print(f"check_tour: {tour}: {references} references and {breaks}"
          f" break commands checked, {broken} broken", file=out)
    return 1 if broken else 0


# --- Self-test --------------------------------------------------------------

class Capture:
    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)

    def lines(self):
        text = "".join(self.parts).rstrip("\n")
        return text.split("\n")


def run_captured(name, root, tour):
    capture = Capture()
    status = check_tour(root, tour, out=capture)
    lines = capture.lines()
    for line in lines:
        print(f"  {name}: {line}")
    return status, lines


def expect_one(name, root, tour, bad):
    """The check on `tour` in `root` must fail, reporting exactly one broken
    reference, the one containing `bad`."""
    status, lines = run_captured(name, root, tour)
    reported = [line for line in lines if ": broken reference " in line]
    if status != 1:
        print(f"self-test {name}: FAILED: exit status {status}, expected 1")
        return False
    if len(reported) != 1 or bad not in reported[0]:
        print(f"self-test {name}: FAILED: expected exactly one broken"
              f" reference, {bad}")
        return False
    print(f"self-test {name}: ok (exactly the bad reference was reported)")
    return True


def expect_pass(name, root, tour):
    """The check on `tour` in `root` must pass."""
    status, _ = run_captured(name, root, tour)
    if status != 0:
        print(f"self-test {name}: FAILED: exit status {status}, expected 0")
        return False
    print(f"self-test {name}: ok (nothing reported)")
    return True


SELF_TEST_FILES = {
    "demo/widget.cc": """\
namespace demo {
class Widget {
 public:
  void Spin(int turns);
};
void Widget::Spin(int turns) { (void)turns; }
}  // namespace demo
""",
    # The bad reference runs over two lines, as wrapped prose does.
    "symbols.md": """\
A good reference, `demo/widget.cc: Widget::Spin`, and a bad one, `demo/widget.cc:
Widget::Stop`.
""",
    "files.md": """\
A good file, `demo/widget.cc`, and a missing one, `demo/gadget.cc`.
""",
    "good.md": """\
Only good ones: `demo/`, `demo/widget.cc`, `demo/widget.cc: Widget::Spin`
and `break demo::Widget::Spin`.
""",
    "breaks.md": """\
Stop in `break demo::Widget::Spin`, then:

```
break demo::Gadget::Spin
```
""",
}


def self_test():
    base = os.environ.get("TEST_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
    try:
        directory = tempfile.mkdtemp(prefix="check_tour.", dir=base)
    except OSError as error:
        print(f"check_tour self-test: {error}", file=sys.stderr)
        return 1
    try:
        for name, text in SELF_TEST_FILES.items():
            path = os.path.join(directory, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)

        def tour(name):
            return os.path.join(directory, name)

        results = [
            expect_one("symbols", directory, tour("symbols.md"),
                       "Widget::Stop"),
            expect_one("files", directory, tour("files.md"),
                       "demo/gadget.cc"),
            expect_one("breaks", directory, tour("breaks.md"),
                       "demo::Gadget::Spin"),
            expect_pass("good", directory, tour("good.md")),
        ]
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if not all(results):
        print("check_tour self-test: FAILED")
        return 1
    print("check_tour self-test: passed")
    return 0


# --- Main -------------------------------------------------------------------

def usage():
    with open(__file__, encoding="utf-8") as f:
        lines = f.read().split("\n")
    printing = False
    for line in lines:
        if line.startswith("# usage:"):
            printing = True
        if printing:
            print(re.sub(r"^# ?", "", line), file=sys.stderr)
            if line.endswith("usage error."):
                break
    sys.exit(2)


def main(argv):
    # Not resolved: under Bazel this file is a link in the runfiles, whose
    # directory is the tree to check.
    script_dir = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(script_dir)
    tour = ""
    args = list(argv)
    while args:
        arg = args[0]
        if arg == "--self-test":
            if len(args) != 1:
                usage()
            return self_test()
        if arg == "--root":
            if len(args) < 2:
                usage()
            root = args[1]
            args = args[2:]
        elif arg in ("-h", "--help") or arg.startswith("-"):
            usage()
        else:
            if tour:
                usage()
            tour = arg
            args = args[1:]
    if not tour:
        tour = os.path.join(root, "docs", "tour.md")
    status = check_tour(root, tour)
    sys.stdout.flush()
    return 2 if status > 1 else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
