#!/usr/bin/env bash
# Fuzzes host, method path, metadata and channel-argument parsing (Fuzz/README.md).
#
# Usage: scripts/fuzz.sh [runs]   (default 100000). Extra libFuzzer flags go in FUZZ_ARGS.
# Exits non-zero when a property breaks or the process traps; the input is kept and named.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs="${1:-100000}"
# No index store: nothing reads this build's index (it has no tests), and writing one costs
# about a tenth of a build's CPU.
build=(swift build --product grpc-calls-fuzz --scratch-path .build-fuzz --disable-index-store
  --sanitize=fuzzer --sanitize=address -Xswiftc -DGRPC_CALLS_FUZZING)
"${build[@]}" 2>&1 | tail -1
fuzzer="$("${build[@]}" --show-bin-path)/grpc-calls-fuzz"

# New inputs go to a scratch directory: the committed corpus only seeds the run.
work="$(mktemp -d)"
# No Swift backtracer: the property's message and libFuzzer's report are what matter.
# shellcheck disable=SC2086
if ! SWIFT_BACKTRACE=enable=no "$fuzzer" -runs="$runs" -max_len=512 -timeout=300 -print_final_stats=1 \
  -dict=Fuzz/grpc-calls.dict -artifact_prefix="$work/" ${FUZZ_ARGS:-} "$work" Fuzz/Corpus \
  >"$work/fuzz.log" 2>&1; then
  grep -E 'Fatal error|ERROR|SUMMARY|artifact|Test unit' "$work/fuzz.log" | head -20 >&2
  echo "the fuzz target failed; log: $work/fuzz.log; replay: swift run grpc-calls-fuzz $work/crash-*" >&2
  exit 1
fi
executed="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log")"
echo "ok: $executed fuzz inputs, no property broken, no trap ($(find "$work" -maxdepth 1 -type f ! -name fuzz.log | wc -l) new corpus inputs in $work)"
