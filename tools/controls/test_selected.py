"""check_controls.py and check_exploits.py refuse a name that grader/controls.json or grader/exploits.json does not list,
naming the nearest, before any setup; a misspelt --only once selected nothing and reported "0 passed, 0 failed".
/usr/bin/python3 tools/controls/test_selected.py"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
failed = 0
for script, name, nearest in [("check_controls.py", "task4_bf16_no_rescale", "task4b_bf16_no_rescale"),
                              ("check_exploits.py", "task4_bf16_when_timd", "task4_bf16_when_timed")]:
    r = subprocess.run([sys.executable, os.path.join(HERE, script), "--only", name], capture_output=True, text=True, timeout=60)
    ok = r.returncode != 0 and f"no entry named '{name}'" in r.stderr and f"did you mean '{nearest}'" in r.stderr
    print(f"{script} --only {name}: exit {r.returncode}, {r.stderr.strip()!r}: {'ok' if ok else 'FAIL'}")
    failed += not ok
sys.exit(1 if failed else 0)
