"""oslo.log's options in an operator's file are honoured (each case runs
``load_config`` in a child process: it replaces the root log handlers)."""

import json
import subprocess
import sys


SCRIPT = ('import logging, sys; from inspector_ha.cmd import common; '
          'common.load_config(sys.argv[1:]); '
          'logging.getLogger("inspector_ha.test").warning("hello %s", 1); '
          'logging.getLogger("inspector_ha.test").debug("details"); '
          'logging.getLogger("kazoo.client").info("noise")')


def _run(tmp_path, options):
    conf = tmp_path / 'inspector-ha.conf'
    conf.write_text('[DEFAULT]\n' + ''.join('%s = %s\n' % kv
                                            for kv in options.items()))
    proc = subprocess.run([sys.executable, '-c', SCRIPT, '--config-file',
                           str(conf)], capture_output=True, text=True,
                          timeout=60, check=True)
    return proc.stderr


def test_log_file_is_written(tmp_path):
    _run(tmp_path, {'log_file': tmp_path / 'x.log', 'use_stderr': 'false'})
    text = (tmp_path / 'x.log').read_text()
    assert 'WARNING inspector_ha.test [-] hello 1' in text
    assert 'details' not in text and 'noise' not in text


def test_log_dir_and_debug_are_honoured(tmp_path):
    _run(tmp_path, {'log_dir': tmp_path, 'log_file': 'y.log',
                    'debug': 'true', 'use_stderr': 'false'})
    assert 'details' in (tmp_path / 'y.log').read_text()


def test_use_json_gives_one_json_object_a_line(tmp_path):
    err = _run(tmp_path, {'use_json': 'true'})
    lines = [json.loads(line) for line in err.splitlines()
             if line.startswith('{')]
    assert [(r['levelname'], r['message']) for r in lines] == [
        ('WARNING', 'hello 1')]


def test_default_log_levels_are_honoured(tmp_path):
    err = _run(tmp_path, {'default_log_levels': 'kazoo=INFO'})
    assert 'noise' in err


def test_log_config_append_is_honoured(tmp_path):
    ini = tmp_path / 'logging.ini'
    ini.write_text(
        '[loggers]\nkeys=root\n[handlers]\nkeys=file\n[formatters]\n'
        'keys=plain\n[logger_root]\nlevel=DEBUG\nhandlers=file\n'
        '[handler_file]\nclass=FileHandler\nformatter=plain\n'
        'args=("%s",)\n[formatter_plain]\nformat=APPENDED %%(message)s\n'
        % (tmp_path / 'z.log'))
    _run(tmp_path, {'log_config_append': ini})
    assert 'APPENDED hello 1' in (tmp_path / 'z.log').read_text()


def test_use_syslog_starts(tmp_path):
    # NOTE: oslo.log logs through the C syslog module, which drops the
    # messages without a word when there is no /dev/log (as here).
    _run(tmp_path, {'use_syslog': 'true'})
