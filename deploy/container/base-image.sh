#!/bin/bash
# Build the Containerfile's base image (localhost/fairportal-base:bookworm) from Debian's own
# packages, without any container registry: debootstrap a minimal bookworm with Python and
# import it into podman's store. Skipped when the image is already there (podman's store
# persists per machine); FORCE=1 rebuilds it.
set -euo pipefail
IMAGE=${BASE_IMAGE:-localhost/fairportal-base:bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$(cd "$(dirname "$0")" && pwd)/containers.conf}
if [ "${FORCE:-0}" != 1 ] && podman image exists "$IMAGE"; then
    echo "base image $IMAGE is present"; exit 0
fi
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
root=$(mktemp -d /var/tmp/fairportal-base.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "debootstrap bookworm into $root (a few minutes, once per machine)"
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" "$MIRROR" >/dev/null
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
tar -C "$root" -c . | podman import \
    --change 'CMD ["/bin/bash"]' --change 'ENV LANG=C.UTF-8' - "$IMAGE" >/dev/null
echo "built $IMAGE"
