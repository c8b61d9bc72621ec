"""Ironic's HTTP answers with their header block read without the
``email`` package.

``http.client`` hands an answer's header lines to ``email.parser``,
about 57 us of CPU for the dozen headers Ironic sends, out of 74 us for
the whole answer (status line, headers and a 2 KB body;
``benchmarks/results/README.md``, 2026-11-28 afternoon), on each of the
seven calls of an introspection. :class:`Answer` reads the same lines
into :class:`Headers`, a case-insensitive mapping; the body is read as
``http.client`` reads it (length, chunks, or up to the close).
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator, Mapping

#: Most header lines of one answer, and longest line, as http.client.
MOST_HEADERS = 100
LONGEST_LINE = 65536
#: What ends the header block.
BLANK = (b'\r\n', b'\n', b'')


class Headers(Mapping[str, str]):
    """An answer's headers by name, in any case; a repeated header's
    values joined with ``, `` (RFC 9110, 5.3)."""

    def __init__(self) -> None:
        self._values: dict[str, tuple[str, str]] = {}

    def add(self, name: str, value: str) -> None:
        key = name.lower()
        if key in self._values:
            value = self._values[key][1] + ', ' + value
        self._values[key] = (name, value)

    def __getitem__(self, name: str) -> str:
        return self._values[name.lower()][1]

    def __iter__(self) -> Iterator[str]:
        return (name for name, _value in self._values.values())

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._values

    def get_all(self, name: str, failobj: object = None) -> object:
        """As ``email.message.Message.get_all`` (``getheader`` calls
        it): a list of the value, or ``failobj``."""
        return [self[name]] if name in self else failobj


class Answer(http.client.HTTPResponse):
    """An HTTP answer whose :meth:`begin` reads the header block itself;
    everything after it is ``http.client``'s."""

    def begin(self) -> None:
        if self.headers is not None:
            return
        version, status, reason = self._read_status()
        while status == http.client.CONTINUE:
            _header_lines(self.fp)
            version, status, reason = self._read_status()
        self.code = self.status = status
        self.reason = reason.strip()
        self.version = _version(version)
        self.headers = self.msg = _headers(self.fp)
        self.chunked = _chunked(self.headers)
        self.chunk_left = None
        self.length = self._body_length()
        self.will_close = self._closes() or (
            not self.chunked and self.length is None)

    def _body_length(self) -> int | None:
        bodiless = (http.client.NO_CONTENT, http.client.NOT_MODIFIED)
        if (self.status in bodiless or 100 <= self.status < 200 or
                getattr(self, '_method', None) == 'HEAD'):
            return 0
        given = self.headers.get('content-length')
        if self.chunked or not given:
            return None
        try:
            length = int(given)
        except ValueError:
            return None
        return length if length >= 0 else None

    def _closes(self) -> bool:
        """Whether the server closes the connection after this answer."""
        tokens = self.headers.get('connection', '').lower()
        if 'close' in tokens:
            return True
        if self.version == 11:
            return False
        return 'keep-alive' not in tokens and \
            'keep-alive' not in self.headers


def _version(text: str) -> int:
    if text in ('HTTP/1.0', 'HTTP/0.9'):
        return 10
    if text.startswith('HTTP/1.'):
        return 11
    raise http.client.UnknownProtocol(text)


def _chunked(headers: Headers) -> bool:
    return headers.get('transfer-encoding', '').lower() == 'chunked'


def _header_lines(fp) -> list[bytes]:
    """The lines of one header block, its blank line left out."""
    lines: list[bytes] = []
    while True:
        line = fp.readline(LONGEST_LINE + 1)
        if len(line) > LONGEST_LINE:
            raise http.client.LineTooLong('header line')
        if line in BLANK:
            return lines
        lines.append(line)
        if len(lines) > MOST_HEADERS:
            raise http.client.HTTPException(
                'got more than %d headers' % MOST_HEADERS)


def _headers(fp) -> Headers:
    """The next header block as :class:`Headers`; a line folded onto
    the next (obsolete, RFC 9112 5.2) continues the value before."""
    fields: list[list[str]] = []
    for raw in _header_lines(fp):
        line = raw.decode('iso-8859-1').rstrip('\r\n')
        if line[:1] in (' ', '\t'):
            if fields:
                fields[-1][1] += ' ' + line.strip()
            continue
        name, _colon, value = line.partition(':')
        fields.append([name.strip(), value.strip()])
    headers = Headers()
    for name, value in fields:
        headers.add(name, value)
    return headers
