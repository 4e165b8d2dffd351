#!/usr/bin/env bash
# Installs what `make docs` needs beyond the venv: Debian's Chromium (headless, renders the PNG)
# and fonts with the emoji the reports use. Run as root (or with sudo) on Debian/Ubuntu.
# Mermaid comes from the npm registry through docs/package-lock.json (`npm ci` in docs/).
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    echo "chromium: $(command -v chromium)"
else
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        chromium fonts-dejavu-core fonts-noto-color-emoji
fi
