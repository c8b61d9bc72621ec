"""The broker probe: whether the broker of ``[DEFAULT] transport_url``
answers.

oslo.messaging's rabbit driver reconnects forever and a consumer's poll
just times out while the broker is gone, so a worker cannot tell an empty
queue from a lost broker by consuming: :class:`BrokerProbe` makes that
visible, one round trip on a connection of its own, which the worker's
watch retries per ``[queue] retry_count`` and ``retry_timeout``; the
API's health check asks it too.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib import parse

import kombu
import oslo_messaging as messaging

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)


class BrokerUnreachable(Exception):
    """The broker did not answer the probe."""


class BrokerProbe:
    """One round trip to the broker per call, on a connection of its own
    kept open between calls (a passive declare of ``amq.direct``, which
    every broker has). Raises :class:`BrokerUnreachable`.
    """

    def __init__(self, urls: Sequence[str], timeout: float,
                 ssl_options: bool | dict[str, Any] = False) -> None:
        self._url = ';'.join(urls)
        self._hosts = len(urls)
        self._timeout = timeout
        self._ssl = ssl_options
        self._conn: kombu.Connection | None = None
        # NOTE: kombu's channels are not annotated.
        self._channel: Any = None

    def __call__(self) -> None:
        try:
            if self._channel is None:
                self._connect()
            self._channel.exchange_declare('amq.direct', 'direct',
                                           passive=True)
        except Exception as exc:
            self.close()
            raise BrokerUnreachable(str(exc) or repr(exc)) from exc

    def _connect(self) -> None:
        self._conn = kombu.Connection(
            self._url, connect_timeout=self._timeout, ssl=self._ssl,
            failover_strategy='round-robin',
            transport_options={'read_timeout': self._timeout,
                               'write_timeout': self._timeout})
        # Each host once, no pause: the retry policy paces the attempts.
        self._conn.ensure_connection(max_retries=self._hosts - 1,
                                     interval_start=0)
        self._channel = self._conn.channel()

    def close(self) -> None:
        conn, self._conn, self._channel = self._conn, None, None
        if conn is not None:
            try:
                conn.release()
            except Exception as exc:
                LOG.debug('Closing the probe connection: %r', exc)


def broker_probe(conf: cfg.ConfigOpts,
                 timeout: float) -> BrokerProbe | None:
    """A :class:`BrokerProbe` for ``[DEFAULT] transport_url``, or None when
    the transport has no broker to lose (``fake://``, in-process)."""
    url = messaging.TransportURL.parse(conf, conf.transport_url)
    if url.transport not in ('rabbit', 'amqp') or not url.hosts:
        return None
    return BrokerProbe([_amqp_url(host, url.virtual_host)
                        for host in url.hosts], timeout, _ssl_options(conf))


def _ssl_options(conf: cfg.ConfigOpts) -> bool | dict[str, Any]:
    """kombu's ``ssl`` from oslo.messaging's TLS options, as its driver
    builds them (``[oslo_messaging_rabbit] ssl`` and ``ssl_*_file``)."""
    if 'oslo_messaging_rabbit' not in conf:
        return False
    rabbit = conf.oslo_messaging_rabbit
    if not rabbit.ssl:
        return False
    options: dict[str, Any] = {key: value for key, value in (
        ('keyfile', rabbit.ssl_key_file), ('certfile', rabbit.ssl_cert_file),
        ('ca_certs', rabbit.ssl_ca_file)) if value}
    if rabbit.ssl_ca_file:
        options['cert_reqs'] = ssl.CERT_REQUIRED
    return options or True


def _amqp_url(host: messaging.TransportHost, vhost: str | None) -> str:
    return 'amqp://%s:%s@%s:%d/%s' % (
        _quote(host.username), _quote(host.password), host.hostname,
        host.port or 5672, _quote(vhost))


def _quote(text: str | None) -> str:
    return parse.quote(text or '', safe='')
