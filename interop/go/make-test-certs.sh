#!/usr/bin/env bash
# Makes a throwaway CA and a server certificate it signed, for TLS interop runs against
# interop/go's server (--tls --cert OUTDIR/server.pem --key OUTDIR/server.key). The server
# certificate is for foo.test.google.fr (CN and DNS SAN, the name gRPC's interop clients
# expect with --server_host_override) and IP 127.0.0.1; clients trust OUTDIR/ca.pem.
#
# Usage: interop/go/make-test-certs.sh OUTDIR   (writes ca.pem ca.key server.pem server.key)
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
command -v openssl >/dev/null 2>&1 || {
  echo "make-test-certs.sh: openssl not found; install the Debian package openssl" >&2
  exit 1
}
out="$1"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 \
  -subj "/CN=grpc-calls interop test CA" \
  -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -keyout "$work/ca.key" -out "$work/ca.pem" 2>/dev/null

openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=foo.test.google.fr" \
  -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
cat >"$work/server.ext" <<'EOF'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:foo.test.google.fr,IP:127.0.0.1
EOF
openssl x509 -req -sha256 -days 3650 -in "$work/server.csr" \
  -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
  -extfile "$work/server.ext" -out "$work/server.pem" 2>/dev/null

openssl verify -CAfile "$work/ca.pem" "$work/server.pem" >/dev/null
mv "$work/ca.pem" "$work/ca.key" "$work/server.pem" "$work/server.key" "$out/"
echo "$out"
