"""A run's task result keeps the task's language (per-language boards of polyglot runs)

Revision ID: 0006_language
Revises: 0005_triage
Create Date: 2026-11-27 11:40:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0006_language"
down_revision: str | Sequence[str] | None = "0005_triage"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    with op.batch_alter_table("task_results", schema=None) as batch_op:
        batch_op.add_column(sa.Column("language", sa.String(length=40), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("task_results", schema=None) as batch_op:
        batch_op.drop_column("language")
