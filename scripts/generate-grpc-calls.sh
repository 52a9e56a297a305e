#!/usr/bin/env bash
# Generates the committed code that this package's own protoc plugin, protoc-gen-grpc-calls,
# writes (with protoc-gen-swift for messages where a module needs them):
#
#  - the interop TestService client, into Sources/GRPCCallsInterop/GeneratedClient;
#  - the standard health service (Protos/grpc/health/v1/health.proto), messages and client,
#    into Sources/GRPCCallsHealth/Generated, and its messages alone into
#    Sources/GRPCCallsInterop/GeneratedHealth (for the interop server's health service);
#  - the reflection messages (Protos/grpc/reflection/v1/reflection.proto), into
#    Sources/GRPCCallsReflection/Generated (visible in the package: the interop server's
#    reflection service uses them too), and the descriptors of every file that service
#    describes, into Sources/GRPCCallsInterop/GeneratedReflection.
#
# Both plugins build in seconds from this package's dependencies, so CI regenerates into a temp
# dir and diffs: `scripts/generate-grpc-calls.sh --check`. That run also proves protoc drives
# the plugins; the package build compiles what they wrote.
#
# ShortServiceNames for TestService: its module also holds grpc-swift-2's generated server
# code, whose `Grpc_Testing_TestService` namespace the default names would collide with.
#
# Usage: scripts/generate-grpc-calls.sh [--check]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v protoc >/dev/null || { echo "protoc not found: apt-get install -y protobuf-compiler" >&2; exit 1; }

swift build --package-path "$root" --product protoc-gen-grpc-calls >&2
swift build --package-path "$root" --product protoc-gen-swift >&2
bin="$(swift build --package-path "$root" --show-bin-path)"

# Each job: the committed directory, relative to the root, what writes it, and its argument.
interop_client() {
  local out="$1"
  (
    cd "$root/Protos"
    protoc --plugin=protoc-gen-grpc-calls="$bin/protoc-gen-grpc-calls" --grpc-calls_out="$out" \
      --grpc-calls_opt=Visibility=Public \
      --grpc-calls_opt=ShortServiceNames=true \
      --grpc-calls_opt=FileNaming=DropPath \
      src/proto/grpc/testing/test.proto
  )
}

health() {
  local out="$1"
  (
    cd "$root/Protos"
    protoc --plugin=protoc-gen-swift="$bin/protoc-gen-swift" --swift_out="$out" \
      --swift_opt=FileNaming=DropPath --swift_opt=UseAccessLevelOnImports=true \
      --plugin=protoc-gen-grpc-calls="$bin/protoc-gen-grpc-calls" --grpc-calls_out="$out" \
      --grpc-calls_opt=FileNaming=DropPath --grpc-calls_opt=NoV1Compatibility \
      grpc/health/v1/health.proto
  )
}

# Messages alone, internal to their module (or as `visibility` says): the interop server's copy
# of the health messages (so that neither module's public interface carries types an app may
# generate itself), and the reflection client's (v1; v1alpha's are the same on the wire, and the
# client calls both versions through GRPCProtoService, so it needs no generated client).
messages() {
  local out="$1" proto="$2" visibility="${3:-Internal}"
  (
    cd "$root/Protos"
    protoc --plugin=protoc-gen-swift="$bin/protoc-gen-swift" --swift_out="$out" \
      --swift_opt=FileNaming=DropPath --swift_opt=UseAccessLevelOnImports=true \
      --swift_opt=Visibility="$visibility" \
      "$proto"
  )
}

# The reflection messages, visible in this package only: the interop server's reflection
# service uses them too.
reflection_messages() {
  messages "$1" grpc/reflection/v1/reflection.proto Package
}

# The interop server's reflection service: its messages, and the descriptors of the files it
# describes (protoc's FileDescriptorSet, with every import, as base64 in a Swift file; no
# resource bundle to find at run time).
interop_reflection() {
  local out="$1"
  local set
  set="$(mktemp)"
  (
    cd "$root/Protos"
    protoc --include_imports --descriptor_set_out="$set" \
      src/proto/grpc/testing/test.proto grpc/health/v1/health.proto \
      grpc/reflection/v1/reflection.proto grpc/reflection/v1alpha/reflection.proto
  )
  {
    echo "// DO NOT EDIT."
    echo "// Written by scripts/generate-grpc-calls.sh: protoc --include_imports --descriptor_set_out"
    echo "// of test.proto, health.proto and both reflection.proto, base64 (a FileDescriptorSet)."
    echo ""
    echo "internal enum InteropDescriptors {"
    echo "  static let fileDescriptorSetBase64 = \"\"\""
    base64 -w 96 "$set" | sed 's/^/    /'
    echo "    \"\"\""
    echo "}"
  } >"$out/descriptors.swift"
  rm -f "$set"
}

jobs=(
  "Sources/GRPCCallsInterop/GeneratedClient interop_client"
  "Sources/GRPCCallsHealth/Generated health"
  "Sources/GRPCCallsInterop/GeneratedHealth messages grpc/health/v1/health.proto"
  "Sources/GRPCCallsReflection/Generated reflection_messages"
  "Sources/GRPCCallsInterop/GeneratedReflection interop_reflection"
)

status=0
for job in "${jobs[@]}"; do
  read -r committed generate argument <<<"$job"
  if [ "${1:-}" = "--check" ]; then
    tmp="$(mktemp -d)"
    "$generate" "$tmp" ${argument:+"$argument"}
    if ! diff -ru "$root/$committed" "$tmp"; then
      echo "$committed is stale: run scripts/generate-grpc-calls.sh" >&2
      status=1
    else
      echo "$committed is current (protoc-gen-grpc-calls)"
    fi
    rm -rf "$tmp"
  else
    rm -rf "${root:?}/$committed"
    mkdir -p "$root/$committed"
    "$generate" "$root/$committed" ${argument:+"$argument"}
    echo "generated into $committed" >&2
  fi
done
exit "$status"
