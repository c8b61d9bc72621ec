"""Introspection rules the functional tests create, in inspector-ha's and
ironic-inspector 12.5's API alike."""

BIG = {'description': 'big nodes',
       'conditions': [{'op': 'ge', 'field': 'memory_mb', 'value': 4096}],
       'actions': [
           {'action': 'set-capability', 'name': 'cpu_count',
            'value': '{data[inventory][cpu][count]}'},
           {'action': 'set-attribute', 'path': '/properties/rule_cpus',
            'value': '{data[inventory][cpu][count]}'},
           {'action': 'add-trait', 'name': 'CUSTOM_BIG_MEMORY'}]}
TOO_FEW_CPUS = {'description': 'refuse small CPUs',
                'conditions': [{'op': 'lt', 'field': 'inventory.cpu.count',
                                'value': 3}],
                'actions': [{'action': 'fail',
                             'message': 'Fewer than 3 CPUs'}]}
