"""``GET /v1/introspection`` on a real Service (SQLite, tooz file://).

Node rows are written through ``db/nodes.py``; their ``started_at`` is
then set explicitly so that the expected order does not depend on the
clock.
"""

import datetime

import pytest
import sqlalchemy as sa

from inspector_ha.api import app as app_mod
from inspector_ha.db import models
from inspector_ha.fsm import states as st

UNKNOWN = '00000000-0000-4000-8000-000000000000'
EPOCH = datetime.datetime(2024, 5, 1, 12, 0, 0)


@pytest.fixture
def client(service):
    return app_mod.create_app(service).test_client()


def _set_started(session, uuid, started_at):
    session.execute(sa.update(models.Node).where(models.Node.uuid == uuid)
                    .values(started_at=started_at))


@pytest.fixture
def put_started(store, put_node):
    """``put_started(state, minutes) -> uuid``: started EPOCH + minutes."""
    def put(state, minutes, uuid=None):
        uuid = put_node(state, uuid=uuid)
        store.transaction(_set_started, uuid,
                          EPOCH + datetime.timedelta(minutes=minutes))
        return uuid
    return put


def _uuids(response):
    assert response.status_code == 200, response.json
    return [status['uuid'] for status in response.json['introspection']]


def _error(response, code):
    assert response.status_code == code
    assert response.mimetype == 'application/json'
    return response.json['error']['message']


def test_an_empty_cache_lists_no_introspection(client):
    response = client.get('/v1/introspection')
    assert (response.status_code, response.json) == (
        200, {'introspection': []})


def test_statuses_are_listed_newest_first(client, put_started):
    old, new, middle = (put_started(st.FINISHED, 1),
                        put_started(st.WAITING, 30),
                        put_started(st.ERROR, 10))
    assert _uuids(client.get('/v1/introspection/')) == [new, middle, old]


def test_statuses_started_at_the_same_time_are_ordered_by_uuid_descending(
        client, put_started):
    uuids = [put_started(st.FINISHED, 5, uuid='%08d-0000-4000-8000-%012d'
                         % (i, i)) for i in (2, 9, 4)]
    assert _uuids(client.get('/v1/introspection')) == sorted(uuids,
                                                             reverse=True)


def test_each_listed_status_is_the_status_of_its_node(client, put_started):
    uuid = put_started(st.ERROR, 1)
    [listed] = client.get('/v1/introspection').json['introspection']
    assert listed == client.get('/v1/introspection/' + uuid).json
    assert listed['started_at'] == '2024-05-01T12:01:00'


def test_pages_follow_each_other_by_marker_without_gaps_or_repeats(
        client, put_started):
    everything = [put_started(st.FINISHED, m % 3) for m in range(7)]
    pages, marker = [], None
    while True:
        query = '?limit=3' + ('&marker=' + marker if marker else '')
        page = _uuids(client.get('/v1/introspection' + query))
        if not page:
            break
        pages.append(page)
        marker = page[-1]
    assert [len(p) for p in pages] == [3, 3, 1]
    assert sum(pages, []) == _uuids(client.get('/v1/introspection'))
    assert sorted(sum(pages, [])) == sorted(everything)


def test_a_node_started_after_the_first_page_does_not_shift_the_next(
        client, put_started):
    for minutes in range(4):
        put_started(st.FINISHED, minutes)
    first = _uuids(client.get('/v1/introspection?limit=2'))
    put_started(st.WAITING, 60)
    second = _uuids(client.get('/v1/introspection?limit=2&marker='
                               + first[-1]))
    assert len(second) == 2 and not set(first) & set(second)


def test_a_limit_of_zero_means_the_maximum(client, service_conf,
                                           put_started):
    service_conf.set_override('api_max_limit', 2)
    for minutes in range(3):
        put_started(st.FINISHED, minutes)
    assert len(_uuids(client.get('/v1/introspection?limit=0'))) == 2
    assert len(_uuids(client.get('/v1/introspection'))) == 2


@pytest.mark.parametrize('limit,message', [
    ('1001', 'Bad request: Limit over 1000'),
    ('-1', 'Bad request: Limit cannot be negative'),
    ('ten', "Bad request: invalid literal for int() with base 10: 'ten'")])
def test_a_bad_limit_is_a_400(client, limit, message):
    assert _error(client.get('/v1/introspection?limit=' + limit),
                  400) == message


def test_a_marker_that_is_not_uuid_like_is_a_400(client):
    assert _error(client.get('/v1/introspection?marker=node-1'), 400) == \
        'Bad request: Marker not UUID-like'


def test_a_marker_naming_no_node_is_a_404(client, put_started):
    put_started(st.FINISHED, 1)
    assert _error(client.get('/v1/introspection?marker=' + UNKNOWN),
                  404) == 'The requested node was not found.'


def test_the_state_filter_lists_only_nodes_in_those_states(client,
                                                           put_started):
    finished, error = (put_started(st.FINISHED, 1),
                       put_started(st.ERROR, 2))
    put_started(st.WAITING, 3)
    assert _uuids(client.get('/v1/introspection?state=error,finished')) \
        == [error, finished]
    assert _uuids(client.get('/v1/introspection?state=starting')) == []


def test_the_state_filter_and_the_marker_combine(client, put_started):
    finished = [put_started(st.FINISHED, m) for m in (0, 2, 3)]
    marker = put_started(st.WAITING, 1)
    assert _uuids(client.get('/v1/introspection?state=finished&marker='
                             + marker)) == [finished[0]]


def test_an_unknown_state_in_the_filter_is_a_400_naming_it(client):
    response = client.get('/v1/introspection?state=finished,bogus,gone')
    assert _error(response, 400) == \
        'Bad request: State(s) "bogus, gone" are not valid'
