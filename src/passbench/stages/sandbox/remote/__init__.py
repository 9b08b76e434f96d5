"""The backends that run programs elsewhere: another machine, a container, E2B, a Ray cluster.

They share one wire format (`wire.py`: a run request in, one verdict a line out), one agent that
runs it next to the programs (`agent.py`, itself a local sandbox) and one retry rule
(`retrying.py`: infrastructure errors are retried, verdicts never).
"""
