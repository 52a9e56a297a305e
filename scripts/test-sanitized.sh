#!/usr/bin/env bash
# Runs the call-path, channel and interceptor suites (Tests/GRPCCallsTests/{Call,Channel,
# Interceptor}) and the async faces' suites (Tests/GRPCProtoCallsTests/Async*) under
# ThreadSanitizer, in a build of their own (.build-tsan), and fails on any report as well as on
# any failed test.
#
# Usage: scripts/test-sanitized.sh [--build-only | --skip-build]   (extra `swift test` arguments
#        go in SWIFT_TEST_ARGS). .ci/run builds with --build-only beside other steps, then runs
#        the tests with --skip-build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Each file there holds the suite type of its name.
suites="$(for file in Tests/GRPCCallsTests/{Call,Channel,Interceptor}/*.swift; do basename "$file" .swift; done | paste -sd '|')"
# (This build keeps its index store: on Linux, SwiftPM finds the tests through it.)
tsan=(--sanitize=thread --scratch-path .build-tsan)
# Known reports that are not races in this code (scripts/tsan-suppressions.txt says why each).
export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan-suppressions.txt ${TSAN_OPTIONS:-}"
# Each call runs several times slower under ThreadSanitizer: 1,000 calls driven from several
# threads at once instead of 10,000.
export GRPC_CALLS_DRIVING_CALLS="${GRPC_CALLS_DRIVING_CALLS:-1000}"

# Only the test product: --build-tests would also build the executables and the build plugin's
# tools, which no suite here runs.
build=(swift build --product grpc-callsPackageTests "${tsan[@]}")
case "${1:-}" in
  --build-only) exec "${build[@]}" ;;
  --skip-build) ;;
  *) "${build[@]}" 2>&1 | tail -1 ;;
esac
log="$(mktemp)"
status=0
# shellcheck disable=SC2086
scripts/timed-swift-test.sh --skip-build "${tsan[@]}" --filter "GRPCCallsTests\.($suites)|GRPCProtoCallsTests\.Async" ${SWIFT_TEST_ARGS:-} >"$log" 2>&1 || status=$?
reports="$(grep -c '^WARNING: ThreadSanitizer' "$log" || true)"
if [ "$reports" -gt 0 ]; then
  # Each report: the kind, then the two accesses' first frames.
  grep -A 12 '^WARNING: ThreadSanitizer' "$log" | head -120 >&2
  echo "ThreadSanitizer reported $reports problem(s) (above); full log: $log" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  grep -E '^✘|recorded an issue|error:|Fatal error' "$log" | head -60 >&2
  echo "tests failed under ThreadSanitizer (exit $status); full log: $log" >&2
  exit 1
fi
echo "ok: $(grep -E '^(✔|━) Test run' "$log" | tail -1 | sed -E -e 's/^(✔|━) //' -e 's/\.$//'); no ThreadSanitizer report"
