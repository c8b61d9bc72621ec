"""Ironic calls read from Ironic's own request log (``ironic.api`` lines).

A line looks like::

    ... INFO ironic.api [None req-...] 127.0.0.1 - GET /v1/nodes/<uuid> - 200
    (5.1ms)

(one line in the log).

The ramdisk simulator's power-state polls ask for the fields in an order
nothing else uses (``power_state,uuid``), so they are told apart.
"""

import re

LINE = re.compile(r' ironic\.api \[[^\]]*\] \S+ - (?P<method>[A-Z]+) '
                  r'(?P<path>\S+) - (?P<code>\d+) \((?P<ms>[\d.]+)ms\)')
SIMULATOR = re.compile(r'fields=power_state(?:%2C|,)uuid')
UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                  r'[0-9a-f]{12}')
MAC = re.compile(r'([0-9a-f]{2}(?::|%3A)){5}[0-9a-f]{2}', re.I)
MARKER = re.compile(r'marker=[^&]+')

#: The marker field order of the simulator's polls.
SIMULATOR_FIELDS = 'power_state,uuid'


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
    """Calls per node (the simulator's polls apart) and a breakdown by
    call pattern, most time first."""
    own = [c for c in calls if not SIMULATOR.search(c[1])]
    polls = [c for c in calls if SIMULATOR.search(c[1])]
    by_pattern = {}
    for method, path, code, ms in own:
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
        'calls': len(own),
        'calls_per_node': round(len(own) / nodes, 2),
        'handling_s': round(sum(c[3] for c in own) / 1000, 2),
        'errors_4xx_5xx': sum(1 for c in own if c[2] >= 400),
        'simulator_polls': len(polls),
        'simulator_polls_handling_s': round(sum(c[3] for c in polls) /
                                            1000, 2),
        'by_call': breakdown,
    }
