"""Ironic's HTTP answers with their header block read without the
``email`` package.

``http.client`` hands an answer's header lines to ``email.parser``,
about 57 us of CPU for the dozen headers Ironic sends, out of 74 us for
the whole answer (status line, headers and a 2 KB body;
``benchmarks/results/README.md``, 2026-11-28 afternoon), on each of the
seven calls of an introspection. :class:`Answer` reads the same lines
into :class:`Headers` as the ``email`` package reads them (the first
field of a name is its value, as there); the body is read as
``http.client`` reads it (length, chunks, or up to the close).
"""

from __future__ import annotations

import http.client
import io
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

#: Most lines of a header block (its blank line counted) and longest
#: line, as http.client's limits.
MOST_HEADERS = 100
LONGEST_LINE = 65536
#: What ends the header block.
BLANK = (b'\r\n', b'\n', b'')
#: A header line's name and colon, as the ``email`` package takes one: a
#: line that is neither this nor a folded one ends the headers read.
NAMED = re.compile(r'[\041-\071\073-\176]*:')


class Headers:
    """An answer's header fields in order, as ``http.client`` gives them
    (``email.message.Message``'s reading): a name in any case, the first
    field of a name for :meth:`get`, every one for :meth:`get_all` and
    :meth:`items`."""

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        self._fields = fields
        self._first: dict[str, str] = {}
        for name, value in reversed(fields):
            self._first[name.lower()] = value

    def get(self, name: str, failobj: Any = None) -> Any:
        return self._first.get(name.lower(), failobj)

    __getitem__ = get

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._first

    def __len__(self) -> int:
        return len(self._fields)

    def __iter__(self) -> Iterator[str]:
        return (name for name, _value in self._fields)

    keys = __iter__

    def items(self) -> list[tuple[str, str]]:
        return list(self._fields)

    def get_all(self, name: str, failobj: Any = None) -> Any:
        """Every value of ``name`` in order, or ``failobj``
        (``getheader`` joins them)."""
        key = name.lower()
        found = [v for n, v in self._fields if n.lower() == key]
        return found or failobj


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
        """Whether the server closes the connection after this answer
        (HTTP/1.1 unless it says ``close``; HTTP/1.0 unless it says it
        keeps the connection alive)."""
        said = (self.headers.get('connection') or '').lower()
        if self.version == 11:
            return 'close' in said
        kept = (self.headers.get('keep-alive') or 'keep-alive' in said or
                'keep-alive' in (self.headers.get('proxy-connection') or
                                 '').lower())
        return not kept


def _version(text: str) -> int:
    if text in ('HTTP/1.0', 'HTTP/0.9'):
        return 10
    if text.startswith('HTTP/1.'):
        return 11
    raise http.client.UnknownProtocol(text)


def _chunked(headers: Headers) -> bool:
    return (headers.get('transfer-encoding') or '').lower() == 'chunked'


def _header_lines(fp: BinaryIO) -> list[bytes]:
    """The lines of one header block, its blank line left out."""
    lines: list[bytes] = []
    while True:
        line = fp.readline(LONGEST_LINE + 1)
        if len(line) > LONGEST_LINE:
            raise http.client.LineTooLong('header line')
        if len(lines) + 1 > MOST_HEADERS:
            raise http.client.HTTPException(
                'got more than %d headers' % MOST_HEADERS)
        if line in BLANK:
            return lines
        lines.append(line)


def _headers(fp: BinaryIO) -> Headers:
    """The next header block's fields, as the ``email`` package reads
    them. A field's value loses the blanks before it and the line end
    after it; a line that starts with a blank continues the field before
    (obsolete folding, kept as sent); a lone CR ends a line as LF and
    CRLF do; a line with no name before its colon, or a ``From `` line,
    is left out; the first line that is none of these ends the fields
    (the rest would be a body)."""
    fields: list[tuple[str, str]] = []
    folds_onto_last = False
    for line in _email_lines(_header_lines(fp)):
        if line[:1] in (' ', '\t'):
            if folds_onto_last:
                name, value = fields[-1]
                fields[-1] = (name, value + line)
            continue
        if not NAMED.match(line) and not line.startswith('From '):
            break
        folds_onto_last = not line.startswith((':', 'From '))
        if folds_onto_last:
            name, _colon, value = line.partition(':')
            fields.append((name, value.lstrip(' \t')))
    return Headers([(n, v.rstrip('\r\n')) for n, v in fields])


def _email_lines(raw_lines: list[bytes]) -> Iterator[str]:
    """``raw_lines`` (each up to its LF) as the ``email`` package splits
    them: a CR not followed by LF ends a line too."""
    for raw in raw_lines:
        line = raw.decode('iso-8859-1')
        if '\r' in (line[:-2] if line.endswith('\r\n') else line):
            yield from io.StringIO(line, newline='').readlines()
        else:
            yield line
