"""Apps: what a user runs (the CLI, the evaluator server, the leaderboard, the pipeline).

May import anything below.
"""
