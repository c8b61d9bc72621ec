#!/usr/bin/env bash
# shellcheck disable=SC1091  # grenade's and devstack's files exist only in a grenade run
# grenade resources of inspector-ha:
#   create        on the base release: a node left waiting for its ramdisk,
#                 a node whose introspection finished, a rule;
#   verify_noapi  everything stopped: the waiting node's row and its
#                 requests are in SQL, the API does not answer;
#   verify        on the target release (safe to run twice): the waiting
#                 node's ramdisk posts and it finishes with the rule
#                 applied; the finished node's data and the rule are intact;
#   destroy       remove the nodes and the rule.
set -o errexit

source "$GRENADE_DIR/grenaderc"
source "$GRENADE_DIR/functions"

INSPECTOR_HA_DEVSTACK_DIR=$(cd "$(dirname "$0")/.." && pwd)
source "$INSPECTOR_HA_DEVSTACK_DIR/settings"

set -o xtrace

PROJECT=inspector-ha
API=${INSPECTOR_HA_URL:-http://127.0.0.1:$INSPECTOR_HA_PORT}
IRONIC=${IRONIC_URL:-$IRONIC_SERVICE_PROTOCOL://$IRONIC_SERVICE_HOST:$IRONIC_SERVICE_PORT}
PYTHON=${INSPECTOR_HA_PYTHON:-python3}
WAIT=${INSPECTOR_HA_RESOURCE_TIMEOUT:-120}
# node name -> its PXE MAC and BMC address
declare -A MAC=([waiting]=52:54:00:6a:00:01 [finished]=52:54:00:6a:00:02)
declare -A BMC=([waiting]=192.0.2.201 [finished]=192.0.2.202)

function _token {
    if [[ -z "${OS_TOKEN:-}" && -n "${OS_AUTH_URL:-}" ]]; then
        OS_TOKEN=$(openstack token issue -f value -c id)
    fi
    echo "${OS_TOKEN:-}"
}

# _call METHOD URL [JSON]: the response body; fails on a status >= 400.
function _call {
    local args=(-sS --fail-with-body -X "$1" -H 'Content-Type: application/json'
                -H 'X-OpenStack-Ironic-API-Version: 1.81')
    local token
    token=$(_token)
    [[ -z "$token" ]] || args+=(-H "X-Auth-Token: $token")
    [[ -z "${3:-}" ]] || args+=(-d "$3")
    curl "${args[@]}" "$2"
}

# _field JSON PATH...: one field of a JSON document.
function _field {
    "$PYTHON" -c 'import json, sys
doc = json.loads(sys.argv[1])
for key in sys.argv[2:]:
    doc = doc[key] if isinstance(doc, dict) else doc[int(key)]
print("" if doc is None else doc if not isinstance(doc, (dict, list)) else json.dumps(doc))' "$@"
}

function _state {
    _field "$(_call GET "$API/v1/introspection/$1")" state
}

# _wait_state UUID STATE
function _wait_state {
    local deadline=$((SECONDS + WAIT)) state
    while state=$(_state "$1"); [[ "$state" != "$2" ]]; do
        [[ "$state" != error ]] || die $LINENO "node $1 in error"
        ((SECONDS < deadline)) || die $LINENO "node $1 is $state, not $2"
        sleep 1
    done
}

# _payload NAME: what its ramdisk posts to /v1/continue (IPA's format).
function _payload {
    "$PYTHON" -c 'import json, sys
mac, bmc = sys.argv[1:]
disk = {"name": "/dev/sda", "model": "QEMU", "size": 100 * 1024 ** 3,
        "rotational": False, "serial": None}
print(json.dumps({"inventory": {
    "interfaces": [{"name": "eth0", "mac_address": mac,
                    "ipv4_address": "192.0.2.10", "has_carrier": True}],
    "cpu": {"count": 2, "architecture": "x86_64"},
    "memory": {"total": 4096 * 1024 * 1024, "physical_mb": 4096},
    "disks": [disk], "bmc_address": bmc,
    "boot": {"current_boot_mode": "bios", "pxe_interface": mac}},
    "root_disk": disk, "boot_interface": "01-" + mac.replace(":", "-")}))' \
        "${MAC[$1]}" "${BMC[$1]}"
}

function _create_node {
    local name=$1 node uuid
    node=$(_call POST "$IRONIC/v1/nodes" "{\"name\": \"grenade-inspector-ha-$name\",
        \"driver\": \"fake-hardware\", \"driver_info\": {\"ipmi_address\": \"${BMC[$name]}\"}}")
    uuid=$(_field "$node" uuid)
    _call POST "$IRONIC/v1/ports" "{\"node_uuid\": \"$uuid\",
        \"address\": \"${MAC[$name]}\", \"pxe_enabled\": true}" >/dev/null
    _call PUT "$IRONIC/v1/nodes/$uuid/states/provision" '{"target": "manage"}'
    local deadline=$((SECONDS + WAIT))
    until [[ $(_field "$(_call GET "$IRONIC/v1/nodes/$uuid")" provision_state) == manageable ]]; do
        ((SECONDS < deadline)) || die $LINENO "node $uuid not manageable"
        sleep 1
    done
    resource_save $PROJECT "${name}_node" "$uuid"
    echo "$uuid"
}

function create {
    local rule waiting finished
    rule=$(_call POST "$API/v1/rules" '{"description": "grenade inspector-ha",
        "conditions": [{"op": "eq", "field": "memory_mb", "value": 4096}],
        "actions": [{"action": "set-attribute", "path": "/extra/grenade",
                     "value": "inspected"}]}')
    resource_save $PROJECT rule "$(_field "$rule" uuid)"
    waiting=$(_create_node waiting)
    finished=$(_create_node finished)
    _call POST "$API/v1/introspection/$finished"
    _wait_state "$finished" waiting
    _call POST "$API/v1/continue" "$(_payload finished)"
    _wait_state "$finished" finished
    _call POST "$API/v1/introspection/$waiting"
    _wait_state "$waiting" waiting
}

# _sql QUERY: the rows of QUERY on inspector-ha's database, one per line.
function _sql {
    "$PYTHON" -c 'import configparser, sys
import sqlalchemy as sa
conf = configparser.ConfigParser(interpolation=None)
conf.read(sys.argv[1])
engine = sa.create_engine(conf["database"]["connection"])
with engine.connect() as conn:
    for row in conn.execute(sa.text(sys.argv[2])):
        print(" ".join(str(v) for v in row))' "$INSPECTOR_HA_CONF_FILE" "$1"
}

function verify_noapi {
    local waiting
    waiting=$(resource_get $PROJECT waiting_node)
    if curl -s -o /dev/null --max-time 5 "$API/"; then
        die $LINENO "the inspector-ha API still answers at $API"
    fi
    [[ $(_sql "SELECT state FROM nodes WHERE uuid = '$waiting'") == waiting ]] \
        || die $LINENO "node $waiting is not waiting in SQL"
    local requests
    requests=$(_sql "SELECT event, status FROM requests WHERE node_uuid = '$waiting'")
    grep -q '^start ' <<<"$requests" || die $LINENO "no start request of $waiting in SQL"
    ! grep -q ' dead$' <<<"$requests" || die $LINENO "a dead request of $waiting"
}

function verify {
    local waiting finished rule state
    waiting=$(resource_get $PROJECT waiting_node)
    finished=$(resource_get $PROJECT finished_node)
    rule=$(resource_get $PROJECT rule)
    _call GET "$API/v1/rules/$rule" >/dev/null
    state=$(_state "$waiting")
    if [[ "$state" == waiting ]]; then
        _call POST "$API/v1/continue" "$(_payload waiting)"
    fi
    _wait_state "$waiting" finished
    for uuid in "$waiting" "$finished"; do
        [[ $(_field "$(_call GET "$API/v1/introspection/$uuid")" error) == "" ]] \
            || die $LINENO "node $uuid has an error"
        [[ $(_field "$(_call GET "$API/v1/introspection/$uuid/data")" inventory memory physical_mb) == 4096 ]] \
            || die $LINENO "the data of node $uuid is not intact"
        [[ $(_field "$(_call GET "$IRONIC/v1/nodes/$uuid")" extra grenade) == inspected ]] \
            || die $LINENO "the rule was not applied to node $uuid"
    done
}

function destroy {
    local rule uuid
    rule=$(resource_get $PROJECT rule)
    [[ -z "$rule" ]] || _call DELETE "$API/v1/rules/$rule" || true
    for name in waiting finished; do
        uuid=$(resource_get $PROJECT "${name}_node")
        [[ -z "$uuid" ]] || _call DELETE "$IRONIC/v1/nodes/$uuid" || true
    done
}

case $1 in
    create) create ;;
    verify_noapi) verify_noapi ;;
    verify) verify ;;
    destroy) destroy ;;
    force_destroy) set +o errexit; destroy ;;
esac
