"""The root of the expand branch: migrations that only add.

From 0.2.0 on, a schema change is an *expand* migration (new tables, new
nullable or defaulted columns, new indexes: the previous release runs on
the result) or a *contract* migration (drops, renames, type changes,
constraints the previous release would break: run once no member of it
is alive). 0001-0003 are 0.1.0's history and stay as they are.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

revision = '0004'
down_revision = '0003'
branch_labels = ('expand',)
depends_on = None


def upgrade():
    pass


def downgrade():
    pass
