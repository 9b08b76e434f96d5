"""Evaluation environments: separate virtual environments holding a benchmark's libraries.

passbench itself never imports these libraries; samples run under the environment's own
interpreter. Each environment is installed from a lock file shipped with passbench (every
package pinned), so its identity is the lock's sha256, which result files cite.

    create_env("bigcodebench")   build it (or return at once when it is up to date)
    check_env("bigcodebench")    list what it lacks: modules, NLTK data, host programs
    locate_env("bigcodebench")   find a complete one, or raise EnvironmentError_ with the fix
    check_integrity(...)         before use: no file changed since it was built (manifest.py)
"""

from passbench.stages.evalenv.check import CheckItem, EnvReport, check_env
from passbench.stages.evalenv.create import CreateResult, create_env
from passbench.stages.evalenv.locate import EnvInfo, locate_env
from passbench.stages.evalenv.location import env_path, envs_root
from passbench.stages.evalenv.manifest import Verification, check_integrity, verify_manifest
from passbench.stages.evalenv.specs import EnvSpec, get_spec, spec_names

__all__ = [
    "CheckItem",
    "CreateResult",
    "EnvInfo",
    "EnvReport",
    "EnvSpec",
    "Verification",
    "check_env",
    "check_integrity",
    "create_env",
    "env_path",
    "envs_root",
    "get_spec",
    "locate_env",
    "spec_names",
    "verify_manifest",
]
