"""Leaderships with fencing epochs, and the log of periodic runs.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql')


def upgrade():
    op.create_table(
        'leaders',
        sa.Column('name', sa.String(64), primary_key=True),
        sa.Column('epoch', sa.Integer, nullable=False),
        sa.Column('holder', sa.String(255), nullable=False),
        sa.Column('elected_at', Timestamp, nullable=False))
    op.create_table(
        'periodic_runs',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('task', sa.String(64), nullable=False),
        sa.Column('member', sa.String(255), nullable=False),
        sa.Column('epoch', sa.Integer, nullable=False),
        sa.Column('at', Timestamp, nullable=False))
    op.create_index('periodic_runs_task_idx', 'periodic_runs', ['task', 'id'])


def downgrade():
    op.drop_table('periodic_runs')
    op.drop_table('leaders')
