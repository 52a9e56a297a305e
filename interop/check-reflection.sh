#!/usr/bin/env bash
# grpc-calls list and describe against a server with reflection and the interop TestService:
# each must print what grpcurl prints for these symbols (the lines below, among others).
#
# Usage: interop/check-reflection.sh path/to/grpc-calls HOST:PORT
set -euo pipefail
tool="$1"
target="$2"
status=0

# reflect list|describe [SYMBOL]: the command against the target, each call allowed 120 s.
reflect() {
  "$tool" "$1" --timeout 120 "$target" "${@:2}"
}

expect() {
  local what="$1" line="$2" output="$3"
  if grep -qxF -- "$line" <<<"$output"; then
    echo "ok    $what: $line"
  else
    echo "FAIL  $what: no line '$line' in:" >&2
    echo "$output" >&2
    status=1
  fi
}

services="$(reflect list)" || { echo "FAIL  list $target: $services" >&2; exit 1; }
expect "list" "grpc.testing.TestService" "$services"
expect "list" "grpc.health.v1.Health" "$services"

methods="$(reflect list grpc.testing.TestService)"
expect "list TestService" "grpc.testing.TestService.FullDuplexCall" "$methods"
if [ "$methods" = "$(LC_ALL=C sort <<<"$methods")" ] && [ "$(wc -l <<<"$methods")" -eq 8 ]; then
  echo "ok    list TestService: its 8 methods, sorted"
else
  echo "FAIL  list TestService: expected its 8 methods, sorted:" >&2
  echo "$methods" >&2
  status=1
fi

service="$(reflect describe grpc.testing.TestService)"
expect "describe TestService" "grpc.testing.TestService is a service:" "$service"
expect "describe TestService" \
  "  rpc StreamingOutputCall ( .grpc.testing.StreamingOutputCallRequest ) returns ( stream .grpc.testing.StreamingOutputCallResponse );" \
  "$service"

message="$(reflect describe grpc.testing.SimpleRequest)"
expect "describe SimpleRequest" "grpc.testing.SimpleRequest is a message:" "$message"
expect "describe SimpleRequest" "  .grpc.testing.Payload payload = 3;" "$message"
expect "describe SimpleRequest" "  .grpc.testing.BoolValue expect_compressed = 8;" "$message"

method="$(reflect describe grpc.testing.TestService.UnaryCall)"
expect "describe UnaryCall" "rpc UnaryCall ( .grpc.testing.SimpleRequest ) returns ( .grpc.testing.SimpleResponse );" "$method"

if unknown="$(reflect describe no.such.Symbol 2>&1)"; then
  echo "FAIL  describe no.such.Symbol succeeded" >&2
  status=1
elif grep -q "knows no symbol no.such.Symbol (NOT_FOUND" <<<"$unknown"; then
  echo "ok    describe no.such.Symbol fails with NOT_FOUND"
else
  echo "FAIL  describe no.such.Symbol: expected NOT_FOUND, got: $unknown" >&2
  status=1
fi
exit "$status"
