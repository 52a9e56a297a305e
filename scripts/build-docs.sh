#!/usr/bin/env bash
# Builds the DocC site for every public module (GRPCCalls, GRPCProtoCalls, GRPCCallsInterop, GRPCLegacy,
# GRPCCallsCodeGen, GRPCCallsInterceptors, GRPCCallsHealth, GRPCCallsReflection, GRPCCallsTestSupport) with swift-docc-plugin, as one combined static site, and fails on any
# DocC warning. With --check, also opens the site in headless Chromium: a screenshot of the
# landing page and of the Design article go to $ARTIFACTS (default .ci-artifacts/docs), and
# every module's page must render its title.
#
# Usage: scripts/build-docs.sh [--check]     (site in .build/docs-site)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
site="$root/.build/docs-site"
artifacts="${ARTIFACTS:-$root/.ci-artifacts/docs}"
modules=(GRPCCalls GRPCProtoCalls GRPCCallsInterop GRPCCallsCodeGen GRPCLegacy GRPCCallsInterceptors GRPCCallsHealth GRPCCallsReflection GRPCCallsTestSupport)

targets=()
for module in "${modules[@]}"; do targets+=(--target "$module"); done
rm -rf "$site"
log="$(mktemp)"
swift package --allow-writing-to-directory "$site" generate-documentation "${targets[@]}" \
  --enable-experimental-combined-documentation --transform-for-static-hosting \
  --output-path "$site" 2>&1 | tee "$log" | grep -E "warning|error|Generated|Finished" || true
# SwiftPM's note that a dependency ships files its manifest does not declare (swift-distributed-
# tracing's CMakeLists.txt) is about that package, not about our documentation.
unhandled="^warning: '[^']+': found [0-9]+ file\\(s\\) which are unhandled"
if grep -E "^(warning|error):|: (warning|error):" "$log" | grep -v "^error: fatalError" | grep -vE "$unhandled" >/dev/null; then
  grep -E "^(warning|error):|: (warning|error):" "$log" | grep -vE "$unhandled" >&2
  echo "DocC reported warnings or errors (above): fix them" >&2
  exit 1
fi
[ -f "$site/index.html" ] || { echo "no site was written to $site" >&2; exit 1; }
echo "docs: $site (no warnings)"

[ "${1:-}" = "--check" ] || exit 0

browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[ -n "$browser" ] || { echo "chromium not found: apt-get install -y chromium" >&2; exit 1; }
mkdir -p "$artifacts"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site" >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
served=""
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/index.html" >/dev/null && { served=yes; break; }
  sleep 0.1
done
[ -n "$served" ] || { echo "the docs' HTTP server on port $port did not answer within 60 s" >&2; exit 1; }

chrome() {
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=15000 "$@" 2>/dev/null
}
base="http://127.0.0.1:$port/documentation"
chrome --window-size=1280,1000 --screenshot="$artifacts/landing.png" "$base/grpccalls/"
chrome --window-size=1280,1000 --screenshot="$artifacts/design-article.png" "$base/grpccalls/design"
for shot in landing design-article; do
  [ -s "$artifacts/$shot.png" ] || { echo "no screenshot of $shot" >&2; exit 1; }
done
status=0
for module in "${modules[@]}"; do
  lower="$(echo "$module" | tr '[:upper:]' '[:lower:]')"
  dom="$(chrome --dump-dom "$base/$lower/")"
  # DocC renders the page in the browser: the module's title appears only if its JSON loaded
  # and the renderer ran.
  if grep -Eq "<h1[^>]*class=\"title\"[^>]*>(<span[^>]*>)?$module<" <<<"$dom"; then
    echo "ok    $module page renders"
  else
    echo "FAIL  $module page did not render its title" >&2
    status=1
  fi
done
echo "screenshots: $artifacts"
exit "$status"
