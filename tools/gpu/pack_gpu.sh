#!/usr/bin/env bash
# pack_gpu.sh [PACK_CONTROLS="name …"] — builds the GPU binaries here and puts stripped copies in build/carry/ (git-ignored) for
# the GPU machine, xz-compressed as carry/gpu.tar.xz: the reference and skeleton test binaries, benchmarks, the grader, and the
# graders of the GPU tasks' negative controls. Then: tools/gpu/gpu_session.sh runs them there.
set -euo pipefail
cd "$(dirname "$0")/../.."
GPU_TASKS=$(sed -n 's/^GPU_TASKS *:= *//p' Makefile)
make --no-print-directory setup SETUP_TASKS="$GPU_TASKS"  # as `make taskN`: packages, goldens (Task 6's are carried)
make --no-print-directory -j2 IMPL=reference all >/dev/null
make --no-print-directory -j2 IMPL=skeleton all >/dev/null
rm -rf carry/gpu.tar.xz build/carry && mkdir -p build/carry/reference build/carry/skeleton build/carry/controls build/carry/exploits carry  # other folders in carry/ are left alone
for t in $GPU_TASKS; do
  strip -o build/carry/reference/task$t build/reference/bin/task$t
  strip -o build/carry/skeleton/task$t build/skeleton/bin/task$t
  [ -f build/reference/bin/bench_task$t ] && strip -o build/carry/reference/bench_task$t build/reference/bin/bench_task$t
done
# the runners (student code, sandboxed) beside the programs that start them
for t in 1 2 3 4 5 6 7; do
  [ -f build/reference/bin/runner_task$t ] && strip -o build/carry/reference/runner_task$t build/reference/bin/runner_task$t
  [ -f build/skeleton/bin/runner_task$t ] && strip -o build/carry/skeleton/runner_task$t build/skeleton/bin/runner_task$t
done
# the null runners (the harness alone): the grader and the tests measure submissions beside them
mkdir -p build/carry/reference/null-runners build/carry/skeleton/null-runners
for f in build/common/null-runners/runner_task*; do
  strip -o build/carry/reference/null-runners/$(basename $f) $f && cp build/carry/reference/null-runners/$(basename $f) build/carry/skeleton/null-runners/
done
cp /usr/bin/bwrap build/carry/bwrap  # Debian's bubblewrap: the GPU machine may not have one
strip -o build/carry/reference/grader build/reference/bin/grader
strip -o build/carry/reference/grader_gpu_tests build/reference/bin/grader_gpu_tests  # the timed calls' oracles
strip -o build/carry/reference/gpt2 build/reference/bin/gpt2
# the optimisation ladders (staff benchmarks), Task 4's bf16 and backward ladders among them
make --no-print-directory -j2 IMPL=reference build/reference/bin/ladder_task2 build/reference/bin/ladder_task4 build/reference/bin/ladder_task5 \
  build/reference/bin/ladder_task4_bf16 build/reference/bin/ladder_task4_backward >/dev/null
for t in 2 4 5 4_bf16 4_backward; do strip -o build/carry/reference/ladder_task$t build/reference/bin/ladder_task$t; done
# Task 4's bf16 bonus: its tests on both sides, its benchmark; torch's bf16 backends beside it (tools/vs_torch/sdpa_bf16.py)
strip -o build/carry/reference/task4_bf16 build/reference/bin/task4_bf16
strip -o build/carry/skeleton/task4_bf16 build/skeleton/bin/task4_bf16
strip -o build/carry/reference/bench_task4_bf16 build/reference/bin/bench_task4_bf16
# Task 4's backward bonus: its tests on both sides, its benchmark (tools/vs_torch/sdpa_backward.py times torch beside it)
strip -o build/carry/reference/task4_backward build/reference/bin/task4_backward
strip -o build/carry/skeleton/task4_backward build/skeleton/bin/task4_backward
strip -o build/carry/reference/bench_task4_backward build/reference/bin/bench_task4_backward
# Task 4's bf16 backward bonus: its tests on both sides, its benchmark (tools/vs_torch/sdpa_bf16_backward.py times torch beside it)
strip -o build/carry/reference/task4_bf16_backward build/reference/bin/task4_bf16_backward
strip -o build/carry/skeleton/task4_bf16_backward build/skeleton/bin/task4_bf16_backward
strip -o build/carry/reference/bench_task4_bf16_backward build/reference/bin/bench_task4_bf16_backward
# Task 5's paged part: its tests on both sides, its benchmark (tools/vs_torch/paged_decode.py times torch beside it)
strip -o build/carry/reference/task5_paged build/reference/bin/task5_paged
strip -o build/carry/skeleton/task5_paged build/skeleton/bin/task5_paged
strip -o build/carry/reference/bench_task5_paged build/reference/bin/bench_task5_paged
# Task 6's serving part: its tests on both sides, its benchmark (gpu_session.sh serve draws its picture)
strip -o build/carry/reference/task6_serve build/reference/bin/task6_serve
strip -o build/carry/skeleton/task6_serve build/skeleton/bin/task6_serve
strip -o build/carry/reference/bench_task6_serve build/reference/bin/bench_task6_serve
# the bridge's library (the reference's kernels, ctypes): tools/vs_torch/paged_decode.py times 5b's kernel through it
make --no-print-directory IMPL=reference python >/dev/null && mkdir -p build/carry/reference/python \
  && strip -o build/carry/reference/python/libattnlab.so build/reference/python/libattnlab.so
