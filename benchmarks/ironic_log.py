"""Ironic calls read from Ironic's own request log (``ironic.api`` lines).

A line looks like::

    ... INFO ironic.api [None req-...] 127.0.0.1 - GET /v1/nodes/<uuid> - 200
    (5.1ms)

(one line in the log). The benchmark's simulated ramdisks do not call
Ironic's API (they read its database), so every call is the service's.
"""

import re

LINE = re.compile(r' ironic\.api \[[^\]]*\] \S+ - (?P<method>[A-Z]+) '
                  r'(?P<path>\S+) - (?P<code>\d+) \((?P<ms>[\d.]+)ms\)')
UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}')
MAC = re.compile(r'([0-9a-f]{2}(?::|%3A)){5}[0-9a-f]{2}', re.I)
MARKER = re.compile(r'marker=[^&]+')


def pattern(method, path):
    """``GET /v1/nodes/{uuid}/ports?...``: the call with ids blanked."""
    path = MARKER.sub('marker={uuid}', UUID.sub('{uuid}', path))
    return '%s %s' % (method, MAC.sub('{mac}', path))


class Window:
    """The Ironic log lines written between :meth:`start` and
    :meth:`stop` (byte offsets of the log file)."""

    def __init__(self, log_path):
        self._path = log_path
        self._begin = self._end = None

    def _size(self):
        with open(self._path, 'rb') as log:
            return log.seek(0, 2)

    def start(self):
        self._begin = self._size()
        return self

    def stop(self):
        self._end = self._size()
        return self

    def lines(self):
        with open(self._path, 'rb') as log:
            log.seek(self._begin)
            text = log.read(self._end - self._begin)
        return text.decode(errors='replace').splitlines()

    def calls(self):
        """``(method, path, code, ms)`` of every request line."""
        found = []
        for line in self.lines():
            match = LINE.search(line)
            if match:
                found.append((match['method'], match['path'],
                              int(match['code']), float(match['ms'])))
        return found


def analyse(calls, nodes):
    """Calls per node and a breakdown by call pattern, most time first."""
    by_pattern = {}
    for method, path, code, ms in calls:
        key = pattern(method, path)
        entry = by_pattern.setdefault(key, {'calls': 0, 'ms': 0.0,
                                            'codes': {}})
        entry['calls'] += 1
        entry['ms'] += ms
        entry['codes'][str(code)] = entry['codes'].get(str(code), 0) + 1
    breakdown = [dict(call=k, calls=v['calls'],
                      per_node=round(v['calls'] / nodes, 2),
                      total_s=round(v['ms'] / 1000, 2),
                      mean_ms=round(v['ms'] / v['calls'], 1),
                      codes=v['codes'])
                 for k, v in by_pattern.items()]
    breakdown.sort(key=lambda e: -e['total_s'])
    return {
        'calls': len(calls),
        'calls_per_node': round(len(calls) / nodes, 2),
        'handling_s': round(sum(c[3] for c in calls) / 1000, 2),
        'errors_4xx_5xx': sum(1 for c in calls if c[2] >= 400),
        'by_call': breakdown,
    }
