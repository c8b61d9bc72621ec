"""The Ironic facade's REST helpers: which environment makes requests
look at it, and Ironic's ``next`` links as paths of the baremetal
endpoint. (The calls themselves run against a real Ironic in the
functional tests.)"""

from inspector_ha.ironic import client


def test_the_environment_matters_only_where_a_proxy_or_ca_variable_is_set():
    assert not client._environment_matters({'PATH': '/bin', 'HOME': '/'})
    for name in ('HTTPS_PROXY', 'http_proxy', 'NO_PROXY', 'all_proxy',
                 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'):
        assert client._environment_matters({name: 'x'}), name


def test_a_next_link_becomes_a_path_of_the_baremetal_endpoint():
    assert client._next_page(
        'http://ironic:6385/v1/ports?fields=address&limit=2&marker=abc'
    ) == '/ports?fields=address&limit=2&marker=abc'
    assert client._next_page(
        'https://cloud/baremetal/v1/ports?marker=abc') == '/ports?marker=abc'
    assert client._next_page(None) is None
    assert client._next_page('') is None
