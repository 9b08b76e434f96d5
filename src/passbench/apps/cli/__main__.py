"""`python -m passbench.apps.cli` runs the `passbench` command."""

from passbench.apps.cli import main

main()
