"""The shape of the ramdisk's payload (``POST /v1/continue``).

Only the fields the service reads are checked, each where IPA puts it;
unknown fields pass untouched, and every known field may be ``null``
(IPA sends ``null`` for what it could not collect). A known field of
another type is a 400 naming the field, before any hook runs, so no
hook meets a string where it expects an object.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from inspector_ha.api import body

STR = (str,)
INT = (int,)
NUM = (int, float)
BOOL = (bool,)
LIST = (list,)
DICT = (dict,)

_TYPE_NAMES = {str: 'a string', int: 'an integer', float: 'a number',
               bool: 'a boolean', list: 'an array', dict: 'an object'}

INTERFACE = {'name': STR, 'mac_address': STR, 'ipv4_address': STR,
             'ipv6_address': STR, 'has_carrier': BOOL, 'lldp': LIST,
             'vendor': STR, 'product': STR, 'client_id': STR,
             'biosdevname': STR, 'speed_mbps': NUM, 'pci_address': STR}
DISK = {'name': STR, 'model': STR, 'size': NUM, 'rotational': BOOL,
        'wwn': STR, 'serial': STR, 'vendor': STR, 'hctl': STR,
        'by_path': STR, 'wwn_with_extension': STR,
        'wwn_vendor_extension': STR, 'uuid': STR, 'logical_sectors': NUM,
        'physical_sectors': NUM}
INVENTORY = {
    'interfaces': ([INTERFACE],),
    'disks': ([DISK],),
    'cpu': ({'model_name': STR, 'frequency': STR + NUM, 'count': NUM,
             'architecture': STR, 'flags': ([STR],),
             'socket_count': NUM},),
    'memory': ({'total': NUM, 'physical_mb': NUM},),
    'bmc_address': STR, 'bmc_v6address': STR, 'bmc_mac': STR,
    'hostname': STR,
    'system_vendor': ({'product_name': STR, 'serial_number': STR,
                       'manufacturer': STR, 'firmware': DICT},),
    'boot': ({'current_boot_mode': STR, 'pxe_interface': STR},),
}
PAYLOAD = {
    'inventory': (INVENTORY,),
    'root_disk': (DISK,),
    'boot_interface': STR, 'ipmi_address': STR, 'ipmi_v6address': STR,
    'error': STR, 'logs': STR,
    'pci_devices': ([{'vendor_id': STR, 'product_id': STR}],),
    'data': LIST, 'extra': DICT, 'configuration': DICT,
    'local_gb': NUM, 'cpus': NUM, 'memory_mb': NUM, 'cpu_arch': STR,
}


def check(data: dict[str, Any]) -> None:
    """:raises body.Invalid: a known field of the wrong type."""
    try:
        _CHECK_PAYLOAD(data)
    except _Wrong as wrong:
        raise body.Invalid('%s must be %s, not %s' % (
            wrong.path() or 'the payload',
            ' or '.join(_TYPE_NAMES[t] for t in wrong.types),
            _TYPE_NAMES.get(type(wrong.value), type(wrong.value).__name__)
        )) from None


class _Wrong(Exception):
    """A value of a type its spec does not allow; each enclosing object
    or array adds its key or index on the way out, so that a payload of
    the right shape builds no path at all."""

    def __init__(self, value: Any, types: tuple[type, ...]) -> None:
        super().__init__()
        self.value = value
        self.types = types
        self.parts: list[str | int] = []

    def path(self) -> str:
        text = ''
        for part in reversed(self.parts):
            if isinstance(part, int):
                text += '[%d]' % part
            else:
                text += '.%s' % part if text else part
        return text


def _compiled(spec: Any) -> Callable[[Any], None]:
    """A function that raises :class:`_Wrong` where a value does not
    match ``spec``: an object's fields by name, an array's items, or a
    tuple of types (a tuple of one object or array spec is that spec)."""
    if isinstance(spec, tuple) and _nested(spec):
        spec = spec[0]
    if isinstance(spec, dict):
        return _object_checker(spec)
    if isinstance(spec, list):
        return _array_checker(spec[0])
    return functools.partial(_expect, types=spec)


def _nested(spec: Any) -> bool:
    """Whether ``spec`` is of an object or an array (bare, or the one
    element of a tuple), not a tuple of types."""
    return isinstance(spec, (dict, list)) or (
        isinstance(spec, tuple) and bool(spec) and
        isinstance(spec[0], (dict, list)))


def _object_checker(spec: dict[str, Any]) -> Callable[[Any], None]:
    # NOTE: in the spec's order, so that of several wrong fields the
    # first is named. A value of exactly one of a field's plain types
    # (most fields have them) passes without a call; an object or an
    # array (no exact types) always goes to its checker.
    fields = tuple((key, _compiled(sub),
                    frozenset() if _nested(sub) else frozenset(sub))
                   for key, sub in spec.items())

    def check_object(value: Any) -> None:
        _expect(value, DICT)
        key = ''
        try:
            for key, check_item, exact in fields:
                item = value.get(key)
                if item is not None and type(item) not in exact:
                    check_item(item)
        except _Wrong as wrong:
            wrong.parts.append(key)
            raise
    return check_object


def _array_checker(item_spec: Any) -> Callable[[Any], None]:
    check_item = _compiled(item_spec)

    def check_array(value: Any) -> None:
        _expect(value, LIST)
        index = 0
        try:
            for index, item in enumerate(value):
                if item is not None:
                    check_item(item)
        except _Wrong as wrong:
            wrong.parts.append(index)
            raise
    return check_array


def _expect(value: Any, types: tuple[type, ...]) -> None:
    # NOTE: bool is an int in Python, but not in JSON.
    if (isinstance(value, bool) and bool not in types or
            not isinstance(value, types)):
        raise _Wrong(value, types)


_CHECK_PAYLOAD = _compiled(PAYLOAD)
