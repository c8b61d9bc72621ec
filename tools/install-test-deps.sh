#!/usr/bin/env bash
# Install and start everything the test suite needs, as root, on Debian 12.
#
# Idempotent and fast when everything is already in place:
#   - Debian packages: apt-get runs only when one of them is missing;
#   - PostgreSQL, MariaDB, Redis and RabbitMQ: started only when their port
#     is not listening (packages do not auto-start them: policy-rc.d);
#   - .venv: the project is (re)installed only when setup.py, setup.cfg or
#     pyproject.toml changed since the last successful install;
#   - .venv-ironic: ironic is installed once;
#   - .venv-ironic-32: the last ironic with the inspector interface, once;
#   - .venv-inspector-12.5: ironic-inspector 12.5 is installed once;
#   - .venv-ipa: ironic-python-agent 13 (the real ramdisk agent) once;
#   - .venv-keystone: Keystone (on SQLite, served by gunicorn) once.
# ZooKeeper and Ironic are not started here: the tests start private ones.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
IRONIC_VERSION=39.0.0
# The last Ironic whose inspect interface "inspector" drives the service
# (tests/functional/test_ironic_drives_inspection.py); with oslo.service
# 4.8 it dies at start (no_fork).
DRIVING_IRONIC_VERSION=32.1.0
# The peer a site migrates from (tests/functional/upstream.py starts it).
INSPECTOR_VERSION=12.5.0
# The real ramdisk agent (tests/functional/ipa.py runs its inspection).
IPA_VERSION=13.0.0
# The identity service (tests/functional/keystone.py runs it).
KEYSTONE_VERSION=30.0.0
APT_PACKAGES=(postgresql mariadb-server redis-server rabbitmq-server zookeeper
              etcd-server haproxy dnsmasq iptables ipset nftables busybox
              iproute2 default-jre-headless shellcheck systemd
              lshw dmidecode pciutils udev
              prometheus   # promtool: tests/unit/test_alerts.py
              podman runc mmdebstrap)  # tools/build-image.sh
PIP_FLAGS=(--disable-pip-version-check)

log() { printf '[install-test-deps] %s\n' "$*"; }
die() { printf '[install-test-deps] ERROR: %s\n' "$*" >&2; exit 1; }

