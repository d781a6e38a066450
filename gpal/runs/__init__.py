"""Runs: what makes long work resumable and safe.

Atomic files and model folders (``persistence``), executors (in-process or Dask),
resumable units (``units``) and the repeated-splits protocol built on them.
"""
