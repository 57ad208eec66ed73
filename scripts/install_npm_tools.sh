#!/usr/bin/env bash
# Install the npm-based MCP test peers into a project-local folder (.npm-tools/), each pinned:
#   @modelcontextprotocol/server-everything  a reference MCP server (stdio), for the client tests
#   @modelcontextprotocol/inspector          the MCP Inspector CLI, a client no one here wrote, for the gateway tests
# Idempotent and additive: a package already installed at its pinned version is left alone,
# and installing one never removes another.
# Usage: scripts/install_npm_tools.sh            (from anywhere)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.npm-tools"

installed_version() {  # PKG -> the version in .npm-tools, or nothing
    local pkg_json="$PREFIX/node_modules/$1/package.json"
    [ -f "$pkg_json" ] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$pkg_json" 2>/dev/null || true
}

install_pinned() {  # PKG VERSION ENTRY (a file of the package that must exist once installed)
    local pkg="$1" version="$2" entry="$3"
    if [ "$(installed_version "$pkg")" = "$version" ] && [ -f "$PREFIX/node_modules/$pkg/$entry" ]; then
        echo "$pkg@$version already installed in $PREFIX"
        return 0
    fi
    command -v npm >/dev/null 2>&1 || { echo "npm not found on PATH" >&2; exit 1; }
    mkdir -p "$PREFIX"
    npm install --prefix "$PREFIX" --no-audit --no-fund --save-exact "$pkg@$version"
    if [ "$(installed_version "$pkg")" != "$version" ]; then
        echo "install of $pkg@$version failed (found '$(installed_version "$pkg")')" >&2
        exit 1
    fi
    echo "installed $pkg@$version in $PREFIX"
}

install_pinned "@modelcontextprotocol/server-everything" "2026.8.31" "dist/index.js"
install_pinned "@modelcontextprotocol/inspector" "0.15.0" "cli/build/cli.js"
