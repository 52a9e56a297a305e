#!/usr/bin/env bash
# Prints what went wrong in a failed `swift test` log: the failed tests and recorded issues,
# trap messages, and, when the process trapped (an assertion, a precondition, an overflow), the
# crashed thread's frames, which the tail of the log, full of other threads, does not show.
#
# Usage: scripts/show-test-failures.sh LOG   (used by .ci/run and scripts/test-under-load.sh)
set -uo pipefail

log="$1"
grep -E '^✘|recorded an issue|error:|Fatal error|Assertion failed|Precondition failed' "$log" | head -80
grep -E 'Program crashed' "$log" | head -3
grep -A 60 -E '^Thread [0-9]+.* crashed:' "$log" | head -80
exit 0
