#!/bin/bash
# pack_hopper.sh — builds what device_run_hopper.sh runs and packs it into carry/hopper/bundle.tar.xz (git-ignored;
# about 14 MB): the ladder's checker and benchmark, the bonus's test program, the reference's runner, each bf16
# negative control's runner (task4_bf16/controls/*.patch applied to the reference), the null runner, the bf16
# goldens and the script. Course machine, no GPU needed:  bash tools/gpu/bf16_ladder/pack_hopper.sh
# Then on a GPU machine (the device tool, carry ["carry/hopper"]), from the repository root:
#   mkdir -p /tmp/h && tar xJf carry/hopper/bundle.tar.xz -C /tmp/h && bash /tmp/h/device_run_hopper.sh /tmp/h TAG
set -euo pipefail
cd "$(dirname "$0")/../../.."
make --no-print-directory goldens-if-stale-task4 >/dev/null
make --no-print-directory -j2 IMPL=reference build/reference/bin/task4_bf16 build/reference/bin/runner_task4 \
  build/reference/bin/ladder_task4_bf16 build/reference/bin/check_ladder_task4_bf16 build/common/null-runners/runner_task4
B=build/hopper-bundle
rm -rf $B && mkdir -p $B/ref $B/null-runners $B/goldens/task4
for c in accumulator no_rescale partial_tile_dropped; do
  n=task4b_bf16_$c
  mkdir -p build/controls/$n/src $B/ctl_bf16_$c
  patch --quiet -o build/controls/$n/src/flash_attention_bf16.cu task4_bf16/reference/flash_attention_bf16.cu task4_bf16/controls/$c.patch
  # Task 4's reference sources with the patched file in place (as check_controls.py builds a control)
  srcs=$(cd tools/controls && /usr/bin/python3 -c "import check_controls as c; print(' '.join(c.task_sources(4, 'task4_bf16/reference/flash_attention_bf16.cu', 'build/controls/$n/src/flash_attention_bf16.cu')))")
  make --no-print-directory -j2 IMPL=reference "TASK4_SRC=$srcs" \
    RUNNER_BIN_DIR=build/controls/$n build/controls/$n/runner_task4
  strip -o $B/ctl_bf16_$c/runner_task4 build/controls/$n/runner_task4
done
for f in ladder_task4_bf16 check_ladder_task4_bf16 task4_bf16; do strip -o $B/$f build/reference/bin/$f; done
strip -o $B/ref/runner_task4 build/reference/bin/runner_task4
strip -o $B/null-runners/runner_task4 build/common/null-runners/runner_task4
cp goldens/task4/bf16_*.safetensors $B/goldens/task4/
cp tools/gpu/bf16_ladder/device_run_hopper.sh $B/
mkdir -p carry/hopper && tar cJf carry/hopper/bundle.tar.xz -C $B .
echo "pack_hopper: carry/hopper/bundle.tar.xz ($(du -h carry/hopper/bundle.tar.xz | cut -f1))"
