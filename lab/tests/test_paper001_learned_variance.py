"""lab/studies/paper001_learned_variance.py: a fit's learned input-noise variance, read in the paper's units."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def script():
    return repository_script("lab/studies/paper001_learned_variance.py")


def test_a_variance_is_stated_in_the_clean_rows_units_and_the_start_is_not_left_behind(script, monkeypatch):
    import gpal.models.svgp as svgp

    for var in ("OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
        monkeypatch.setenv(var, "1")
    original = svgp.build_model
    row = script._fit("vehicle", 0, 0.25, "NIMGP-FO:se_ard:0.1", 1, 1e-3)
    assert svgp.build_model is original
    # the start is set in the noisy rows' standardised units, whose variance is (1 + 0.25) the clean rows': one epoch
    # of Adam at 1e-3 moves it by about 1.6 %
    assert np.median(row["learned_variance"]) == pytest.approx(0.125, rel=0.05)
    assert row["learned_variance_max"] == max(row["learned_variance"]) and len(row["learned_variance"]) == 18
    assert "learned_variance" not in script._fit("vehicle", 0, 0.25, "MGP:se_ard", 1, 1e-3)


def test_a_fit_not_of_the_form_method_kernel_start_is_refused(script):
    with pytest.raises(SystemExit, match="MGP:se_ard:0.1"):
        script.main(["--fits", "MGP:se_ard:0.1"])
    with pytest.raises(SystemExit, match="NIMGP-FO:se_ard"):
        script.main(["--fits", "NIMGP-FO:se_ard"])
