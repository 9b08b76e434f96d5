"""The sandbox with the real BigCodeBench evaluation environment (skipped where it is absent)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from passbench.stages.sandbox import Sandbox, SandboxConfig, open_sandbox

from .helpers import EVALENV_PYTHON, checks_program, run_one

pytestmark = [
    pytest.mark.evalenv,
    pytest.mark.skipif(
        not EVALENV_PYTHON.exists(), reason=f"no evaluation env at {EVALENV_PYTHON}"
    ),
]

PRELOAD = ("numpy", "pandas", "matplotlib", "matplotlib.pyplot", "scipy", "sklearn", "seaborn")


@pytest.fixture(scope="module")
def evalenv_sandbox() -> Iterator[Sandbox]:
    with open_sandbox(SandboxConfig(python=EVALENV_PYTHON, workers=1)) as sandbox:
        yield sandbox


def test_preloaded_libraries_work_in_forked_children(evalenv_sandbox: Sandbox) -> None:
    body = """
import sys
self.assertIn('matplotlib.pyplot', sys.modules)  # the official harness imports it first
import numpy as np, pandas as pd, matplotlib.pyplot as plt, seaborn as sns
from sklearn.linear_model import LinearRegression
df = pd.DataFrame(np.arange(20.0).reshape(10, 2), columns=['x', 'y'])
self.assertAlmostEqual(LinearRegression().fit(df[['x']], df['y']).coef_[0], 1.0)
ax = sns.scatterplot(data=df, x='x', y='y')
self.assertEqual(len(ax.collections), 1)
plt.close('all')
"""
    result = run_one(evalenv_sandbox, checks_program("libs", body, preload=PRELOAD))
    assert result.status == "pass", result.details or result.reason


@pytest.mark.slow
def test_tensorflow_fits_within_the_default_memory_limit(evalenv_sandbox: Sandbox) -> None:
    body = """
try:
    import tensorflow as tf
except ImportError:
    self.skipTest('no tensorflow in this environment')
import numpy as np
model = tf.keras.Sequential([tf.keras.layers.Dense(4, input_shape=(3,)), tf.keras.layers.Dense(1)])
model.compile(optimizer='adam', loss='mse')
model.fit(np.random.rand(64, 3), np.random.rand(64), epochs=1, verbose=0)
"""
    program = checks_program("tf", body, preload=PRELOAD, timeout_s=120.0)
    result = run_one(evalenv_sandbox, program)
    assert result.status == "pass", result.details or result.reason
