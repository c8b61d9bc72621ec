"""The service reaches its dependencies through their public API only: a
private name of another package (``obj._name``, ``getattr(obj,
'_name')``, ``from lib import _module``) breaks silently on a minor
release of that library, so none may appear in ``inspector_ha/``."""

import ast
import functools
import pathlib

import inspector_ha

ROOT = pathlib.Path(inspector_ha.__file__).parent
#: Names with a leading underscore that their library documents as
#: public (namedtuple's, SQLAlchemy ``Row._mapping``, ``os._exit``).
PUBLIC = frozenset(['_replace', '_asdict', '_fields', '_make', '_mapping',
                    '_exit'])
#: Private names still used, each with why the public API cannot give
#: it yet: ``{(module path, name): reason}``. Keep it shrinking.
KNOWN = {
    ('common/logctx.py', '_request_store'):
        'oslo.context has no public way to unset a thread\'s context',
}


@functools.lru_cache(maxsize=None)
def _modules():
    return tuple((path.relative_to(ROOT).as_posix(),
                  ast.parse(path.read_text()))
                 for path in sorted(ROOT.rglob('*.py')))


@functools.lru_cache(maxsize=None)
def _own_names():
    """Every private name inspector_ha itself defines (a function, a
    class, a module, an attribute of its own objects, a variable)."""
    names = set(PUBLIC)
    for _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(
                    node.ctx, ast.Store) and isinstance(
                        node.value, ast.Name) and node.value.id in (
                            'self', 'cls'):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(
                    node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return names


def _private(name):
    return name.startswith('_') and not name.startswith('__')


def _reached(tree, own):
    """``(line, name)`` of each private name ``tree`` reaches that is not
    among ``own`` (by name, or by ``getattr`` whatever it names)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            if node.attr not in own:
                yield node.lineno, node.attr
        elif (isinstance(node, ast.Call) and
              isinstance(node.func, ast.Name) and
              node.func.id in ('getattr', 'setattr', 'hasattr') and
              len(node.args) > 1 and
              isinstance(node.args[1], ast.Constant) and
              isinstance(node.args[1].value, str) and
              _private(node.args[1].value)):
            yield node.lineno, node.args[1].value
        elif isinstance(node, ast.ImportFrom) and node.module and \
                not node.module.startswith('inspector_ha'):
            for alias in node.names:
                if _private(alias.name):
                    yield node.lineno, alias.name
            for part in node.module.split('.')[1:]:
                if _private(part):
                    yield node.lineno, part


def test_no_private_name_of_a_dependency_is_used():
    own = _own_names()
    found = ['%s:%d %s' % (path, line, name)
             for path, tree in _modules()
             for line, name in _reached(tree, own)
             if (path, name) not in KNOWN]
    assert not found, found


def test_every_known_private_use_is_still_there():
    """A private use that went away leaves the list with it."""
    used = {(path, name) for path, tree in _modules()
            for _, name in _reached(tree, _own_names())}
    assert not set(KNOWN) - used, set(KNOWN) - used
