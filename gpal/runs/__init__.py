"""Runs: what makes long work resumable and safe.

Output folders claimed for one run (``output_dir``), executors (in-process or Dask),
resumable units (``units``) and the repeated-splits protocol built on them.  Atomic
files and model folders are the foundation module `gpal.files`, run identities
`gpal.identity`: every stage writes files and records runs, not only this one.
"""
