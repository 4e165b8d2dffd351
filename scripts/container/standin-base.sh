#!/usr/bin/env bash
# Builds (once) a local stand-in for the Dockerfile's base image, for machines that cannot reach
# a container registry: Debian trixie (the release of python:3.13-slim-trixie) from Debian's own
# packages with debootstrap, with Debian's python3 (3.13, the Dockerfile's Python minor), pip and
# venv, and `python`/`pip` on PATH as in the official image. Debian's "externally managed" marker
# is removed because the official image has none. This machine's CA bundle is added to the
# image's trust store (and named in PIP_CERT), so that builds on it reach PyPI through whatever
# TLS-inspecting proxy the machine trusts (STANDIN_CA_BUNDLE; empty adds none). The image is
# kept in podman's store and reused; STANDIN_REBUILD=1 builds it again.
#
#   scripts/container/standin-base.sh [TAG]      (default localhost/promptcanary-standin:3.13-trixie)
set -euo pipefail

tag="${1:-localhost/promptcanary-standin:3.13-trixie}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
ca_bundle="${STANDIN_CA_BUNDLE-/etc/ssl/certs/ca-certificates.crt}"
podman=(podman --runtime runc)

if [ "${STANDIN_REBUILD:-0}" != 1 ] && "${podman[@]}" image exists "$tag"; then
    echo "standin-base.sh: $tag exists (cached); STANDIN_REBUILD=1 rebuilds it"
    exit 0
fi

root="$(mktemp -d /var/tmp/pc-standin.XXXXXX)"
trap 'rm -rf "$root"' EXIT
echo "standin-base.sh: debootstrap trixie into $root (from $mirror)"
debootstrap --variant=minbase \
    --include=python3,python3-pip,python3-venv,python-is-python3,ca-certificates,netbase,tzdata \
    trixie "$root" "$mirror" >"$root.log" 2>&1 || { tail -30 "$root.log" >&2; exit 1; }
rm -f "$root.log"
rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED
ln -sf pip3 "$root/usr/bin/pip"
# As Debian's official images: apt keeps no downloaded .deb files in a layer.
printf '%s\n' 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb || true"; };' \
    'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb || true"; };' \
    'Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";' >"$root/etc/apt/apt.conf.d/docker-clean"
# What the official image leaves out as well: apt lists, the packages debootstrap downloaded,
# docs, man pages, translations (Debian's slim images keep none), caches. Without these the
# stand-in is about the official image's size, so the action's image measured on it is too.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* \
    "$root"/var/cache/apt/archives/*.deb "$root"/usr/share/locale/* \
    "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*.log
if [ -n "$ca_bundle" ] && [ -f "$ca_bundle" ]; then
    install -m 644 "$ca_bundle" "$root/usr/local/share/ca-certificates/standin-host.crt"
    chroot "$root" update-ca-certificates >/dev/null
fi
chroot "$root" python3 --version
tar -C "$root" --numeric-owner -c . | "${podman[@]}" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["python3"]' \
    - "$tag"
echo "standin-base.sh: built $tag"
