#!/usr/bin/env bash
# check_release.sh — the student kit must hold no solution code, build on its own, and grade its
# skeletons at 0 with every TODO named. Run by `make test` (and `make check-release`).
set -uo pipefail
cd "$(dirname "$0")/../.."
make --no-print-directory setup SETUP_TASKS=none || exit 1  # as `make taskN`: the packages (unifdef)
KIT=build/release/attnlab-kit
bash tools/kit/make_release.sh || exit 1
fail() { echo "check-release: $*"; exit 1; }

# 1. No solution code: no SOLUTION blocks, no reference or control files, and none of the
#    reference's distinctive solution lines (solution-only lines that no other tracked file has).
grep -rl "#if SOLUTION" "$KIT" && fail "a file of the kit still has #if SOLUTION blocks"
[ -n "$(find "$KIT" -path '*/reference/*' -o -path '*/controls/*' | head -1)" ] && fail "reference or control files in the kit"
/usr/bin/python3 tools/kit/check_solution_lines.py "$KIT" || exit 1

# 2. Every command and path its Markdown names exists in it (tools/kit/kit_docs_allow.txt: known exceptions).
/usr/bin/python3 tools/kit/check_kit_docs.py "$KIT" || fail "the kit's READMEs name commands or paths the kit does not have"

# 3. A first run works: in the fresh kit (no goldens, nothing built) `make task1` sets itself up
#    (packages, Task 1's goldens only) and fails on the TODOs, not on a missing golden file.
out=$(cd "$KIT" && make --no-print-directory task1 2>&1); rc=$?
echo "$out" > "$KIT/first-run.log"
if grep -qE 'golden: |run "make goldens"' <<<"$out" || ! grep -q "task1.1 not implemented" <<<"$out" || [ $rc -eq 0 ]; then
  tail -20 "$KIT/first-run.log"; fail "the kit's first 'make task1' (no goldens) did not end with cases failing 'task1.1 not implemented' (exit $rc)"
fi
grep -qE '^task1: 0 passed, [0-9]+ failed' <<<"$out" || { tail -5 "$KIT/first-run.log"; fail "the kit's first 'make task1' printed no summary line"; }
echo "check-release: a fresh kit's first 'make task1' makes its goldens and fails naming task1.1 ($(grep -c 'task1.1 not implemented' <<<"$out") cases)"

# 4. It builds on its own (the goldens copied in to save regenerating them) and grades to 0.
[ -d goldens ] && cp -r goldens "$KIT/"
(cd "$KIT" && make --no-print-directory check-protected && make --no-print-directory -j2 IMPL=skeleton all >build.log 2>&1) ||
  { tail -20 "$KIT/build.log"; fail "the kit does not build on its own"; }
out=$("$KIT/build/skeleton/bin/task1" 2>&1); rc=$?
{ [ $rc -ge 1 ] && [ $rc -lt 128 ] && grep -q "task1.1 not implemented" <<<"$out"; } || fail "the kit's Task 1 tests did not fail cleanly (exit $rc)"
(cd "$KIT" && ./build/skeleton/bin/grader --out build/grade >/dev/null) || fail "the kit's grader failed"
gpu_state=$(/usr/bin/python3 -c "import json,sys; t=json.load(open('$KIT/build/grade/results.json'))['tests']; \
print(' '.join(sorted({str(x['extra_data']['task']) for x in t if x['extra_data']['state']=='not run'})))")
/usr/bin/python3 tools/ci/check_grade.py "$KIT/build/grade/results.json" --zero 1 3 --reason "not implemented" \
  $( [ -n "$gpu_state" ] && echo --not-run $gpu_state ) || fail "the kit's grade is not 0 with every TODO named"
grep -q "Harness edited" "$KIT/build/grade/Results.md" && fail "the kit's own harness is reported as edited"
echo "check-release: the kit builds alone, its skeletons fail cleanly, its grader gives 0 naming each TODO"
