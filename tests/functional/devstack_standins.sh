#!/bin/bash
# shellcheck disable=SC2034  # the variables are read by the sourced plugin
# Stand-ins of the devstack functions the plugin calls: each records its
# call in $RECORD. run_process and is_service_enabled behave like
# devstack's (a service that is not enabled is not started).
# Usage: devstack_standins.sh RECORD BIN_DIR PLUGIN_DIR [keystone] PHASE...

RECORD=$1
STUB_BIN=$2
PLUGIN_DIR=$3
shift 3
ENABLED_SERVICES=mysql,rabbit,etcd3,ironic
if [[ "$1" == keystone ]]; then
    ENABLED_SERVICES+=,keystone
    shift
fi
DEST=/opt/stack
DATA_DIR=/opt/stack/data
SERVICE_HOST=192.0.2.5
SERVICE_PROTOCOL=http
SERVICE_TIMEOUT=60
STACK_USER=stack
REGION_NAME=RegionOne
IRONIC_SERVICE_PROTOCOL=http
IRONIC_SERVICE_HOST=192.0.2.5
IRONIC_SERVICE_PORT=6385

record() { printf '%s\n' "$*" >>"$RECORD"; }

enable_service() {
    local s
    for s in "$@"; do ENABLED_SERVICES+=",$s"; done
}
disable_service() {
    local s
    for s in "$@"; do
        ENABLED_SERVICES=$(tr , '\n' <<<"$ENABLED_SERVICES" | grep -vxF "$s" | paste -sd,)
    done
}
is_service_enabled() {
    local s
    for s in "$@"; do
        [[ ",$ENABLED_SERVICES," == *",$s,"* ]] && return 0
    done
    return 1
}
run_process() { is_service_enabled "$1" && record run_process "$@"; return 0; }
stop_process() { record stop_process "$@"; }
setup_develop() { record setup_develop "$@"; }
pip_install() { record pip_install "$@"; }
iniset() { record iniset "$@"; }
get_transport_url() { echo rabbit://stackrabbit:secret@192.0.2.5:5672/; }
database_connection_url() { echo "postgresql://root:secret@192.0.2.5/$1"; }
recreate_database() { record recreate_database "$@"; }
configure_keystone_authtoken_middleware() { record configure_keystone_authtoken_middleware "$@"; }
create_service_user() { record create_service_user "$@"; }
get_or_create_service() { record get_or_create_service "$@"; }
get_or_create_endpoint() { record get_or_create_endpoint "$@"; }
wait_for_service() { record wait_for_service "$@"; }
die() { record die "$@"; exit 1; }
sudo() { record sudo "$@"; }
get_python_exec_prefix() { echo "$STUB_BIN"; }

# shellcheck source=/dev/null
source "$PLUGIN_DIR/settings"
if [[ -n "${DISABLE:-}" ]]; then
    disable_service "$DISABLE"
fi
for phase in "$@"; do
    # shellcheck disable=SC2086  # "stack install" is two arguments
    # shellcheck source=/dev/null
    source "$PLUGIN_DIR/plugin.sh" $phase
done
