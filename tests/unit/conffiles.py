"""A configuration file written and read as a process reads it."""

from oslo_config import cfg

from inspector_ha import conf as conf_mod


def read(directory, text, name='inspector-ha.conf'):
    """``(ConfigOpts, path)``: ``text`` written to ``directory/name`` and
    read with every option of the service registered."""
    path = directory / name
    path.write_text(text)
    conf = cfg.ConfigOpts()
    conf_mod.register_opts(conf)
    conf(['--config-file', str(path)], project='inspector-ha',
         default_config_files=[], default_config_dirs=[])
    return conf, path
