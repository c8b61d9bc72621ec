#!/usr/bin/env bash
# shellcheck disable=SC1091  # grenade's and devstack's files exist only in a grenade run
# grenade: stop every inspector-ha process of the base release.
set -o errexit

source "$GRENADE_DIR/grenaderc"
source "$GRENADE_DIR/functions"
source "$BASE_DEVSTACK_DIR/functions"

INSPECTOR_HA_DEVSTACK_DIR=$(cd "$(dirname "$0")/.." && pwd)
source "$INSPECTOR_HA_DEVSTACK_DIR/settings"
source "$INSPECTOR_HA_DEVSTACK_DIR/plugin.sh"

set -o xtrace

stop_inspector_ha
services=(inspector-ha-api)
for i in $(seq 1 "$INSPECTOR_HA_WORKERS"); do
    services+=("inspector-ha-worker-$i")
done
ensure_services_stopped "${services[@]}"
