#!/usr/bin/env bash
# class_gpus.sh [all|one|probe]… — the sample class of tools/gpu/pack_class.sh graded on a GPU machine (carry `carry`):
#   probe  a GPU's node alone in bubblewrap (as the runners' sandbox binds it for a worker): can CUDA run there,
#          and does it see that GPU only?  (ATTNLAB_PIN_GPU_NODE=0 follows for the runs when it cannot)
#   all    batch_grade.py --grade-only --gpus all   (one worker per GPU)
#   one    batch_grade.py --grade-only --gpus 0     (one worker)
#   perf   the timing's noise with and without a neighbour: the class's `reference` sample timed against the reference
#          (grader --perf-only --task 5, each worker's pinning), twice on GPU 0 alone, then twice on GPUs 0 and 1 at once;
#          per shape the ratio (the sample's time / the reference's) to $OUT/perf.log
#   compare  each submission's credit in the two runs ($OUT/gradebook-{one,all}.csv; also here, on fetched files)
# [CLASS="reference slow …"] only these samples; [TASKS=4,5] the tasks graded (5 alone: a shorter run); [TIMING=beside] the
# workers time while the others work (batch_grade.py --timing; the default, alone, times each task alone on the node). Their goldens are made first (torch). Logs, gradebooks and wall times to $OUT (default build/class-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-build/class-out}
TASKS=${TASKS:-4,5}  # the tasks graded (the class is built for 4 and 5)
mkdir -p "$OUT"
export ATTNLAB_GOLDENS=$PWD/goldens ATTNLAB_NULL_RUNNER_DIR=$PWD/build/common/null-runners PYTHONUNBUFFERED=1
if [ "$*" != compare ]; then
  tar -xJf carry/class/class.tar.xz
  if [ -n "${CLASS:-}" ]; then  # CLASS="reference slow …": grade only these samples (a shorter run)
    for d in build/class-samples/*/; do [[ " $CLASS " == *" $(basename "$d") "* ]] || rm -rf "$d"; done; fi
  [ -x /usr/bin/bwrap ] || install -m 755 build/bwrap /usr/bin/bwrap
  nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total,driver_version --format=csv | tee "$OUT/gpus.txt"
  [[ " $* " =~ " one "|" all " ]] && for t in ${TASKS//,/ }; do  # grading needs them; probe and perf do not
    [ -d goldens/task$t ] || python3 tools/goldens/make_goldens.py --only task$t >> "$OUT/goldens.log" 2>&1 || echo "goldens task$t FAILED"
  done
fi
for step in "$@"; do
  case $step in
  probe)
    for gpu in $(nvidia-smi --query-gpu=index --format=csv,noheader); do
      node=$(/usr/bin/python3 -c "import sys; sys.path.insert(0, 'tools/class'); import gpus; print(gpus.host_gpus()[$gpu]['node'])")
      binds=(); for n in /dev/nvidia*; do [[ $n =~ ^/dev/nvidia[0-9]+$ && $n != "$node" ]] || binds+=(--dev-bind "$n" "$n"); done
      for top in /bin /sbin /lib /lib32 /lib64 /libx32; do  # as common/remote/sandbox.cpp shows them
        if [ -L $top ]; then binds+=(--symlink "$(readlink $top)" $top); elif [ -d $top ]; then binds+=(--ro-bind $top $top); fi; done
      bwrap --unshare-all --die-with-parent --ro-bind /usr /usr --ro-bind-try /etc/ld.so.cache /etc/ld.so.cache --ro-bind /sys /sys \
        --proc /proc --dev /dev "${binds[@]}" --ro-bind "$PWD/build/gpu_probe" /probe --clearenv --uid 65534 --gid 65534 -- /probe \
        > "$OUT/probe-gpu$gpu.log" 2>&1
      echo "probe: GPU $gpu ($node alone): exit $? — $(tr '\n' ' ' < "$OUT/probe-gpu$gpu.log")" | tee -a "$OUT/probe.log"
    done ;;
  all|one)
    spec=$([ "$step" = all ] && echo all || echo 0)
    rm -rf "build/class-$step" && cp -r build/class-gpu "build/class-$step"
    start=$(date +%s.%N)
    /usr/bin/python3 tools/class/batch_grade.py --submissions build/class-samples --out "build/class-$step" --grade-only \
      --no-setup --tasks "$TASKS" --gpus "$spec" --timing "${TIMING:-alone}" > "$OUT/class-$step.log" 2>&1
    rc=$?
    wall=$(/usr/bin/python3 -c "import time; print(f'{time.time() - $start:.0f}')")
    echo "class --gpus $spec: exit $rc, wall $wall s" | tee -a "$OUT/summary.log"
    echo "  the grabber's runners said: $(grep -rhao 'grabber: [-0-9]* GPU(s) reachable' "build/class-$step/grabber" | sort | uniq -c | tr -s ' ' | tr '\n' ';')" \
      | tee -a "$OUT/summary.log"
    cp "build/class-$step/gradebook.csv" "$OUT/gradebook-$step.csv" 2>/dev/null
    # the class report and the students' pages (tools/class/class_report.py), one file
    tar -czf "$OUT/report-$step.tar.gz" -C "build/class-$step" report history.jsonl 2>/dev/null
    # one file per run (what comes back from a GPU machine is capped in files): each student's report and speed rows
    for d in build/class-$step/*/; do [ -f "$d/Results.md" ] && { echo "=== $(basename "$d")"; cat "$d/Results.md"
      cat "$d"/logs/task*-bench.log 2>/dev/null; }; done > "$OUT/reports-$step.md" ;;
  perf)
    timed() {  # timed GPU NAME: one --perf-only run with the pinning a worker of --gpus all gets on GPU; ratios kept
      local pin; pin=$(/usr/bin/python3 -c "
import sys; sys.path.insert(0, 'tools/class'); import gpus
g = gpus.choose('all')
print(' '.join(f'{k}={v}' for k, v in gpus.worker_env(g[$1]).items())); print(','.join(map(str, gpus.split_cores(len(g))[$1])))")
      env $(sed -n 1p <<<"$pin") taskset -c "$(sed -n 2p <<<"$pin")" build/reference/bin/grader --task 5 --perf-only \
        --bin-dir build/class-gpu/reference/tree/build/skeleton/bin --out "build/perf-$2" > "build/perf-$2.log" 2>&1
      /usr/bin/python3 -c "
import json
rows = [json.loads(l) for l in open('build/perf-$2/logs/task5-bench.log') if l.startswith('{')]
print('$2 GPU $1: ' + '  '.join(f\"{r['name'].replace('decode ', '')}: {r['ms'] / r['ref_ms']:.2f}\" for r in rows))" | tee -a "$OUT/perf.log"
      cp "build/perf-$2/logs/task5-bench.log" "$OUT/perf-$2-bench.jsonl" 2>/dev/null
    }
    timed 0 alone-1; timed 0 alone-2
    for i in 1 2; do timed 0 "pair$i-gpu0" & timed 1 "pair$i-gpu1" & wait; done ;;
  compare)
    /usr/bin/python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.log"
import csv, json, sys
out = sys.argv[1]
rubric = json.load(open("grader/rubric.json"))
points = {f"task{t['id']}": t["points"] for t in rubric["tasks"]} | {"bonus": sum(b["points"] for b in rubric["bonus"])}
read = lambda run: {r["student"]: r for r in csv.DictReader(open(f"{out}/gradebook-{run}.csv"))}
one, all_ = read("one"), read("all")
worst = 0.0
for who in sorted(one):
    a, b = one[who], all_.get(who, {})
    cols = [c for c in a if c in points and c in b]
    # credit in percent of each column's points: the calibration's spread is ±3 of them
    diffs = {c: 100 * abs(float(a[c]) - float(b[c])) / points[c] for c in cols}
    d = max(diffs.values(), default=0.0)
    worst = max(worst, d)
    print(f"{who:<12} one GPU {a['total']:>6} (bonus {a.get('bonus', '-')})  all GPUs {b.get('total', '-'):>6} "
          f"(bonus {b.get('bonus', '-')})  largest difference {d:.1f} % of a task's points "
          f"({'within' if d <= 3 else 'OUTSIDE'} ±3); {b.get('gpu', '')}; flags: {b.get('flags', '')}")
print(f"largest difference over the class: {worst:.1f} % of a task's points")
PY
    ;;
  esac
done
