#!/usr/bin/env bash
# Installs what `make container-test` needs from Debian's packages: podman (run as root with the
# runc runtime) and debootstrap (builds the stand-in base image). Idempotent: does nothing when
# both are already installed.
set -euo pipefail

missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v runc >/dev/null 2>&1 || missing+=(runc)
# debootstrap of Debian on another distribution (Ubuntu runners) needs Debian's archive keys.
[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] || missing+=(debian-archive-keyring)
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-podman.sh: ${missing[*]} missing; run as root (apt-get install) or install them" >&2
    exit 1
fi
echo "install-podman.sh: apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" uidmap iptables \
    containernetworking-plugins >/dev/null
