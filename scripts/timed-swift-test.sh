#!/usr/bin/env bash
# Runs `swift test ARGS...` under a time limit, so that a hung test costs minutes, not a whole
# CI run: past SWIFT_TEST_TIME_LIMIT seconds (default 1200) the run is stopped (SIGTERM, then
# SIGKILL 20 s later), the tests that started and never ended are printed, and the exit status
# is 124. Output goes to standard output as `swift test` writes it.
#
# Usage: scripts/timed-swift-test.sh ARGS...   (used by .ci/run and the scripts beside this one)
set -uo pipefail
limit="${SWIFT_TEST_TIME_LIMIT:-1200}"
log="$(mktemp)"
status=0
timeout --kill-after=20 "$limit" stdbuf -oL -eL swift test "$@" 2>&1 | tee "$log" || status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  echo "swift test did not finish within $limit s; tests that started and never ended:"
  python3 - "$log" <<'PY'
import re, sys
started, ended = [], set()
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r'^◇ (Test|Suite) (.*?) started\.$', line.strip())
    if m:
        started.append(m.group(2))
        continue
    m = re.match(r'^[✔✘] (Test|Suite) (".*?"|\S+)', line.strip())
    if m:
        ended.add(m.group(2))
for name in started:
    if name not in ended and not name.startswith("case passing"):
        print("  still running:", name)
PY
  status=124
  # swift-test runs the test bundle in a process group of its own, which the time limit does
  # not reach.
  pkill -KILL -f 'PackageTests\.xctest' 2>/dev/null || true
fi
rm -f "$log"
exit "$status"
