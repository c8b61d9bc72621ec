"""Initial schema: nodes, attributes, data, requests, transitions.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None

Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql')
LongText = sa.Text().with_variant(mysql.LONGTEXT(), 'mysql')


def upgrade():
    _nodes()
    _attributes()
    _data()
    _requests()
    _transitions()


def downgrade():
    for table in ('transitions', 'requests', 'introspection_data',
                  'attributes', 'nodes'):
        op.drop_table(table)


def _nodes():
    op.create_table(
        'nodes',
        sa.Column('uuid', sa.String(36), primary_key=True),
        sa.Column('state', sa.String(16), nullable=False),
        sa.Column('generation', sa.Integer, nullable=False),
        sa.Column('attempt', sa.Integer, nullable=False),
        sa.Column('started_at', Timestamp, nullable=True),
        sa.Column('finished_at', Timestamp, nullable=True),
        sa.Column('error', sa.Text, nullable=True),
        sa.Column('manage_boot', sa.Boolean, nullable=True))
    op.create_index('nodes_state_idx', 'nodes', ['state'])
    op.create_index('nodes_started_idx', 'nodes', ['started_at', 'uuid'])


def _attributes():
    op.create_table(
        'attributes',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('node_uuid', sa.String(36),
                  sa.ForeignKey('nodes.uuid', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('name', sa.String(64), nullable=False),
        sa.Column('value', sa.String(255), nullable=False))
    op.create_index('attributes_lookup_idx', 'attributes',
                    ['name', 'value'])
    op.create_index('attributes_node_idx', 'attributes', ['node_uuid'])


def _data():
    op.create_table(
        'introspection_data',
        sa.Column('node_uuid', sa.String(36),
                  sa.ForeignKey('nodes.uuid', ondelete='CASCADE'),
                  primary_key=True),
        sa.Column('processed', sa.Boolean, primary_key=True),
        sa.Column('data', LongText, nullable=False))


def _requests():
    op.create_table(
        'requests',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('node_uuid', sa.String(36), nullable=False),
        sa.Column('event', sa.String(16), nullable=False),
        sa.Column('attempt', sa.Integer, nullable=True),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('payload', LongText, nullable=True),
        sa.Column('deliveries', sa.Integer, nullable=False),
        sa.Column('detail', sa.Text, nullable=True),
        sa.Column('created_at', Timestamp, nullable=False),
        sa.Column('updated_at', Timestamp, nullable=False))
    op.create_index('requests_status_idx', 'requests',
                    ['status', 'updated_at'])
    op.create_index('requests_node_idx', 'requests', ['node_uuid'])


def _transitions():
    op.create_table(
        'transitions',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('node_uuid', sa.String(36), nullable=False),
        sa.Column('request_id', sa.String(36), nullable=True),
        sa.Column('event', sa.String(16), nullable=False),
        sa.Column('from_state', sa.String(16), nullable=True),
        sa.Column('to_state', sa.String(16), nullable=False),
        sa.Column('generation', sa.Integer, nullable=False),
        sa.Column('actor', sa.String(255), nullable=False),
        sa.Column('at', Timestamp, nullable=False))
    op.create_index('transitions_node_idx', 'transitions',
                    ['node_uuid', 'id'])
