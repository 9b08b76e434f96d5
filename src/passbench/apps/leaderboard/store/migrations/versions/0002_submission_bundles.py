"""Submissions keep their bundle: the manifest and the gzip-compressed samples file

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25 16:10:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("manifest", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("samples_gz", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.drop_column("samples_gz")
        batch_op.drop_column("manifest")
