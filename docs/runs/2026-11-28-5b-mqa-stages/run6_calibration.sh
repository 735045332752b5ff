#!/usr/bin/env bash
# 5b's two calibration cases graded against the four-stage reference (tools/controls/check_controls.py --prebuilt)
set -uo pipefail
tar -C . -xJf carry/cal.tar.xz  # build/carry/reference/{grader,runner_task5} (the kept build), build/controls/task5b_calibration_{plan,group}/runner_task5 (built as pack_gpu.sh does), null/runner_task5, bwrap
[ -x /usr/bin/bwrap ] || install -m 755 ./bwrap /usr/bin/bwrap
export ATTNLAB_NULL_RUNNER_DIR=$PWD/null
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout -s KILL 190 python3 tools/controls/check_controls.py --prebuilt --only task5b_calibration_plan --only task5b_calibration_group 2>&1 | tail -5
