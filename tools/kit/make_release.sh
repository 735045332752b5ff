#!/usr/bin/env bash
# make_release.sh — the student kit: build/release/attnlab-kit/ and attnlab-kit.tar.gz.
#
# Everything committed except what holds solution code or exists for course staff (tools/kit/staff_only.txt:
# the reference solutions, negative controls, ladders, exploits, tools/{controls,class,gpu,kit}/, the raw GPU
# logs). The skeletons, harness, tests, grader, tools/{setup,goldens,ci,pictures,profile,vs_torch}/, Makefile
# and CI script go in; README.md is replaced by the students' one (tools/kit/kit_README.md), docs/perf.md (the staff's
# record of every measured figure) by tools/kit/kit_perf.md, and docs/grader.md loses its staff sections (the threat
# model, controls, runs, known limits, class grading: tools/kit/kit_docs.py).
# The oracles whose code would answer a task (tools/kit/compiled_only.txt) go in as objects only, in prebuilt/.
# Goldens are not shipped: `make goldens` (or the first `make grade` / `make test`) makes them.
set -euo pipefail
cd "$(dirname "$0")/../.."
KIT=build/release/attnlab-kit
rm -rf "$KIT" "$KIT.tar.gz"
mkdir -p "$KIT"
staff_only=$(grep -vE '^[[:space:]]*(#|$)' tools/kit/staff_only.txt | awk '{print $1}' | paste -sd'|')
git ls-files -z | grep -zvE "$staff_only" | xargs -0 cp --parents -t "$KIT"
cp tools/kit/kit_README.md "$KIT/README.md"
# The oracles that would answer a task go in compiled (tools/kit/compiled_only.txt): prebuilt/<path>.o, no source.
compiled_only=$(grep -vE '^[[:space:]]*(#|$)' tools/kit/compiled_only.txt | awk '{print $1}')
objects=$(for src in $compiled_only; do echo "build/kit-prebuilt/${src%.*}.o"; done)
make --no-print-directory -j2 $objects >&2 || { echo "release: the oracles' objects did not build" >&2; exit 1; }
for src in $compiled_only; do
  mkdir -p "$KIT/prebuilt/$(dirname "$src")"
  cp "build/kit-prebuilt/${src%.*}.o" "$KIT/prebuilt/${src%.*}.o"
  rm -f "$KIT/$src"
done
(cd "$KIT" && make --no-print-directory protect >/dev/null)  # its protected files: the objects, not the sources
/usr/bin/python3 tools/kit/kit_docs.py "$KIT"  # docs/grader.md without staff sections; docs/perf.md: the kit's page
tar -C build/release -czf "$KIT.tar.gz" attnlab-kit
echo "release: $KIT ($(find "$KIT" -type f | wc -l) files) and $KIT.tar.gz ($(du -h "$KIT.tar.gz" | cut -f1))"
