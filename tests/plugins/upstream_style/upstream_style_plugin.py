"""A plugin in ironic-inspector's style (its call signatures and
node_info methods), used to test inspector-ha's adapter. Upstream's
hooks subclass ``ironic_inspector.plugins.base.ProcessingHook``; this one
only has its methods, so that the test venv needs no ironic-inspector."""


class UpstreamStyleHook:
    def before_processing(self, introspection_data, **kwargs):
        if introspection_data.get('refuse_me'):
            raise ValueError('upstream-style hook refuses the data')
        introspection_data['upstream_style_seen'] = True

    def before_update(self, introspection_data, node_info, **kwargs):
        node = node_info.node()
        node_info.update_properties(upstream_style=node.id)
        node_info.update_capabilities(upstream_style='yes')
        node_info.add_trait('CUSTOM_UPSTREAM_STYLE')
        node_info.patch([{'op': 'add', 'path': '/extra/upstream_style',
                          'value': introspection_data[
                              'upstream_style_seen']}])
        if node.provision_state in ('active', 'rescue'):
            return
        for mac, port in node_info.ports().items():
            if mac not in introspection_data['macs']:
                node_info.delete_port(port)
            else:
                node_info.patch_port(port, [
                    {'op': 'add', 'path': '/extra/seen', 'value': True}])


def not_found_hook(introspection_data, **kwargs):
    return None


class _WithValidation:
    """What upstream's ``base.WithValidation`` offers, in short."""

    REQUIRED_PARAMS = set()
    OPTIONAL_PARAMS = set()

    def validate(self, params, **kwargs):
        missing = self.REQUIRED_PARAMS - set(params)
        if missing:
            raise ValueError('missing required parameter(s): %s'
                             % ', '.join(sorted(missing)))


class StartsWithCondition(_WithValidation):
    REQUIRED_PARAMS = {'value'}
    ALLOW_NONE = False

    def check(self, node_info, field, params, **kwargs):
        return str(field).startswith(params['value'])


class TagAction(_WithValidation):
    REQUIRED_PARAMS = {'tag'}
    FORMATTED_PARAMS = ['tag']

    def apply(self, node_info, params, **kwargs):
        node_info.update_properties(upstream_tag=params['tag'])
        node_info.add_trait('CUSTOM_UPSTREAM_RULE')
