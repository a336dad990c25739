#!/usr/bin/env bash
# Checks that docs/tour.md names only files, functions and types that exist.
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
# Needs bash, grep, sed and awk only. Under `bazel test //docs:tour_test` the
# tree is the test's runfiles, which hold just the files docs/BUILD lists
# (each package's :srcs_for_docs): a file of another package shows up as
# missing until its package offers that filegroup.
set -uo pipefail

script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"

usage() {
  sed -n '/^# usage:/,/usage error\.$/p' "${BASH_SOURCE[0]}" |
    sed 's/^# \{0,1\}//' >&2
  exit 2
}

# --- Patterns ---------------------------------------------------------------

# Extended regular expressions for a name N (letters, digits, _ only, so it
# needs no escaping).
word_end='([^A-Za-z0-9_]|$)'
type_pattern() {  # N defined as a type or namespace (not an alias, `=`)
  printf '%s' "(class|struct|union|enum|namespace)[[:space:]]+"
  printf '%s' "(alignas\\([^)]*\\)[[:space:]]+)?([A-Za-z0-9_]+::)*$1"
  printf '%s' "([[:space:]]+($|[^[:space:]=])|[^A-Za-z0-9_[:space:]=]|$)"
}
definition_pattern() {  # N defined in any of the ways listed above
  local n="$1"
  printf '%s' "$(type_pattern "${n}")"
  printf '%s' "|using[[:space:]]+${n}[[:space:]]*="
  printf '%s' "|#[[:space:]]*define[[:space:]]+${n}${word_end}"
  printf '%s' "|[A-Za-z0-9_*&>][[:space:]]+([A-Za-z0-9_]+::)*${n}[[:space:]]*\\("
  printf '%s' "|[A-Za-z0-9_*&>][[:space:]]+${n}[[:space:]]*(=[^=]|;|\\{|\\[)"
  printf '%s' "|^[[:space:]]*${n}[[:space:]]*(=[^=]|,[[:space:]]*(//.*)?$|$)"
}
# Uses that look like definitions to the patterns above: `return N(...)`,
# `return N;`.
use_pattern() {
  printf '%s' "(^|[^A-Za-z0-9_])return[[:space:]]+"
  printf '%s' "([A-Za-z0-9_]+::)*$1${word_end}"
}
qualifier_pattern() {  # Q, the component before N, seen beside N
  local q="$1" n="$2"
  printf '%s' "(^|[^A-Za-z0-9_])${q}::${n}${word_end}|$(type_pattern "${q}")"
}

name_re='[A-Za-z_][A-Za-z0-9_]*'
symbol_re="${name_re}(::${name_re})*"
path_re='[A-Za-z0-9_][A-Za-z0-9_.+-]*((/[A-Za-z0-9_.+-]+)+/?|/)'

# --- Extraction -------------------------------------------------------------

# Prints "S<TAB>line<TAB>span" for every inline code span outside fenced
# blocks, and "B<TAB>line<TAB>command" for every break/tbreak line inside
# them. A span may run over several lines (Markdown joins them with a
# space); it is reported at the line where it starts, its white space
# collapsed. A blank line or a fence ends an unclosed span.
extract() {
  awk '
    /^[[:space:]]*(```|~~~)/ { fence = !fence; open = 0; next }
    fence {
      if ($0 ~ /^[[:space:]]*t?break[[:space:]]+[^[:space:]]/) {
        text = $0
        sub(/^[[:space:]]+/, "", text)
        print "B\t" NR "\t" text
      }
      next
    }
    /^[[:space:]]*$/ { open = 0; next }
    {
      n = split($0, part, "`")
      for (i = 1; i <= n; ++i) {
        if (open) {
          span = span part[i]
          if (i < n) {
            gsub(/[[:space:]]+/, " ", span)
            sub(/^ /, "", span)
            sub(/ $/, "", span)
            print "S\t" start "\t" span
            open = 0
          } else {
            span = span " "
          }
        } else if (i < n) {
          open = 1
          span = ""
          start = NR
        }
      }
    }
  ' "$1"
}

