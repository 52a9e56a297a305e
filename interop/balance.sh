#!/usr/bin/env bash
# Balancing against three servers on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (all loopback), grpcio
# (gRPC C core) or our own (`grpc-calls serve`), through `grpc-calls load`:
#
#  1. round_robin over an ipv4: list: 3,000 sequential unary calls split within ±10% of 1,000;
#  2. with a retry policy on UNAVAILABLE, one server killed (SIGKILL) mid-run: no call fails and
#     the other two take the calls; restarted on its port, it takes calls again (re-resolved every
#     5 s, with the transport's own reconnection backoff);
#  3. pick_first: every call to the first address; once it is killed, every call to the second;
#  4. a DNS name with the three addresses (a mount namespace of its own gives `load` an
#     /etc/hosts naming them; the three servers share a port): round_robin splits calls evenly.
#
# Each server prints "unary calls: K" for each unary call it answered (--count-unary 1).
# Usage: interop/balance.sh path/to/grpc-calls path/to/python   (grpcio servers)
#        interop/balance.sh path/to/grpc-calls                  (grpc-calls serve)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tool="$1"
if [ -n "${2:-}" ]; then
  server=("$2" interop/python/server.py)
else
  server=("$tool" serve)
fi

pids=()
cleanup() {
  # A background `load` runs under timeout in a subshell: its children go first.
  for pid in "${pids[@]}"; do
    pkill -TERM -P "$pid" 2>/dev/null || true
    kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT

declare -A server_pid server_log server_port

# start INDEX PORT: a grpcio server on 127.0.0.INDEX:PORT (0: any free port).
start() {
  local index="$1" port="$2" log
  log="$(mktemp)"
  "${server[@]}" --host "127.0.0.$index" --port "$port" --count-unary 1 >"$log" 2>&1 &
  pids+=("$!")
  server_pid[$index]=$!
  server_log[$index]="$log"
  server_port[$index]="$(interop/listening-port.sh "$log" "${server_pid[$index]}")" || {
    echo "the server on 127.0.0.$index did not start" >&2
    return 1
  }
}

# servers_target: the three servers as one ipv4: target.
servers_target() {
  echo "ipv4:127.0.0.1:${server_port[1]},127.0.0.2:${server_port[2]},127.0.0.3:${server_port[3]}"
}

# served INDEX: the unary calls server INDEX reported last.
served() {
  local count
  count="$(sed -n 's/^unary calls: //p' "${server_log[$1]}" | tail -n 1)"
  echo "${count:-0}"
}

# wait_served INDEX AT_LEAST: waits (up to two minutes) until server INDEX reported that many.
wait_served() {
  for _ in $(seq 1 1200); do
    if [ "$(served "$1")" -ge "$2" ]; then return 0; fi
    sleep 0.1
  done
  echo "server $1 never reached $2 unary calls (it reported $(served "$1"))" >&2
  return 1
}

# wait_total CALLS: waits (up to five minutes) until the three servers reported CALLS in all: a
# server reports a call a moment after answering it.
wait_total() {
  for _ in $(seq 1 3000); do
    if [ "$(($(served 1) + $(served 2) + $(served 3)))" -ge "$1" ]; then return 0; fi
    sleep 0.1
  done
  echo "the servers reported $(($(served 1) + $(served 2) + $(served 3))) calls, not $1" >&2
  return 1
}

# stop_load PID: ends the `load` that the background job PID runs (under timeout): on SIGTERM
# it starts no more calls, finishes those in flight and prints its summary. (Sent to timeout, the
# signal would reach it twice, and a second one ends it at once.)
stop_load() {
  local timeout_pid
  # A `load` that already ended says why in its output, which the caller shows.
  timeout_pid="$(pgrep -P "$1" -x timeout)" || return 0
  pkill -TERM -P "$timeout_pid" || true
}

kill_server() {
  kill -9 "${server_pid[$1]}"
  wait "${server_pid[$1]}" 2>/dev/null || true
}

# expect_between VALUE LOW HIGH WHAT
expect_between() {
  if [ "$1" -lt "$2" ] || [ "$1" -gt "$3" ]; then
    echo "FAIL: $4: $1, not within $2..$3" >&2
    exit 1
  fi
  echo "ok: $4: $1"
}

# load TARGET POLICY CALLS [command prefix]: sequential unary calls through GRPCCall2; prints
# and checks the last line, "load: CALLS ok, 0 failed". With CALLS "until-stopped", `load` runs
# until stop_load ends it, and any number of calls may have succeeded.
load() {
  local target="$1" policy="$2" calls="$3"
  shift 3
  local config="{\"loadBalancingConfig\": [{\"$policy\": {}}],
    \"methodConfig\": [{\"name\": [{\"service\": \"grpc.testing.TestService\"}],
      \"retryPolicy\": {\"maxAttempts\": 5, \"initialBackoff\": \"0.05s\", \"maxBackoff\": \"0.5s\",
        \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}"
  local output last
  output="$(mktemp)"
  local count="$calls" expected="load: $calls ok, 0 failed"
  if [ "$calls" = until-stopped ]; then
    count=100000000
    expected="load: [1-9][0-9]* ok, 0 failed"
  fi
  "$@" timeout 600 "$tool" load --target "$target" --service-config "$config" --calls "$count" \
    --concurrency 1 --api raw --name-resolution-interval "${resolution_interval:-1}" \
    >"$output" 2>&1 || true
  last="$(tail -n 1 "$output")"
  echo "$last"
  if ! grep -qx "$expected" <<<"$last"; then
    tail -n 20 "$output" >&2
    return 1
  fi
}

