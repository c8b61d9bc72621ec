"""``.. openapi-reference:: PATH``: an OpenAPI 3 document as pages.

One section per path and method with its summary, description,
parameters, request body and responses, read from the YAML the service
serves, so that document stays the only source of the API reference.

sphinxcontrib-openapi 0.10 was tried first: its ``httpdomain`` renderer
raises KeyError on an array schema without ``items`` (the ramdisk data's
free-form lists), and its older renderer repeats the version headers
once per response and leaves request bodies out.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any

import yaml
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

METHODS = ('get', 'put', 'post', 'patch', 'delete', 'head', 'options')
_CODE = re.compile(r'`([^`]+)`')


def _inline(text: str) -> list[nodes.Node]:
    """CommonMark code spans as literals, the rest as text (the
    document's descriptions use no other inline markup)."""
    parts = _CODE.split(' '.join(text.split()))
    return [nodes.literal(p, p) if i % 2 else nodes.Text(p)
            for i, p in enumerate(parts) if p]


def _paragraphs(text: str) -> list[nodes.Node]:
    return [nodes.paragraph('', '', *_inline(block))
            for block in text.split('\n\n') if block.strip()]


def _resolve(spec: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    """Follow a local ``$ref`` (``#/components/...``)."""
    while '$ref' in item:
        found: Any = spec
        for key in item['$ref'].lstrip('#/').split('/'):
            found = found[key]
        item = found
    return item


def _schema_name(schema: dict[str, Any]) -> str:
    ref: str = schema.get('$ref', '')
    return ref.rsplit('/', 1)[-1] if ref else str(schema.get('type', 'any'))


def _field(name: str, items: list[list[nodes.Node]]) -> nodes.field:
    """A field of the operation's list: a bullet per item."""
    bullets = nodes.bullet_list('', *(
        nodes.list_item('', nodes.paragraph('', '', *item))
        for item in items))
    return nodes.field('', nodes.field_name(name, name),
                       nodes.field_body('', bullets))


def _parameter(param: dict[str, Any]) -> list[nodes.Node]:
    where = '%s, %s%s' % (param['in'],
                          _schema_name(param.get('schema', {})),
                          ', required' if param.get('required') else '')
    result: list[nodes.Node] = [nodes.literal(param['name'], param['name']),
                                nodes.Text(' (%s)' % where)]
    if 'description' in param:
        result += [nodes.Text(': ')] + _inline(param['description'])
    return result


def _fields(spec: dict[str, Any], op: dict[str, Any],
            shared: list[dict[str, Any]]) -> nodes.field_list:
    """Policy rule, parameters, request body and responses."""
    fields = nodes.field_list()
    if 'x-policy' in op:
        fields += _field('Policy rule', [[nodes.literal(op['x-policy'],
                                                        op['x-policy'])]])
    params = [_resolve(spec, p)
              for p in shared + op.get('parameters', [])]
    if params:
        fields += _field('Parameters', [_parameter(p) for p in params])
    body = op.get('requestBody')
    if body:
        required = ', required' if body.get('required') else ''
        fields += _field('Request body', [
            [nodes.literal(media, media), nodes.Text(': %s%s' % (
                _schema_name(content.get('schema', {})), required))]
            for media, content in body['content'].items()])
    fields += _field('Responses', [
        [nodes.strong(code, code), nodes.Text(': ')]
        + _inline(_resolve(spec, answer).get('description', ''))
        for code, answer in op['responses'].items()])
    return fields


class OpenAPIReference(SphinxDirective):
    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        rel, path = self.env.relfn2path(self.arguments[0])
        self.env.note_dependency(rel)
        spec = yaml.safe_load(pathlib.Path(path).read_text())
        result = _paragraphs(spec['info'].get('description', ''))
        for route, item in spec['paths'].items():
            for method in METHODS:
                if method in item:
                    result.append(self._operation(
                        spec, '%s %s' % (method.upper(), route),
                        item[method], item.get('parameters', [])))
        return result

    def _operation(self, spec: dict[str, Any], title: str,
                   op: dict[str, Any],
                   shared: list[dict[str, Any]]) -> nodes.section:
        section = nodes.section('', nodes.title(title, title))
        section['names'].append(nodes.fully_normalize_name(title))
        self.state.document.note_implicit_target(section, section)
        section += _paragraphs(op.get('summary', ''))
        section += _paragraphs(op.get('description', ''))
        section += _fields(spec, op, shared)
        return section


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive('openapi-reference', OpenAPIReference)
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
