#!/usr/bin/env bash
# Install the official MCP conformance suite and the Node 22 it needs into .conformance/.
#
# The suite (@modelcontextprotocol/conformance 0.1.16) needs Node >= 22; npm's
# node-linux-<arch> package brings one, so only Node 20+ with npm is needed here.
# Every version is pinned by scripts/conformance/package-lock.json (npm ci).
# Idempotent: does nothing when .conformance/ already holds that lock's install.
# Usage: scripts/install_conformance.sh            (from anywhere)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SPEC="$ROOT/scripts/conformance"
PREFIX="$ROOT/.conformance"
STAMP="$PREFIX/.installed"
SUITE="$PREFIX/node_modules/@modelcontextprotocol/conformance/dist/index.js"
NODE="$PREFIX/node_modules/.bin/node"

lock_sum() {
    cksum <"$SPEC/package-lock.json" | cut -d' ' -f1
}

node22() {
    "$1" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)' 2>/dev/null
}

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(lock_sum)" ] && [ -f "$SUITE" ]; then
    echo "conformance suite already installed in $PREFIX"
    exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "npm not found on PATH (Node 20+ with npm is required)" >&2; exit 1; }
rm -f "$STAMP"
mkdir -p "$PREFIX"
cp "$SPEC/package.json" "$SPEC/package-lock.json" "$PREFIX/"
(cd "$PREFIX" && npm ci --no-audit --no-fund --loglevel=error)

[ -f "$SUITE" ] || { echo "install of the conformance suite failed: $SUITE is missing" >&2; exit 1; }
if [ -x "$NODE" ] && node22 "$NODE"; then
    echo "installed the conformance suite and Node $("$NODE" --version) in $PREFIX"
elif command -v node >/dev/null 2>&1 && node22 node; then
    echo "installed the conformance suite in $PREFIX (no npm Node for this platform: the tests use $(node --version) from PATH)"
else
    echo "npm has no Node 22 package for $(uname -s)/$(uname -m) and the node on PATH is older than 22:" \
        "install Node >= 22 to run the conformance tests" >&2
    exit 1
fi
lock_sum >"$STAMP"
