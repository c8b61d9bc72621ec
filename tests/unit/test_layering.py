"""The packages of inspector_ha import each other in one direction only,
and no test module imports another (shared test code lives in helper
modules)."""

import ast
import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / 'inspector_ha'


def _imported(path):
    """The dotted names ``path`` imports (``from a import b`` gives
    ``a.b``, which may be a module or a name in ``a``)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield from ('%s.%s' % (node.module, alias.name)
                        for alias in node.names)


def _package_of(path):
    """``inspector_ha/<package>/...`` -> ``<package>``; a top-level
    module is a package of its own."""
    parts = path.relative_to(PACKAGE).with_suffix('').parts
    return parts[0]


def _package_imports():
    """``{package: {package it imports: [module doing it]}}``."""
    graph = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in PACKAGE.rglob('*.py'):
        mine = _package_of(path)
        for name in _imported(path):
            parts = name.split('.')
            if parts[0] == 'inspector_ha' and len(parts) > 1:
                if parts[1] != mine:
                    graph[mine][parts[1]].append(
                        str(path.relative_to(ROOT)))
    return graph


def _cycles(graph):
    """Each pair of packages importing each other, with the modules."""
    return sorted((a, b, graph[a][b][0], graph[b][a][0])
                  for a in graph for b in graph[a]
                  if a < b and a in graph.get(b, {}))


def _longer_cycle(graph):
    """A package reached again by following imports, or None."""
    done, path = set(), []

    def visit(package):
        if package in path:
            return path[path.index(package):] + [package]
        if package in done:
            return None
        path.append(package)
        for other in sorted(graph.get(package, ())):
            found = visit(other)
            if found:
                return found
        path.pop()
        done.add(package)
        return None

    for package in sorted(graph):
        found = visit(package)
        if found:
            return found
    return None


def test_no_two_packages_import_each_other():
    assert _cycles(_package_imports()) == []


def test_no_package_reaches_itself_through_others():
    assert _longer_cycle(_package_imports()) is None


def test_no_test_module_imports_another_test_module():
    offenders = []
    for path in list((ROOT / 'tests').rglob('*.py')) + list(
            (ROOT / 'benchmarks').rglob('*.py')):
        for name in _imported(path):
            if any(part.startswith('test_') for part in name.split('.')):
                offenders.append((str(path.relative_to(ROOT)), name))
    assert offenders == []
