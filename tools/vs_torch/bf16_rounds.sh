#!/usr/bin/env bash
# bf16_rounds.sh — the course's bf16 forward (4b) and backward (4d) beside torch's cuDNN and FlashAttention-2 backends
# and FlashAttention-4 (where it is installed: tools/vs_torch/fa4.py), in ROUNDS rounds of the same four programs in one
# call, the order rotating, then the medians (tools/vs_torch/rounds_table.py).
#
#   make IMPL=skeleton build/skeleton/bin/bench_task4_bf16 build/skeleton/bin/bench_task4_bf16_backward   # your kernels
#   [ROUNDS=3] [IMPL=skeleton | BIN=dir] [OUT=build/gpu-out] [PY=python3] bash tools/vs_torch/bf16_rounds.sh
#
# BIN (default build/$IMPL/bin) holds bench_task4_bf16 and bench_task4_bf16_backward; BIN and OUT are relative to the
# repository's root, PY is a command on PATH or an absolute path (it runs inside tools/vs_torch). Why rounds: on a shared GPU machine
# every side's TFLOP/s moves between calls by a few per cent, as much as the kernels differ; one pass of each program
# lets one round's luck decide. Logs: $OUT/rounds/rK/{fwd,bwd,torch_fwd,torch_bwd}.log (the rounds of an earlier run
# there are removed first); the tables: $OUT/rounds/table.md. Exits 1 if any program failed (its cells then hold fewer
# rounds, marked n=…).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
BIN=${BIN:-build/${IMPL:-skeleton}/bin}
OUT=${OUT:-build/gpu-out}
PY=${PY:-python3}
for b in bench_task4_bf16 bench_task4_bf16_backward; do
  [ -x "$BIN/$b" ] || { echo "bf16_rounds: $BIN/$b: not found (make IMPL=… build/<impl>/bin/$b, or BIN=dir)" >&2; exit 2; }
done
export PYTHONUNBUFFERED=1
programs=(fwd bwd torch_fwd torch_bwd)
failed=0
rm -rf "$OUT/rounds"
run() {  # $1: one of programs, $2: the log
  case $1 in
    fwd) timeout 150 "$BIN/bench_task4_bf16" --grid ;;
    bwd) timeout 150 "$BIN/bench_task4_bf16_backward" ;;
    torch_fwd) (cd tools/vs_torch && timeout 300 $PY sdpa_bf16.py --grid) ;;
    torch_bwd) (cd tools/vs_torch && timeout 300 $PY sdpa_bf16_backward.py) ;;
  esac > "$2" 2>&1
  local rc=$?
  echo "round $r $1: exit $rc ($(date +%T))"
  [ $rc -eq 0 ] || failed=1
}
for ((r = 1; r <= ROUNDS; ++r)); do
  mkdir -p "$OUT/rounds/r$r"
  for ((i = 0; i < 4; ++i)); do  # round r starts with program r − 1: each runs first, second, … in turn
    p=${programs[$(((r - 1 + i) % 4))]}
    run "$p" "$OUT/rounds/r$r/$p.log"
  done
done
$PY tools/vs_torch/rounds_table.py "$OUT/rounds" --markdown | tee "$OUT/rounds/table.md"
[ $failed -eq 0 ] || { echo "bf16_rounds: a program failed (its log says why); the table holds the rounds that ran" >&2; exit 1; }
