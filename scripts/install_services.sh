#!/usr/bin/env bash
# Install the real services the test suite starts on loopback, from Debian's packages:
#   redis-server  the shared state backend of a multi-replica gateway (issue: replicas on Redis)
#   haproxy       a real round-robin load balancer in front of several `toolmesh serve` replicas
# Idempotent: a service whose binary is already on PATH is left alone. Packages are only
# installed, never started: each test starts its own process on a free port and stops it.
# Usage: scripts/install_services.sh            (from anywhere; needs root or sudo for apt-get)
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)

if [ ${#missing[@]} -eq 0 ]; then
    echo "redis-server and haproxy already installed"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo -n)
else
    echo "installing ${missing[*]} needs root (apt-get): run as root, or install them by hand" >&2
    exit 1
fi
command -v apt-get >/dev/null 2>&1 || { echo "apt-get not found: install ${missing[*]} by hand" >&2; exit 1; }

echo "installing ${missing[*]} from Debian's packages"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for binary in redis-server haproxy; do
    command -v "$binary" >/dev/null 2>&1 || [ -x "/usr/sbin/$binary" ] || {
        echo "install of $binary failed" >&2; exit 1; }
done
echo "installed ${missing[*]}"
