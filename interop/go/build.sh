#!/usr/bin/env bash
# Builds the grpc-go interop test server offline, from the Go sources Debian packages under
# /usr/share/gocode (GOPATH mode: no module downloads, no network), and prints the binary's
# path on its last line. Everything it makes goes to interop/go/.build-go/ (kept out of git).
#
# Needs (Debian): golang-go golang-google-grpc-dev protobuf-compiler protoc-gen-go-grpc.
# Debian's grpc-go (1.33) is built on golang/protobuf 1.3 (APIv1), so the message code comes
# from that version's protoc-gen-go, built here from its packaged source; the service code
# comes from the packaged protoc-gen-go-grpc. (/usr/bin/protoc-gen-go, 1.28, writes APIv2
# code that neither compiles against nor registers with Debian's golang/protobuf 1.3.)
#
# Usage: interop/go/build.sh    (GOCODE=/other/gocode to use other packaged sources)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$here/.build-go"
gocode="${GOCODE:-/usr/share/gocode}"

missing() {
  echo "build.sh: $1 not found; install the Debian package $2 (apt-get install -y $2)" >&2
  exit 1
}
command -v go >/dev/null 2>&1 || missing "go" golang-go
command -v protoc >/dev/null 2>&1 || missing "protoc" protobuf-compiler
command -v protoc-gen-go-grpc >/dev/null 2>&1 || missing "protoc-gen-go-grpc" protoc-gen-go-grpc
[ -f "$gocode/src/google.golang.org/grpc/server.go" ] ||
  missing "grpc-go's source ($gocode/src/google.golang.org/grpc)" golang-google-grpc-dev
[ -f "$gocode/src/google.golang.org/genproto/googleapis/rpc/errdetails/error_details.pb.go" ] ||
  missing "the google.rpc error details' Go source (rich_error_details)" golang-google-genproto-dev
[ -f "$gocode/src/github.com/golang/protobuf/protoc-gen-go/main.go" ] ||
  missing "golang/protobuf's source ($gocode/src/github.com/golang/protobuf)" golang-github-golang-protobuf-1-3-dev
if grep -rqs '"google.golang.org/protobuf/' "$gocode/src/github.com/golang/protobuf/proto/"; then
  echo "build.sh: $gocode has golang/protobuf 1.4 or later (APIv2); this build expects Debian 12's" \
    "golang/protobuf 1.3 under grpc-go 1.33 (golang-github-golang-protobuf-1-3-dev)" >&2
  exit 1
fi

# GOPATH mode over the packaged sources; .build-go/gopath first, for the generated package.
export GO111MODULE=off GOPATH="$out/gopath:$gocode" GOFLAGS="" GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=0
if [ -z "${GOCACHE:-}" ] && [ -z "${XDG_CACHE_HOME:-}" ] && [ -z "${HOME:-}" ]; then
  export GOCACHE="$out/cache"
fi
mkdir -p "$out/bin"

# protoc-gen-go 1.3 (go build only relinks when its inputs changed).
go build -o "$out/bin/protoc-gen-go-v1" github.com/golang/protobuf/protoc-gen-go

# The grpc.testing package, regenerated when the protos or the plugins change.
protos=(src/proto/grpc/testing/empty.proto src/proto/grpc/testing/messages.proto src/proto/grpc/testing/test.proto)
pkg=grpccallsinterop/grpc_testing
gen="$out/gopath/src/$pkg"
stamp="$( (cd "$root/Protos" && cat "${protos[@]}"; protoc --version; protoc-gen-go-grpc --version;
  cksum <"$out/bin/protoc-gen-go-v1") | cksum)"
if [ ! -f "$gen/.stamp" ] || [ "$(cat "$gen/.stamp")" != "$stamp" ]; then
  maps=""
  for proto in "${protos[@]}"; do maps="$maps,M$proto=$pkg"; done
  tmp="$(mktemp -d "$out/gen.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  protoc -I"$root/Protos" \
    --plugin=protoc-gen-go="$out/bin/protoc-gen-go-v1" \
    --go_out="paths=source_relative$maps:$tmp" \
    --go-grpc_out="paths=source_relative$maps:$tmp" \
    "${protos[@]}"
  rm -rf "$gen"
  mkdir -p "$gen"
  mv "$tmp"/src/proto/grpc/testing/*.go "$gen/"
  echo "$stamp" >"$gen/.stamp"
fi

(cd "$here/server" && go build -o "$out/bin/interop-server" .)
echo "$out/bin/interop-server"
