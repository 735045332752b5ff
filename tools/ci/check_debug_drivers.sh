#!/usr/bin/env bash
# check_debug_drivers.sh — `make asan-task1` / `asan-task3` (the CPU tasks' functions in one process, common/debug_drive.h):
# the references run clean under AddressSanitizer and UBSan, and the crash control (task1/controls/crash.patch: prints,
# then stores through a null pointer) is stopped at its file and line, after the call's announcement and the print.
set -uo pipefail
cd "$(dirname "$0")/../.."
MAKE=${MAKE:-make}
fail() { echo "check-debug-drivers: $*"; exit 1; }
for t in 1 3; do
  out=$($MAKE --no-print-directory asan-task$t IMPL=reference 2>&1) || { echo "$out" | tail -5; fail "asan-task$t on the reference failed"; }
  grep -q "drive_task$t: done" <<<"$out" || fail "asan-task$t on the reference did not finish"
done
tmp=build/reference/debug-control
rm -rf "$tmp" && mkdir -p "$tmp"
patch -s -o "$tmp/naive_mha.cpp" task1/reference/naive_mha.cpp task1/controls/crash.patch || fail "crash.patch does not apply"
$MAKE --no-print-directory -s "$tmp/debug/asan_task1" IMPL=reference BUILD="$tmp" TASK1_SRC="$tmp/naive_mha.cpp" || fail "the control did not build"
out=$("$tmp/debug/asan_task1" naive_mha 2>&1); rc=$?
[ $rc -ne 0 ] || fail "the crash control ran to the end under ASan/UBSan"
grep -q "calling naive_mha(B=2, S=127" <<<"$out" || fail "the crashing call was not announced: $out"
grep -q "naive_mha: S = 127" <<<"$out" || fail "what the crashing call printed was lost: $out"
grep -qE "naive_mha\.cpp:[0-9]+" <<<"$out" || fail "the crash was not placed at a line: $out"
echo "check-debug-drivers: asan-task1 and asan-task3 run the references clean; the crash control is stopped at $(grep -oE 'naive_mha\.cpp:[0-9]+' <<<"$out" | head -1)"
