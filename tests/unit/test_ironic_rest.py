"""The Ironic facade's REST helpers: which environment makes requests
look at it on every call, the CA bundle variables read once, and
Ironic's ``next`` links as paths of the baremetal endpoint. (The calls
themselves run against a real Ironic in the functional tests.)"""

from inspector_ha.ironic import client


class _Session:
    verify = True


def test_requests_reads_the_environment_per_call_only_where_a_proxy_is_set():
    for name in ('HTTPS_PROXY', 'http_proxy', 'NO_PROXY', 'all_proxy'):
        assert client._trust_environment(_Session(), {name: 'x'}), name
    assert not client._trust_environment(_Session(), {'PATH': '/bin'})


def test_a_ca_bundle_variable_is_read_once_into_the_verify_setting():
    session = _Session()
    assert not client._trust_environment(session, {
        'CURL_CA_BUNDLE': '/curl.pem', 'REQUESTS_CA_BUNDLE': '/req.pem'})
    assert session.verify == '/req.pem'
    session = _Session()
    client._trust_environment(session, {'CURL_CA_BUNDLE': '/curl.pem'})
    assert session.verify == '/curl.pem'


def test_a_configured_ca_file_or_insecure_wins_over_the_variables():
    for configured in ('/conf.pem', False):
        session = _Session()
        session.verify = configured
        client._trust_environment(session, {'REQUESTS_CA_BUNDLE': '/r.pem'})
        assert session.verify == configured


def test_a_next_link_becomes_a_path_of_the_baremetal_endpoint():
    assert client._next_page(
        'http://ironic:6385/v1/ports?fields=address&limit=2&marker=abc'
    ) == '/ports?fields=address&limit=2&marker=abc'
    assert client._next_page(
        'https://cloud/baremetal/v1/ports?marker=abc') == '/ports?marker=abc'
    assert client._next_page(None) is None
    assert client._next_page('') is None


def test_ironic_is_found_by_the_region_interface_and_type_configured():
    """[ironic]'s keystoneauth adapter options reach openstacksdk, which
    picks Ironic's endpoint from the catalog by them (issue 54)."""
    import threading

    from oslo_config import cfg

    from inspector_ha import conf as conf_mod
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf([], default_config_files=[])
    for name, value in [('auth_type', 'none'), ('region_name', 'RegionTwo'),
                        ('valid_interfaces', ['internal']),
                        ('service_type', 'baremetal')]:
        conf.set_override(name, value, group='ironic')
    region = client.connect(conf, threading.Event())._endpoint._conn.config
    assert region.get_region_name('baremetal') == 'RegionTwo'
    assert region.get_interface('baremetal') == ['internal']
    assert region.get_service_type('baremetal') == 'baremetal'
    assert region.get_api_version('baremetal') == '1.81'
    assert region.get_status_code_retries('baremetal') == 0
