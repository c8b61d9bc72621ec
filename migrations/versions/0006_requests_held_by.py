"""requests.held_by: the member that holds an open request (expand).

The API process that accepted it until a worker counts a delivery, then
that worker: when the member's coordination lease lapses, another member
publishes the request again (``doc/guarantees.md`` D3c). Nullable: a
0.2.0 member writes none, and its requests are re-driven as before.

Revision ID: 0006
Revises: 0004
Create Date: 2026-12-07
"""

from alembic import op
import sqlalchemy as sa

revision = '0006'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('requests', sa.Column('held_by', sa.String(255),
                                        nullable=True))


def downgrade():
    op.drop_column('requests', 'held_by')
