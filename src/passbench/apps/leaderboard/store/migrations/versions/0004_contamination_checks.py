"""Contamination checks: imported overlap files and the tasks they flag

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25 20:10:00

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "contamination_checks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("source_name", sa.Text(), nullable=False),
        sa.Column("benchmark", sa.String(length=64), nullable=False),
        sa.Column("dataset_version", sa.String(length=64), nullable=True),
        sa.Column("split", sa.String(length=32), nullable=False),
        sa.Column("subset", sa.String(length=32), nullable=True),
        sa.Column("dataset_sha256", sa.String(length=64), nullable=True),
        sa.Column("corpus_sha256", sa.String(length=64), nullable=False),
        sa.Column("corpus_bytes", sa.BigInteger(), nullable=False),
        sa.Column("corpus_files", sa.Integer(), nullable=False),
        sa.Column("corpus_documents", sa.BigInteger(), nullable=False),
        sa.Column("corpus_paths", sa.JSON(), nullable=False),
        sa.Column("ns", sa.JSON(), nullable=False),
        sa.Column("contaminated_n", sa.Integer(), nullable=False),
        sa.Column("thresholds", sa.JSON(), nullable=False),
        sa.Column("tokenizer", sa.Text(), nullable=False),
        sa.Column("prompt_text", sa.Text(), nullable=True),
        sa.Column("task_count", sa.Integer(), nullable=False),
        sa.Column("harness_version", sa.String(length=64), nullable=True),
        sa.Column(
            "imported_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_contamination_checks")),
        sa.UniqueConstraint("content_sha256", name=op.f("uq_contamination_checks_content_sha256")),
    )
    op.create_table(
        "contaminated_tasks",
        sa.Column("check_id", sa.Integer(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("shared", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["check_id"],
            ["contamination_checks.id"],
            name=op.f("fk_contaminated_tasks_check_id_contamination_checks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("check_id", "n", "task_id", name=op.f("pk_contaminated_tasks")),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("contaminated_tasks")
    op.drop_table("contamination_checks")
