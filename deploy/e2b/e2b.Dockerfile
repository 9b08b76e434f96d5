# The E2B template the e2b backend runs programs in (docs/backend-e2b.md): passbench and its
# agent, bubblewrap, and the BigCodeBench evaluation environment built from the lock this
# passbench ships. Build it from the repository root (the COPY lines name files there):
#   e2b template build --config deploy/e2b/e2b.toml
# Python 3.10, the official evaluator's: the environment's lock is then the one a local
# `passbench env create` picks by default (a different lock is refused, not silently used).
# The full image, not -slim: its Python has tkinter, which task 220 (turtle) imports.
FROM python:3.10-bookworm

# bubblewrap isolates each sample inside the microVM; the rest is what the evaluation
# environment's packages need at run time (the same list scripts/setup.sh installs)
COPY src/passbench/stages/evalenv/apt-packages.txt /tmp/apt-packages.txt
RUN apt-get update && grep -v '^#' /tmp/apt-packages.txt | grep -v '^python3' | xargs apt-get install -y --no-install-recommends bubblewrap ca-certificates && rm -rf /var/lib/apt/lists/*

# passbench from this checkout, in a venv of its own
COPY pyproject.toml README.md /opt/passbench-src/
COPY src /opt/passbench-src/src
RUN python3.10 -m venv /opt/passbench && /opt/passbench/bin/pip install --no-cache-dir /opt/passbench-src && rm -rf /opt/passbench-src

# the evaluation environment (with its NLTK data), checked by the agent before every run
RUN /opt/passbench/bin/passbench env create bigcodebench --path /opt/passbench/envs/bigcodebench --python python3.10 && chmod -R a+rX /opt/passbench

# envd runs commands through a login shell (bash -l), which resets PATH from /etc/profile:
# a profile.d script is what puts passbench's interpreter first there, so that the backend's
# command (`python -m passbench.stages.sandbox.remote.agent ...`) finds it, and names the environment
RUN printf '%s\n' 'export PATH=/opt/passbench/bin:$PATH' 'export PASSBENCH_ENV_DIR=/opt/passbench/envs/bigcodebench' > /etc/profile.d/passbench.sh
