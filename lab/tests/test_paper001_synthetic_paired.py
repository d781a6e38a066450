"""lab/studies/paper001_synthetic_paired.py: differences paired by problem, against a hand computation."""

import numpy as np
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def study():
    return repository_script("lab/studies/paper001_synthetic_paired.py")


def test_the_difference_is_paired_by_problem(study, tmp_path):
    a, b = [1.0, 2.0, 3.5], [0.5, 1.8, 3.0]  # b far apart across problems, a little below a within each
    lines = ["repetition,noise,mode,method,nll"]
    lines += [f"{r},0.25,learned,A,{v}" for r, v in enumerate(a)] + [f"{r},0.25,learned,B,{v}" for r, v in enumerate(b)]
    (tmp_path / "results.csv").write_text("\n".join(lines) + "\n")
    (row,) = study.paired(tmp_path, "A", "B")
    d = np.subtract(a, b)
    se = d.std(ddof=1) / np.sqrt(3)
    assert row["setting"] == "learned/0.25" and row["problems"] == 3
    assert row["mean"] == pytest.approx(d.mean()) and row["se"] == pytest.approx(se)
    assert row["low"] == pytest.approx(d.mean() - 4.302652729911275 * se)  # t(0.975, 2)
    with pytest.raises(ValueError, match="no setting holds both 'A' and 'C'"):
        study.paired(tmp_path, "A", "C")
