"""The subset of kustomize the shipped manifests use (``resources`` and
JSON 6902 ``patches`` with a kind/name target), so that the tests render
them without a kubectl; :func:`kubectl` renders with the real one."""

import pathlib
import shutil
import subprocess

import jsonpatch
import yaml


def render(directory):
    """The documents of the kustomization in ``directory``."""
    directory = pathlib.Path(directory)
    spec = yaml.safe_load((directory / 'kustomization.yaml').read_text())
    unknown = set(spec) - {'apiVersion', 'kind', 'resources', 'patches'}
    assert not unknown, 'not in the subset: %s' % unknown
    docs = []
    for resource in spec.get('resources', []):
        path = directory / resource
        if path.is_dir():
            docs.extend(render(path))
        else:
            docs.extend(d for d in yaml.safe_load_all(path.read_text())
                        if d)
    for patch in spec.get('patches', []):
        target = patch['target']
        matches = [i for i, d in enumerate(docs)
                   if d['kind'] == target['kind']
                   and d['metadata']['name'] == target['name']]
        assert len(matches) == 1, target
        docs[matches[0]] = jsonpatch.apply_patch(
            docs[matches[0]], yaml.safe_load(patch['patch']))
    return docs


def kubectl(directory):
    """The documents as ``kubectl kustomize`` renders them, or None when
    there is no kubectl."""
    binary = shutil.which('kubectl')
    if binary is None:
        return None
    out = subprocess.run([binary, 'kustomize', str(directory)], check=True,
                         capture_output=True, text=True, timeout=60).stdout
    return [d for d in yaml.safe_load_all(out) if d]