# Task 6's goldens are small: carried as a fallback should the GPU machine's python lack numpy
[ -d goldens/task6 ] && mkdir -p build/carry/goldens && cp -r goldens/task6 build/carry/goldens/
[ -f build/reference/bin/tune_task4 ] && strip -o build/carry/reference/tune_task4 build/reference/bin/tune_task4
gpu_controls=$(/usr/bin/python3 -c "
import json; t='$GPU_TASKS'.split()
print(' '.join(c['name'] for c in json.load(open('grader/controls.json'))['controls'] if str(c['task']) in t and not c.get('static')))")
[ -n "${PACK_CONTROLS:-}" ] && gpu_controls=$PACK_CONTROLS  # a subset, e.g. the calibration cases
/usr/bin/python3 tools/controls/check_controls.py $(printf -- "--only %s " $gpu_controls) > build/pack-controls.log \
  || { grep -v "skipped\|caught" build/pack-controls.log; echo "pack_gpu: a control did not build, or a name is not in grader/controls.json (above)"; exit 1; }
# calibration cases (ladder steps as submissions): their runners, built here (check_controls.py skips them without a GPU)
/usr/bin/python3 -c "
import json; want='$gpu_controls'.split()
for c in json.load(open('grader/controls.json'))['controls']:
    if c['name'] in want and 'calibration' in c: print(c['name'], c['task'], c['calibration'], c['replaces'])" |
while read -r name task src replaces; do
  srcs=$(cd tools/controls && /usr/bin/python3 -c "import check_controls as c; print(' '.join(c.task_sources($task, '$replaces', '$src')))")
  make --no-print-directory -j2 IMPL=reference "TASK${task}_SRC=$srcs" RUNNER_BIN_DIR=build/controls/$name build/controls/$name/runner_task$task >/dev/null \
    || { echo "pack_gpu: calibration case $name did not build"; exit 1; }
done || exit 1
for c in $gpu_controls; do
  mkdir -p build/carry/controls/$c
  t=$(sed "s/^task\([0-9]*\).*/\1/" <<<"$c")  # a control grades its own task (task4b_…: Task 4): its grader and that task's runner
  for f in build/controls/$c/grader build/controls/$c/runner_task$t; do  # calibration cases have no grader of their own
    [ -f $f ] && strip -o build/carry/controls/$c/$(basename $f) $f; done
done
# the exploits a GPU run must catch (grader/exploits.json "gpu"), and one the program audit names there
gpu_exploits=${PACK_EXPLOITS:-$(/usr/bin/python3 -c "
import json; print(' '.join(e['name'] for e in json.load(open('grader/exploits.json'))['exploits'] if e.get('gpu') or e['name'] == 'defines_event_timing'))")}
for e in $gpu_exploits; do
  mkdir -p build/carry/exploits/$e/objects
  # its objects travel too: the grader's audit of them (symbols, a part's required calls) runs there as here; then the
  # runner of the task it attacks
  /usr/bin/python3 -c "
import sys, shutil, subprocess; sys.path.insert(0, 'tools/controls'); import check_exploits as c
e = c.selected('exploits', ['$e'], True)[0]  # a name not in grader/exploits.json stops here, named
for o in c.build(e)[2]: shutil.copy(o, 'build/carry/exploits/$e/objects/' + o.replace('/', '__'))
runner = 'runner_task' + str(e['task'])
subprocess.run(['strip', '-o', 'build/carry/exploits/$e/' + runner, 'build/exploits/$e/' + runner], check=True)" \
    || { echo "pack_gpu: exploit $e did not build"; exit 1; }
done
# The runners differ in one object each: a dictionary larger than the tar lets xz store each once
# (about 12 MB instead of 90; what travels to the GPU machine is capped at 64 MiB).
tar -C build -cf - carry | xz -T2 --lzma2=preset=6,dict=768MiB > carry/gpu.tar.xz && du -sh carry/gpu.tar.xz
