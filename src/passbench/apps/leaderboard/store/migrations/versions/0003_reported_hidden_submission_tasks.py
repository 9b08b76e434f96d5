"""An admin can hide a reported score; a submission records the tasks it is scored on

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25 19:30:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("reported_scores", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("hidden", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("task_ids", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.drop_column("task_ids")
    with op.batch_alter_table("reported_scores", schema=None) as batch_op:
        batch_op.drop_column("hidden")
