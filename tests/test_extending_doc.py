"""docs/extending.md's examples run as written, from a user's own code: each Python block in turn, with the files'
paths replaced by files written here, prints what its comments say, and the command line sees what they registered."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits
from astropy.table import Table

import gpal
from gpal.catalogs import FEATURE_PRESETS, RELEASES
from gpal.catalogs.catalog import HDU_NAME
from gpal.registry import ACQUISITIONS, LIKELIHOODS

PAGE = (Path(__file__).parents[1] / "docs" / "extending.md").read_text(encoding="utf-8")
DR3_FILE, TOY_FILE = "/data/fermi/gll_psc_v31.fit.gz", "/data/toycat_v1.fit.gz"
#: The toy layout's name of each DR4 column it keeps (the page's `Columns`).
RENAMED = {"Source_Name": "SRC_NAME", "CLASS1": "SRC_CLASS", "RAJ2000": "RA", "DEJ2000": "DEC", "GLON": "L",
           "GLAT": "B", "Signif_Avg": "SIGMA", "Flux1000": "FLUX_1_100", "Unc_Flux1000": "FLUX_1_100_ERR",
           "PL_Index": "GAMMA", "Unc_PL_Index": "GAMMA_ERR"}


def _blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", PAGE, flags=re.S | re.M)


def _promised(block: str) -> list[str]:
    """What the block's prints are said to print: the comment after a print, or the comment line below it."""
    lines = block.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith("print("):
            out.append(line.partition("  # ")[2] or lines[i + 1].removeprefix("# "))
    return out


def _write_files(small_catalog, folder: Path) -> tuple[Path, Path]:
    """The DR3 file (the small DR4 file with DataRelease capped at 3) and the toy layout's (a few DR4 columns renamed,
    a family of its own)."""
    dr3, toy = folder / "gll_psc_v31.fit.gz", folder / "toycat_v1.fit.gz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fits.open(small_catalog) as hdul:
            primary, table = hdul[0].copy(), hdul[HDU_NAME].copy()
            table.data["DataRelease"] = np.minimum(table.data["DataRelease"], 3)
            fits.HDUList([primary, table]).writeto(dr3)
        renamed = Table.read(small_catalog, hdu=HDU_NAME)[list(RENAMED)]
    renamed.rename_columns(list(RENAMED), list(RENAMED.values()))
    hdu = fits.table_to_hdu(renamed)
    hdu.name = HDU_NAME
    hdu.header["CDS-NAME"] = "TOYCAT"
    fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(toy)
    return dr3, toy


@pytest.fixture
def registered(small_catalog, tmp_path):
    """The page's blocks run in one namespace, as one file of a user's would; what they printed, per block.
    Whatever they registered is unregistered afterwards."""
    dr3, toy = _write_files(small_catalog, tmp_path)
    namespace = {"__name__": "users_code"}  # not __main__: the last block's command is not run
    printed = []
    try:
        for block in _blocks():
            out = io.StringIO()
            with contextlib.redirect_stdout(out), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the small file's dropped and repaired rows
                exec(block.replace(DR3_FILE, str(dr3)).replace(TOY_FILE, str(toy)), namespace)
            printed.append(out.getvalue().splitlines())
        yield printed
    finally:
        for name, unregister in (("4FGL-DR3", gpal.unregister_release), ("TOYCAT", gpal.unregister_release),
                                 ("toycat", gpal.unregister_preset), ("top_probability", gpal.unregister_acquisition),
                                 ("my_robustmax", gpal.unregister_likelihood),
                                 ("my_first_order", gpal.unregister_input_noise)):
            with contextlib.suppress(KeyError):
                unregister(name)


def test_the_page_has_its_blocks_and_the_paths_it_says():
    blocks = _blocks()
    assert len(blocks) == 7 and DR3_FILE in blocks[0] and TOY_FILE in blocks[1]
    assert [len(_promised(b)) for b in blocks] == [1, 1, 1, 0, 1, 1, 0]


def test_each_example_prints_what_its_comment_says(registered):
    assert registered == [_promised(block) for block in _blocks()]


def test_the_command_line_sees_what_the_examples_registered(registered):
    from gpal.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["active", "--out", "x", "--catalog", "4FGL-DR3", "--features", "toycat",
                              "--acquisition", "top_probability", "--column", "2", "--likelihood", "my_robustmax",
                              "--input-noise", "my_first_order"])
    assert (vars(args)["job:acquisition"], vars(args)["job:column"]) == ("top_probability", 2)
    assert vars(args)["estimator:input_noise"] == "my_first_order"
    assert "my_robustmax" in LIKELIHOODS and "top_probability" in ACQUISITIONS and "toycat" in FEATURE_PRESETS
    assert list(RELEASES)[-1] == "TOYCAT"
