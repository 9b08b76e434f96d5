"""Core: the records that cross stages, the error tree, settings, progress, scoring, sample files.

Imports nothing else of passbench; every other layer may import it.
"""
