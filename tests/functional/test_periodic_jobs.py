"""Leader-run periodic work seen from Ironic: the cluster-wide reboot
throttle, and removal of nodes Ironic no longer has."""

import datetime
import re

import requests

import backends
import batch
import cluster as cluster_mod

POWER = re.compile(r'^(\S+ \S+) .* PUT /v1/nodes/(\S+)/states/power - '
                   r'202 \(([\d.]+)ms\)')


def _power_calls(ironic, uuids):
    """Arrival time at Ironic of each power call for ``uuids``."""
    calls = []
    for line in ironic.log_path.read_text().splitlines():
        match = POWER.match(line)
        if match and match.group(2) in uuids:
            done = datetime.datetime.fromisoformat(match.group(1))
            took = datetime.timedelta(milliseconds=float(match.group(3)))
            calls.append((done - took).timestamp())
    return sorted(calls)


def _cluster(tmp_path, ironic, rabbit_url, redis_url, pg_url, conf):
    return cluster_mod.Cluster(tmp_path, pg_url, rabbit_url, redis_url,
                               ironic.url, apis=1, workers=3,
                               conf=conf).start()


def test_power_ons_are_a_throttle_quantum_apart_across_all_workers(
        tmp_path, ironic, rabbit_url, redis_url, pg_url):
    the_cluster = _cluster(tmp_path, ironic, rabbit_url, redis_url, pg_url,
                           {'worker': {'reboot_throttle': 2}})
    try:
        uuids = list(batch.create_nodes(ironic, 10))
        batch.start_all(the_cluster.api_urls, uuids)
        backends.wait_for(lambda: len(_power_calls(ironic, uuids)) == 10,
                          60, interval=0.5)
        calls = _power_calls(ironic, uuids)
    finally:
        the_cluster.stop()
    gaps = [b - a for a, b in zip(calls, calls[1:])]
    print('gaps between power-ons: %s' % ['%.2f' % g for g in gaps])
    assert min(gaps) >= 2.0 - 0.005, gaps


def test_a_node_deleted_from_ironic_is_removed_by_the_sync_leader(
        tmp_path, ironic, rabbit_url, redis_url, pg_url):
    the_cluster = _cluster(tmp_path, ironic, rabbit_url, redis_url, pg_url,
                           {'periodic': {'ironic_sync_period': 1}})
    try:
        gone, kept = list(batch.create_nodes(ironic, 2))
        batch.start_all(the_cluster.api_urls, [gone, kept])
        ironic.delete_node(gone)
        url = the_cluster.api_urls[0] + '/v1/introspection/'
        backends.wait_for(lambda: requests.get(url + gone).status_code
                          == 404, 30, message='node not removed')
        assert requests.get(url + kept).status_code == 200
    finally:
        the_cluster.stop()
