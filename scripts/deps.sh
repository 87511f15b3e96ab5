#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what building and testing jobscope needs, from Debian's packages, if it is missing. Idempotent;
# needs root (or sudo) only when something is missing.
set -euo pipefail
pkgs=(gcc meson ninja-build pkg-config libsqlite3-dev sqlite3 libcmocka-dev
      python3 python3-pytest python3-psutil stress-ng time sysstat hyperfine procps
      clang bpftool libbpf-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "deps: installing ${missing[*]}" >&2
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
