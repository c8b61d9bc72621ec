#!/bin/bash
# devstack plugin for inspector-ha: an HA ironic-inspector replacement.
# Enable with: enable_plugin inspector-ha <repo> ; it uses devstack's
# database, RabbitMQ and Ironic, and Redis for coordination.

function install_inspector_ha {
    setup_develop "$INSPECTOR_HA_DIR"
    pip_install "$INSPECTOR_HA_DIR[backends]"
}

function configure_inspector_ha {
    sudo install -d -o "$STACK_USER" "$INSPECTOR_HA_CONF_DIR"
    local conf=$INSPECTOR_HA_CONF_FILE
    iniset "$conf" DEFAULT listen_port "$INSPECTOR_HA_PORT"
    iniset "$conf" DEFAULT auth_strategy noauth
    iniset "$conf" DEFAULT transport_url "$(get_transport_url)"
    iniset "$conf" database connection "$(database_connection_url inspector_ha)"
    iniset "$conf" coordination backend_url "$INSPECTOR_HA_COORDINATION_URL"
    iniset "$conf" ironic auth_type none
    iniset "$conf" ironic endpoint_override "$IRONIC_SERVICE_PROTOCOL://$IRONIC_SERVICE_HOST:$IRONIC_SERVICE_PORT"
    iniset "$conf" processing store_data database
    iniset "$conf" oslo_messaging_rabbit rabbit_quorum_queue true
}

function init_inspector_ha {
    recreate_database inspector_ha
    inspector-ha-dbsync --config-file "$INSPECTOR_HA_CONF_FILE" upgrade
}

function start_inspector_ha {
    local i
    for i in $(seq 1 "$INSPECTOR_HA_WORKERS"); do
        run_process "inspector-ha-worker-$i" "$(which inspector-ha-worker) --config-file $INSPECTOR_HA_CONF_FILE"
    done
    run_process inspector-ha-api "$(which inspector-ha-api) --config-file $INSPECTOR_HA_CONF_FILE"
}

function stop_inspector_ha {
    local i
    stop_process inspector-ha-api
    for i in $(seq 1 "$INSPECTOR_HA_WORKERS"); do
        stop_process "inspector-ha-worker-$i"
    done
}

if [[ "$1" == "stack" && "$2" == "install" ]]; then
    install_inspector_ha
elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
    configure_inspector_ha
    init_inspector_ha
elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
    start_inspector_ha
fi
if [[ "$1" == "unstack" ]]; then
    stop_inspector_ha
fi
