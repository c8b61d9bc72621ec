#!/usr/bin/env bash
# shellcheck disable=SC1091  # grenade's and devstack's files exist only in a grenade run
# grenade: install this release, check, expand the schema, start it, wait
# for its API; then (every member now runs this release) run the online
# data migrations and contract the schema.
set -o errexit

source "$GRENADE_DIR/grenaderc"
source "$GRENADE_DIR/functions"
source "$TARGET_DEVSTACK_DIR/functions"

INSPECTOR_HA_DEVSTACK_DIR=$(cd "$(dirname "$0")/.." && pwd)
source "$INSPECTOR_HA_DEVSTACK_DIR/settings"
source "$INSPECTOR_HA_DEVSTACK_DIR/plugin.sh"

set -o xtrace

echo_summary "inspector-ha upgrade: install"
install_inspector_ha

conf=(--config-file "$INSPECTOR_HA_CONF_FILE")

echo_summary "inspector-ha upgrade: check"
# oslo.upgradecheck: 0 success, 1 warnings (the pending expand is one),
# 2 failure.
rc=0
inspector-ha-status "${conf[@]}" upgrade check || rc=$?
if ((rc > 1)); then
    die $LINENO "inspector-ha-status upgrade check failed ($rc)"
fi

echo_summary "inspector-ha upgrade: expand the schema"
inspector-ha-dbsync "${conf[@]}" upgrade --expand

echo_summary "inspector-ha upgrade: start"
start_inspector_ha
api="http://${INSPECTOR_HA_HOST:-127.0.0.1}:$INSPECTOR_HA_PORT/"
if ! timeout "${INSPECTOR_HA_START_TIMEOUT:-60}" bash -c \
        "until curl -sf -o /dev/null '$api'; do sleep 1; done"; then
    die $LINENO "inspector-ha API did not answer at $api"
fi

echo_summary "inspector-ha upgrade: online data migrations and contract"
rc=1
until ((rc == 0)); do
    rc=0
    inspector-ha-dbsync "${conf[@]}" online_data_migrations \
        --max-count 1000 || rc=$?
    ((rc <= 1)) || die $LINENO "online data migrations failed ($rc)"
done
inspector-ha-dbsync "${conf[@]}" upgrade --contract
