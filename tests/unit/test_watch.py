"""``inspector-ha-status --watch``: the live view's figures and forms."""

import datetime
import io
import json

import sqlalchemy as sa

from inspector_ha.cmd import watch
from inspector_ha.common import timeutils
from inspector_ha.db import models
from inspector_ha.fsm import states as st

MEMBERS = {'worker-0': {}, 'api-0': {}}
LEADERS = {'timeout': {'holder': 'worker-0', 'epoch': 3,
                       'elected_at': '2026-01-01T00:00:00'}}


def _finish_ago(session, uuid, seconds):
    session.execute(sa.update(models.Node).where(models.Node.uuid == uuid)
                    .values(finished_at=timeutils.utcnow() -
                            datetime.timedelta(seconds=seconds)))


def _batch(store, put_node):
    for _ in range(3):
        put_node(st.WAITING)
    recent = [put_node(st.FINISHED) for _ in range(6)]
    old = put_node(st.FINISHED)
    for uuid in recent:
        store.transaction(_finish_ago, uuid, 10)
    store.transaction(_finish_ago, old, 600)
    for mac in ('52:54:00:00:00:01', '52:54:00:00:00:02'):
        uuid = put_node(st.ERROR)
        store.transaction(lambda s, u=uuid, m=mac: s.execute(
            sa.update(models.Node).where(models.Node.uuid == u).values(
                error='No node has MAC %s (%s)' % (m, u))))


def test_progress_counts_states_rate_eta_and_groups_errors(store,
                                                           put_node):
    _batch(store, put_node)
    progress = store.transaction(watch.progress)
    assert progress['nodes'] == {st.WAITING: 3, st.FINISHED: 7,
                                 st.ERROR: 2}
    assert progress['in_flight'] == 3
    # NOTE: 6 finished in the last minute (the 2 errors too: put_node
    # just finished them): 8 a minute, so 3 in flight take 22.5 s.
    assert progress['finished_per_minute'] == 8.0
    assert progress['eta_seconds'] == 22.5
    assert progress['errors'] == {'No node has MAC <mac> (<uuid>)': 2}


def _status(store):
    return dict(store.transaction(watch.progress), members=MEMBERS,
                leaders=LEADERS, open_requests={'pending': 2})


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_the_view_redrawn_in_place(store, put_node):
    _batch(store, put_node)
    out = _Terminal()
    watch.watch(lambda: _status(store), 0.01, iterations=2, out=out)
    frames = out.getvalue().split(watch.HOME_AND_CLEAR)
    assert len(frames) == 3 and frames[0] == ''
    frame = frames[2]
    assert 'Nodes      waiting 3  finished 7  error 2' in frame
    assert 'ETA 0m22s' in frame or 'ETA 0m23s' in frame
    assert '      2  No node has MAC <mac> (<uuid>)' in frame
    assert 'timeout       worker-0 (epoch 3)' in frame


def test_a_pipe_gets_one_plain_line_per_refresh(store, put_node):
    _batch(store, put_node)
    out = io.StringIO()
    watch.watch(lambda: _status(store), 0.01, iterations=3, out=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert '\x1b' not in out.getvalue()
    assert 'waiting 3  finished 7  error 2 | in flight 3 | 8.0 ' \
        'finished/min' in lines[0]


def test_json_watch_is_one_object_per_refresh(store, put_node):
    _batch(store, put_node)
    out = _Terminal()
    watch.watch(lambda: _status(store), 0.01, iterations=2, as_json=True,
                out=out)
    objects = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [o['in_flight'] for o in objects] == [3, 3]


def test_nothing_in_flight_has_no_eta():
    assert watch.duration(None) == 'unknown'
    assert watch.duration(3725) == '1h02m'
