#!/usr/bin/env bash
# Waits (up to two minutes) for a test server's "listening on HOST:PORT" line in its log and
# prints PORT. Fails, showing the log, if the server exits first or never says it listens.
#
# Usage: interop/listening-port.sh LOG PID
set -euo pipefail
log="$1"
pid="$2"
for _ in $(seq 1 1200); do
  port="$(sed -n 's/^listening on .*:\([0-9][0-9]*\)$/\1/p' "$log" | head -n 1)"
  if [ -n "$port" ]; then
    echo "$port"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.1
done
echo "the server (pid $pid) did not start listening:" >&2
cat "$log" >&2
exit 1
