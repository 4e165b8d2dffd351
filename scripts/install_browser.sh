#!/usr/bin/env bash
# Installs what the browser layer (`make test-browser`) and `make docs` need beyond the venv:
# Debian's Chromium and its chromedriver (selenium drives it), and fonts with the emoji the
# reports use. Run as root (or with sudo) on Debian/Ubuntu; a no-op when both are installed.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    echo "chromium: $(command -v chromium); chromedriver: $(command -v chromedriver)"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    chromium chromium-driver fonts-dejavu-core fonts-noto-color-emoji
