"""Which DR4 sources a follow-up list should leave out: how often they reappear in the next LAT release and keep their class.

Each 4FGL-DR4 point source (no extended template) is looked up in FL16Y (v41) by FL16Y's
``ASSOC_FGL`` (its 4FGL counterpart's name), by ``Signif_Avg`` bin and by ``Flags``; the
table in docs/reports.md ("Which sources a list leaves out") is this script's output, kept in
``lab/studies/records/list_cuts.json``.

    python lab/studies/bench_list_cuts.py [DR4 FITS] [FL16Y FITS]

Both files ship in the repository's ``catalogs/`` folder (``gll_psc_v35.fit.gz``, ``gll_psc_v41.fit.gz``); pass
FL16Y's path, which the default looks for in the working folder.
"""

import sys
import warnings

import numpy as np
from astropy.table import Table

from shared import keep_printed  # the script's folder, first on its path

BINS = [0, 3, 4, 5, 6, 8, 10, np.inf]
CLASSED = ["bll", "fsrq", "psr", "msp"]


def _columns(path):
    table = Table.read(path, hdu="LAT_Point_Source_Catalog")

    def text(name):
        column = table[name]
        return np.char.strip(np.asarray(column.filled("") if hasattr(column, "filled") else column).astype(str))

    return table, text


def main(dr4_path="catalogs/gll_psc_v35.fit.gz", fl16y_path="gll_psc_v41.fit.gz"):
    warnings.simplefilter("ignore")
    dr4, dr4_text = _columns(dr4_path)
    fl16y, fl16y_text = _columns(fl16y_path)
    later = dict(zip(fl16y_text("ASSOC_FGL"), np.char.lower(fl16y_text("CLASS1"))))
    names, codes = dr4_text("Source_Name"), np.char.lower(dr4_text("CLASS1"))
    significance = np.asarray(dr4["Signif_Avg"].filled(np.nan) if hasattr(dr4["Signif_Avg"], "filled")
                              else dr4["Signif_Avg"], dtype=np.float64)
    flags = np.asarray(dr4["Flags"], dtype=np.int64)
    point = dr4_text("Extended_Source_Name") == ""
    present = np.array([n in later for n in names])
    later_code = np.array([later.get(n, "") for n in names])
    unassociated, classed = codes == "", np.isin(codes, CLASSED)

    def row(label, mask):
        u, c = mask & unassociated, mask & classed
        kept = int((later_code[c] == codes[c]).sum())
        return (f"| {label} | {mask.sum()} | {present[mask].mean():.1%} | {u.sum()} | {present[u].mean():.1%} | "
                f"{c.sum()} | {kept} ({kept / max(c.sum(), 1):.1%}) |")

    with keep_printed("list_cuts", __file__, [dr4_path, fl16y_path]):
        print("| DR4 Signif_Avg | point sources | still in FL16Y | unassociated | of them in FL16Y | bll/fsrq/psr/msp "
              "| kept their class |")
        for low, high in zip(BINS[:-1], BINS[1:]):
            print(row(f"{low:g}-{high:g}", point & (significance >= low) & (significance < high)))
        print(row("Flags == 0", point & (flags == 0)))
        print(row("Flags != 0", point & (flags != 0)))


if __name__ == "__main__":
    main(*sys.argv[1:])
