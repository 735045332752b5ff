#!/usr/bin/env bash
# pack_gpu.sh — builds the GPU binaries here and puts stripped copies in carry/ (git-ignored) for
# the GPU machine: the reference and skeleton test binaries, benchmarks, the grader, and the
# graders of the GPU tasks' negative controls. Then: tools/gpu_session.sh runs them there.
set -euo pipefail
cd "$(dirname "$0")/.."
GPU_TASKS=$(sed -n 's/^GPU_TASKS *:= *//p' Makefile)
make --no-print-directory -j2 IMPL=reference all >/dev/null
make --no-print-directory -j2 IMPL=skeleton all >/dev/null
rm -rf carry && mkdir -p carry/reference carry/skeleton carry/controls
for t in $GPU_TASKS; do
  strip -o carry/reference/task$t build/reference/bin/task$t
  strip -o carry/skeleton/task$t build/skeleton/bin/task$t
  [ -f build/reference/bin/bench_task$t ] && strip -o carry/reference/bench_task$t build/reference/bin/bench_task$t
done
strip -o carry/reference/grader build/reference/bin/grader
gpu_controls=$(/usr/bin/python3 -c "
import json; t='$GPU_TASKS'.split()
print(' '.join(c['name'] for c in json.load(open('grader/controls.json'))['controls'] if str(c['task']) in t))")
/usr/bin/python3 tools/check_controls.py $(printf -- '--only %s ' $gpu_controls) >/dev/null || true
for c in $gpu_controls; do mkdir -p carry/controls/$c && strip -o carry/controls/$c/grader build/controls/$c/grader; done
du -sh carry
