# promptcanary-action: the container GitHub runs for the action.
#
# Released versions do not build this: their action.yml names the prebuilt multi-arch image the
# release workflow pushed to GHCR (docker://ghcr.io/<owner>/promptcanary-action:<version>). On
# `main`, action.yml says `image: Dockerfile`, so `uses: ./` runs the code under review.
#
# The base image is pinned by digest (the multi-arch index of the tag); bump it with
# scripts/bump_base_image.py. (This pin was taken from public references to the tag, on a machine
# that cannot reach a registry: run `python scripts/bump_base_image.py --check` before a release.) Python dependencies come from the hash-pinned requirements.lock.
# BASE_IMAGE is a build argument only so that `make container-test` can substitute a locally
# built image of the same Debian release and Python minor where no registry is reachable.
ARG BASE_IMAGE=python:3.13-slim-trixie@sha256:9d2e5553305c7c7b0097999bb17187c69b921ccd6bc9d40e4bb5ebe652c00285

# ---------------------------------------------------------------------------------------------
# deps: a virtual environment with the locked dependencies, compiled and pruned. Nothing of
# this stage but /opt/venv reaches the final image (no pip, no caches, no build tools).
FROM ${BASE_IMAGE} AS deps

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1

# binutils only for `strip` below; this stage is thrown away.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends binutils \
    && rm -rf /var/lib/apt/lists/*

COPY requirements-pip.lock requirements.lock /tmp/
COPY scripts/container/drop_dead_bytecode.py /tmp/drop_dead_bytecode.py

# - --no-compile, then one compileall pass: byte code for every module, checked by hash, not by
#   file time (build tools may rewrite file times for reproducible images, which would make
#   timestamp-checked .pyc files stale and recompiled on every start);
# - pip removes itself from the venv: the action never installs anything at run time;
# - LiteLLM's proxy admin UI, Swagger UI and OpenAPI snapshot (static files, ~24 MB) are served
#   only by `litellm --proxy`, whose server (fastapi) is not installed: nothing here reads them;
# - LiteLLM's optional Rust extension (rust_bridge/_native, 38 MB stripped) serves only routes
#   the engine never calls (OCR, Bedrock transcription, opt-in Anthropic messages); chat
#   completions are Python-only in LiteLLM's rollout table, and its loader treats a missing
#   extension as "not available" (tests/container checks a run in the image never loads it);
# - hf-xet (9 MB) is huggingface_hub's optional Xet transfer backend; without it the hub client
#   downloads over plain HTTPS (huggingface_hub checks is_xet_available() everywhere);
# - debug symbols of the compiled extensions are never read at run time (`strip` ~24 MB);
# - no byte code for modules that import a package that is not installed at their top level
#   (LiteLLM's proxy server needs fastapi): they cannot be imported at all (~12 MB).
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-compile --require-hashes --only-binary=:all: \
        -r /tmp/requirements-pip.lock \
    && /opt/venv/bin/pip install --no-compile --require-hashes --only-binary=:all: \
        -r /tmp/requirements.lock \
    && /opt/venv/bin/pip uninstall --yes --quiet hf-xet pip \
    && litellm="$(echo /opt/venv/lib/python3*/site-packages/litellm)" \
    && rm -rf "$litellm/proxy/_experimental/out" "$litellm/proxy/swagger" \
        "$litellm/proxy/_lazy_openapi_snapshot.json" "$litellm"/rust_bridge/_native.*.so \
    && find /opt/venv -name '*.so' -exec strip --strip-unneeded {} + \
    && python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/venv/lib \
    && /opt/venv/bin/python /tmp/drop_dead_bytecode.py /opt/venv/lib

# ---------------------------------------------------------------------------------------------
FROM ${BASE_IMAGE}

# git is for the `branch` baseline store (fetch and push a data branch); ca-certificates lets it
# reach https remotes (only a Recommends of git, so not pulled in by --no-install-recommends).
# Documentation, man pages and translations are never read in the container: dpkg skips them.
# git depends on perl (~50 MB) only for its Perl scripts; the one in git-core is git-instaweb,
# and the action runs only builtins (fetch, push, read-tree, commit-tree, update-ref, ...), so
# perl's packages are removed again (perl-base, which Debian itself needs, stays). apt would
# call the image's dependencies broken: it is not meant to be extended with apt-get. For the
# same reason git's separate server-side and mail programs go (daemon, http-backend, shell,
# imap-send, WebDAV http-push, scalar: ~2.3 MB each); https fetch and push (git-remote-https)
# and packfile-URI fetches (git-http-fetch) stay.
# The runner mounts the workspace owned by another uid: trust every directory, system-wide.
# Debian package versions are not pinned: the archive drops old versions of a release, so a
# pin would break rebuilds; the Debian release itself is pinned by the base image digest.
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3008
RUN printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-exclude=/usr/share/man/*' \
        'path-exclude=/usr/share/info/*' 'path-exclude=/usr/share/locale/*' \
        'path-exclude=/usr/share/gitweb/*' > /etc/dpkg/dpkg.cfg.d/promptcanary-slim \
    && apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && dpkg-query -W -f '${Package}\n' perl liberror-perl 'perl-modules-*' 'libperl5*' \
        | xargs dpkg --remove --force-depends \
    && core=/usr/lib/git-core \
    && rm -f "$core/git-instaweb" "$core/git-daemon" "$core/git-http-backend" "$core/git-shell" \
        "$core/git-imap-send" "$core/git-http-push" "$core/scalar" \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old /var/log/apt /var/log/dpkg.log \
    && git --version \
    && git config --system --add safe.directory '*'

ENV PATH=/opt/venv/bin:$PATH \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONPATH=/app

COPY --from=deps /opt/venv /opt/venv

WORKDIR /app
COPY promptcanary /app/promptcanary
COPY promptcanary_action /app/promptcanary_action
COPY entrypoint.py /app/entrypoint.py
# The official python images ship the standard library without .pyc files, so without this
# every start would compile the ~300 standard modules the action and LiteLLM import, and with
# PYTHONDONTWRITEBYTECODE never keep the result. Importing what a run imports, once, with byte
# code writing on, compiles exactly those (the whole standard library would add ~30 MB).
RUN python -m compileall -q --invalidation-mode unchecked-hash /app \
    && PYTHONDONTWRITEBYTECODE='' python -c "import promptcanary_action.main, \
promptcanary.providers.replay; from promptcanary.providers.litellm import prewarm; \
prewarm().join()" \
    && rm -rf /root/.cache

# The runner starts the container with --workdir /github/workspace; paths are resolved there.
ENTRYPOINT ["/opt/venv/bin/python", "/app/entrypoint.py"]
