#!/usr/bin/env bash
# Interop against independent implementations: Python grpcio (gRPC C core) and grpc-go.
#
#  1. grpc-calls interop (our client, through the generated client's callback, async and v1 methods
#     and through GRPCCall2 directly: --api all) against the grpcio server, then grpc-calls load
#     (LOAD_CALLS unary calls per face, one at a time and 32 in flight; default 5,000);
#  2. grpc-calls interop against a grpc-go server (interop/go), plaintext and TLS, then
#     GO_LOAD_CALLS unary calls per face at 1, 64 and 200 in flight (default 10,000), against
#     its defaults and against `--max-connection-age 1s` (a graceful GOAWAY every second);
#     grpc-calls cancellation (CANCEL_RUNS runs, default 100) runs against both servers;
#     grpc-calls list and describe (server reflection) run against every server too;
#  3. grpc-calls interop against our own server, `grpc-calls serve`;
#  4. the grpcio client against `grpc-calls serve`, to show our test server is a faithful peer;
#  5. balancing over three grpcio servers, then three `grpc-calls serve`, on 127.0.0.1-3
#     (interop/balance.sh).
#
# Creates a virtual environment (.venv-interop, kept out of git) with grpcio, grpcio-tools,
# grpcio-status, grpcio-health-checking and grpcio-reflection.
# Exits non-zero if any case fails. Usage: interop/run.sh [path/to/grpc-calls]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

tool="${1:-}"
if [ -z "$tool" ]; then
  swift build --product grpc-calls >&2
  tool="$(swift build --show-bin-path)/grpc-calls"
fi

venv="$root/.venv-interop"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check grpcio grpcio-tools grpcio-status \
  grpcio-health-checking grpcio-reflection
python="$venv/bin/python"
"$python" -c 'import grpc; print("grpcio", grpc.__version__)'

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# Starts a server command in the background (in this shell, so cleanup can stop it) and sets
# `port` from its "listening on HOST:PORT" line.
port=""
start_server() {
  local log
  log="$(mktemp)"
  "$@" >"$log" 2>&1 &
  pids+=("$!")
  port="$(interop/listening-port.sh "$log" "${pids[-1]}")" || {
    echo "server '$*' did not start" >&2
    return 1
  }
}

