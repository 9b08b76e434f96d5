"""What a server's sandbox is made of, whatever its clients ask."""

from __future__ import annotations

from pathlib import Path

from tests.stages.sandbox.helpers import TEST_LIMITS

from passbench.apps.serve import ServeConfig, ServerLimits
from passbench.apps.serve.programs import ProgramService
from passbench.core.records import Program
from passbench.core.settings import Paths
from passbench.stages.evaluate import EvaluateSettings
from passbench.stages.sandbox.base import EnvironmentRef
from passbench.stages.sandbox.remote.wire import RunRequest


def test_a_client_claiming_its_programs_wait_gets_no_slots_beyond_the_servers(
    tmp_path: Path,
) -> None:
    config = ServeConfig(
        base=EvaluateSettings(limits=TEST_LIMITS),
        paths=Paths(cache_dir=tmp_path / "cache", data_dir=None),
        jobs_dir=tmp_path / "jobs",
        port=0,
        token="token",
        limits=ServerLimits(max_workers=0, max_memory_mb=TEST_LIMITS.memory_mb),
    )
    claims = tuple(
        Program(key=f"p{i}", task_id=f"p{i}", source="", expected_cpu_share=0.0) for i in range(8)
    )
    request = RunRequest(EnvironmentRef("host"), TEST_LIMITS, workers=0, programs=claims)
    sandbox = ProgramService(config).sandbox_config(request)
    assert sandbox.workers == 0 and not sandbox.waiting_room and not sandbox.allow_unsandboxed
