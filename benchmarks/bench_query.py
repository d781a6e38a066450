#!/usr/bin/env python
"""What one follow-up query costs on the real pool: choosing 1 source from the 4FGL-DR4 unassociated + bcu sources.

``gpal active``'s classifier (MGP, exact inputs, M = 30 by default) is fitted once on a random
100-source seed set of the labelled bll / fsrq / pulsar sources (training cost is not the point:
the query's cost depends on the pool, the inducing points and the draws).  Then each acquisition
picks one source from the pool (about 4000 sources), timed after a first call that traces its
compiled functions; the median of ``--repeats`` calls.  For the sampling acquisitions the time
is split into drawing the posterior (``sample_proba`` / ``sample_joint_proba``) and scoring, and
EPIG's scoring GEMM is set against ``np.matmul`` of the same shape timed in the same run.

    python benchmarks/bench_query.py --json docs/studies/query_cost.json
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_prediction import median_seconds  # noqa: E402  (first call traces; the median of the rest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--inducing", type=int, default=30)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    from gpal import NoisyGPClassifier
    from gpal.active import BALD, EPIG, Discovery, PredictiveEntropy, RandomSampling, epig_scores
    from gpal.catalogs import load_catalog
    from gpal.catalogs.classes import DEFAULT_MERGE

    catalog = load_catalog("4FGL-DR4")
    data = catalog.dataset(classes=["bll", "fsrq", "pulsar"], merge=DEFAULT_MERGE, features="fermi_dr4")
    pool = catalog.pool(select=["unassociated", "bcu"], features="fermi_dr4")
    seed = np.sort(np.random.default_rng(0).permutation(data.n_samples)[:100])
    clf = NoisyGPClassifier(input_noise="none", epochs=200, num_inducing=args.inducing, batch_size=50,
                            random_state=0, progress=False).fit(data.subset(seed))
    rows = {}
    acquisitions = {
        "random": RandomSampling(), "entropy": PredictiveEntropy(), "bald (100 draws)": BALD(n_samples=100),
        "epig (50 draws, 200 targets)": EPIG(n_samples=50, n_target=200),
        "discovery (pulsar)": Discovery("pulsar"),
    }
    for name, acq in acquisitions.items():
        acq.bind_classes(["bll", "fsrq", "pulsar"])
        rows[name] = median_seconds(lambda: acq(clf, pool, n_instances=1), args.repeats)
        print(f"{name:32s} {rows[name]:.3f} s per query of 1 from {pool.n_samples}", flush=True)
    parts = {
        "predict_proba": median_seconds(lambda: clf.predict_proba(pool.X, pool.X_var), args.repeats),
        "sample_proba (100)": median_seconds(lambda: clf.sample_proba(pool.X, pool.X_var, n_samples=100), args.repeats),
        "sample_joint_proba (50)": median_seconds(lambda: clf.sample_joint_proba(pool.X, pool.X_var, n_samples=50),
                                                  args.repeats),
    }
    P = clf.sample_joint_proba(pool.X, pool.X_var, n_samples=50)
    Q = P[:, :200]
    parts["epig_scores"] = median_seconds(lambda: epig_scores(P, Q), args.repeats)
    S, N, C = P.shape
    A, B = P.reshape(S, -1).T.copy(), Q.reshape(S, -1)
    gemm = median_seconds(lambda: A @ B, args.repeats)
    flops = 2.0 * N * C * S * 200 * C
    for name, seconds in parts.items():
        print(f"{name:32s} {seconds:.3f} s", flush=True)
    print(f"EPIG joint-table GEMM ({N * C} x {S}) @ ({S} x {200 * C}): {flops / 1e9:.2f} GFLOP, "
          f"{gemm:.3f} s alone ({flops / gemm / 1e9:.1f} GFLOP/s); epig_scores {parts['epig_scores']:.3f} s "
          f"(the rest is the entropy of the {N} x 200 joint tables: logs, not flops)")
    if args.json:
        from gpal.files import write_json_atomic

        write_json_atomic(args.json, {"pool": int(pool.n_samples), "inducing": args.inducing, "query_seconds": rows,
                                      "parts_seconds": parts, "epig_gemm": {"gflop": flops / 1e9, "seconds": gemm},
                                      "machine": platform.platform(), "processor": platform.processor()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
