#!/usr/bin/env bash
# Generates the interop TestService client with this package's own protoc plugin,
# protoc-gen-grpc-calls, into Sources/GRPCCallsInterop/GeneratedClient (committed).
#
# The plugin builds in seconds (it is part of this package), so CI regenerates into a temp
# dir and diffs: `scripts/generate-grpc-calls.sh --check`. That run also proves protoc drives
# the plugin; the package build compiles what it wrote.
#
# ShortServiceNames: the module also holds grpc-swift-2's generated server code, whose
# `Grpc_Testing_TestService` namespace the default names would collide with.
#
# Usage: scripts/generate-grpc-calls.sh [--check]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
committed="$root/Sources/GRPCCallsInterop/GeneratedClient"
command -v protoc >/dev/null || { echo "protoc not found: apt-get install -y protobuf-compiler" >&2; exit 1; }

swift build --package-path "$root" --product protoc-gen-grpc-calls >&2
plugin="$(swift build --package-path "$root" --show-bin-path)/protoc-gen-grpc-calls"

generate() {
  local out="$1"
  mkdir -p "$out"
  (
    cd "$root/Protos"
    protoc --plugin=protoc-gen-grpc-calls="$plugin" --grpc-calls_out="$out" \
      --grpc-calls_opt=Visibility=Public \
      --grpc-calls_opt=ShortServiceNames=true \
      src/proto/grpc/testing/test.proto
  )
  mv "$out/src/proto/grpc/testing/test.grpc-calls.swift" "$out/test.grpc-calls.swift"
  rm -rf "$out/src"
}

if [ "${1:-}" = "--check" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  generate "$tmp"
  if ! diff -u "$committed/test.grpc-calls.swift" "$tmp/test.grpc-calls.swift"; then
    echo "the generated TestService client is stale: run scripts/generate-grpc-calls.sh" >&2
    exit 1
  fi
  echo "generated TestService client is current (protoc-gen-grpc-calls)"
else
  generate "$committed"
  echo "generated into $committed" >&2
fi
