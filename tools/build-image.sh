#!/usr/bin/env bash
# Build the inspector-ha container image from this checkout, with no
# registry but Debian's packages and PyPI:
#   bash tools/build-image.sh          -> localhost/inspector-ha:<version>
#   bash tools/build-image.sh NAME     -> NAME
# A Debian 12 root file system (mmdebstrap, minbase, python3) with this
# project and its [backends] extra in /opt/inspector-ha (a venv whose
# bin/ is on PATH), user 42424, /etc/inspector-ha and
# /var/lib/inspector-ha as deploy/kubernetes mounts them, tini as the
# entry point (a process SIGTERMed before it has its handlers would
# otherwise, as PID 1, ignore it until the grace period's SIGKILL); made
# an OCI image with `podman import`. Prints the image's name and size.
# Needs (Debian): mmdebstrap, podman; run as root.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
VERSION=$(sed -n 's/^version = //p' "$ROOT/setup.cfg")
NAME=${1:-localhost/inspector-ha:$VERSION}
SUITE=bookworm
# The manifests' runAsUser (deploy/kubernetes/base).
UID_GID=42424
VENV=/opt/inspector-ha

log() { printf '[build-image] %s\n' "$*" >&2; }

for tool in mmdebstrap podman; do
    command -v "$tool" >/dev/null || {
        log "ERROR: $tool is not installed (apt-get install $tool)"; exit 2; }
done

work=$(mktemp -d /var/tmp/inspector-ha-image.XXXXXX)
trap 'rm -rf "$work"' EXIT

# NOTE: wheels are built here, by a Python of the image's minor version
# (bookworm's is 3.11), so the root file system needs no compiler and
# pip in it no network.
"$PYTHON" - <<'PY' || { log "ERROR: $PYTHON is not a Python 3.11"; exit 2; }
import sys
sys.exit(sys.version_info[:2] != (3, 11))
PY
log "wheels of inspector-ha[backends] and its dependencies"
# NOTE: redis wants async-timeout below Python 3.11.3 only: bookworm's
# 3.11.2 needs it where the Python building the wheels may not.
"$PYTHON" -m pip wheel --disable-pip-version-check -q \
    -w "$work/wheels" "${ROOT}[backends]" 'async-timeout>=4.0.3' >&2

log "root file system ($SUITE, minbase)"
# shellcheck disable=SC2016  # "$1" is the root, for mmdebstrap's hook
CLEAN_UP='rm -rf "$1"/tmp/wheels "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/*'
mmdebstrap --quiet --variant=minbase \
    --include=python3,python3-venv,ca-certificates,tini \
    --customize-hook="copy-in $work/wheels /tmp" \
    --customize-hook="chroot \"\$1\" python3 -m venv $VENV" \
    --customize-hook="chroot \"\$1\" $VENV/bin/pip install -q \
--disable-pip-version-check --no-index --find-links /tmp/wheels \
'inspector-ha[backends]'" \
    --customize-hook="$CLEAN_UP" \
    --customize-hook="echo inspector-ha:x:$UID_GID:$UID_GID::/var/lib/inspector-ha:/usr/sbin/nologin >> \"\$1\"/etc/passwd" \
    --customize-hook="echo inspector-ha:x:$UID_GID: >> \"\$1\"/etc/group" \
    --customize-hook="mkdir -p \"\$1\"/etc/inspector-ha \"\$1\"/var/lib/inspector-ha" \
    --customize-hook="chown $UID_GID:$UID_GID \"\$1\"/var/lib/inspector-ha" \
    "$SUITE" "$work/root.tar" >&2

log "image $NAME"
podman import --quiet \
    --change "ENV PATH=$VENV/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change "USER $UID_GID" \
    --change "WORKDIR /var/lib/inspector-ha" \
    --change "EXPOSE 5050" \
    --change "LABEL org.opencontainers.image.version=$VERSION" \
    --change 'ENTRYPOINT ["/usr/bin/tini", "--"]' \
    --change 'CMD ["inspector-ha-api", "--config-file", "/etc/inspector-ha/inspector-ha.conf"]' \
    "$work/root.tar" "$NAME" >/dev/null
size=$(podman image inspect --format '{{.Size}}' "$NAME")
printf '%s %d MB\n' "$NAME" $((size / 1000000))
