#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what building and testing jobscope needs, from Debian's packages, if it is missing. Idempotent;
# needs root (or sudo) only when something is missing. SLURM, munge and Prometheus are for the integration
# tests, which run private instances of them (tests/infra/); their packaged services are not started.
# `scripts/deps.sh PKG...` installs those packages instead of this list (scripts/quickstart.sh does, with
# what trying the monitor needs). The packaging tools at the end build and check the wheel and the .debs
# (scripts/packages.sh).
set -euo pipefail
pkgs=(gcc meson ninja-build pkg-config libsqlite3-dev sqlite3 libcmocka-dev libmicrohttpd-dev
      python3 python3-pytest python3-psutil python3-pandas stress-ng time sysstat hyperfine procps
      slurmctld slurmd slurm-client munge libslurm-dev prometheus prometheus-node-exporter openssl curl util-linux
      libpfm4-dev clang libclang-rt-14-dev bpftool libbpf-dev cppcheck clang-format
      libhdf5-dev python3-h5py chromium
      gfortran python3-venv python3-ipykernel python3-nbclient python3-nbformat python3-matplotlib
      librsvg2-2 poppler-utils python3-jsonschema python3-pil
      python3-pip python3-mesonpy debhelper dh-python dpkg-dev fakeroot lintian systemd bash-completion man-db)
[ $# -eq 0 ] || pkgs=("$@")
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
# munge, slurmd, slurmctld and prometheus ship services; the tests start their own private instances
# (tests/infra/), so keep the packages from starting theirs while they install
policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    trap '$SUDO rm -f "$policy"' EXIT
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