# pip VENV ARGS...: pip install into VENV, output in VENV/pip-install.log.
pip_install() {
    local venv=$1
    shift
    if ! "$venv/bin/pip" install "${PIP_FLAGS[@]}" "$@" >"$venv/pip-install.log" 2>&1; then
        grep -v "^WARNING: Location 'file:" "$venv/pip-install.log" | tail -n 40 >&2
        die "pip install $* failed (full log: $venv/pip-install.log)"
    fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_port PORT NAME SECONDS
wait_port() {
    local deadline=$((SECONDS + $3))
    until port_open "$1"; do
        ((SECONDS < deadline)) || die "$2 is not listening on 127.0.0.1:$1 after $3 s"
        sleep 0.2
    done
}

# --- Debian packages ---------------------------------------------------------

missing_packages() {
    local wanted=("${APT_PACKAGES[@]}")
    "$PYTHON" -c 'import ensurepip, venv' 2>/dev/null || wanted+=(python3-venv)
    local installed
    installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${wanted[@]}" 2>/dev/null \
                | awk '$NF == "installed" {print $1}' || true)
    local p
    for p in "${wanted[@]}"; do
        grep -qxF "$p" <<<"$installed" || echo "$p"
    done
}

install_packages() {
    local missing
    mapfile -t missing < <(missing_packages)
    if ((${#missing[@]} == 0)); then
        log "Debian packages: all present"
        return
    fi
    log "Debian packages: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# --- services ----------------------------------------------------------------

pg_version() { find /etc/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n 1; }

pg_ok() { psql -h 127.0.0.1 -U postgres -w -Atc 'select 1' postgres >/dev/null 2>&1; }

start_postgres() {
    local ver
    ver=$(pg_version)
    [[ -n $ver ]] || die "no PostgreSQL cluster under /etc/postgresql"
    local port
    port=$(pg_conftool -s "$ver" main show port 2>/dev/null || echo 5432)
    [[ $port == 5432 ]] || die "PostgreSQL $ver/main is configured for port $port," \
        "the tests need 5432 (pg_conftool $ver main set port 5432)"
    if ! port_open 5432; then
        log "PostgreSQL $ver: starting"
        install -d -o postgres -g postgres -m 2775 /run/postgresql
        pg_ctlcluster --skip-systemctl-redirect "$ver" main start
        wait_port 5432 PostgreSQL 60
    fi
    pg_ok && return
    log "PostgreSQL: trusting 127.0.0.1 in pg_hba.conf (test machine only)"
    sed -i '1i host all all 127.0.0.1/32 trust' "/etc/postgresql/$ver/main/pg_hba.conf"
    pg_ctlcluster --skip-systemctl-redirect "$ver" main reload
    local deadline=$((SECONDS + 10))
    until pg_ok; do
        ((SECONDS < deadline)) || die "psql -h 127.0.0.1 -U postgres still fails"
        sleep 0.2
    done
}

start_redis() {
    port_open 6379 && return
    log "Redis: starting"
    install -d -o redis -g redis /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
        --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
    wait_port 6379 Redis 30
}

start_rabbitmq() {
    port_open 5672 && return
    log "RabbitMQ: starting"
    rabbitmq-server -detached
    # await_startup fails at once until the node has registered with epmd.
    local deadline=$((SECONDS + 120))
    until timeout 60 rabbitmqctl --quiet await_startup --timeout 50 >/dev/null 2>&1; do
        ((SECONDS < deadline)) || die "RabbitMQ did not start; see /var/log/rabbitmq/"
        sleep 0.5
    done
    wait_port 5672 RabbitMQ 30
}

mariadb_tcp_ok() {
    mariadb -h 127.0.0.1 -P 3306 -u root --connect-timeout=5 -e 'select 1' >/dev/null 2>&1
}

start_mariadb() {
    if ! port_open 3306; then
        log "MariaDB: starting"
        install -d -o mysql -g mysql /run/mysqld
        if [[ ! -d /var/lib/mysql/mysql ]]; then
            mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
        fi
        # --user: Debian's stock config has no "user = mysql" (mysqld_safe
        # passes it), and mariadbd refuses to run as root.
        start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd \
            -- --user=mysql
        wait_port 3306 "MariaDB (to see why: /usr/sbin/mariadbd --user=mysql)" 60
    fi
    mariadb_tcp_ok && return
    # Fresh Debian install: root@localhost authenticates only via unix_socket.
    log "MariaDB: allowing root with an empty password on 127.0.0.1 (test machine only)"
    mariadb --protocol=socket -u root <<'SQL'
ALTER USER root@localhost IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('');
CREATE USER IF NOT EXISTS root@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('');
GRANT ALL PRIVILEGES ON *.* TO root@'127.0.0.1' WITH GRANT OPTION;
FLUSH PRIVILEGES;
SQL
    mariadb_tcp_ok || die "mariadb -h 127.0.0.1 -u root still fails"
}

# --- virtualenvs -------------------------------------------------------------

# The test plugin packages (tests/plugins/*), installed into .venv below.
TEST_PLUGINS=(upstream_style out_of_tree)

project_stamp() {
    local plugin files=("$ROOT/setup.py" "$ROOT/setup.cfg" "$ROOT/pyproject.toml")
    for plugin in "${TEST_PLUGINS[@]}"; do
        files+=("$ROOT/tests/plugins/$plugin/pyproject.toml")
    done
    cat "${files[@]}" | sha256sum | cut -d' ' -f1
}

setup_project_venv() {
    local venv=$ROOT/.venv
    local stamp=$venv/.inspector-ha-installed want
    want=$(project_stamp)
    if [[ -x $venv/bin/python && -f $stamp && $(<"$stamp") == "$want" ]]; then
        log ".venv: up to date"
        return
    fi
    [[ -x $venv/bin/python ]] || { log ".venv: creating"; "$PYTHON" -m venv "$venv"; }
    log ".venv: pip install -e '.[backends,test,docs]'"
    rm -f "$stamp"
    pip_install "$venv" -e "${ROOT}[backends,test,docs]"
    # upstream_style: a plugin written for ironic-inspector's interfaces
    # (the adapter's test); out_of_tree: a PXE filter driver and a
    # processing hook of another package (entry points only).
    local plugin
    for plugin in "${TEST_PLUGINS[@]}"; do
        pip_install "$venv" --no-deps -e "${ROOT}/tests/plugins/$plugin"
    done
    echo "$want" >"$stamp"
}

# peer_venv DIR STAMP EXECUTABLE PACKAGE...: a venv of its own holding a
# real peer (DIR under the repo), installed once: STAMP marks a finished
# install, EXECUTABLE (under DIR/bin) must be there.
peer_venv() {
    local venv=$ROOT/$1 stamp=$ROOT/$1/$2 executable=$3
    shift 3
    if [[ -f $stamp && -x $venv/bin/$executable ]]; then
        log "${venv##*/}: $1 present"
        return
    fi
    [[ -x $venv/bin/python ]] || { log "${venv##*/}: creating"; "$PYTHON" -m venv "$venv"; }
    log "${venv##*/}: pip install $*"
    pip_install "$venv" "$@"
    touch "$stamp"
}

setup_peer_venvs() {
    # NOTE: pymysql for benchmarks/run.py --ironic split (Ironic on MariaDB).
    peer_venv .venv-ironic ".ironic-$IRONIC_VERSION-mysql-installed" ironic \
        "ironic==$IRONIC_VERSION" pymysql
    peer_venv .venv-ironic-32 ".ironic-$DRIVING_IRONIC_VERSION-installed" \
        ironic "ironic==$DRIVING_IRONIC_VERSION" "oslo.service==4.3.0"
    peer_venv ".venv-inspector-${INSPECTOR_VERSION%.*}" \
        ".ironic-inspector-$INSPECTOR_VERSION-installed" ironic-inspector \
        "ironic-inspector==$INSPECTOR_VERSION" pymysql psycopg2-binary
    peer_venv .venv-ipa ".ironic-python-agent-$IPA_VERSION-installed" \
        python "ironic-python-agent==$IPA_VERSION"
    peer_venv .venv-keystone ".keystone-$KEYSTONE_VERSION-installed" \
        keystone-manage "keystone==$KEYSTONE_VERSION" gunicorn
}

main() {
    [[ $(id -u) == 0 ]] || die "run as root (installs packages and starts services)"
    local start=$EPOCHREALTIME
    install_packages
    command -v java >/dev/null || die "java not found (default-jre-headless), ZooKeeper needs it"
    start_postgres
    start_mariadb
    start_redis
    start_rabbitmq
    setup_project_venv
    setup_peer_venvs
    log "done in $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}') s"
}

main "$@"
