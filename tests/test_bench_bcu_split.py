"""workflows/studies/bench_bcu_split.py: which sources it scores and its NLL of q, from two later checks' source tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import repository_script


def _later_sources(folder, p_bll, p_fsrq):
    (folder / "tables").mkdir(parents=True)
    pd.DataFrame({"Source_Name": ["a", "b", "c", "d"], "CLASS1": ["bcu", "BCU ", "", "bcu"],
                  "later_class": ["fsrq", "bll", "fsrq", "psr"], "p_bll_gpal": p_bll, "p_fsrq_gpal": p_fsrq}
                 ).to_csv(folder / "tables" / "later_check_sources.csv", index=False)
    return folder


def test_it_scores_the_later_typed_bcu_by_their_q(tmp_path):
    bench = repository_script("workflows/studies/bench_bcu_split.py")
    folders = {"4lac": _later_sources(tmp_path / "on", [0.2, 0.6, 0.5, 0.1], [0.6, 0.2, 0.5, 0.1]),
               "none": _later_sources(tmp_path / "off", [0.4, 0.4, 0.5, 0.1], [0.4, 0.4, 0.5, 0.1])}
    got = bench.scores(folders)
    np.testing.assert_array_equal(got["truth"], [True, False])  # a and b: the bcu FL16Y typed bll or fsrq
    # q = 0.75 for the FSRQ a, 0.25 for the BL Lac b: -log 0.75 each; the four-class probabilities 0.6 each
    np.testing.assert_allclose(got["4lac"][0], [-np.log(0.75)] * 2)
    np.testing.assert_allclose(got["4lac"][1], [-np.log(0.6)] * 2)
    np.testing.assert_allclose(got["none"][0], [np.log(2)] * 2)
    rows = bench.table_rows("X", got)
    assert rows[0].endswith(f"| {-np.log(0.75) - np.log(2):+.3f} [{-np.log(0.75) - np.log(2):+.3f}, "
                            f"{-np.log(0.75) - np.log(2):+.3f}] |")  # the same for every source: no spread
    folders["none"] = _later_sources(tmp_path / "other", [0.4] * 4, [0.4] * 4)
    pd.read_csv(folders["none"] / "tables" / "later_check_sources.csv").assign(Source_Name=list("wxyz")).to_csv(
        folders["none"] / "tables" / "later_check_sources.csv", index=False)
    with pytest.raises(RuntimeError, match="scored other sources"):
        bench.scores(folders)
