#!/bin/bash
# Build the fairportal image (Containerfile) with podman: the base image first when it is
# missing (base-image.sh), then the layers (requirements before code, so a code change
# rebuilds only the last layers). IMAGE names it (default localhost/fairportal:latest).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
IMAGE=${IMAGE:-localhost/fairportal:latest}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/containers.conf}
"$here/base-image.sh"
args=(--network host -t "$IMAGE" -f "$root/Containerfile")
# Behind a TLS-inspecting proxy pip needs the host's CA bundle: mounted for the build only.
ca=${PIP_CERT:-${REQUESTS_CA_BUNDLE:-}}
if [ -n "$ca" ] && [ -s "$ca" ]; then
    args+=(--volume "$ca:/run/build-ca.crt:ro" --build-arg BUILD_CA_BUNDLE=/run/build-ca.crt)
fi
exec podman build "${args[@]}" "$root"
