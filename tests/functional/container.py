"""The image ``tools/build-image.sh`` builds, and its containers run as
deploy/kubernetes runs them: the manifest's command, user and mounts,
with podman on the host network (loopback only: every listening address
is set to 127.0.0.1). Podman here needs runc, cgroupfs and ulimits no
higher than the host's (doc: ../shared/reference/the-field-2026.md)."""

import json
import pathlib
import subprocess

import needs
from backends import REPO_ROOT, unique_name

BUILD = REPO_ROOT / 'tools' / 'build-image.sh'
RUN = ('run', '--runtime', 'runc', '--cgroup-manager=cgroupfs',
       '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096',
       '--network', 'host')


def podman(*args, timeout=120, check=True):
    proc = subprocess.run([needs.tool('podman', 'podman'), *args],
                          capture_output=True, text=True, timeout=timeout,
                          check=False)
    if check:
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc


def build():
    """Build the image; its name, as the build prints it."""
    needs.tool('mmdebstrap', 'mmdebstrap')
    needs.tool('podman', 'podman')
    built = subprocess.run(['bash', str(BUILD)], capture_output=True,
                           text=True, timeout=1200, check=False)
    assert built.returncode == 0, built.stderr[-4000:]
    name, size, unit = built.stdout.split()
    assert int(size) > 0 and unit == 'MB', built.stdout
    return name


def image_config(image):
    """The image's OCI config (User, Env, WorkingDir, Cmd ...)."""
    return json.loads(podman('image', 'inspect', image).stdout)[0]['Config']


def in_image(image, *command):
    """Run ``command`` in a throw-away container of ``image``; its
    output."""
    return podman(*RUN, '--rm', image, *command).stdout


def pod_spec(doc):
    """The pod spec of a Deployment or a Job."""
    return doc['spec']['template']['spec']


def volume_paths(spec, volumes):
    """``-v`` options for the container ``spec``'s volumeMounts:
    ``volumes`` maps a volume's name to the host directory that plays it
    (a ConfigMap's or a Secret's keys as files, an emptyDir)."""
    options = []
    for mount in spec['volumeMounts']:
        host = pathlib.Path(volumes[mount['name']])
        if 'subPath' in mount:
            host = host / mount['subPath']
        mode = 'rw' if mount['name'] == 'state' else 'ro'
        options += ['-v', '%s:%s:%s' % (host, mount['mountPath'], mode)]
    return options


class Container:
    """A container of a manifest's container ``spec`` (its ``args`` after
    the image's entry point) run as its pod's ``securityContext`` says,
    with ``env`` added (the per-process ports a shared host network
    needs)."""

    def __init__(self, image, pod, spec, volumes, env=None):
        self.name = unique_name('inspector-ha')
        self.command = spec['args'][0]
        user = str(pod['securityContext']['runAsUser'])
        options = ['--name', self.name, '--user', user,
                   *volume_paths(spec, volumes)]
        for key, value in (env or {}).items():
            options += ['-e', '%s=%s' % (key, value)]
        self._argv = [*RUN, *options, image, *spec['args']]

    def run(self, timeout=120):
        """Run to its end; its exit code and output."""
        done = podman(*self._argv, timeout=timeout, check=False)
        podman('rm', '-f', self.name, check=False)
        return done.returncode, done.stdout + done.stderr

    def start(self):
        podman(*self._argv[:1], '-d', *self._argv[1:])
        return self

    def stop(self, grace):
        """SIGTERM, SIGKILL after ``grace`` s as the kubelet does; the
        exit code."""
        podman('stop', '-t', str(grace), self.name, timeout=grace + 60)
        return int(podman('inspect', '--format', '{{.State.ExitCode}}',
                          self.name).stdout)

    def logs(self):
        """What it wrote to stdout and stderr."""
        logs = podman('logs', self.name, check=False)
        return logs.stdout + logs.stderr

    def remove(self):
        podman('rm', '-f', self.name, check=False)
