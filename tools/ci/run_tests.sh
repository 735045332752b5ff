#!/usr/bin/env bash
# run_tests.sh — everything `make test` (and so CI) checks, in order, with one summary line.
#
# deps → goldens → skeleton drift → build both sides → the reference's machine code (cuobjdump) → harness unit tests →
# profile-summary parser and result pictures (fixtures) → the Python bridge (python/tests: its checks on the CPU; on a GPU, or skipped) →
# make profile/sanitize-task4 (run, or skipped without a GPU) → reference tests (must pass) → skeleton tests
# (must fail cleanly, naming each TODO) → grader on both sides → negative controls → exploit suite → the student kit. A step that fails is counted and the run goes on; exit 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
MAKE="make --no-print-directory"
PY=/usr/bin/python3
CPU_TASKS="1 3"
GPU_TASKS="2 4 5 6 7"
LOG=build/test-logs
JOBS=$(nproc)
passed=0 failed=0 skipped=0
NAMES=() TIMES=() MARKS=()  # the clock: each step's name, seconds and mark ("‖": it ran beside the steps around it)

# A compiler cache of the run's own (build/ccache, cold in a fresh clone; ccache comes with the deps step): what two
# steps compile alike is compiled once — the kit's build and the exploits' harness files reuse the reference build's
# objects. Hits across folders (the kit is another checkout) need no working directory in the hash.
use_compiler_cache() {
  command -v ccache >/dev/null && export CCACHE=ccache CCACHE_DIR=$PWD/build/ccache CCACHE_NOHASHDIR=1 CCACHE_BASEDIR=$PWD
  return 0
}

report() {  # report NAME RC SECONDS MARK: one line, counted, and the clock's row
  local name=$1 rc=$2 secs=$3 log="$LOG/${1//[ \/]/_}.log"
  NAMES+=("$name") TIMES+=("$secs") MARKS+=("$4")
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); printf 'ok    %-44s %4ss\n' "$name" "$secs"
  elif [ "$rc" -eq 77 ]; then
    skipped=$((skipped + 1)); printf 'skip  %-44s %4ss   %s\n' "$name" "$secs" "$(tail -n 1 "$log")"
  else
    failed=$((failed + 1)); printf 'FAIL  %-44s %4ss   (log: %s)\n' "$name" "$secs" "$log"
    tail -n 25 "$log" | sed 's/^/      /'
  fi
}

step() {  # step NAME COMMAND...: runs it, logs it, counts it (exit 77 = skipped)
  local name=$1; shift
  local t0=$SECONDS rc=0
  "$@" >"$LOG/${name//[ \/]/_}.log" 2>&1 || rc=$?
  report "$name" $rc $((SECONDS - t0)) ""
}

# Steps that leave a core idle run beside each other: `beside NAME COMMAND...` starts one in the background,
# `joined` waits for all of them and reports each in the order they started.
BESIDE=()
beside() {
  local name=$1; shift
  ( t0=$SECONDS; rc=0; "$@" >"$LOG/${name//[ \/]/_}.log" 2>&1 || rc=$?; echo "$rc $((SECONDS - t0))" > "$LOG/${name//[ \/]/_}.status" ) &
  BESIDE+=("$name")
}
joined() {
  wait
  local name rc secs
  for name in "${BESIDE[@]}"; do
    read -r rc secs < "$LOG/${name//[ \/]/_}.status" || { rc=1 secs=0; }
    report "$name" "$rc" "$secs" "‖"
  done
  BESIDE=()
}

clock() {  # the table of every step's time, and the whole run's
  local i
  echo
  echo "step times (s; ‖ = ran beside its neighbours marked so), $JOBS cores:"
  for i in "${!NAMES[@]}"; do printf '  %5s %s %s\n' "${TIMES[$i]}" "${MARKS[$i]:- }" "${NAMES[$i]}"; done
  printf '  %5s   total (wall clock of make test)\n' "$SECONDS"
}

# The skeleton must fail every case cleanly: no crash, no case passing, each TODO named.
skeleton_fails_cleanly() {
  local bin=$1 out rc
  out=$("$bin" 2>&1); rc=$?
  echo "$out"
  [ $rc -eq 77 ] && return 77  # a GPU task on a machine without one
  if [ $rc -eq 0 ] || [ $rc -ge 128 ]; then echo "expected a clean test failure, exit code was $rc"; return 1; fi
  if grep -q '^\s*\[passed' <<<"$out"; then echo "a skeleton case passed: a TODO that returns something passable"; return 1; fi
  grep -q 'not implemented' <<<"$out" || { echo "no 'taskN.M not implemented' message"; return 1; }
}

