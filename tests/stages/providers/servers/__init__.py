"""Fake vendor servers on 127.0.0.1, speaking each vendor's wire protocol."""
