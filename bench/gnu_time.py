"""Runs a command under GNU `/usr/bin/time -v`: wall seconds, CPU seconds, peak RSS (MB),
stdout and exit code. Shared by the bench comparison scripts."""

import os
import subprocess
import sys
import tempfile
import time


def run_timed(cmd, ok_codes=(0,)):
    with tempfile.NamedTemporaryFile(prefix="bench-time-", suffix=".txt", delete=False) as tf:
        time_out = tf.name
    try:
        start = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-v", "-o", time_out, *cmd],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            check=False,
        )
        wall = time.perf_counter() - start
        if proc.returncode not in ok_codes:
            sys.stderr.write(proc.stderr.decode(errors="replace"))
            raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}")
        rss_kb = None
        cpu = 0.0
        with open(time_out, encoding="utf-8", errors="replace") as f:
            for line in f:
                if "Maximum resident set size" in line:
                    rss_kb = int(line.rsplit(":", 1)[1])
                elif "User time (seconds)" in line or "System time (seconds)" in line:
                    cpu += float(line.rsplit(":", 1)[1])
        if rss_kb is None:
            raise SystemExit("/usr/bin/time -v printed no 'Maximum resident set size'")
        return wall, cpu, rss_kb / 1024.0, proc.stdout.decode(), proc.returncode
    finally:
        os.unlink(time_out)