# make profile-task4 / sanitize-task4 (IMPL=$1): on a GPU with ncu and compute-sanitizer they run; without
# a GPU (or the tool) each must end with one "skipped: …" line and exit code 77 — then this step is skipped.
gpu_tools_run_or_skip() {
  local impl=$1 target out rc skipped=""
  for target in profile-task4 sanitize-task4; do
    out=$($MAKE IMPL=$impl $target 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] && continue
    grep -q "Error 77" <<<"$out" || { echo "$target: failed (not a skip: no exit code 77)"; return 1; }
    line=$(grep -m1 "^$target: .*skipped: " <<<"$out") || { echo "$target: exit 77 without a '$target: … skipped: …' line"; return 1; }
    skipped="$line"
  done
  [ -z "$skipped" ] && return 0
  echo "$skipped"
  return 77
}

# The grader's command line (CLI11; $1: a grader): every option the scripts and docs use, repeated where it may be,
# parses (the run then stops at the missing rubric it was given, before writing anything); a bad value is refused
# naming its option; --help lists every option.
grader_command_line() {
  local g=$1 out o
  out=$("$g" --task 1 --task 3 --objects 1=a.o,b.o --objects 3=c.o --timeout 5 --impl cli --root . --bin-dir build \
        --reference-bin-dir build --perf-only --out build/cli-test --rubric build/no-such-rubric.json 2>&1)
  echo "$out"
  grep -q "rubric build/no-such-rubric.json: file not found" <<<"$out" || { echo "the options did not parse"; return 1; }
  out=$("$g" --task 1 --task x 2>&1)
  [ $? -eq 2 ] && grep -q -- "--task" <<<"$out" || { echo "a bad --task value was not refused naming it: $out"; return 1; }
  out=$("$g" --help) || return 1
  for o in task rubric out impl timeout root objects bin-dir reference-bin-dir perf-only submissions collect measure-perf \
           no-baselines; do
    grep -qE -- "--$o( |=|$)" <<<"$out" || { echo "grader --help does not list --$o"; return 1; }
  done
  echo "grader's command line: every option parsed, a bad value refused, --help lists all"
}

mkdir -p "$LOG"
if ! ls task*/reference >/dev/null 2>&1; then
  # The student kit: no reference, no controls. Build, check the harness, grade what is there.
  step "deps" bash tools/setup/install_deps.sh || exit 1
  use_compiler_cache
  step "goldens" $MAKE goldens-if-stale
  step "check-protected (harness sums current)" $MAKE check-protected
  step "build" $MAKE -j$JOBS IMPL=skeleton all
  step "harness unit tests" ./build/skeleton/bin/unit_tests
  step "grader's command line (CLI11)" grader_command_line ./build/skeleton/bin/grader
  step "task7 tokenizer = tiktoken, checkpoint checks" ./build/skeleton/bin/task7_cpu_tests
  step "profile summary: ncu CSV parser (fixture)" $PY tools/profile/test_profile_summary.py
  step "stalls by source line: ncu source-page parser (fixture)" $PY tools/profile/test_stalls_by_line.py
  step "bf16 rounds table: medians of the benchmarks' logs (fixture)" $PY tools/vs_torch/test_rounds_table.py
  step "torch timing: the GPU waits while a call is queued (stand-ins)" $PY tools/vs_torch/test_event_timing.py
  step "pictures of a run: results.json fixture" $PY tools/pictures/test_plot_results.py
  step "python bridge: checks, torch op, make python" $PY python/tests/test_bridge.py
  step "grade (writes Results.md)" $MAKE grade OUT=build/grade
  clock
  echo "test: $passed passed, $failed failed, $skipped skipped"
  [ $failed -eq 0 ]; exit
fi
step "deps" bash tools/setup/install_deps.sh || exit 1
use_compiler_cache
step "check-skeleton (unifdef drift)" $MAKE check-skeleton
step "check-protected (harness sums current)" $MAKE check-protected
# torch makes the goldens on one core while the other compiles
beside "goldens" $MAKE goldens-if-stale
step "build reference" $MAKE -j$JOBS IMPL=reference all
joined
step "build skeleton" $MAKE -j$JOBS IMPL=skeleton all
step "machine code: no cp.async on unwritten uniform registers" bash -c \
  "$PY tools/ci/check_sass.py --self-test && $PY tools/ci/check_sass.py build/reference build/common"
