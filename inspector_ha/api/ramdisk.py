"""The shape of the ramdisk's payload (``POST /v1/continue``).

Only the fields the service reads are checked, each where IPA puts it;
unknown fields pass untouched, and every known field may be ``null``
(IPA sends ``null`` for what it could not collect). A known field of
another type is a 400 naming the field, before any hook runs, so no
hook meets a string where it expects an object.
"""

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


def check(data):
    """:raises body.Invalid: a known field of the wrong type."""
    _check(data, PAYLOAD, '')


def _check(value, spec, path):
    if isinstance(spec, tuple) and spec and isinstance(spec[0], (dict,
                                                                 list)):
        spec = spec[0]
    if isinstance(spec, dict):
        _expect(value, DICT, path)
        for key, sub in spec.items():
            if value.get(key) is not None:
                _check(value[key], sub, _join(path, key))
    elif isinstance(spec, list):
        _expect(value, LIST, path)
        for index, item in enumerate(value):
            if item is not None:
                _check(item, spec[0], '%s[%d]' % (path, index))
    else:
        _expect(value, spec, path)


def _expect(value, types, path):
    # NOTE: bool is an int in Python, but not in JSON.
    if isinstance(value, bool) and bool not in types:
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok:
        raise body.Invalid('%s must be %s, not %s' % (
            path or 'the payload', ' or '.join(_TYPE_NAMES[t] for t in types),
            _TYPE_NAMES.get(type(value), type(value).__name__)))


def _join(path, key):
    return '%s.%s' % (path, key) if path else key