# Each section prints the minutes since the script started, so a slow one shows in CI's log.
section() { printf -- '--- %s (%d:%02d)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

status=0

section "grpc-calls interop -> grpcio server"
# grpcio hides a request's grpc-encoding from the servicer, so its server cannot check
# expect_compressed: the client_compressed_* cases run against grpc-go and grpc-calls serve.
echo "(client_compressed_unary, client_compressed_streaming: not run, grpcio's server cannot see request compression)"
start_server "$python" interop/python/server.py --port 0
"$tool" interop --server_host 127.0.0.1 --server_port "$port" --test_case all --api all --use_cache true \
  --exclude_test_cases client_compressed_unary,client_compressed_streaming || status=1

section "grpc-calls list and describe -> grpcio server (grpcio-reflection, v1 and v1alpha)"
interop/check-reflection.sh "$tool" "127.0.0.1:$port" || status=1

section "grpc-calls load -> grpcio server (unary calls one at a time and 32 in flight, every face)"
# grpcio answers a unary call before it reads our END_STREAM unless both leave together; a
# client that sends them apart gets its streams reset and, past swift-nio-http2's reset limit,
# its connection closed (Design article, "Where the core needed help"). Every call must succeed.
"$tool" load --server_host 127.0.0.1 --server_port "$port" --calls "${LOAD_CALLS:-5000}" \
  --concurrency 1,32 --api all || status=1

section "grpc-calls cancellation -> grpcio server: every cancel is a reset, and its handler sees a cancel"
# Cancel, task cancellation, a deadline and the v1 cancel, on both streaming methods and both
# paths to the core: RST_STREAM(CANCEL) and no END_STREAM on the wire, "cancelled" in the
# server's own record of each handler (--events).
events="$(mktemp)"
start_server "$python" interop/python/server.py --port 0 --events "$events"
"$tool" cancellation --server_port "$port" --events "$events" --runs "${CANCEL_RUNS:-100}" | tail -n 20 || status=1

section "grpc-calls interop and load -> grpcio server that gzips every response (client requests uncompressed)"
# gRPC core clients accept gzip and deflate responses by default; so must ours, whatever
# compressionAlgorithm says about requests.
start_server "$python" interop/python/server.py --port 0 --compress-responses
"$tool" interop --server_host 127.0.0.1 --server_port "$port" --api all \
  --test_case empty_unary,large_unary,server_streaming,client_streaming,ping_pong || status=1
"$tool" load --server_host 127.0.0.1 --server_port "$port" --calls 1000 --concurrency 1,32 --api all || status=1

section "grpc-calls interop -> grpc-go server, plaintext and TLS, every face (interop/go)"
# grpc-go is the implementation behind most gRPC backends, with an HTTP/2 stack of its own: BDP
# pings on nearly every burst of DATA, keepalive enforcement, a two-phase GOAWAY.
go_server="$(interop/go/build.sh | tail -n 1)"
certs="$(mktemp -d)"
interop/go/make-test-certs.sh "$certs" >/dev/null
start_server "$go_server" --port 0
go_port="$port"
"$tool" interop --server_host 127.0.0.1 --server_port "$go_port" --test_case all --api all --use_cache true || status=1
start_server "$go_server" --port 0 --tls --cert "$certs/server.pem" --key "$certs/server.key"
"$tool" interop --server_host 127.0.0.1 --server_port "$port" --test_case all --api all --use_cache true \
  --use_tls true --use_test_ca true --ca_file "$certs/ca.pem" --server_host_override foo.test.google.fr || status=1

section "grpc-calls list and describe -> grpc-go server (its reflection is v1alpha only: the client falls back)"
interop/check-reflection.sh "$tool" "127.0.0.1:$go_port" || status=1

section "grpc-calls load -> grpc-go server with its defaults (BDP estimation on), every face"
"$tool" load --target "127.0.0.1:$go_port" --calls "${GO_LOAD_CALLS:-10000}" --concurrency 1,64,200 --api all || status=1

section "grpc-calls cancellation -> grpc-go server (as against grpcio above)"
events="$(mktemp)"
start_server "$go_server" --port 0 --events "$events"
"$tool" cancellation --server_port "$port" --events "$events" --runs "${CANCEL_RUNS:-100}" | tail -n 20 || status=1

section "grpc-calls load -> grpc-go server that ends each connection after 1 s (MaxConnectionAge), every face"
# A graceful GOAWAY every second, in two steps: calls above its last stream are sent again on a
# new connection, those below finish on the old one; none may be lost.
start_server "$go_server" --port 0 --max-connection-age 1s
"$tool" load --target "127.0.0.1:$port" --calls "${GO_LOAD_CALLS:-10000}" --concurrency 1,64,200 --api all || status=1

section "grpc-calls interop -> grpc-calls serve"
start_server "$tool" serve --port 0
"$tool" interop --server_host 127.0.0.1 --server_port "$port" --test_case all --api all --use_cache true || status=1

section "grpc-calls list and describe -> grpc-calls serve (the interop server's reflection, v1)"
interop/check-reflection.sh "$tool" "127.0.0.1:$port" || status=1

section "grpcio client -> grpc-calls serve"
"$python" interop/python/client.py --server_host 127.0.0.1 --server_port "$port" --test_case all || status=1

section "balancing over three grpcio servers (127.0.0.1-3): round_robin, a kill and a restart, pick_first, a DNS name"
interop/balance.sh "$tool" "$python" || status=1

section "balancing over three grpc-calls serve (127.0.0.1-3), the same"
interop/balance.sh "$tool" || status=1

section "done"
exit "$status"
