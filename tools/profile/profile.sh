#!/usr/bin/env bash
# profile.sh — `make profile-taskN` and `make sanitize-taskN` (N = 2, 4, 5), on a GPU machine.
#
#   tools/profile/profile.sh profile  N BUILD [REF_BUILD]   Nsight Compute on BUILD/bin/drive_taskN's profiled call(s)
#                                                  → BUILD/profile/taskN.ncu-rep (open it in the Nsight Compute
#                                                  GUI) and a short summary (tools/profile/profile_summary.py), with the
#                                                  reference's figures beside yours when REF_BUILD is given
#   tools/profile/profile.sh sanitize N BUILD               compute-sanitizer memcheck, racecheck, synccheck on the
#                                                  driver's small shapes → BUILD/profile/sanitize-taskN-<tool>.log;
#                                                  the first error with its source line
#
# Without a CUDA device, or without ncu / compute-sanitizer: one line saying which, exit 77 (skipped).
# NCU=… and COMPUTE_SANITIZER=… name the tools where they are not found (PATH, $CUDA_HOME/bin,
# /opt/nvidia/nsight-compute/*/, $CUDA_HOME/nsight-compute-*/, $CUDA_HOME/compute-sanitizer/).
set -uo pipefail
cd "$(dirname "$0")/../.."
MODE=${1:-} N=${2:-} BUILD=${3:-} REF=${4:-}
PY=${PYTHON:-/usr/bin/python3}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
case "$MODE:$N" in profile:[245]|sanitize:[245]) ;; *) echo "usage: $0 profile|sanitize 2|4|5 BUILD [REF_BUILD]" >&2; exit 2 ;; esac
[ -n "$BUILD" ] || { echo "usage: $0 $MODE $N BUILD [REF_BUILD]" >&2; exit 2; }
DRIVER=$BUILD/bin/drive_task$N
[ -x "$DRIVER" ] || { echo "$MODE-task$N: $DRIVER is not built (make $DRIVER)" >&2; exit 1; }

# 1. A CUDA device (any error from cudaGetDeviceCount counts as none): the driver's own check.
"$DRIVER" check >/dev/null 2>&1; rc=$?
if [ $rc -eq 77 ]; then
  echo "$MODE-task$N: $("$DRIVER" check 2>&1 | tail -n 1) — nothing to $MODE on this machine"
  exit 77
elif [ $rc -ne 0 ]; then
  echo "$MODE-task$N: $DRIVER check failed (exit $rc)"; exit 1
fi

first_found() {  # the first executable among the arguments (globs expanded, newest version last)
  local c
  for c in "$@"; do [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }; done
  return 1
}
newest() { ls -d $1 2>/dev/null | sort -V | tail -n 1; }

