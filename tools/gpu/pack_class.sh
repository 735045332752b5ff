#!/usr/bin/env bash
# pack_class.sh — a sample class built here for a GPU machine, to be graded there by tools/gpu/class_gpus.sh (one GPU,
# then every GPU at once). Staff material: it reads the reference solutions.
#
# The class: tools/class/class_samples.sh's five (reference, skeleton, partial, slow, broken), a second copy of the
# reference and of slow (so that each GPU of two has work), and `grabber`: the reference whose Task 4 file, before the
# runner touches CUDA, unsets CUDA_VISIBLE_DEVICES and counts the GPUs it can reach; with more than one it aborts (the task
# then scores 0); it does so in its Task 4 and Task 5 files, so its row shows whether a worker's runners were kept to their own GPU.
# Built with `batch_grade.py --build-only --tasks 4,5` for sm_90, packed with the grader, the reference's runners and
# the null runners into carry/class/class.tar.xz (carry `carry` there).
set -euo pipefail
cd "$(dirname "$0")/../.."
S=build/class-samples
B=build/class-gpu
bash tools/class/class_samples.sh "$S" >/dev/null
cp -r "$S/reference" "$S/reference_2" && cp -r "$S/slow" "$S/slow_2" && cp -r "$S/reference" "$S/grabber"
for F in "$S/grabber/task4/skeleton/flash_attention.cu" "$S/grabber/task5/skeleton/decode.cu"; do
/usr/bin/python3 - "$F" <<'PY'
import re, sys
path = sys.argv[1]
src = open(path).read()
grab = '''
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
// GRABBER: before the runner touches CUDA, ask for every GPU of the host.
static const int grabbed_gpus = [] {
    unsetenv("CUDA_VISIBLE_DEVICES");
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = -1;
    std::fprintf(stderr, "grabber: %d GPU(s) reachable\\n", n);
    if (n > 1) std::abort();  // reached another worker's GPU: the task scores 0
    return n;
}();
'''
at = re.search(r"^namespace task[0-9]+ \{", src, re.M).start()
open(path, "w").write(src[:at] + grab + src[at:])
PY
grep -q "GRABBER" "$F" || { echo "pack_class: the grabber was not written into $F"; exit 1; }
done
rm -rf "$B"
CUDA_ARCH="-gencode arch=compute_90,code=sm_90" /usr/bin/python3 tools/class/batch_grade.py --submissions "$S" --out "$B" \
  --build-only --tasks 4,5 --no-setup > build/pack-class.log 2>&1 || { tail -20 build/pack-class.log; exit 1; }
make --no-print-directory -j2 IMPL=reference build/reference/bin/grader build/reference/bin/runner_task4 \
  build/reference/bin/runner_task5 >/dev/null
P=build/class-pack && rm -rf "$P" && mkdir -p "$P/build/reference/bin" "$P/build/common/null-runners" "$P/$B"
for f in grader runner_task4 runner_task5; do strip -o "$P/build/reference/bin/$f" "build/reference/bin/$f"; done
cp build/common/null-runners/runner_task4 build/common/null-runners/runner_task5 "$P/build/common/null-runners/"  # with symbols: the audit reads them
cp /usr/bin/bwrap "$P/build/bwrap"
nvcc -gencode arch=compute_90,code=sm_90 -o "$P/build/gpu_probe" tools/gpu/gpu_probe.cu
# each submission: what --grade-only reads (built.json, row.json, the taken files, the runners and the student's objects)
for d in "$B"/*/; do
  who=$(basename "$d")
  mkdir -p "$P/$B/$who"
  cp "$d"/*.json "$P/$B/$who/" 2>/dev/null || true
  [ -d "$d/submitted" ] && cp -r "$d/submitted" "$P/$B/$who/"
  if [ -d "$d/tree/build/skeleton" ]; then
    (cd "$d/tree" && find build/skeleton -name '*.o' -o -path 'build/skeleton/bin/runner_task*' -type f) | while read -r f; do
      mkdir -p "$P/$B/$who/tree/$(dirname "$f")"
      cp "$d/tree/$f" "$P/$B/$who/tree/$f"  # not stripped: the audit reads the runner's symbols too
    done
  fi
done
cp -r "$S" "$P/build/"
mkdir -p carry/class
tar -C "$P" -cf - . | xz -T1 --lzma2=preset=6,dict=192MiB > carry/class/class.tar.xz  # one block: each runner stored about once
echo "pack_class: carry/class/class.tar.xz ($(du -h carry/class/class.tar.xz | cut -f1)); rows at build time:"
/usr/bin/python3 -c "
import json, glob
for p in sorted(glob.glob('$B/*/row.json')): r = json.load(open(p)); print(f\"  {r['student']:<12} {r['flags']}\")"