step "harness unit tests" ./build/reference/bin/unit_tests
step "timed calls' oracles against float64 (GPU or skip)" ./build/reference/bin/grader_gpu_tests
step "grader's command line (CLI11)" grader_command_line ./build/reference/bin/grader
step "task7 tokenizer = tiktoken, checkpoint checks" ./build/reference/bin/task7_cpu_tests
step "profile summary: ncu CSV parser (fixture)" $PY tools/profile/test_profile_summary.py
step "stalls by source line: ncu source-page parser (fixture)" $PY tools/profile/test_stalls_by_line.py
step "bf16 rounds table: medians of the benchmarks' logs (fixture)" $PY tools/vs_torch/test_rounds_table.py
step "controls and exploits: an unknown --only name refused, the nearest named" $PY tools/controls/test_selected.py
step "reference times: a shape the grader could not time refused (stand-in grader)" $PY tools/gpu/test_reference_times.py
step "torch timing: the GPU waits while a call is queued (stand-ins)" $PY tools/vs_torch/test_event_timing.py
step "pictures of a run: results.json fixture" $PY tools/pictures/test_plot_results.py
step "python bridge on the GPU (or skip)" env ATTNLAB_IMPL=reference $PY python/tests/test_bridge_gpu.py
step "make profile-task4, sanitize-task4 (GPU or skip)" gpu_tools_run_or_skip reference
# Python and torch (mostly one core each) beside the task tests and grades (one runner at a time)
beside "python bridge: checks, torch op, make python" $PY python/tests/test_bridge.py
beside "make model (smoke: 20 training steps)" $MAKE model MODEL_DIR=build/model-smoke MODEL_ARGS="--steps 20"
for t in $CPU_TASKS; do
  step "task$t reference passes" ./build/reference/bin/task$t
  step "task$t skeleton fails cleanly" skeleton_fails_cleanly ./build/skeleton/bin/task$t
done
step "CPU tasks without the CUDA toolkit (nvcc hidden)" bash tools/ci/check_no_cuda.sh
step "make asan-task1, asan-task3: the CPU tasks in one process (a crash at its line)" bash tools/ci/check_debug_drivers.sh
for t in $GPU_TASKS 4_bf16 4_backward 4_bf16_backward 5_paged 6_serve; do  # the bonus parts of Tasks 4, 5 and 6
  step "task$t reference passes (GPU)" ./build/reference/bin/task$t
  step "task$t skeleton fails cleanly (GPU)" skeleton_fails_cleanly ./build/skeleton/bin/task$t
done
# Without a GPU the GPU tasks must be graded "not run", never passed; with one, like the CPU tasks.
# (a GPU test binary exits 77 without a device; Catch2's --list-tests exits with the number listed)
./build/reference/bin/task2 --list-tests >/dev/null 2>&1
if [ $? -ne 77 ]; then GRADED="$CPU_TASKS $GPU_TASKS" NOT_RUN="" ONE_ARCH=""
else GRADED="$CPU_TASKS" NOT_RUN="--not-run $GPU_TASKS" ONE_ARCH="--one-arch"; fi  # no GPU: its builds are only compiled
step "grade reference: full marks" bash -c "$MAKE grade IMPL=reference OUT=build/grade-reference && \
  $PY tools/ci/check_grade.py build/grade-reference/results.json --full $GRADED $NOT_RUN"
step "grade skeleton: 0, each TODO named" bash -c "$MAKE grade IMPL=skeleton OUT=build/grade-skeleton && \
  $PY tools/ci/check_grade.py build/grade-skeleton/results.json --zero $GRADED $NOT_RUN --reason 'not implemented'"
joined
# Known-bad submissions: each compiles its one file and links its task's runner against the reference build,
# $JOBS side by side (one at a time wherever a GPU times them).
step "negative controls" $PY tools/controls/check_controls.py --jobs $JOBS $ONE_ARCH
step "exploit suite (known-bad submissions)" $PY tools/controls/check_exploits.py --jobs $JOBS $ONE_ARCH
beside "student kit: no solution code, builds alone" bash tools/kit/check_release.sh
beside "batch grading, Slurm array, Gradescope entry" bash tools/class/check_batch.sh
joined

clock
echo "test: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
