"""Analysis: what is computed from results (reports, security scans, contamination checks).

Imports stages and core, never an app.
"""
