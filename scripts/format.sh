#!/usr/bin/env bash
# Formats the project's own Swift code with swift-format (the toolchain's `swift format`) and
# the style in .swift-format (grpc-swift-2's); `--lint` only checks, as CI does, and fails on
# any difference. Generated code (protoc's output, golden files) is left as its generator
# wrote it.
#
# Usage: scripts/format.sh [--lint]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

files=()
while IFS= read -r file; do
  files+=("$file")
done < <(git ls-files '*.swift' | grep -v -E '/GeneratedReflection/descriptors\.swift$|\.pb\.swift$|\.grpc\.swift$|\.grpc-calls\.swift$|/Golden/')

if [ "${1:-}" = "--lint" ]; then
  swift format lint --strict --parallel "${files[@]}"
  echo "swift format lint: ${#files[@]} files clean"
else
  swift format format --in-place --parallel "${files[@]}"
fi
