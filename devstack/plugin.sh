#!/bin/bash
# devstack plugin for inspector-ha: an HA ironic-inspector replacement.
# Enable with: enable_plugin inspector-ha <repo>. It uses devstack's
# database, RabbitMQ, etcd3 (coordination), Keystone and Ironic.

INSPECTOR_HA_BIN_DIR=$(get_python_exec_prefix)
INSPECTOR_HA_URI="$SERVICE_PROTOCOL://$SERVICE_HOST:$INSPECTOR_HA_PORT"

function install_inspector_ha {
    setup_develop "$INSPECTOR_HA_DIR" backends
}

function _worker_services {
    local i
    is_service_enabled inspector-ha-worker || return 0
    for i in $(seq 1 "$INSPECTOR_HA_WORKERS"); do
        echo "inspector-ha-worker-$i"
    done
}

function configure_inspector_ha {
    sudo install -d -o "$STACK_USER" "$INSPECTOR_HA_CONF_DIR" "$INSPECTOR_HA_STATE_DIR"
    local conf=$INSPECTOR_HA_CONF_FILE
    iniset "$conf" DEFAULT listen_port "$INSPECTOR_HA_PORT"
    iniset "$conf" DEFAULT state_path "$INSPECTOR_HA_STATE_DIR"
    iniset "$conf" DEFAULT transport_url "$(get_transport_url)"
    iniset "$conf" database connection "$(database_connection_url inspector_ha)"
    iniset "$conf" coordination backend_url "$INSPECTOR_HA_COORDINATION_URL"
    iniset "$conf" processing store_data database
    if is_service_enabled keystone; then
        iniset "$conf" DEFAULT auth_strategy keystone
        configure_keystone_authtoken_middleware "$conf" inspector-ha
        configure_keystone_authtoken_middleware "$conf" inspector-ha ironic
        iniset "$conf" ironic endpoint_override "$IRONIC_SERVICE_PROTOCOL://$IRONIC_SERVICE_HOST:$IRONIC_SERVICE_PORT"
    else
        iniset "$conf" DEFAULT auth_strategy noauth
        iniset "$conf" ironic auth_type none
        iniset "$conf" ironic endpoint_override "$IRONIC_SERVICE_PROTOCOL://$IRONIC_SERVICE_HOST:$IRONIC_SERVICE_PORT"
    fi
}

function create_inspector_ha_accounts {
    is_service_enabled keystone || return 0
    create_service_user inspector-ha admin
    get_or_create_service inspector-ha baremetal-introspection \
        "Bare metal introspection (inspector-ha)"
    get_or_create_endpoint baremetal-introspection "$REGION_NAME" "$INSPECTOR_HA_URI"
}

function init_inspector_ha {
    recreate_database inspector_ha
    "$INSPECTOR_HA_BIN_DIR/inspector-ha-dbsync" --config-file "$INSPECTOR_HA_CONF_FILE" upgrade
}

function start_inspector_ha {
    local service
    for service in $(_worker_services); do
        run_process "$service" "$INSPECTOR_HA_BIN_DIR/inspector-ha-worker --config-file $INSPECTOR_HA_CONF_FILE"
    done
    run_process inspector-ha-api "$INSPECTOR_HA_BIN_DIR/inspector-ha-api --config-file $INSPECTOR_HA_CONF_FILE"
    if is_service_enabled inspector-ha-api; then
        echo "Waiting for inspector-ha API at $INSPECTOR_HA_URI"
        if ! wait_for_service "$SERVICE_TIMEOUT" "$INSPECTOR_HA_URI"; then
            die $LINENO "inspector-ha API did not start"
        fi
    fi
}

function stop_inspector_ha {
    local service
    stop_process inspector-ha-api
    for service in $(_worker_services); do
        stop_process "$service"
    done
}

function cleanup_inspector_ha {
    sudo rm -rf "$INSPECTOR_HA_CONF_DIR" "$INSPECTOR_HA_STATE_DIR"
}

if [[ "$1" == "stack" && "$2" == "install" ]]; then
    install_inspector_ha
elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
    configure_inspector_ha
    create_inspector_ha_accounts
    init_inspector_ha
elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
    start_inspector_ha
fi
if [[ "$1" == "unstack" ]]; then
    stop_inspector_ha
fi
if [[ "$1" == "clean" ]]; then
    cleanup_inspector_ha
fi
