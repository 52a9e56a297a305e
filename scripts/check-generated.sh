#!/usr/bin/env bash
# Proves the committed generated code is current, without building the protoc plugins.
#
# scripts/generate-protos.sh records a SHA-256 of every input (the .proto files and the
# generator script) and every output file in Generated/STAMP. This check recomputes them:
# a proto edited without regenerating, or a generated file edited by hand, fails it.
#
# Usage: scripts/check-generated.sh                 check the committed stamp
#        scripts/check-generated.sh --write-stamp DIR  (used by generate-protos.sh)
#        scripts/check-generated.sh --full           regenerate into a temp dir and diff (slow)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
generated="$root/Sources/GRPCCallsInterop/Generated"

fingerprint() {
  local dir="$1"
  (
    cd "$root"
    sha256sum scripts/generate-protos.sh Protos/src/proto/grpc/testing/*.proto
    cd "$dir"
    sha256sum ./*.swift
  )
}

case "${1:-}" in
  --write-stamp)
    fingerprint "$2" > "$2/STAMP"
    ;;
  --full)
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    "$root/scripts/generate-protos.sh" "$tmp"
    diff -ru --exclude=STAMP --exclude=README.md "$generated" "$tmp"
    echo "generated code is current (full regeneration matches)"
    ;;
  "")
    if ! diff <(fingerprint "$generated") "$generated/STAMP"; then
      echo "generated code is stale or hand-edited: run scripts/generate-protos.sh" >&2
      exit 1
    fi
    echo "generated code is current"
    ;;
  *)
    echo "usage: $0 [--write-stamp DIR | --full]" >&2
    exit 2
    ;;
esac
