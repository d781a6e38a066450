"""gpal's timing suite, in asv's form (``asv.conf.json`` at the repository's top; docs/benchmarks.md).

Each module times one part of what users wait for, through gpal's public API only.  With the
environment variable ``GPAL_BENCHMARK_SMOKE=1`` every benchmark takes its smallest size: the test
suite runs them all that way (``lab/tests/test_benchmarks.py``), so a benchmark cannot rot unseen.
"""
