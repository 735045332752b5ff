#!/usr/bin/env bash
# gpu_session.sh — everything the GPU machine must check, in one command, from binaries built
# elsewhere (tools/gpu/pack_gpu.sh packs them into carry/gpu.tar.xz). Logs go to $OUT (default build/gpu-out).
#
#   [ONLY_TASKS="5"] [SKIP_TESTS=1] [SKIP_GRADE=1] [SKIP_CONTROLS=1] [ONLY_CONTROLS="name …"] [CONTROL_REPEAT=N] [SKIP_EXPLOITS=1] [SKIP_GOLDENS=1] bash tools/gpu/gpu_session.sh [bench] [tune] [anchors] [hf] [ladder] [bf16] [backward] [bf16bwd] [paged] [serve] [reftimes]
# Carry carry/ (tools/gpu/pack_gpu.sh), and for Task 7 .deps/gpt2.tiktoken and models/kjv-gpt2/{config.json,
# model.safetensors}: its goldens and the model's reference are made there.
# Always: goldens for the GPU tasks, each GPU task's tests (reference must pass, skeleton must fail
# cleanly), the grader on the reference, the GPU negative controls. `bench` adds the benchmarks,
# `tune` the tile tuner,
# `anchors` torch's attention backends on the same GPU (shared/bench/anchors_torch.py, if present),
# `ladder` the optimisation ladders of Tasks 2, 4, 5, `bf16` Task 4's bf16 ladder, benchmark and torch's bf16
# backends (tools/vs_torch/sdpa_bf16.py), `backward` Task 4's backward ladder, benchmark and torch's float32 backward
# (tools/vs_torch/sdpa_backward.py), `paged` Task 5's paged decode beside torch's and FA4's (tools/vs_torch/paged_decode.py),
# `serve` Task 6's serving benchmark (paged beside a cache reserved at max_seq) and its picture,
# `reftimes` the reference's times for the kit's
# estimates (tools/gpu/reference_times.py → $OUT/reference_times.json).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/gpu-out}
mkdir -p "$OUT"
mkdir -p build && [ -f carry/gpu.tar.xz ] && tar -C build -xJf carry/gpu.tar.xz  # → build/carry/
export ATTNLAB_GOLDENS=$PWD/goldens PYTHONUNBUFFERED=1
export ATTNLAB_NULL_RUNNER_DIR=$PWD/build/carry/reference/null-runners  # the harness alone, for every grader and test here
GPU_TASKS=${ONLY_TASKS:-$(ls build/carry/reference | sed -n 's/^task\([0-9]\)$/\1/p' | tr '\n' ' ')}
summary=()
note() { summary+=("[$(date +%T)] $1"); echo "== [$(date +%T)] $1"; }

[ -x /usr/bin/bwrap ] || { [ -f build/carry/bwrap ] && install -m 755 build/carry/bwrap /usr/bin/bwrap; }  # the runners' sandbox
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
# one task at a time: a task whose goldens fail costs the others nothing
[ -n "${SKIP_GOLDENS:-}" ] && note "goldens: kept (SKIP_GOLDENS)" || for t in $GPU_TASKS; do
  python3 tools/goldens/make_goldens.py --only task$t >> "$OUT/goldens.log" 2>&1 && note "goldens task$t: ok" \
    || note "goldens task$t: FAILED — $(tail -n 1 "$OUT/goldens.log" | cut -c1-300)"; done
if [ -f models/kjv-gpt2/model.safetensors ] && [ ! -f models/kjv-gpt2/reference.safetensors ]; then
  python3 tools/goldens/train_model.py --out models/kjv-gpt2 --reference-only > "$OUT/model_reference.log" 2>&1
  note "default model's reference: exit $? — $(tail -n 1 "$OUT/model_reference.log")"
