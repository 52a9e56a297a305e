#!/usr/bin/env bash
# Regenerates the generator's golden-test inputs: one FileDescriptorSet per test proto (with
# source info, so comments are in it, and the files it imports, last the proto itself),
# committed beside the protos, so the unit tests need no
# protoc. After changing the generator on purpose, refresh the expected outputs with
# `GRPC_CALLS_UPDATE_GOLDEN=1 swift test --filter GoldenTests`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
golden="$root/Tests/GRPCCallsCodeGenTests/Golden"
cd "$golden/protos"
for proto in $(find . -name '*.proto' | sed 's|^\./||' | sort); do
  name="$(echo "${proto%.proto}" | tr '/' '_')"
  protoc --include_source_info --include_imports --descriptor_set_out="$golden/$name.pb" "$proto"
done
echo "descriptor sets written to $golden" >&2