mkdir -p "$BUILD/profile"
if [ "$MODE" = profile ]; then
  # 2. Nsight Compute.
  NCU=$(first_found "${NCU:-}" "$(command -v ncu 2>/dev/null)" "$CUDA_HOME/bin/ncu" \
        "$(newest '/opt/nvidia/nsight-compute/*/ncu')" "$(newest "$CUDA_HOME/nsight-compute-*/ncu")") || {
    echo "profile-task$N: skipped: no Nsight Compute (ncu) found (looked on PATH, in $CUDA_HOME/bin, /opt/nvidia/nsight-compute/*/, $CUDA_HOME/nsight-compute-*/; set NCU=/path/to/ncu)"
    exit 77; }
  METRICS=$($PY tools/profile/profile_summary.py --metric-list)
  profile_one() {  # profile_one BUILD_DIR LABEL → BUILD_DIR/profile/taskN.ncu-rep and .csv
    local b=$1 label=$2 rep=$1/profile/task$N
    mkdir -p "$b/profile"
    echo "profile-task$N: $label: $NCU --set full on $b/bin/drive_task$N profile (log $rep.log)"
    local metrics=(--metrics "$METRICS")
    "$NCU" --nvtx --nvtx-include "attnlab_profile/" --set full --import-source yes "${metrics[@]}" \
      -f -o "$rep" "$b/bin/drive_task$N" profile >"$rep.log" 2>&1; local rc=$?
    if [ $rc -ne 0 ] && grep -q "Failed to find metric" "$rep.log"; then
      # This ncu lacks one of the extra metrics: the full set alone (the summary prints n/a for what it lacks).
      echo "profile-task$N: $label: $(grep -m1 'Failed to find metric' "$rep.log" | cut -c1-120); again without --metrics"
      "$NCU" --nvtx --nvtx-include "attnlab_profile/" --set full --import-source yes \
        -f -o "$rep" "$b/bin/drive_task$N" profile >"$rep.log" 2>&1; rc=$?
    fi
    if [ $rc -ne 0 ] || [ ! -f "$rep.ncu-rep" ]; then
      echo "profile-task$N: $label: ncu or the driver failed (exit $rc); the end of $rep.log:"; tail -n 15 "$rep.log" | sed 's/^/    /'
      return 1
    fi
    "$NCU" --import "$rep.ncu-rep" --csv --page raw --print-units base >"$rep.csv" 2>"$rep.csv.err" || {
      echo "profile-task$N: $label: ncu --import failed: $(tail -n 1 "$rep.csv.err")"; return 1; }
  }
  profile_one "$BUILD" "yours" || exit 1
  args=(--task "$N" --yours "$BUILD/profile/task$N.csv")
  if [ -n "$REF" ] && [ "$REF" != "$BUILD" ] && [ -x "$REF/bin/drive_task$N" ]; then
    # The reference's report is kept until its driver is rebuilt.
    if [ -f "$REF/profile/task$N.csv" ] && [ "$REF/profile/task$N.csv" -nt "$REF/bin/drive_task$N" ]; then
      echo "profile-task$N: reference: $REF/profile/task$N.ncu-rep (kept from an earlier run)"
    else profile_one "$REF" "reference" || REF=""; fi
    [ -n "$REF" ] && args+=(--reference "$REF/profile/task$N.csv")
  elif [ "$REF" = "$BUILD" ]; then
    args+=(--reference-note "this is the reference (IMPL=reference)")
  else
    args+=(--reference-note "no reference to profile beside yours (the student kit has no taskN/reference/); docs/perf.md has its times")
  fi
  echo
  $PY tools/profile/profile_summary.py "${args[@]}" | tee "$BUILD/profile/task$N-summary.txt"
  echo
  echo "full report: $BUILD/profile/task$N.ncu-rep (ncu-ui, or: $NCU --import $BUILD/profile/task$N.ncu-rep --page details)"
  exit 0
fi

# 2. compute-sanitizer: memcheck, then racecheck and synccheck, on the driver's small shapes.
CS=$(first_found "${COMPUTE_SANITIZER:-}" "$(command -v compute-sanitizer 2>/dev/null)" "$CUDA_HOME/bin/compute-sanitizer" \
     "$CUDA_HOME/compute-sanitizer/compute-sanitizer" "$(newest '/opt/nvidia/compute-sanitizer*/compute-sanitizer')") || {
  echo "sanitize-task$N: skipped: no compute-sanitizer found (looked on PATH, in $CUDA_HOME/bin, $CUDA_HOME/compute-sanitizer/; set COMPUTE_SANITIZER=/path/to/compute-sanitizer)"
  exit 77; }
status=0
for tool in memcheck racecheck synccheck; do
  log=$BUILD/profile/sanitize-task$N-$tool.log
  extra=()
  [ $tool = memcheck ] && extra=(--check-device-heap yes)
  [ $tool = racecheck ] && extra=(--racecheck-report hazard)
  "$CS" --tool $tool --error-exitcode 86 --print-limit 20 "${extra[@]}" "$BUILD/bin/drive_task$N" small >"$log" 2>&1; rc=$?
  if [ $rc -eq 0 ] && ! grep -qE 'ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]' "$log"; then
    echo "sanitize-task$N: $tool: no errors ($(grep -c '^call: ' "$log") calls; log $log)"
    continue
  fi
  status=1
  echo "sanitize-task$N: $tool: FAILED (exit $rc; full log $log)"
  # The first error: its header line and the lines under it up to and including the first source location.
  awk '
    /^call: / && !started { call = substr($0, 7) }
    /^========= (ERROR|COMPUTE-SANITIZER|RACECHECK|LEAK) SUMMARY/ { next }
    !started && /^========= [A-Z]/ && !/^========= (COMPUTE-SANITIZER|Saved host backtrace|Host Frame)/ { started = 1 }
    started { print "    " $0; n++; if ($0 ~ /\.(cu|cuh|cpp|h):[0-9]+/ || n >= 12) exit }
    END { if (call != "") print "    (the driver'"'"'s last call before it: " call ")" }
  ' "$log"
  grep -v '^=========' "$log" | grep -E 'not implemented|drive_task[0-9]: ' | head -n 2 | sed 's/^/    /'
  [ $tool = memcheck ] && { echo "sanitize-task$N: racecheck and synccheck not run: fix memcheck's error first"; break; }
done
exit $status
