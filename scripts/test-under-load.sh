#!/usr/bin/env bash
# Runs the test suite while two busy-loop processes occupy both cores, as on a shared CI
# machine, to catch tests that depend on how fast something happens.
#
# Usage: scripts/test-under-load.sh [runs]   (default 3; every run must pass)
# Builds the tests first if needed; extra `swift test` arguments go in SWIFT_TEST_ARGS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs="${1:-3}"
swift build --build-tests 2>&1 | tail -1

loops=()
stop_loops() {
  for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_loops EXIT
for _ in 1 2; do
  (while :; do :; done) &
  loops+=("$!")
done

for run in $(seq 1 "$runs"); do
  start=$(date +%s)
  log="$(mktemp)"
  # shellcheck disable=SC2086
  if scripts/timed-swift-test.sh --skip-build ${SWIFT_TEST_ARGS:-} >"$log" 2>&1; then
    echo "run $run/$runs under load: $(grep -E '^(✔|━) Test run' "$log" | tail -1) ($(( $(date +%s) - start )) s)"
  else
    scripts/show-test-failures.sh "$log"
    echo "run $run/$runs under load FAILED ($(( $(date +%s) - start )) s); full log: $log" >&2
    exit 1
  fi
done
echo "ok: $runs run(s) passed with both cores busy"
