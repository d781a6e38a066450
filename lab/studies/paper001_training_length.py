"""Paper 001's 2-D problem 0 at noise 0.1: how the reduced budget (100 epochs, 100 prediction samples) moves the NLL.

The run of docs/papers.md (`gpal/workflows/files/papers/001_synthetic_2d.yaml` at 100 of the paper's 750 epochs and 100 of its
300 prediction samples) is set beside the paper's budget on one problem (repetition 0, the first of that run, so its
100-epoch fits are the run's own), the variance given:

- ``reduced``: 100 epochs, 100 samples, MGP and NIMGP;
- ``samples``: 100 epochs, the paper's 300 samples, NIMGP;
- ``paper``: the paper's 750 epochs and 300 samples, MGP and NIMGP.

    python lab/studies/paper001_training_length.py

Each budget is one `gpal workflow` run into ``--out``/<budget> (a rerun reuses its finished fits); one JSON line a
fit: the budget, its command, the method, its test NLL and error, kept in
``lab/studies/records/paper001_training_length.json``.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from gpal.workflows import run_workflow
from gpal.workflows.shipped import resolve_workflow
from shared import keep_printed  # the script's folder, first on its path

WORKFLOW = "papers/001_synthetic_2d"  # the shipped workflow, by its name
#: Problem 0 at noise 0.1, the variance given: the settings every budget shares.
PROBLEM = ["repetitions=1", "noise_variance=[known]", "data.noise_levels=[0.1]"]
#: budget -> the overrides that set it, beside `PROBLEM`; the workflow file's own budget is the paper's.
BUDGETS = {
    "reduced": ["methods=[MGP, NIMGP]", "training.epochs=100", "training.n_samples=100"],
    "samples": ["methods=[NIMGP]", "training.epochs=100"],
    "paper": ["methods=[MGP, NIMGP]"],
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/paper001_training_length"),
                        help="the folder of the runs, one sub-folder a budget")
    args = parser.parse_args(argv)
    with keep_printed("paper001_training_length", __file__, argv):  # docs/papers/001_numbers.md cites its NLLs
        for budget, overrides in BUDGETS.items():
            out = run_workflow(resolve_workflow(WORKFLOW), [*PROBLEM, *overrides], out=args.out / budget, progress=False)
            words = [w for o in [*PROBLEM, *overrides] for w in ("--set", o)]
            command = shlex.join(["gpal", "workflow", WORKFLOW, *words])
            problem = out / "units" / "rep_0000" / "noise_0.1"
            for unit in sorted(problem.rglob("*.json")):
                name = unit.relative_to(problem).with_suffix("").as_posix()
                if name == "Bayes":
                    continue
                fit = json.loads(unit.read_text(encoding="utf-8"))
                print(json.dumps({"budget": budget, "command": command, "method": name.rpartition("/")[2],
                                  "nll": fit["nll"], "error": fit["error"]}), flush=True)


if __name__ == "__main__":
    main()
