"""The previous release (``upgrade/previous-release``), built once from
git into a venv of its own, unmodified: what N-1 really is.

It is an editable install of ``git archive <commit>``: no wheel is
built, so no network is needed for build requirements. A release whose
``setup.py`` maps the top-level ``migrations/`` to the package
``inspector_ha.migrations`` (0.2.0 on) gets that mapping as a symbolic
link in its source tree; 0.1.0 read ``migrations/`` where it lay.
The venv borrows this checkout's installed dependencies through a
``.pth`` line after its own site-packages, so building it needs no
network and takes seconds; its own ``inspector-ha`` distribution comes
first on the path and is the one its members announce.
"""

import configparser
import fcntl
import os
import pathlib
import subprocess
import sys
import sysconfig

ROOT = pathlib.Path(__file__).resolve().parents[2]
RELEASE_FILE = ROOT / 'upgrade' / 'previous-release'
CACHE = pathlib.Path(os.environ.get(
    'INSPECTOR_HA_CACHE', ROOT / '.cache'))


def release():
    """``(version, commit)`` of the previous release."""
    parser = configparser.ConfigParser()
    parser.read(RELEASE_FILE)
    return parser['previous']['version'], parser['previous']['commit']


def build():
    """The ``bin`` directory of the previous release's venv (built on the
    first call, under a lock so that parallel sessions build it once)."""
    version, commit = release()
    home = CACHE / ('inspector-ha-%s-%s' % (version, commit[:12]))
    done = home / 'built'
    home.mkdir(parents=True, exist_ok=True)
    with open(home / 'lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            _build(home, commit)
            done.write_text(version + '\n')
    return home / 'venv' / 'bin'


def _build(home, commit):
    src, venv = home / 'src', home / 'venv'
    subprocess.run(['rm', '-rf', str(src), str(venv)], check=True)
    src.mkdir()
    archive = subprocess.run(['git', '-C', str(ROOT), 'archive', commit],
                             check=True, capture_output=True).stdout
    subprocess.run(['tar', '-x', '-C', str(src)], input=archive, check=True)
    _map_migrations(src)
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip',
                    str(venv)], check=True)
    purelib = pathlib.Path(subprocess.run(
        [str(venv / 'bin' / 'python'), '-c',
         'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
        check=True, capture_output=True, text=True).stdout.strip())
    _install_editable(src, venv / 'bin', purelib)
    # NOTE: after its own site-packages: this checkout's dependencies
    # (a .pth line adds the directory but runs none of its .pth files, so
    # this checkout's own editable inspector_ha is not importable there).
    ours = pathlib.Path(sysconfig.get_paths()['purelib'])
    (purelib / 'zz-dependencies.pth').write_text(str(ours) + '\n')
    # NOTE: the test plugins (tests/plugins/*) are editable installs whose
    # entry points the release sees in this checkout's metadata: their own
    # .pth lines make them importable too, run after the line above (their
    # finders are in this checkout's site-packages).
    for pth in ours.glob('__editable__.*.pth'):
        if not pth.name.startswith('__editable__.inspector_ha-'):
            (purelib / ('zzz-' + pth.name)).write_text(pth.read_text())


def _map_migrations(src):
    """What the release's ``setup.py`` ``package_dir`` does for a wheel:
    ``migrations/`` importable as ``inspector_ha.migrations``."""
    setup_py = src / 'setup.py'
    if setup_py.exists() and "'inspector_ha.migrations'" in \
            setup_py.read_text():
        (src / 'inspector_ha' / 'migrations').symlink_to('../migrations')


def _install_editable(src, bindir, purelib):
    """What ``pip install -e`` writes, from the release's setup.cfg (pip
    would need the network for its build requirements): the source on
    the path, the distribution's metadata and entry points, and its
    console scripts."""
    setup = configparser.ConfigParser(interpolation=None)
    setup.read(src / 'setup.cfg')
    name = setup['metadata']['name']
    version = setup['metadata']['version']
    (purelib / '_previous_inspector_ha.pth').write_text(str(src) + '\n')
    info = purelib / ('%s-%s.dist-info' % (name.replace('-', '_'), version))
    info.mkdir()
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: %s\n'
                                   'Version: %s\n' % (name, version))
    sections = []
    scripts = {}
    for group, body in setup['options.entry_points'].items():
        entries = [line.strip() for line in body.splitlines()
                   if line.strip()]
        sections.append('[%s]\n%s\n' % (group, '\n'.join(entries)))
        if group == 'console_scripts':
            scripts = dict(tuple(part.strip() for part in e.split('=', 1))
                           for e in entries)
    (info / 'entry_points.txt').write_text('\n'.join(sections))
    for script, target in scripts.items():
        module, func = target.split(':')
        path = bindir / script
        path.write_text('#!%s\nimport sys\nfrom %s import %s\n'
                        'sys.exit(%s())\n' % (bindir / 'python', module,
                                               func, func))
        path.chmod(0o755)
