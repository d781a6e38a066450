"""``gpal predict`` in bounded memory (issue 73): the steps whose memory grew with the catalog's rows take them in
chunks, and a chunked table is the unchunked one, value for value."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import gpal.catalog_jobs.prediction as prediction
import gpal.estimators.outliers as outliers
from gpal.catalog_jobs.prediction import predict_catalog, predict_catalog_blocks
from gpal.catalog_jobs.tables import write_probability_blocks, write_probability_table
from gpal.catalogs import DroppedRowsWarning, RepairedRowsWarning, load_catalog


def test_the_chunked_steps_give_the_table_of_one_chunk(main_job_run, small_catalog, monkeypatch):
    """The outlier score, the information column and what is known of each source, in chunks of 16 rows (the
    small catalog's 90 sources in six chunks) and in one chunk: the same numbers and words, bit for bit.  (Chunks
    whose size is no multiple of the SIMD lanes, 7 rows, moved two outlier scores in their last digit: the chunk
    sizes are multiples of 64.)"""
    def table(rows: int) -> pd.DataFrame:
        monkeypatch.setattr(outliers, "_SCORE_ROWS", rows)
        monkeypatch.setattr(prediction, "_SCORE_ROWS", rows)
        monkeypatch.setattr(prediction, "_KNOWN_ROWS", rows)
        return predict_catalog(main_job_run, small_catalog, ("unassociated", "bcu"), progress=False).frame

    whole, chunked = table(10**9), table(16)
    assert len(whole) > 3 * 16  # several chunks
    assert {"ood_score", "information", "known_reason", "ATNF_pulsars"} <= set(whole.columns)
    assert (whole["known_reason"] != "").any()  # the lookup found something to compare
    pd.testing.assert_frame_equal(chunked, whole, check_exact=True)


def test_blocks_of_rows_give_the_whole_tables_files(main_job_run, small_catalog, tmp_path):
    """``gpal predict``'s blocks of catalog rows (64 rows: the small catalog's 283 in five), each classified and
    written as it comes, give the files of the whole table written at once: the CSV byte for byte, its ECSV twin
    but for the time it was written; the dropped and repaired sources are said once, as for the whole table."""
    def said(make):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            make()
        return sorted(str(w.message) for w in caught if issubclass(w.category, (DroppedRowsWarning,
                                                                                RepairedRowsWarning)))

    whole = tmp_path / "whole.csv"
    words = said(lambda: write_probability_table(predict_catalog(main_job_run, small_catalog, ("all",),
                                                                 progress=False), whole))
    blocks = tmp_path / "blocks.csv"
    assert said(lambda: write_probability_blocks(predict_catalog_blocks(main_job_run, small_catalog, ("all",),
                                                                        progress=False, rows=64), blocks)) == words
    assert any("given the population's median error" in w for w in words)  # the repair is across blocks
    assert blocks.read_bytes() == whole.read_bytes()

    def undated(path):
        return re.sub(r"DATE: '?[0-9T:-]+'?", "", path.with_suffix(".ecsv").read_text())

    assert undated(blocks) == undated(whole)


def test_predict_catalog_classifies_in_blocks_as_in_one(main_job_run, small_catalog, tmp_path):
    """`predict_catalog` (``gpal classify``'s classification step) taking 64 sources at a time (the small catalog's
    283 in five blocks) writes the bytes of one block of them all; ``rows`` is checked."""
    def written(rows: int):
        path = tmp_path / f"{rows}.csv"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            write_probability_table(predict_catalog(main_job_run, small_catalog, ("all",), progress=False,
                                                    rows=rows), path)
        return path.read_bytes(), re.sub(r"DATE: '?[0-9T:-]+'?", "", path.with_suffix(".ecsv").read_text())

    assert written(64) == written(10**6)
    with pytest.raises(ValueError, match="rows must be an integer >= 1; got 0"):
        predict_catalog(main_job_run, small_catalog, ("all",), progress=False, rows=0)


def test_a_known_index_made_beforehand_gives_the_same_table(main_job_run, small_catalog):
    """The main job makes the known-sources index beside its fit and hands it over: the same table; an index of
    another catalog is refused."""
    cat = load_catalog(small_catalog)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = predict_catalog(main_job_run, cat, ("all",), progress=False).frame
        given = predict_catalog(main_job_run, cat, ("all",), progress=False, known=prediction.known_index(cat)).frame
        pd.testing.assert_frame_equal(alone, given)
        with pytest.raises(ValueError, match=r"made for another catalog \(FL16Y, 7224 rows\) than the one classified"):
            predict_catalog(main_job_run, cat, ("all",), progress=False,
                            known=prediction.known_index(load_catalog("FL16Y")))


def test_pool_blocks_are_the_pool_bit_for_bit(small_catalog):
    """Features built 16 catalog rows at a time equal the pool's: a missing error takes the median of every row of
    the catalog, not of its block (which differs: the first block alone would give another)."""
    catalog = load_catalog(small_catalog)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pool = catalog.pool(["unassociated", "bcu"], features="release")
        blocks = list(catalog.pool_blocks(["unassociated", "bcu"], features="release", rows=16))
    assert len(blocks) > 3
    np.testing.assert_array_equal(np.vstack([b.X for b in blocks]), pool.X)
    np.testing.assert_array_equal(np.vstack([b.X_var for b in blocks]), pool.X_var)
    assert np.concatenate([b.ids for b in blocks]).tolist() == pool.ids.tolist()
    for key, values in pool.aux.items():
        np.testing.assert_array_equal(np.concatenate([b.aux[key] for b in blocks]), values)
    assert blocks[-1].meta["blocks"] == {"n_samples": pool.n_samples, "dropped": pool.meta["dropped"],
                                         "repaired": pool.meta["repaired"]}
    feature = next(f for f in catalog.features("release")
                   if any(m is not None for m in f.population(catalog._numbers).values()))
    whole = feature.population(catalog._numbers)
    alone = [feature.population(lambda name, rows=slice(start, start + 16): catalog._numbers(name, rows))
             for start in range(0, catalog.n_rows, 16)]
    assert any(any(m is not None for m in a.values()) and a != whole for a in alone)



def _padded(small_catalog, copies: int, path):
    """The small catalog's first 256 rows (90 unassociated and bcu sources), then ``copies`` renamed copies of them
    as BL Lacs without a counterpart position: rows that a selection of the unassociated and bcu sources reads but
    does not classify, and that no ellipse finds."""
    from astropy.io import fits
    from astropy.table import Table, vstack

    with fits.open(small_catalog) as hdul:
        table = Table.read(hdul[1])[:256]
        keys = {key: hdul[1].header[key] for key in ("CDS-NAME", "VERSION", "DataRelease") if key in hdul[1].header}
    names = np.char.strip(np.asarray(table["Source_Name"]).astype(str))
    parts = [table]
    for k in range(1, copies + 1):
        part = table.copy()
        part["Source_Name"] = np.char.add(names, f" r{k}")
        part["CLASS1"] = "bll"
        part["RA_Counterpart"] = part["DEC_Counterpart"] = np.nan
        parts.append(part)
    hdu = fits.table_to_hdu(vstack(parts))
    hdu.name = "LAT_Point_Source_Catalog"
    hdu.header.update(keys)
    primary = fits.PrimaryHDU()
    primary.header.update(keys)
    fits.HDUList([primary, hdu]).writeto(path)
    return path


def test_a_blocks_memory_does_not_grow_with_the_catalogs_rows(main_job_run, small_catalog, tmp_path):
    """The Python memory a block of 64 rows takes beyond what the prediction holds (tracemalloc's peak over a block,
    the median over the blocks after the first) is the same in a catalog of 256 rows and in one of 4096 whose other
    rows are not classified: a block's work reads its own rows, not every row of the catalog (0.70 MB both; at
    96af442, whose lookups built a name dict and copied text columns over every row once a block, 3.1 and 4.0 MB).
    The earlier shipped releases are linked as in a run, outside the blocks, and the ATNF catalogue is read once."""
    import statistics
    import tracemalloc

    from gpal.catalogs.psrcat import read_psrcat

    pulsars = read_psrcat()

    def per_block(copies: int) -> int:
        catalog = load_catalog(_padded(small_catalog, copies, tmp_path / f"{copies}.fits"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            blocks = predict_catalog_blocks(main_job_run, catalog, ("unassociated", "bcu"), progress=False,
                                            information=False, pulsars=pulsars, rows=64)
            next(blocks)  # the model, the lookups read once, the first block
            excursions = []
            tracemalloc.start()
            try:
                for _ in blocks:
                    held, peak = tracemalloc.get_traced_memory()
                    excursions.append(peak - held)
                    tracemalloc.reset_peak()
            finally:
                tracemalloc.stop()
        assert len(excursions) == 3
        return statistics.median(excursions)

    small, large = per_block(0), per_block(15)
    assert large < 1.1 * small, f"a block took {small} bytes in 256 catalog rows, {large} in 4096"


def test_the_information_column_goes_through_the_executor_in_chunks(main_job_run, small_catalog):
    """`gpal predict --scheduler` spreads the information score as it spreads the probabilities: tasks of at most
    ``chunk_size`` rows through the executor given, and the column is the one scored in this process."""
    from gpal.runs.executors import InProcessExecutor

    class Counting(InProcessExecutor):
        def __init__(self):
            super().__init__()
            self.calls = []

        def map(self, fn, tasks, **options):
            self.calls.append((fn.__name__, [len(task[1]) for task in tasks]))
            return super().map(fn, tasks, **options)

    whole = predict_catalog(main_job_run, small_catalog, ("unassociated", "bcu"), progress=False).frame
    executor = Counting()
    chunked = predict_catalog(main_job_run, small_catalog, ("unassociated", "bcu"), progress=False, chunk_size=64,
                              executor=executor).frame
    scored = [sizes for name, sizes in executor.calls if name == "_score_chunk"]
    assert scored and max(scored[0]) <= 64 and sum(scored[0]) == len(whole) > 64
    pd.testing.assert_frame_equal(chunked, whole, check_exact=True)
