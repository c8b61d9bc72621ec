"""Introspection rules: rules, rule_conditions, rule_actions.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql')
LongText = sa.Text().with_variant(mysql.LONGTEXT(), 'mysql')


def upgrade():
    op.create_table(
        'rules',
        sa.Column('uuid', sa.String(36), primary_key=True),
        sa.Column('created_at', Timestamp, nullable=False),
        sa.Column('description', sa.Text, nullable=True),
        sa.Column('disabled', sa.Boolean, nullable=False),
        sa.Column('scope', sa.String(255), nullable=True))
    op.create_index('rules_created_idx', 'rules', ['created_at'])
    _child('rule_conditions',
           sa.Column('op', sa.String(255), nullable=False),
           sa.Column('multiple', sa.String(255), nullable=False),
           sa.Column('invert', sa.Boolean, nullable=False),
           sa.Column('field', sa.Text, nullable=False),
           sa.Column('params', LongText, nullable=False))
    _child('rule_actions',
           sa.Column('action', sa.String(255), nullable=False),
           sa.Column('params', LongText, nullable=False))


def downgrade():
    for table in ('rule_actions', 'rule_conditions', 'rules'):
        op.drop_table(table)


def _child(name, *columns):
    op.create_table(
        name,
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('rule', sa.String(36),
                  sa.ForeignKey('rules.uuid', ondelete='CASCADE'),
                  nullable=False),
        *columns)
    op.create_index(name + '_rule_idx', name, ['rule'])