fi
for d in build/carry/goldens/*; do [ -e "$d" ] && [ ! -e "goldens/$(basename "$d")" ] && cp -r "$d" goldens/ && note "goldens: $(basename "$d") from the carried copy"; done

[ -x build/carry/reference/grader_gpu_tests ] && { timeout 120 ./build/carry/reference/grader_gpu_tests > "$OUT/grader_gpu_tests.log" 2>&1
  note "timed calls' oracles against float64: exit $? — $(tail -n 1 "$OUT/grader_gpu_tests.log")"; }
tests=$GPU_TASKS
grep -qw 4 <<<"$GPU_TASKS" && tests="$tests 4_bf16 4_backward 4_bf16_backward"  # Task 4's bonus parts beside it
grep -qw 5 <<<"$GPU_TASKS" && tests="$tests 5_paged"  # Task 5's paged part beside it
grep -qw 6 <<<"$GPU_TASKS" && tests="$tests 6_serve"  # Task 6's serving part beside it
[ -n "${SKIP_TESTS:-}" ] && tests=""
for t in $tests; do
  timeout 300 ./build/carry/reference/task$t > "$OUT/task${t}_reference.log" 2>&1
  note "task$t reference tests: exit $? — $(tail -n 2 "$OUT/task${t}_reference.log" | head -n 1)"
  timeout 300 ./build/carry/skeleton/task$t > "$OUT/task${t}_skeleton.log" 2>&1
  rc=$?; passed=$(grep -c '^\s*\[passed' "$OUT/task${t}_skeleton.log")
  note "task$t skeleton tests: exit $rc (want 1..127), $passed cases passed (want 0), $(grep -c 'not implemented' "$OUT/task${t}_skeleton.log") say 'not implemented'"
done

if [ -z "${SKIP_GRADE:-}" ]; then
  ./build/carry/reference/grader $(for t in $GPU_TASKS; do echo --task $t; done) --out "$OUT/grade" \
    --bin-dir build/carry/reference --reference-bin-dir build/carry/reference > "$OUT/grade.log" 2>&1
  note "grader (reference): $(tail -n 1 "$OUT/grade.log")"
  python3 tools/ci/check_grade.py "$OUT/grade/results.json" --full $GPU_TASKS > "$OUT/check_grade.log" 2>&1
  note "full marks check: $(tail -n 1 "$OUT/check_grade.log")"
fi

mkdir -p build/controls && cp -r build/carry/controls/* build/controls/ 2>/dev/null
[ -z "${SKIP_CONTROLS:-}" ] && [ -d build/carry/controls ] && python3 tools/controls/check_controls.py --prebuilt --grader-timeout 400 --repeat "${CONTROL_REPEAT:-1}" $(ls build/carry/controls | grep -E "^task(${GPU_TASKS// /|})[bcd]?_" | { [ -n "${ONLY_CONTROLS:-}" ] && grep -xE "${ONLY_CONTROLS// /|}" || cat; } | sed 's/^/--only /') > "$OUT/controls.log" 2>&1
[ -z "${SKIP_CONTROLS:-}" ] && note "controls: $(tail -n 1 "$OUT/controls.log")"
# the exploits only a GPU run can catch (packed by tools/gpu/pack_gpu.sh), each graded by the reference grader
[ -z "${SKIP_EXPLOITS:-}" ] && [ -d build/carry/exploits ] && python3 tools/controls/check_exploits.py --prebuilt $(ls build/carry/exploits | grep -E "${ONLY_EXPLOITS:-.}" | sed 's/^/--only /') > "$OUT/exploits.log" 2>&1
[ -z "${SKIP_EXPLOITS:-}" ] && [ -d build/carry/exploits ] && note "exploits: $(tail -n 1 "$OUT/exploits.log")"

for arg in "$@"; do
  case $arg in
    bench|tune) for b in build/carry/reference/${arg}_task*; do
             [ "$arg" = bench ] && [ -n "${ONLY_TASKS:-}" ] && ! grep -qw "${b##*_task}" <<<"$ONLY_TASKS" && continue
             timeout 300 "$b" > "$OUT/$(basename "$b").log" 2>&1; note "$(basename "$b"): exit $?"; done ;;
    hf) timeout 300 python3 tools/vs_torch/hf_check.py --gpt2 build/carry/reference/gpt2 > "$OUT/hf_check.log" 2>&1
        note "hf_check: exit $? — $(tail -n 1 "$OUT/hf_check.log")"
        timeout 300 python3 tools/vs_torch/bench_gpt2.py --gpt2 build/carry/reference/gpt2 > "$OUT/bench_gpt2.log" 2>&1
        note "bench_gpt2: exit $?" ;;
    ladder) for t in 2 4 5; do timeout 400 ./build/carry/reference/ladder_task$t > "$OUT/ladder_task$t.log" 2>&1
              note "ladder_task$t: exit $?"; done ;;
    bf16) timeout 300 ./build/carry/reference/ladder_task4_bf16 > "$OUT/ladder_task4_bf16.log" 2>&1
          note "ladder_task4_bf16: exit $?"
          timeout 300 ./build/carry/reference/bench_task4_bf16 > "$OUT/bench_task4_bf16.log" 2>&1
          note "bench_task4_bf16: exit $?"
          timeout 300 python3 tools/vs_torch/sdpa_bf16.py > "$OUT/sdpa_bf16.log" 2>&1
          note "sdpa_bf16 (torch's bf16 backends, same GPU): exit $?" ;;
    bf16bwd) timeout 300 ./build/carry/reference/bench_task4_bf16_backward > "$OUT/bench_task4_bf16_backward.log" 2>&1
          note "bench_task4_bf16_backward: exit $?"
          timeout 300 python3 tools/vs_torch/sdpa_bf16_backward.py > "$OUT/sdpa_bf16_backward.log" 2>&1
          note "sdpa_bf16_backward (torch's bf16 backwards, same GPU): exit $?" ;;
    paged) timeout 300 ./build/carry/reference/bench_task5_paged > "$OUT/bench_task5_paged.log" 2>&1
          note "bench_task5_paged: exit $?"
          lib=$PWD/build/carry/reference/python/libattnlab.so  # attnlab's kernel timed by the same function as torch's
          ATTNLAB_LIB=${ATTNLAB_LIB:-$([ -f "$lib" ] && echo "$lib")} timeout 400 python3 tools/vs_torch/paged_decode.py \
            > "$OUT/paged_decode_torch.log" 2>&1
          note "paged_decode (torch's decode kernels, FA4's paged one and attnlab's, same GPU, same timing): exit $?" ;;
    serve) timeout 400 ./build/carry/reference/bench_task6_serve --csv "$OUT" > "$OUT/bench_task6_serve.log" 2>&1
          note "bench_task6_serve: exit $?"
          python3 tools/pictures/plot_serving.py "$OUT" > "$OUT/plot_serving.log" 2>&1
          note "plot_serving: exit $? — $(tail -n 1 "$OUT/plot_serving.log")" ;;
    backward) timeout 300 ./build/carry/reference/ladder_task4_backward > "$OUT/ladder_task4_backward.log" 2>&1
          note "ladder_task4_backward: exit $?"
          timeout 300 ./build/carry/reference/bench_task4_backward > "$OUT/bench_task4_backward.log" 2>&1
          note "bench_task4_backward: exit $?"
          timeout 400 python3 tools/vs_torch/sdpa_backward.py > "$OUT/sdpa_backward.log" 2>&1
          note "sdpa_backward (torch's float32 backward, same GPU): exit $?" ;;
    reftimes) cp grader/reference_times.json "$OUT/reference_times.json"
              python3 tools/gpu/reference_times.py --grader build/carry/reference/grader --bin-dir build/carry/reference \
                --file "$OUT/reference_times.json" > "$OUT/reference_times.log" 2>&1
              note "reference_times: exit $? — $(tail -n 1 "$OUT/reference_times.log")" ;;
    anchors) [ -f shared/bench/anchors_torch.py ] && { timeout 300 python3 shared/bench/anchors_torch.py > "$OUT/anchors.log" 2>&1;
             note "anchors: exit $?"; } ;;
  esac
done
printf '%s\n' "${summary[@]}" > "$OUT/summary.txt"
# what comes back is limited in number of files: the report and the summary as they are, the rest packed
cp "$OUT/grade/Results.md" "$OUT/Results.md" 2>/dev/null
(cd "$OUT" && tar -czf /tmp/logs.tar.gz --exclude=summary.txt --exclude=Results.md . && mv /tmp/logs.tar.gz . && \
  find . -mindepth 1 -not -name logs.tar.gz -not -name summary.txt -not -name Results.md -not -name 'bench_*.log' -not -name hf_check.log -not -name 'ladder_*.log' -not -name reference_times.json -delete)
