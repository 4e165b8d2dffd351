# promptcanary-action: the container GitHub runs for `uses: org/promptcanary-action@v1`.
# The Python minor version and the Debian release are pinned; Python dependencies come from the
# hash-pinned requirements.lock (regenerate it with `make lock`).
FROM python:3.12-slim-trixie

# git is for the `branch` baseline store (fetch and push a data branch); ca-certificates lets it
# reach https remotes (only a Recommends of git, so not pulled in by --no-install-recommends).
# The runner mounts the workspace owned by another uid: trust every directory, system-wide.
# Debian package versions are not pinned: the archive drops old versions of a release, so a
# pin would break rebuilds; the Debian release itself is pinned by the base image tag.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

ENV LITELLM_LOCAL_MODEL_COST_MAP=True \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app

WORKDIR /app

# Dependencies first, on their own layer: a code change does not reinstall them.
COPY requirements.lock /app/requirements.lock
RUN pip install --no-cache-dir --require-hashes --only-binary=:all: -r /app/requirements.lock

COPY promptcanary /app/promptcanary
COPY promptcanary_action /app/promptcanary_action
COPY entrypoint.py /app/entrypoint.py

# The runner starts the container with --workdir /github/workspace; paths are resolved there.
ENTRYPOINT ["python", "/app/entrypoint.py"]
