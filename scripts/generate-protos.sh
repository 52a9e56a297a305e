#!/usr/bin/env bash
# Regenerates the committed Swift code for the grpc.testing interop protos.
#
# Message code comes from swift-protobuf's protoc-gen-swift, service stubs from
# grpc-swift-protobuf's protoc-gen-grpc-swift-2, both built from the versions this package
# resolves (in .build-protoc, kept out of git). protoc itself is Debian's protobuf-compiler.
#
# Building the plugins takes minutes, so the output is committed and
# scripts/check-generated.sh proves it is current without rebuilding them.
#
# Usage: scripts/generate-protos.sh [OUTPUT_DIR]   (default: Sources/GRPCCallsInterop/Generated)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/Sources/GRPCCallsInterop/Generated}"
protos_root="$root/Protos"
protos=(
  "src/proto/grpc/testing/empty.proto"
  "src/proto/grpc/testing/messages.proto"
  "src/proto/grpc/testing/test.proto"
)

command -v protoc >/dev/null || { echo "protoc not found: apt-get install -y protobuf-compiler" >&2; exit 1; }

scratch="$root/.build-protoc"
for product in protoc-gen-swift protoc-gen-grpc-swift-2; do
  swift build --package-path "$root" --scratch-path "$scratch" --product "$product" >&2
done
bin="$(swift build --package-path "$root" --scratch-path "$scratch" --show-bin-path)"

mkdir -p "$out"
rm -f "$out"/*.swift
cd "$protos_root"
protoc --plugin="$bin/protoc-gen-swift" --swift_out="$out" \
  --swift_opt=Visibility=Public --swift_opt=FileNaming=DropPath \
  --swift_opt=UseAccessLevelOnImports=true \
  "${protos[@]}"
protoc --plugin="$bin/protoc-gen-grpc-swift-2" --grpc-swift-2_out="$out" \
  --grpc-swift-2_opt=Visibility=Public --grpc-swift-2_opt=FileNaming=DropPath \
  --grpc-swift-2_opt=UseAccessLevelOnImports=true \
  --grpc-swift-2_opt=Client=false --grpc-swift-2_opt=Server=true \
  "src/proto/grpc/testing/test.proto"

"$root/scripts/check-generated.sh" --write-stamp "$out"
echo "generated into $out" >&2
