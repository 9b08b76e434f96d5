"""What runs inside the sandbox, under the evaluation environment's Python.

The runner (`_runner.py`) and the modules shipped beside it are copied into the sandbox by path
and run without passbench installed: standard library only, and nothing of passbench outside this
folder (an import-linter contract in pyproject.toml keeps it so). The host imports the same
modules for the codecs both sides share (tagged JSON values, frames), so each exists once.
"""
