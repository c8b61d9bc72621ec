"""What ``body.decode`` lets through and what it refuses where strings
could hold what cannot be stored: a NUL or a lone surrogate only comes
from a ``\\u`` escape, in a key as in a value, however the escape is
spelled; text that merely looks like one is a string like any other."""

import pytest

from inspector_ha.api import body

REFUSED = {
    'a NUL in a value': b'{"a": "x\\u0000y"}',
    'a NUL in a key': b'{"x\\u0000": 1}',
    'a lone surrogate in a key': b'{"\\udfff": 1}',
    'a lone surrogate in upper case': b'{"a": ["\\uD800"]}',
    'a NUL as a raw byte': b'{"a": "x\x00y"}',
    'a surrogate encoded in UTF-8': b'{"a": "\xed\xa0\x80"}',
}


@pytest.mark.parametrize('raw', REFUSED.values(), ids=list(REFUSED))
def test_a_string_that_cannot_be_stored_is_refused(raw):
    with pytest.raises(body.Invalid):
        body.decode(raw)


def test_an_escaped_backslash_before_u0000_is_text_not_a_nul():
    assert body.decode(b'{"a": "\\\\u0000"}') == {'a': '\\u0000'}


def test_a_surrogate_pair_and_other_escapes_decode():
    assert body.decode(b'{"\\u00e9": "\\ud83d\\ude00 \\u0041"}') == {
        '\u00e9': '\U0001F600 A'}


def test_a_body_without_escapes_decodes_as_it_was_sent():
    assert body.decode(b'{"a": ["b", {"c": "d\xc3\xa9"}]}') == {
        'a': ['b', {'c': 'd\u00e9'}]}


def test_a_text_body_is_checked_for_a_lone_surrogate_without_an_escape():
    with pytest.raises(body.Invalid):
        body.decode('{"a": "\ud800"}')
