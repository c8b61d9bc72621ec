"""The ramdisk's ``logs`` (base64 of a tar.gz), saved as upstream does.

They are written to ``[processing] ramdisk_logs_dir`` (a directory
shared by the hosts, or collected from each), one file per post named by
``ramdisk_logs_filename_format``, when ``always_store_ramdisk_logs`` is
set or when the introspection fails on that post, as upstream does:

* by the API process that receives the post, when it stores them always
  or refuses the post (a pre-processing hook failed, the ramdisk
  reported an error, no node matches);
* else by the worker that processes the data, when a processing hook or
  a rule fails: the API carries the logs to it in the request
  (:func:`carry`, under :data:`KEY`; only when a directory is set), and
  the worker takes them out (:func:`take`) before anything else reads
  the data.

Without a directory nothing is stored. Logs that are not valid base64
are logged and dropped; the data is processed all the same.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import tempfile
from typing import TYPE_CHECKING, Any

from inspector_ha.common import timeutils
from inspector_ha.processing import ramdisk_data

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
#: Where the logs travel to the worker in a process request's payload.
KEY = '_ramdisk_logs'


def carry(conf: cfg.ConfigOpts, data: dict[str, Any], logs: str | None
          ) -> dict[str, Any]:
    """``data`` with ``logs`` for the worker to save if processing fails
    (only when there are logs and a directory to save them in)."""
    if logs and conf.processing.ramdisk_logs_dir:
        return dict(data, **{KEY: logs})
    return data


def take(data: dict[str, Any]) -> str | None:
    """Remove the carried logs from ``data``; them or None."""
    return data.pop(KEY, None)


def save(conf: cfg.ConfigOpts, logs: str | None, data: dict[str, Any],
         uuid: str | None) -> str | None:
    """Write ``logs`` for node ``uuid`` (None: unknown); never raises."""
    directory = conf.processing.ramdisk_logs_dir
    if not logs:
        LOG.warning('No logs were passed by the ramdisk (node %s)', uuid)
        return None
    if not directory:
        LOG.warning('Not storing the logs of node %s received from the '
                    'ramdisk: [processing] ramdisk_logs_dir is not set',
                    uuid)
        return None
    try:
        content = base64.b64decode(logs, validate=True)
    except (binascii.Error, ValueError, TypeError) as exc:
        LOG.error('The logs the ramdisk of node %s sent are not valid '
                  'base64, not storing them: %s', uuid, exc)
        return None
    try:
        name = _file_name(conf, data, uuid)
        return _write(directory, name, content)
    except (OSError, KeyError, ValueError, IndexError) as exc:
        LOG.error('Could not store the ramdisk logs of node %s: %s', uuid,
                  exc)
        return None


def _file_name(conf: cfg.ConfigOpts, data: dict[str, Any],
               uuid: str | None) -> str:
    def safe(value: object) -> str:
        return str(value).replace('/', '_')
    mac = ramdisk_data.pxe_mac_of(data) or 'unknown'
    bmc = data.get('ipmi_address') or 'unknown'
    return conf.processing.ramdisk_logs_filename_format.format(
        uuid=safe(uuid or 'unknown'), mac=safe(mac.replace(':', '')),
        bmc=safe(bmc), dt=timeutils.utcnow())


def _write(directory: str, name: str, content: bytes) -> str:
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.ramdisk-logs-')
    try:
        with os.fdopen(fd, 'wb') as out:
            out.write(content)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    LOG.info('Ramdisk logs were stored in file %s', path)
    return path
