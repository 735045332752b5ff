#!/usr/bin/env bash
# check_no_cuda.sh — a student's machine without the CUDA toolkit: the course's tracked files copied to
# build/no-cuda/tree and built inside bubblewrap with the toolkit hidden (/usr/local/cuda and every folder of nvcc on PATH
# an empty tmpfs). Tasks 1 and 3 must build there (no nvcc, no cuBLAS, no cudart) and their reference must pass its
# tests; `make task2` and `make grade` must stop at once with the message that names the missing toolkit. Run by make test.
set -uo pipefail
cd "$(dirname "$0")/../.."
fail() { echo "check-no-cuda: $*"; exit 1; }
command -v bwrap >/dev/null || { echo "skipped: bubblewrap not installed"; exit 77; }
T=$PWD/build/no-cuda
rm -rf "$T" && mkdir -p "$T/tree"
git ls-files -z | xargs -0 cp --parents -t "$T/tree" 2>/dev/null || fail "could not copy the tracked files"
hide=() hidden=()
for d in $( { readlink -f /usr/local/cuda; which -a nvcc | xargs -r -n1 readlink -f | xargs -r -n1 dirname; } 2>/dev/null | sort -u); do
  [ -d "$d" ] || continue
  for h in "${hidden[@]}"; do [[ $d == "$h"/* ]] && continue 2; done  # inside a folder already hidden
  case "$d" in /usr/bin|/bin) fail "nvcc is in $d, which cannot be hidden here";; esac
  hide+=(--tmpfs "$d") hidden+=("$d")
done
inside() {  # inside COMMAND…: run in the tree, the toolkit hidden, a plain environment
  bwrap --dev-bind / / "${hide[@]}" --chdir "$T/tree" -- env -i PATH=/usr/local/cuda/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME="$T" ATTNLAB_GOLDENS="$PWD/goldens" CCACHE="${CCACHE:-}" CCACHE_DIR="${CCACHE_DIR:-}" CCACHE_BASEDIR="$T/tree" \
    CCACHE_NOHASHDIR=1 "$@"
}
inside true || fail "bubblewrap cannot hide the toolkit here (${hide[*]})"
inside bash -c 'command -v nvcc' >/dev/null && fail "nvcc is still reachable inside the check"
J=$(nproc 2>/dev/null || echo 2)
for t in 1 3; do
  inside make --no-print-directory -j"$J" IMPL=reference "CCACHE=${CCACHE:-}" build/reference/bin/task$t build/reference/bin/runner_task$t \
    build/common/null-runners/runner_task$t > "$T/build-task$t.log" 2>&1 || { tail -20 "$T/build-task$t.log"; fail "Task $t does not build without CUDA"; }
  grep -q "NVCC" "$T/build-task$t.log" && fail "Task $t's build ran nvcc"
  inside ./build/reference/bin/task$t > "$T/task$t.log" 2>&1 || { tail -20 "$T/task$t.log"; fail "Task $t's reference does not pass without CUDA"; }
  echo "check-no-cuda: Task $t built without the CUDA toolkit, its reference passes ($(tail -n 1 "$T/task$t.log"))"
done
for goal in task2 grade; do
  inside make --no-print-directory "$goal" > "$T/$goal.log" 2>&1 && fail "make $goal went on without the CUDA toolkit"
  grep -q "make $goal: .*needs the CUDA toolkit (nvcc" "$T/$goal.log" && ! grep -q "NVCC\|CXX " "$T/$goal.log" \
    || { cat "$T/$goal.log"; fail "make $goal did not stop with the message naming the toolkit"; }
done
echo "check-no-cuda: make task2 and make grade name the missing toolkit before building anything"
