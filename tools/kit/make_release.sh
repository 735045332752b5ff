#!/usr/bin/env bash
# make_release.sh — the student kit: build/release/attnlab-kit/ and attnlab-kit.tar.gz.
#
# Everything committed except what holds solution code or exists for course staff: the reference
# solutions (taskN/reference/), the negative controls (patches on the reference), the control and
# GPU-session tools, the raw GPU logs. The skeletons, harness, tests, grader, golden generator,
# Makefile and CI script go in; README.md is replaced by the students' one (tools/kit_README.md).
# Goldens are not shipped: `make goldens` (or the first `make grade` / `make test`) makes them.
set -euo pipefail
cd "$(dirname "$0")/.."
KIT=build/release/attnlab-kit
rm -rf "$KIT" "$KIT.tar.gz"
mkdir -p "$KIT"
git ls-files -z | grep -zvE '^(task[0-9]+/reference/|task[0-9]+/controls/|task[0-9]+/ladder/|tools/reference_times\.py$|grader/controls/|grader/controls\.json$|grader/exploits/|grader/exploits\.json$|tools/check_exploits\.py$|tools/(check_controls\.py|class_samples\.sh|pack_gpu\.sh|gpu_session\.sh|make_release\.sh|check_release\.sh|check_batch\.sh|batch_grade\.py|kit_README\.md|torch_course_shapes\.py|check_kit_docs\.py|kit_docs_allow\.txt|bridge_gpu_check\.sh)$|tools/gradescope/|docs/runs/)' \
  | xargs -0 cp --parents -t "$KIT"
cp tools/kit_README.md "$KIT/README.md"
tar -C build/release -czf "$KIT.tar.gz" attnlab-kit
echo "release: $KIT ($(find "$KIT" -type f | wc -l) files) and $KIT.tar.gz ($(du -h "$KIT.tar.gz" | cut -f1))"
