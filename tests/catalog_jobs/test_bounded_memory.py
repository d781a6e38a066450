"""``gpal predict`` in bounded memory (issue 73): the steps whose memory grew with the catalog's rows take them in
chunks, and a chunked table is the unchunked one, value for value."""

import pandas as pd

import gpal.catalog_jobs.prediction as prediction
import gpal.estimators.outliers as outliers
from gpal.catalog_jobs.prediction import predict_catalog


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
