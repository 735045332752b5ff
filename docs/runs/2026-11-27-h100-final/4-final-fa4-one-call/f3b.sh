#!/usr/bin/env bash
# call 3 of 3 on one warm machine: FA4 into the venv's site-packages, then HEAD's build: tests of 4b and 4d on both
# sides, the 10c ragged check, the ladder's Hopper rungs, both benchmarks and torch's scripts with FA4 in one call,
# the grader's times of 4d's reference
set -uo pipefail
OUT=${OUT:-build/gpu-out}; mkdir -p "$OUT/logs"
export PYTHONUNBUFFERED=1
t0=$(date +%s); note() { echo "== [$(( $(date +%s) - t0 ))s] $1" | tee -a "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
[ -f carry/fa4/part.02 ] && cp carry/fa4/part.02 $HOME/fa4-stash/
site=$(python3 -c "import site; print(site.getsitepackages()[0])")
cat $HOME/fa4-stash/part.00 $HOME/fa4-stash/part.01 $HOME/fa4-stash/part.02 | xz -d | tar -x -C "$site"; note "fa4 extracted into $site: $?"
python3 -c "import flash_attn.cute.interface as i, importlib.metadata as m; print('flash-attn-4', m.version('flash-attn-4'), 'cutlass-dsl', m.version('nvidia-cutlass-dsl'))" 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
mkdir -p build && tar -C build -xJf carry/gpu.tar.xz
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners
[ -x /usr/bin/bwrap ] || install -m 755 build/carry/bwrap /usr/bin/bwrap
R=build/carry/reference S=build/carry/skeleton
timeout 150 python3 tools/goldens/make_goldens.py --only task4 > "$OUT/logs/goldens.log" 2>&1; note "goldens: exit $? $(tail -n 1 $OUT/logs/goldens.log | cut -c1-120)"
timeout 100 $R/grader_gpu_tests > "$OUT/logs/grader_gpu_tests.log" 2>&1; note "grader_gpu_tests: exit $? $(tail -n 2 $OUT/logs/grader_gpu_tests.log | head -1)"
for t in 4_bf16 4_bf16_backward; do
  timeout 200 $R/task$t > "$OUT/logs/t${t}_ref.log" 2>&1; note "task$t reference: exit $? $(tail -n 1 $OUT/logs/t${t}_ref.log)"
  timeout 100 $S/task$t > "$OUT/logs/t${t}_skel.log" 2>&1; note "task$t skeleton: exit $? passed $(grep -c '^\s*\[passed' $OUT/logs/t${t}_skel.log) not-impl $(grep -c 'not implemented' $OUT/logs/t${t}_skel.log)"
done
xz -dk carry/chk/check_ladder_task4_bf16.xz; chmod +x carry/chk/check_ladder_task4_bf16
timeout 150 carry/chk/check_ladder_task4_bf16 10c ref > "$OUT/logs/check_ladder.log" 2>&1; note "check ladder 10c ref: exit $? $(tail -n 1 $OUT/logs/check_ladder.log)"
timeout 100 $R/bench_task4_bf16 --grid > "$OUT/fwd_grid.log" 2>&1; note "bench_task4_bf16 --grid: exit $?"
timeout 120 $R/bench_task4_bf16_backward > "$OUT/bwd.log" 2>&1; note "bench_task4_bf16_backward: exit $?"
(cd tools/vs_torch && timeout 200 python3 sdpa_bf16_backward.py > "$OUT/torch_bwd.log" 2>&1); note "sdpa_bf16_backward (cuDNN, FA2, FA4): exit $?"
(cd tools/vs_torch && timeout 200 python3 sdpa_bf16.py --grid > "$OUT/torch_fwd_grid.log" 2>&1); note "sdpa_bf16 --grid (cuDNN, FA2, FA4): exit $?"
cp grader/reference_times.json "$OUT/reference_times.json"
timeout 150 python3 tools/gpu/reference_times.py --grader $R/grader --bin-dir $R --file "$OUT/reference_times.json" --part 4d > "$OUT/logs/reftimes.log" 2>&1; note "reference_times 4d: exit $? $(tail -n 1 $OUT/logs/reftimes.log | cut -c1-150)"
timeout 150 $R/ladder_task4_bf16 --only=10b,10c,reference > "$OUT/logs/ladder.log" 2>&1; note "ladder 10b,10c,reference: exit $?"
grep -E "^B=|TFLOP/s" "$OUT/fwd_grid.log" "$OUT/bwd.log" | sed 's/  */ /g; s/(min [^)]*)//; s/= [0-9]*% of SGEMM//; s/rel L2.*//; s/(tolerance.*//; s/max|diff|.*ok/ok/' | cut -c1-100
grep -E "B=|FA4|cudnn|cuDNN" "$OUT/torch_bwd.log" "$OUT/torch_fwd_grid.log" | grep -v Warn | sed 's/  */ /g' | cut -c1-150 | head -70
tar -C "$OUT" -czf "$OUT/logs.tgz" logs; rm -rf "$OUT/logs"
