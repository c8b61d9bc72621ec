"""Objects on the queue at the version every live member reads, and a
message of a newer release put back for another member, uncounted."""

import threading

import pytest

from inspector_ha.messaging import objects
from inspector_ha.messaging import queue

import backends

UUID = '6a1d7c4c-1c0e-4c61-9a57-6d1d26a3b6b1'


def _request(event='start'):
    return objects.transition_request(UUID, 'node-1', event)


def test_a_request_made_compatible_with_1_0_drops_the_fields_1_0_lacks():
    primitive = objects.to_primitive(_request(), '1.0')
    assert primitive['versioned_object.version'] == '1.0'
    assert set(primitive['versioned_object.data']) == {
        'request_id', 'node_uuid', 'event'}
    decoded = objects.from_primitive(primitive)
    assert (decoded.request_id, decoded.event) == (UUID, 'start')
    assert not decoded.obj_attr_is_set('sent_at')


def test_a_request_at_this_release_carries_when_it_was_sent():
    decoded = objects.from_primitive(objects.to_primitive(_request()))
    assert decoded.VERSION == '1.1' and decoded.sent_at is not None


def test_a_newer_version_than_this_release_has_is_not_understood():
    primitive = objects.to_primitive(_request())
    primitive['versioned_object.version'] = '2.0'
    with pytest.raises(objects.NotUnderstood):
        objects.from_primitive(primitive)


def test_an_event_this_release_does_not_know_is_not_understood():
    primitive = objects.to_primitive(_request('start_from_future'))
    with pytest.raises(objects.NotUnderstood):
        objects.from_primitive(primitive, events=('start',))


class _Message:
    """The driver's delivered message: the payload and its two fates."""

    def __init__(self, payload):
        self.message = {'payload': payload}
        self.fate = None

    def acknowledge(self):
        self.fate = 'acknowledged'

    def requeue(self):
        self.fate = 'requeued'


def _consumer(handled):
    return queue.Consumer(transport=None, topic='topic',
                          handler=handled.append, pool_size=1,
                          get_timeout=0.1, stop=threading.Event())


@pytest.mark.parametrize('version, event', [('1.7', 'start'),
                                            ('1.1', 'from_the_future')])
def test_a_message_of_a_newer_release_is_put_back_before_the_handler(
        version, event):
    handled = []
    primitive = objects.to_primitive(_request(event))
    primitive['versioned_object.version'] = version
    message = _Message(primitive)
    _consumer(handled)._one(message)
    assert message.fate == 'requeued'
    assert handled == []  # so no delivery is counted


def test_a_message_that_cannot_be_decoded_at_all_is_dropped():
    handled = []
    message = _Message({'garbage': True})
    _consumer(handled)._one(message)
    assert message.fate == 'acknowledged' and handled == []


class _Received:
    """A notification endpoint keeping each payload."""

    def __init__(self):
        self.payloads = []

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self.payloads.append(payload)


def test_the_publisher_sends_at_the_version_it_is_given(service):
    import oslo_messaging as messaging
    transport = messaging.get_notification_transport(service.conf)
    received = _Received()
    listener = messaging.get_notification_listener(
        transport, [messaging.Target(topic='wire-test')], [received],
        executor='threading')
    listener.start()
    publisher = queue.Publisher(transport=transport, topic='wire-test',
                                publisher_id='unit', retry=0,
                                version_for=lambda name: '1.0')
    try:
        publisher.publish(UUID, 'node-1', 'start')
        backends.wait_for(lambda: received.payloads, 5,
                          message='nothing was published')
        primitive = received.payloads[0]
        assert primitive['versioned_object.version'] == '1.0'
        assert 'sent_at' not in primitive['versioned_object.data']
    finally:
        publisher.close()
        listener.stop()
        listener.wait()
