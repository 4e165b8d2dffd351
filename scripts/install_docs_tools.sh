#!/usr/bin/env bash
# Installs what `make docs` needs beyond the venv: Debian's Chromium (headless, renders the PNGs)
# and fonts with the emoji the reports use (scripts/install_browser.sh, shared with the browser
# tests). Mermaid comes from the npm registry (scripts/render_docs.py, pinned integrity).
set -euo pipefail
exec bash "$(dirname "$0")/install_browser.sh"
