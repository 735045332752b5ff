"""reference_times.py against a stand-in grader: a shape the grader could not time (its row says 0 ms and a failed
call) stops it, naming the shape and the grader's reason, with the file untouched; a timed shape is written in. A
grader run whose runners could not start (no sandbox installed: each exited with 127) once wrote 0.0 ms for every 5b
and 6b shape, which the kit would have taken as the reference's times.
/usr/bin/python3 tools/gpu/test_reference_times.py"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STANDIN = """#!/usr/bin/python3
import json, os, sys
out = sys.argv[sys.argv.index("--out") + 1]
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump({"extra_data": {"gpu": "Stand-in GPU"}, "tests": json.loads(os.environ["STANDIN_TESTS"])}, f)
"""


def row(ms, failed, reason=""):
    return {"name": "Part 5b: performance paged decode B=1", "extra_data": {"state": "performance", "task": 5, "ms": ms,
                                                                             "failed_calls": failed, "reason": reason}}


failed = 0
with tempfile.TemporaryDirectory() as tmp:
    grader = os.path.join(tmp, "grader")
    with open(grader, "w") as f:
        f.write(STANDIN)
    os.chmod(grader, os.stat(grader).st_mode | stat.S_IEXEC)
    times = os.path.join(tmp, "reference_times.json")
    shutil.copy(os.path.join(ROOT, "grader", "reference_times.json"), times)
    before = open(times).read()
    for tests, want_rc, want in [([row(0.0, 1, "the runner exited with code 127")], 1, "not timed (the runner exited with code 127"),
                                 ([row(0.1234, 0)], 0, "Stand-in GPU: task5b 1 shapes")]:
        r = subprocess.run([sys.executable, os.path.join(HERE, "reference_times.py"), "--grader", grader, "--file", times,
                            "--part", "5b"], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "STANDIN_TESTS": json.dumps(tests)})
        said = (r.stdout + r.stderr).strip()
        if "grader output in " in said:  # the script keeps the failed run's folder for a person to read; not here
            shutil.rmtree(said.split("grader output in ", 1)[1].rstrip(")"), ignore_errors=True)
        ok = (r.returncode != 0) == (want_rc != 0) and want in said
        if want_rc:
            ok = ok and open(times).read() == before
        else:
            ok = ok and json.load(open(times))["gpus"]["Stand-in GPU"]["task5b"] == {"paged decode B=1": 0.1234}
        print(f"ms {tests[0]['extra_data']['ms']}: exit {r.returncode}, {said[-200:]!r}: {'ok' if ok else 'FAIL'}")
        failed += not ok
sys.exit(1 if failed else 0)
