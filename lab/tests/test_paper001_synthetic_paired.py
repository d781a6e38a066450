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


def test_one_method_s_means_per_setting_and_none_where_the_variance_was_given(study, tmp_path):
    lines = ["repetition,noise,mode,method,nll,error,learned_variance",
             "0,0.5,known,A,1.0,0.2,", "1,0.5,known,A,2.0,0.4,",
             "0,0.5,learned,A,1.5,0.3,0.1", "1,0.5,learned,A,2.5,0.5,0.3"]
    (tmp_path / "results.csv").write_text("\n".join(lines) + "\n")
    known, learned = study.means(tmp_path, "A")
    assert known == {"setting": "known/0.5", "method": "A", "problems": 2, "nll": 1.5, "error": pytest.approx(0.3),
                     "learned_variance": None}
    assert learned["learned_variance"] == pytest.approx(0.2) and learned["nll"] == 2.0
