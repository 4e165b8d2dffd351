#!/usr/bin/env bash
# Builds the action's image from the Dockerfile with podman (rootful, runc), on the given base:
#
#   scripts/container/build.sh IMAGE_TAG [BASE_IMAGE]
#
# BASE_IMAGE defaults to the Dockerfile's digest-pinned base; `make container-test` passes the
# local stand-in (scripts/container/standin-base.sh) because no registry is reachable there.
# Prints the build time and the image size.
set -euo pipefail

cd "$(dirname "$0")/../.."
tag="${1:?usage: build.sh IMAGE_TAG [BASE_IMAGE]}"
base_args=()
if [ -n "${2:-}" ]; then
    base_args=(--build-arg "BASE_IMAGE=$2")
fi
podman=(podman --runtime runc)

started=$(date +%s.%N)
# Host networking: the build reaches the Debian mirror and PyPI the way this machine does.
"${podman[@]}" build --format docker --network host --layers "${base_args[@]}" --tag "$tag" --file Dockerfile .
ended=$(date +%s.%N)
size=$("${podman[@]}" image inspect --format '{{.Size}}' "$tag")
python3 -c 'import sys; t, a, b, s = sys.argv[1:]; print(f"build.sh: built {t} in {float(b) - float(a):.1f} s; {int(s) / 1e6:.0f} MB uncompressed")' \
    "$tag" "$started" "$ended" "$size"
