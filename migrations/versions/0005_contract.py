"""The root of the contract branch: migrations that remove or change.

``inspector-ha-dbsync upgrade --contract`` runs them once every member
runs this release and the online data migrations are done (see
0004_expand). A contract migration that needs an expand revision first
names it in ``depends_on``.

Revision ID: 0005
Revises: 0003
Create Date: 2026-11-23
"""

revision = '0005'
down_revision = '0003'
branch_labels = ('contract',)
depends_on = None


def upgrade():
    pass


def downgrade():
    pass
