"""The real ironic-python-agent (PyPI ``ironic-python-agent``, in the
venv ``tools/install-test-deps.sh`` makes at ``.venv-ipa``, or
``$INSPECTOR_HA_IPA_VENV``): its own collectors inventory this machine
and its own ``call_inspector`` posts the data, as the ramdisk does after
booting. It needs Debian's lshw, dmidecode, pciutils and udev."""

import os
import pathlib
import subprocess

import backends
import needs

VENV = pathlib.Path(os.environ.get('INSPECTOR_HA_IPA_VENV',
                                   backends.REPO_ROOT / '.venv-ipa'))
SCRIPT = pathlib.Path(__file__).with_name('ipa_inspect.py')
TOOLS = (('lshw', 'lshw'), ('dmidecode', 'dmidecode'), ('lspci', 'pciutils'),
         ('udevadm', 'udev'))


def inspect(callback_url, timeout=180):
    """Run the agent's inspection against ``callback_url``; the node UUID
    the inspector answered with."""
    for tool, package in TOOLS:
        needs.tool(tool, package)
    python = needs.file(VENV / 'bin' / 'python', 'ironic-python-agent venv')
    result = subprocess.run([python, SCRIPT, callback_url],
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-5000:]
    return result.stdout.strip().splitlines()[-1]


def machine_macs():
    """The MACs of this machine's physical interfaces (those the agent
    reports), in name order."""
    base = pathlib.Path('/sys/class/net')
    return [(base / name / 'address').read_text().strip()
            for name in sorted(os.listdir(base))
            if (base / name / 'device').exists()]


def memory_mib():
    """MemTotal of /proc/meminfo in MiB (below the physical size the
    agent reads from DMI: the kernel keeps some)."""
    for line in pathlib.Path('/proc/meminfo').read_text().splitlines():
        if line.startswith('MemTotal:'):
            return int(line.split()[1]) // 1024
    raise AssertionError('no MemTotal in /proc/meminfo')


def disk_bytes(device):
    """The size of block ``device`` (``/dev/vda``) in bytes."""
    name = pathlib.Path(device).name
    return int(pathlib.Path('/sys/block', name, 'size').read_text()) * 512
