"""CORS through oslo.middleware (``[cors]``, upstream's defaults) and
upstream's ``example`` hooks."""

import pytest

from inspector_ha.api import app as app_mod
from inspector_ha.processing import not_found
from inspector_ha.processing import pipeline
from inspector_ha import service as service_mod

import hooktools

ORIGIN = 'https://dashboard.example.com'


@pytest.fixture
def cors_client(service_conf):
    service_conf.set_override('allowed_origin', [ORIGIN], group='cors')
    svc = service_mod.Service(service_conf)
    yield app_mod.create_app(svc).test_client()
    svc.shutdown()


def test_an_allowed_origin_gets_cors_headers_with_the_version_headers(
        cors_client):
    response = cors_client.get('/', headers={'Origin': ORIGIN})
    assert response.status_code == 200
    assert response.headers['Access-Control-Allow-Origin'] == ORIGIN
    exposed = response.headers['Access-Control-Expose-Headers']
    assert 'X-OpenStack-Ironic-Inspector-API-Maximum-Version' in exposed


def test_a_preflight_allows_the_version_header(cors_client):
    response = cors_client.options('/v1/introspection', headers={
        'Origin': ORIGIN, 'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers':
            'X-OpenStack-Ironic-Inspector-API-Version'})
    assert response.headers['Access-Control-Allow-Origin'] == ORIGIN
    assert 'POST' in response.headers['Access-Control-Allow-Methods']


def test_another_origin_gets_no_cors_headers(cors_client):
    response = cors_client.get('/', headers={'Origin': 'https://evil'})
    assert response.status_code == 200
    assert 'Access-Control-Allow-Origin' not in response.headers


def test_with_no_allowed_origin_no_answer_has_cors_headers(service_conf):
    svc = service_mod.Service(service_conf)
    try:
        client = app_mod.create_app(svc).test_client()
        for origin in (ORIGIN, 'https://evil'):
            response = client.get('/', headers={'Origin': origin})
            assert response.status_code == 200
            assert not [h for h in response.headers
                        if h[0].startswith('Access-Control-')]
            preflight = client.options('/v1/introspection', headers={
                'Origin': origin, 'Access-Control-Request-Method': 'GET'})
            assert 'Access-Control-Allow-Origin' not in preflight.headers
    finally:
        svc.shutdown()


def test_upstreams_example_hooks_load_and_only_log():
    conf = hooktools.new_conf()
    conf.set_override('processing_hooks', 'example', group='processing')
    conf.set_override('node_not_found_hook', 'example', group='processing')
    hooks = pipeline.Pipeline(conf)
    data = {'x': 1}
    assert hooks.before_processing(data) == []
    ironic = hooktools.RecordingIronic()
    ctx = hooktools.context(ironic)
    hooks.before_update(data, ctx)
    assert ctx.changes().node_patch == []
    assert not_found.load(conf, ironic)(data) is None
