"""``[processing] processing_hooks = ...,example_tag``: a processing hook
outside inspector-ha's tree. It marks the data in the API process and
sets the node's ``example_tag`` property and capability in the
worker."""

from inspector_ha.processing import base


class TagHook(base.ProcessingHook):

    def before_processing(self, data):
        if data.get('example_refuse'):
            raise base.HookError('example_tag refuses the data')
        data['example_tag'] = 'seen'

    def before_update(self, data, node):
        node.set_property('example_tag', data['example_tag'])
        node.update_capabilities(example_tag='yes')
