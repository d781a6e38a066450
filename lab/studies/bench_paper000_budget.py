#!/usr/bin/env python
"""Paper 000 at its own optimisation budget on one split (sec. IV-A2: M = 300 k-means inducing points, minibatch
1024, 10 000 Adam steps at lr 0.01), for one GPC: test accuracy and NLL on split 0 of the 90/10 protocol of
gpal/workflows/files/papers/000_tables_3_4.yaml, and the seconds it took.  The epochs are rounded up, so a few more steps run.

    PYTHONPATH=$PWD python lab/studies/bench_paper000_budget.py ringnorm step
"""
import json, math, sys, time
from gpal import NoisyGPClassifier
from gpal.data import load_dataset
from gpal.evaluation.metrics import error_rate, negative_log_likelihood

name, lik = sys.argv[1], sys.argv[2]
ds = load_dataset(name)
split = next(iter(ds.repeated_splits(1, 0.1, 0)))
Xtr, ytr, Xte, yte = ds.X[split.train], ds.y[split.train], ds.X[split.test], ds.y[split.test]
epochs = math.ceil(10_000 * 1024 / len(ytr))
start = time.perf_counter()
clf = NoisyGPClassifier(input_noise="none", likelihood=lik, num_inducing=300, batch_size=1024, epochs=epochs,
                        learning_rate=0.01, random_state=0).fit(Xtr, ytr)
seconds = time.perf_counter() - start
proba = clf.predict_proba(Xte)
out = {"dataset": name, "likelihood": lik, "n_train": len(ytr), "epochs": epochs, "steps": epochs * math.ceil(len(ytr) / 1024),
       "seconds": seconds, "accuracy": 1 - error_rate(yte, proba), "nll": negative_log_likelihood(yte, proba)}
print(json.dumps(out))