for index in 1 2 3; do start "$index" 0; done
target="$(servers_target)"

echo "--- round_robin over $target: 3,000 calls"
load "$target" round_robin 3000
wait_total 3000
for index in 1 2 3; do
  expect_between "$(served "$index")" 900 1100 "calls on 127.0.0.$index"
done

echo "--- round_robin, 127.0.0.2 killed mid-run and restarted"
before1="$(served 1)"
before3="$(served 3)"
# Re-resolved every 5 s, with the transport's own reconnection backoff: a server back up takes
# calls again within about one period (the backoff's longest wait is capped at it). The calls go
# on until the restarted server has taken 100.
resolution_interval=5 load "$target" round_robin until-stopped >/tmp/grpc-calls-balance-load.txt 2>&1 &
load_pid=$!
pids+=("$load_pid")
wait_served 2 "$(($(served 2) + 500))"
kill_server 2
echo "killed 127.0.0.2 at $(served 2) calls"
# The other two take every call meanwhile.
wait_served 1 "$((before1 + 1000))"
wait_served 3 "$((before3 + 1000))"
start 2 "${server_port[2]}"
restarted_at="$(date +%s.%N)"
echo "restarted 127.0.0.2"
wait_served 2 1
echo "the restarted 127.0.0.2 took its first call $(awk -v from="$restarted_at" -v to="$(date +%s.%N)" 'BEGIN { printf "%.1f", to - from }') s after it started listening (re-resolution every 5 s)"
wait_served 2 100
stop_load "$load_pid"
load_status=0
wait "$load_pid" || load_status=$?
cat /tmp/grpc-calls-balance-load.txt
[ "$load_status" -eq 0 ]

echo "--- pick_first: every call to 127.0.0.1, then, once it is killed, to 127.0.0.2"
# Fresh servers: the previous case's last calls may not be reported yet (a server reports a call
# a moment after answering it), and the killed server never reported all of its calls.
for index in 1 2 3; do kill_server "$index"; start "$index" 0; done
target="$(servers_target)"
load "$target" pick_first 300
wait_total 300
expect_between "$(served 1)" 300 300 "calls on 127.0.0.1"
expect_between "$(served 2)" 0 0 "calls on 127.0.0.2"
kill_server 1
server_log[1]=/dev/null
load "$target" pick_first 300
wait_total 300
expect_between "$(served 2)" 300 300 "calls on 127.0.0.2"
expect_between "$(served 3)" 0 0 "calls on 127.0.0.3"
for index in 2 3; do kill_server "$index"; done

echo "--- round_robin over a DNS name with three addresses (its own /etc/hosts)"
start 1 0
start 2 "${server_port[1]}"
start 3 "${server_port[1]}"
hosts="$(mktemp)"
printf '127.0.0.1 localhost\n' >"$hosts"
for index in 1 2 3; do printf '127.0.0.%s multi.grpc-calls.test\n' "$index" >>"$hosts"; done
# `load` runs in a mount namespace of its own, with that file as its /etc/hosts (root only).
in_namespace() {
  unshare --mount sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$hosts" "$@"
}
if ! in_namespace true 2>/dev/null; then
  echo "FAIL: a mount namespace of its own (unshare --mount, as root) is needed for this case" >&2
  exit 1
fi
load "dns:multi.grpc-calls.test:${server_port[1]}" round_robin 3000 in_namespace
wait_total 3000
for index in 1 2 3; do
  expect_between "$(served "$index")" 900 1100 "calls on 127.0.0.$index by DNS"
done
