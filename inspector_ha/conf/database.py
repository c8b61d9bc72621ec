"""[database]: the SQL store, which is the source of truth."""

from oslo_config import cfg

from inspector_ha.conf import retry

GROUP = 'database'

OPTS = [
    cfg.StrOpt('connection', secret=True,
               default='sqlite:///$state_path/inspector-ha.sqlite',
               help='SQLAlchemy URL of the database.'),
    cfg.IntOpt('max_pool_size', default=10, min=0, max=2 ** 31 - 1,
               help='Connections a process keeps open between '
                    'transactions (SQLAlchemy\'s pool_size). 0 means no '
                    'limit, as in oslo.db, whose names and bounds these '
                    'are.'),
    cfg.IntOpt('max_overflow', default=10, min=0, max=2 ** 31 - 1,
               help='Connections a process opens beyond max_pool_size '
                    'when that many are in use, closed when given back '
                    '(SQLAlchemy\'s max_overflow).'),
    cfg.IntOpt('pool_timeout', default=30, min=0, max=2 ** 31 - 1,
               help='Seconds a transaction waits for a connection when '
                    'max_pool_size plus max_overflow are in use; then it '
                    'fails and is retried as a database error '
                    '(SQLAlchemy\'s pool_timeout).'),
    cfg.IntOpt('connection_recycle_time', default=3600, min=0,
               max=2 ** 31 - 1,
               help='Seconds after which a connection is closed and a new '
                    'one opened as it is next taken, before a server or a '
                    'proxy times it out (SQLAlchemy\'s pool_recycle).'),
    cfg.IntOpt('idle_transaction_timeout', default=3, min=0, max=3600,
               help='Seconds after which the database server aborts a '
                    'transaction left idle (a frozen or paused process), '
                    'releasing its row locks so that elections and other '
                    'writers are not blocked; 0 leaves the server default. '
                    'PostgreSQL and MariaDB.'),
    cfg.BoolOpt('sqlite_synchronous', default=True,
                help='SQLite only (the embedded default): sync every '
                     'commit to disk (SQLite\'s synchronous=FULL), so that '
                     'no committed transaction is lost to a power loss or '
                     'an operating-system crash (where the disk honours '
                     'the sync). False syncs only when the write-ahead '
                     'log is checkpointed (synchronous=NORMAL): the '
                     'database stays consistent, but the transactions '
                     'committed since the last checkpoint may roll back '
                     'after a power loss or an operating-system crash; a '
                     'crash of the process loses none either way. A '
                     'database SQLite cannot keep in WAL mode stays '
                     'FULL. Unlike oslo.db, false never means '
                     'synchronous=OFF, which can corrupt the file.'),
] + retry.retry_opts(
    'Attempts of a database call before giving up.',
    'Pause between database attempts, in seconds.')
