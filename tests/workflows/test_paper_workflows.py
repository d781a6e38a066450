"""The paper workflows of gpal/workflows/files/papers/: each loads, refuses a bad reference key at load, and runs tiny."""

import json
from pathlib import Path

import pytest
import yaml

from gpal.workflows import WorkflowError, load_workflow, run_workflow

PAPERS = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers"
MINE = ["001_synthetic_2d.yaml", "001_uci_input_noise.yaml", "001_epoch_times.yaml"]


def _with(tmp_path: Path, name: str, change) -> Path:
    data = yaml.safe_load((PAPERS / name).read_text(encoding="utf-8"))
    change(data["reference"]["values"])
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", MINE)
def test_a_reference_key_the_workflow_does_not_produce_fails_at_load(tmp_path, name):
    load_workflow(PAPERS / name)
    setting, methods = next(iter(yaml.safe_load((PAPERS / name).read_text())["reference"]["values"].items()))
    method, metrics = next(iter(methods.items()))
    cases = {
        "setting": (lambda v: v.update({"nowhere/9": {method: metrics}}), r"reference\.values\.nowhere/9: .*no setting"),
        "method": (lambda v: v[setting].update({"GPX": metrics}), rf"reference\.values\.{setting}\.GPX: .*no method"),
        "metric": (lambda v: v[setting][method].update({"auc": next(iter(metrics.values()))}),  # the file's form
                   rf"reference\.values\.{setting}\.{method}\.auc: .*no metric 'auc'"),
    }
    for change, message in cases.values():
        with pytest.raises(WorkflowError, match=message):
            load_workflow(_with(tmp_path, name, change))


def _rows(out: Path) -> dict[tuple[str, str, str], dict]:
    result = json.loads((out / "paper_comparison.json").read_text())
    assert {"commit", "command", "settings", "budget", "source", "rows", "orderings"} <= set(result)
    return {(r["setting"], r["method"], r["metric"]): r for r in result["rows"]}


@pytest.mark.slow
def test_uci_input_noise_tiny(tmp_path):
    tiny = ["datasets=[wine]", "methods=[MGP, NIMGP-FO]", "protocol.splits=2", "protocol.injected_noise=[0.0, 0.5]",
            "noisy_input.epochs=1", "noisy_input.num_inducing=3", "noisy_input.n_samples=2"]
    out = run_workflow(PAPERS / "001_uci_input_noise.yaml", tiny, out=tmp_path / "uci", progress=False)
    assert sorted(p.name for p in (out / "wine").iterdir()) == ["noise_0", "noise_0.5"]
    rows = _rows(out)
    assert len(rows) == 5 * 4 * 4 * 2  # every published number has a row
    done = rows[("wine/0.5", "NIMGP-FO", "nll")]
    assert done["n"] == 2 and done["paper_mean"] == 0.236 and done["verdict"] in ("reproduced", "differs")
    assert rows[("vehicle/0.1", "MGP", "nll")]["verdict"] == "not run"
    assert rows[("wine/0", "NIMGP", "error")]["verdict"] == "not run"
    # the injected noise reached the data: the same split and method differ between levels
    clean, noisy = (json.loads((out / "wine" / f"noise_{v}" / "units" / "MGP" / "split_0000.json").read_text())
                    for v in ("0", "0.5"))
    assert clean["test_ids"] == noisy["test_ids"] and clean["proba"] != noisy["proba"]
    assert "splits 2 (paper 100), epochs 1 (paper 1000), n_samples 2 (paper 300): reduced" in (out / "paper_comparison.md").read_text()


@pytest.mark.slow
def test_epoch_times_tiny(tmp_path):
    tiny = ["methods=[MGP, NIMGP-FO]", "protocol.timed_steps=1", "protocol.epochs=3", "protocol.repeats=2",
            "data.n_rows=40", "data.n_features=3", "data.n_classes=3", "training.batch_size=10",
            "training.num_inducing=3", "training.n_samples=2"]
    out = run_workflow(PAPERS / "001_epoch_times.yaml", tiny, out=tmp_path / "et", progress=False)
    rows = _rows(out)
    assert rows[("epoch", "MGP", "ratio_to_MGP")]["gpal_mean"] == 1.0  # within each repeat, by construction
    fo = rows[("epoch", "NIMGP-FO", "ratio_to_MGP")]
    assert fo["n"] == 2 and fo["gpal_mean"] > 0 and fo["verdict"].startswith("ordering")  # no published spread
    assert rows[("epoch", "NIMGP", "ratio_to_MGP")]["verdict"] == "not run"
    units = sorted(p.relative_to(out / "units").as_posix() for p in (out / "units").rglob("*.json"))
    assert units == ["rep_0000/MGP.json", "rep_0000/NIMGP-FO.json", "rep_0001/MGP.json", "rep_0001/NIMGP-FO.json"]
    unit = json.loads((out / "units" / "rep_0000" / "NIMGP-FO.json").read_text())
    assert unit["steps_per_epoch"] == 4 and unit["epoch_seconds"] == pytest.approx(4 * unit["seconds_per_step"])
    assert unit["epoch_cpu_seconds"] > 0
    frame = __import__("pandas").read_csv(out / "epoch_times.csv")  # the ratio is of CPU seconds within a repeat
    fo, mgp = (frame[frame["method"] == m].set_index("repeat")["epoch_cpu_seconds"] for m in ("NIMGP-FO", "MGP"))
    assert rows[("epoch", "NIMGP-FO", "ratio_to_MGP")]["gpal_mean"] == pytest.approx(float((fo / mgp).mean()))
