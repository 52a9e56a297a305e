#!/usr/bin/env bash
# Compile checks that need the package's built modules (run after `swift build --build-tests`):
#
#  1. Tests/CompileChecks/*.swift compile as written, and each `// FAIL: <line>` swapped in for
#     the line above it does not: a wrong message or handler type on a generated call is a
#     compile error.
#  2. protoc with protoc-gen-swift and protoc-gen-grpc-calls at default options, over protos
#     that define the same service name in two packages and one with swift_prefix: all of it
#     compiles together in one module.
#  3. The same over Examples/Sources/StandardProtos, which the build plugin also compiles in
#     CI's Examples step: well-known types in rpcs and messages, a proto without services,
#     imports across folders, keywords as names; and v1 and v1alpha reflection.proto, which
#     one module takes only with FileNaming=PathToUnderscores (the build plugin's default).
#
# Usage: scripts/check-compiles.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bin="$(swift build --show-bin-path)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The built Swift modules, and the C modules they import.
flags=(-I "$bin/Modules")
for map in "$bin"/*.build/module.modulemap; do
  case "$map" in *-tool.build/*) continue ;; esac
  flags+=(-Xcc "-fmodule-map-file=$map")
done
while IFS= read -r include; do
  flags+=(-Xcc "-I$include")
done < <(find .build/checkouts/*/Sources -path '*/include/module.modulemap' -exec dirname {} \;)

typecheck() { swiftc -typecheck "${flags[@]}" "$@"; }

status=0
for check in Tests/CompileChecks/*.swift; do
  if ! typecheck "$check" >"$tmp/log" 2>&1; then
    cat "$tmp/log" >&2
    echo "FAIL  $check does not compile as written" >&2
    status=1
    continue
  fi
  echo "ok    $check compiles"
  grep -n '// FAIL: ' "$check" | while IFS=: read -r line _; do
    variant="$tmp/$(basename "$check" .swift)-$line.swift"
    # The FAIL line's code replaces the line above it.
    awk -v n="$line" 'NR == n - 1 { next } NR == n { sub(/\/\/ FAIL: /, ""); print; next } { print }' \
      "$check" >"$variant"
    if typecheck "$variant" >"$tmp/log" 2>&1; then
      echo "FAIL  $check:$line compiles, but must not: $(sed -n "${line}p" "$check" | sed 's/^ *\/\/ FAIL: //')" >&2
      exit 1
    fi
    echo "ok    $check:$line does not compile: $(grep -m1 'error:' "$tmp/log" | sed 's/^.*error: //')"
  done || status=1
done

echo "--- protoc, both plugins at default options, two packages with a Greeter, swift_prefix"
# The plugins the package build left (protoc-gen-grpc-calls is one of its products;
# scripts/generate-grpc-calls.sh builds protoc-gen-swift there too): building a product in .build
# after `swift build --build-tests` would make SwiftPM recompile swift-protobuf and everything
# above it, here and again in the next package build. Missing ones build in a folder of their own.
plugin_bin="$bin"
if [ ! -x "$bin/protoc-gen-swift" ] || [ ! -x "$bin/protoc-gen-grpc-calls" ]; then
  plugins=(--scratch-path .build-protoc)
  swift build "${plugins[@]}" --product protoc-gen-swift 2>&1 | tail -1
  swift build "${plugins[@]}" --product protoc-gen-grpc-calls 2>&1 | tail -1
  plugin_bin="$(swift build "${plugins[@]}" --show-bin-path)"
fi
out="$tmp/generated"
mkdir -p "$out"
(
  cd Tests/GRPCCallsCodeGenTests/Golden/protos
  protoc --plugin=protoc-gen-swift="$plugin_bin/protoc-gen-swift" --swift_out="$out" \
    --plugin=protoc-gen-grpc-calls="$plugin_bin/protoc-gen-grpc-calls" --grpc-calls_out="$out" \
    collide/first.proto collide/second.proto prefixed.proto
)
cat >"$out/use.swift" <<'SWIFT'
import GRPCCalls

// Both Greeters, side by side, and the swift_prefix service.
let first = First_Hello_Greeter(host: "localhost:1")
let second = Second_Hello_Greeter(host: "localhost:1")
let guide = RGRouteGuide(host: "localhost:1")
SWIFT
if typecheck -module-name DefaultOptions $(find "$out" -name '*.swift') >"$tmp/log" 2>&1; then
  echo "ok    generated messages and clients compile together at default options"
else
  cat "$tmp/log" >&2
  echo "FAIL  protoc's output at default options does not compile" >&2
  status=1
fi
# protoc over Examples/Sources/StandardProtos with the given file naming (empty: the plugins'
# default), for the protos given; the output, with the target's own Swift when the third argument
# is "uses", typechecks as one module.
check_standard() {
  local naming="$1" label="$2" with="$3"
  shift 3
  local dir="$tmp/standard-${naming:-default}"
  local options=()
  [ -n "$naming" ] && options=(--swift_opt="FileNaming=$naming" --grpc-calls_opt="FileNaming=$naming")
  mkdir -p "$dir"
  (
    cd Examples/Sources/StandardProtos
    protoc --plugin=protoc-gen-swift="$plugin_bin/protoc-gen-swift" --swift_out="$dir" \
      --plugin=protoc-gen-grpc-calls="$plugin_bin/protoc-gen-grpc-calls" --grpc-calls_out="$dir" \
      "${options[@]}" "$@"
  )
  local uses=()
  [ "$with" = uses ] && uses=(Examples/Sources/StandardProtos/*.swift)
  if typecheck -module-name StandardProtos $(find "$dir" -name '*.swift') "${uses[@]}" >"$tmp/log" 2>&1; then
    echo "ok    $label"
  else
    cat "$tmp/log" >&2
    echo "FAIL  protoc's output for Examples/Sources/StandardProtos does not compile: $label" >&2
    status=1
  fi
}
echo "--- protoc, both plugins, Examples/Sources/StandardProtos (well-known types, no services, two reflection.proto)"
standard=(common/types.proto kv/store.proto grpc/reflection/v1/reflection.proto)
check_standard "" "well-known types in rpcs and messages, a services-free proto, imports across folders, at default options" - "${standard[@]}"
# swiftc takes one file of a name per module, and the plugins' default (FullPath) keeps folders:
# v1/reflection.pb.swift and v1alpha/reflection.pb.swift need PathToUnderscores, as in the
# build plugin, whose default it is.
check_standard PathToUnderscores "both reflection.proto too, with FileNaming=PathToUnderscores, used as the Examples target uses them" \
  uses "${standard[@]}" grpc/reflection/v1alpha/reflection.proto
exit "$status"
