"""The results store: models, runs, verdicts, reported scores, submissions, jobs

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-25 16:00:10.629870

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "models",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("revision", sa.String(length=200), nullable=False),
        sa.Column("link", sa.Text(), nullable=True),
        sa.Column("size_b", sa.Float(), nullable=True),
        sa.Column("active_params_b", sa.Float(), nullable=True),
        sa.Column("moe", sa.Boolean(), nullable=True),
        sa.Column("licence", sa.String(length=200), nullable=True),
        sa.Column("open_data", sa.String(length=16), nullable=True),
        sa.Column("release_date", sa.Date(), nullable=True),
        sa.Column("prompted", sa.Boolean(), nullable=True),
        sa.Column("prefill", sa.Boolean(), nullable=True),
        sa.Column("reasoning", sa.JSON(), nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.CheckConstraint(
            "open_data IS NULL OR open_data IN ('None', 'Partial', 'Full')",
            name=op.f("ck_models_open_data"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_models")),
        sa.UniqueConstraint("name", "revision", name=op.f("uq_models_name_revision")),
    )
    op.create_table(
        "reported_sources",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("benchmark", sa.String(length=64), nullable=False),
        sa.Column("subset", sa.String(length=32), nullable=False),
        sa.Column(
            "imported_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reported_sources")),
        sa.UniqueConstraint("content_sha256", name=op.f("uq_reported_sources_content_sha256")),
    )
    op.create_table(
        "submitters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("is_admin", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submitters")),
        sa.UniqueConstraint("token_sha256", name=op.f("uq_submitters_token_sha256")),
    )
    op.create_table(
        "reported_scores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("benchmark", sa.String(length=64), nullable=False),
        sa.Column("subset", sa.String(length=32), nullable=False),
        sa.Column("split", sa.String(length=32), nullable=False),
        sa.Column("pass_at_1_percent", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["models.id"],
            name=op.f("fk_reported_scores_model_id_models"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["reported_sources.id"],
            name=op.f("fk_reported_scores_source_id_reported_sources"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reported_scores")),
        sa.UniqueConstraint(
            "source_id",
            "model_id",
            "split",
            name=op.f("uq_reported_scores_source_id_model_id_split"),
        ),
    )
    with op.batch_alter_table("reported_scores", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_reported_scores_model_id"), ["model_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_reported_scores_source_id"), ["source_id"], unique=False
        )

    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("provenance", sa.String(length=16), nullable=False),
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("benchmark", sa.String(length=64), nullable=True),
        sa.Column("dataset_version", sa.String(length=64), nullable=True),
        sa.Column("split", sa.String(length=32), nullable=True),
        sa.Column("subset", sa.String(length=32), nullable=True),
        sa.Column("calibrated", sa.Boolean(), nullable=True),
        sa.Column("n_tasks", sa.Integer(), nullable=False),
        sa.Column("n_samples", sa.Integer(), nullable=False),
        sa.Column("pass_at_1", sa.Double(), nullable=False),
        sa.Column("pass_at_k", sa.JSON(), nullable=False),
        sa.Column("gt_pass_rate", sa.Double(), nullable=True),
        sa.Column("harness_version", sa.String(length=64), nullable=True),
        sa.Column("dataset_sha256", sa.String(length=64), nullable=True),
        sa.Column("env_name", sa.String(length=100), nullable=True),
        sa.Column("env_lock_sha256", sa.String(length=64), nullable=True),
        sa.Column("backend", sa.String(length=64), nullable=True),
        sa.Column("isolation", sa.String(length=32), nullable=True),
        sa.Column("evaluated_at", sa.String(length=32), nullable=True),
        sa.Column("source_name", sa.Text(), nullable=True),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.Column(
            "imported_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("hidden", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.CheckConstraint("origin IN ('passbench', 'official')", name=op.f("ck_runs_origin")),
        sa.CheckConstraint(
            "provenance IN ('verified', 'imported')", name=op.f("ck_runs_provenance")
        ),
        sa.ForeignKeyConstraint(
            ["model_id"], ["models.id"], name=op.f("fk_runs_model_id_models"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
        sa.UniqueConstraint("content_sha256", name=op.f("uq_runs_content_sha256")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_runs_model_id"), ["model_id"], unique=False)

    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submitter_id", sa.Integer(), nullable=True),
        sa.Column("model_id", sa.Integer(), nullable=False),
        sa.Column("bundle_sha256", sa.String(length=64), nullable=False),
        sa.Column("benchmark", sa.String(length=64), nullable=False),
        sa.Column("dataset_version", sa.String(length=64), nullable=True),
        sa.Column("split", sa.String(length=32), nullable=False),
        sa.Column("subset", sa.String(length=32), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("hidden", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.ForeignKeyConstraint(
            ["model_id"],
            ["models.id"],
            name=op.f("fk_submissions_model_id_models"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["submitter_id"],
            ["submitters.id"],
            name=op.f("fk_submissions_submitter_id_submitters"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submissions")),
    )
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_submissions_bundle_sha256"), ["bundle_sha256"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_submissions_model_id"), ["model_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_submissions_submitter_id"), ["submitter_id"], unique=False
        )

    op.create_table(
        "jobs",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("log", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("lease_owner", sa.String(length=200), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.CheckConstraint(
            "state IN ('queued', 'validating', 'running', 'scored', 'rejected', 'failed', "
            "'cancelled')",
            name=op.f("ck_jobs_state"),
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_jobs_run_id_runs"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_jobs_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_jobs_state"), ["state"], unique=False)
        batch_op.create_index(batch_op.f("ix_jobs_submission_id"), ["submission_id"], unique=False)

    op.create_table(
        "task_results",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("c", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_task_results_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "task_id", name=op.f("pk_task_results")),
    )
    op.create_table(
        "sample_verdicts",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.String(length=200), nullable=False),
        sa.Column("sample_index", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("category", sa.String(length=32), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("duration_s", sa.Double(), nullable=True),
        sa.Column("wall_s", sa.Double(), nullable=True),
        sa.Column("tests_run", sa.Integer(), nullable=True),
        sa.Column("isolation", sa.String(length=32), nullable=True),
        sa.Column("solution", sa.Text(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.CheckConstraint(
            "status IN ('pass', 'fail', 'timeout')", name=op.f("ck_sample_verdicts_status")
        ),
        sa.ForeignKeyConstraint(
            ["run_id", "task_id"],
            ["task_results.run_id", "task_results.task_id"],
            name=op.f("fk_sample_verdicts_run_id_task_results"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "run_id", "task_id", "sample_index", name=op.f("pk_sample_verdicts")
        ),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("sample_verdicts")
    op.drop_table("task_results")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_submission_id"))
        batch_op.drop_index(batch_op.f("ix_jobs_state"))

    op.drop_table("jobs")
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_submissions_submitter_id"))
        batch_op.drop_index(batch_op.f("ix_submissions_model_id"))
        batch_op.drop_index(batch_op.f("ix_submissions_bundle_sha256"))

    op.drop_table("submissions")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_runs_model_id"))

    op.drop_table("runs")
    with op.batch_alter_table("reported_scores", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_reported_scores_source_id"))
        batch_op.drop_index(batch_op.f("ix_reported_scores_model_id"))

    op.drop_table("reported_scores")
    op.drop_table("submitters")
    op.drop_table("reported_sources")
    op.drop_table("models")