# --- Checks -----------------------------------------------------------------

# A source file without its comments: `// ...` to the end of the line, and
# lines that start a block comment or continue one with `*`.
code_of() {
  sed -E -e '/^[[:space:]]*(\/\*|\*)/d' -e 's://.*$::' -- "$1"
}

# Whether `file` has a line, outside comments, matching the extended regex
# `pattern` that is not a `return` of `name`.
file_has() {
  local file="$1" pattern="$2" name="${3:-}"
  # No grep -q: it would stop reading early, and sed's broken pipe would
  # fail the pipeline (pipefail).
  if [ -n "${name}" ]; then
    code_of "${file}" | grep -E -e "${pattern}" |
      grep -vE -e "$(use_pattern "${name}")" >/dev/null
  else
    code_of "${file}" | grep -E -e "${pattern}" >/dev/null
  fi
}

# The named namespaces `file` opens, one per line, as the full path at the
# point each opens (`namespace a::b {`, or `namespace a {` then
# `namespace b {`, both give a::b); a `}  // namespace a` comment closes one.
# Anonymous namespaces are left out.
namespaces_of() {
  awk '
    /^[[:space:]]*(inline[[:space:]]+)?namespace[[:space:]]+[A-Za-z_][A-Za-z0-9_:]*[[:space:]]*\{/ {
      name = $0
      sub(/^[[:space:]]*(inline[[:space:]]+)?namespace[[:space:]]+/, "", name)
      sub(/[[:space:]]*\{.*/, "", name)
      depth = split(name, parts, "::")
      for (i = 1; i <= depth; ++i) stack[++top] = parts[i]
      path = stack[1]
      for (i = 2; i <= top; ++i) path = path "::" stack[i]
      print path
      next
    }
    /^[[:space:]]*}[[:space:]]*\/\/[[:space:]]*namespace[[:space:]]+[A-Za-z_]/ {
      name = $0
      sub(/.*namespace[[:space:]]+/, "", name)
      sub(/[^A-Za-z0-9_:].*/, "", name)
      top -= split(name, parts, "::")
      if (top < 0) top = 0
    }
  ' "$1"
}

# The directories of `root` that hold sources (not Bazel's output links).
source_dirs() {
  local root="$1" dir
  for dir in "${root}"/*/; do
    case "$(basename -- "${dir}")" in
      bazel-* | third_party) continue ;;
    esac
    printf '%s\n' "${dir%/}"
  done
}

# The source files under `root` that match the extended regex outside
# comments (and, given `name`, not only as `return name`). grep -R follows
# the symbolic links Bazel's runfiles are made of.
tree_files() {
  local root="$1" pattern="$2" name="${3:-}" dir file
  while IFS= read -r dir; do
    grep -RlE --include='*.cc' --include='*.h' --include='*.c' \
      -e "${pattern}" -- "${dir}" 2>/dev/null
  done < <(source_dirs "${root}") | while IFS= read -r file; do
    if file_has "${file}" "${pattern}" "${name}"; then
      printf '%s\n' "${file}"
    fi
  done
}

# Whether some source file under `root` matches (see tree_files).
tree_has() {
  [ -n "$(tree_files "$1" "$2" | head -n 1)" ]
}

# Checks a file reference; prints why it is broken, or nothing.
check_reference() {
  local root="$1" reference="$2"
  local path="${reference%%: *}" symbol=""
  [ "${path}" != "${reference}" ] && symbol="${reference#*: }"
  if [ "${path%/}" != "${path}" ]; then
    [ -d "${root}/${path}" ] || echo "no such directory"
    return
  fi
  if [ ! -f "${root}/${path}" ]; then
    echo "no such file"
    return
  fi
  [ -n "${symbol}" ] || return
  local last="${symbol##*::}"
  if ! file_has "${root}/${path}" "$(definition_pattern "${last}")" \
      "${last}"; then
    echo "${last} is not defined in ${path}"
    return
  fi
  if [ "${symbol}" != "${last}" ]; then
    local rest="${symbol%::*}"
    local qualifier="${rest##*::}"
    if ! file_has "${root}/${path}" \
        "$(qualifier_pattern "${qualifier}" "${last}")"; then
      echo "${path} defines ${last}, but not as ${qualifier}::${last}"
    fi
  fi
}

# Checks a gdb `break NAME [if ...]` command; prints why it is broken.
check_break() {
  local root="$1" command="$2"
  local name
  name="$(printf '%s\n' "${command}" | awk '{ print $2 }')"
  if ! [[ "${name}" =~ ^${symbol_re}$ ]]; then
    echo "not a function name this check understands"
    return
  fi
  local last="${name##*::}"
  local files
  files="$(tree_files "${root}" "$(definition_pattern "${last}")" "${last}")"
  if [ -z "${files}" ]; then
    echo "${last} is defined in no source file"
    return
  fi
  [ "${name}" != "${last}" ] || return
  local rest="${name%::*}"
  local qualifier="${rest##*::}"
  local outer
  outer="${rest%"${qualifier}"}"
  outer="${outer%::}"
  # A file that defines N beside Q, inside the namespaces the name gives:
  # the file opens `rest` (Q is a namespace) or `outer` (Q is a class in
  # it). A bare Class::Method is found by gdb in any namespace, as long as
  # Q is no namespace of that file.
  local file beside=0 found=0 opened
  while IFS= read -r file; do
    file_has "${file}" "$(qualifier_pattern "${qualifier}" "${last}")" ||
      continue
    beside=1
    opened="$(namespaces_of "${file}")"
    if printf '%s\n' "${opened}" | grep -xF -e "${rest}" >/dev/null ||
        { [ -n "${outer}" ] &&
          printf '%s\n' "${opened}" | grep -xF -e "${outer}" >/dev/null; } ||
        { [ -z "${outer}" ] &&
          ! printf '%s\n' "${opened}" | tr ':' '\n' |
            grep -xF -e "${qualifier}" >/dev/null; }; then
      found=1
      break
    fi
  done <<<"${files}"
  if [ "${beside}" -eq 0 ]; then
    echo "no file that defines ${last} has it as ${qualifier}::${last}"
    return
  fi
  if [ "${found}" -eq 0 ]; then
    echo "no file defines ${name} in those namespaces"
    return
  fi
  local component
  [ -n "${outer}" ] || return
  IFS=':' read -r -a components <<<"${outer//::/:}"
  for component in "${components[@]}"; do
    if ! tree_has "${root}" "$(type_pattern "${component}")"; then
      echo "${component} is no namespace, class or struct of the tree"
      return
    fi
  done
}

# Checks every reference of `tour` against `root`. Prints each broken one
# and a summary; returns 1 when any is broken (or none was found).
check_tour() {
  local root="$1" tour="$2"
  if [ ! -f "${tour}" ]; then
    echo "check_tour: ${tour}: no such file" >&2
    return 2
  fi
  local references=0 breaks=0 broken=0 kind line text why
  while IFS=$'\t' read -r kind line text; do
    why=""
    if [ "${kind}" = B ] || [[ "${text}" =~ ^t?break[[:space:]] ]]; then
      breaks=$((breaks + 1))
      why="$(check_break "${root}" "${text}")"
    elif [[ "${text}" =~ ^${path_re}(:\ ${symbol_re})?$ ]]; then
      references=$((references + 1))
      why="$(check_reference "${root}" "${text}")"
    else
      continue
    fi
    if [ -n "${why}" ]; then
      broken=$((broken + 1))
      printf '%s:%s: broken reference `%s`: %s\n' "${tour}" "${line}" \
        "${text}" "${why}"
    fi
  done < <(extract "${tour}")
  if [ $((references + breaks)) -eq 0 ]; then
    echo "check_tour: ${tour}: no references found" \
      "(is the convention still followed?)"
    return 1
  fi
  echo "check_tour: ${tour}: ${references} references and ${breaks}" \
    "break commands checked, ${broken} broken"
  [ "${broken}" -eq 0 ]
}

# --- Self-test --------------------------------------------------------------

# Runs the check on `tour` in `root` and expects it to fail, reporting
# exactly one broken reference, the one containing `bad`.
expect_one() {
  local name="$1" root="$2" tour="$3" bad="$4"
  local output status reported
  output="$(check_tour "${root}" "${tour}")"
  status=$?
  reported="$(printf '%s\n' "${output}" | grep -c ': broken reference ')"
  printf '%s\n' "${output}" | sed "s|^|  ${name}: |"
  if [ "${status}" -ne 1 ]; then
    echo "self-test ${name}: FAILED: exit status ${status}, expected 1"
    return 1
  fi
  if [ "${reported}" -ne 1 ] ||
      ! printf '%s\n' "${output}" | grep ': broken reference ' |
        grep -F -- "${bad}" >/dev/null; then
    echo "self-test ${name}: FAILED: expected exactly one broken" \
      "reference, ${bad}"
    return 1
  fi
  echo "self-test ${name}: ok (exactly the bad reference was reported)"
}

# Runs the check on `tour` in `root` and expects it to pass.
expect_pass() {
  local name="$1" root="$2" tour="$3"
  local output status
  output="$(check_tour "${root}" "${tour}")"
  status=$?
  printf '%s\n' "${output}" | sed "s|^|  ${name}: |"
  if [ "${status}" -ne 0 ]; then
    echo "self-test ${name}: FAILED: exit status ${status}, expected 0"
    return 1
  fi
  echo "self-test ${name}: ok (nothing reported)"
}

self_test() {
  local dir
  dir="$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/check_tour.XXXXXX")" ||
    return 1
  mkdir -p "${dir}/demo"
  cat >"${dir}/demo/widget.cc" <<'EOF'
namespace demo {
class Widget {
 public:
  void Spin(int turns);
};
void Widget::Spin(int turns) { (void)turns; }
}  // namespace demo
EOF
  # The bad reference runs over two lines, as wrapped prose does.
  cat >"${dir}/symbols.md" <<'EOF'
A good reference, `demo/widget.cc: Widget::Spin`, and a bad one, `demo/widget.cc:
Widget::Stop`.
EOF
  cat >"${dir}/files.md" <<'EOF'
A good file, `demo/widget.cc`, and a missing one, `demo/gadget.cc`.
EOF
  cat >"${dir}/good.md" <<'EOF'
Only good ones: `demo/`, `demo/widget.cc`, `demo/widget.cc: Widget::Spin`
and `break demo::Widget::Spin`.
EOF
  cat >"${dir}/breaks.md" <<'EOF'
Stop in `break demo::Widget::Spin`, then:

```
break demo::Gadget::Spin
```
EOF
  local failed=0
  expect_one symbols "${dir}" "${dir}/symbols.md" 'Widget::Stop' || failed=1
  expect_one files "${dir}" "${dir}/files.md" 'demo/gadget.cc' || failed=1
  expect_one breaks "${dir}" "${dir}/breaks.md" 'demo::Gadget::Spin' || failed=1
  expect_pass good "${dir}" "${dir}/good.md" || failed=1
  rm -rf -- "${dir}"
  if [ "${failed}" -ne 0 ]; then
    echo "check_tour self-test: FAILED"
    return 1
  fi
  echo "check_tour self-test: passed"
}

# --- Main -------------------------------------------------------------------

root="$(cd -- "${script_dir}/.." && pwd)"
tour=""
while [ $# -gt 0 ]; do
  case "$1" in
    --self-test)
      [ $# -eq 1 ] || usage
      self_test
      exit $?
      ;;
    --root)
      [ $# -ge 2 ] || usage
      root="$2"
      shift 2
      ;;
    -h | --help) usage ;;
    -*) usage ;;
    *)
      [ -z "${tour}" ] || usage
      tour="$1"
      shift
      ;;
  esac
done
[ -n "${tour}" ] || tour="${root}/docs/tour.md"
check_tour "${root}" "${tour}"
status=$?
[ "${status}" -le 1 ] || exit 2
exit "${status}"
