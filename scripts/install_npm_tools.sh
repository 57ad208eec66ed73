#!/usr/bin/env bash
# Install the npm-based MCP test peers into a project-local folder (.npm-tools/).
# Idempotent: does nothing when the pinned version is already installed.
# Usage: scripts/install_npm_tools.sh            (from anywhere)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.npm-tools"
PKG="@modelcontextprotocol/server-everything"
VERSION="2026.8.31"
PKG_JSON="$PREFIX/node_modules/$PKG/package.json"

installed_version() {
    [ -f "$PKG_JSON" ] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$PKG_JSON" 2>/dev/null || true
}

if [ "$(installed_version)" = "$VERSION" ] && [ -f "$PREFIX/node_modules/$PKG/dist/index.js" ]; then
    echo "$PKG@$VERSION already installed in $PREFIX"
    exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "npm not found on PATH" >&2; exit 1; }
mkdir -p "$PREFIX"
npm install --prefix "$PREFIX" --no-audit --no-fund --save-exact "$PKG@$VERSION"

if [ "$(installed_version)" != "$VERSION" ]; then
    echo "install of $PKG@$VERSION failed (found '$(installed_version)')" >&2
    exit 1
fi
echo "installed $PKG@$VERSION in $PREFIX"
