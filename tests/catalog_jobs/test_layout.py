"""The main job's folder as a person sees it (`gpal.catalog_jobs.layout`), and a folder of gpal 0.3's flat layout
read by the verbs that read folders, or refused by the one that would write into it."""

import hashlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpal.catalog_jobs.layout import (
    CLASSIFICATIONS_CSV, FLAT_LAYOUT, LISTS_DIR, METRICS_FILE, OOD_FILE, TRAINED_DIR, folder_layout,
    is_classify_folder, located,
)
from gpal.catalog_jobs.model_folders import load_trained
from gpal.catalog_jobs.prediction import DEFAULT_SELECT, predict_catalog
from gpal.catalog_jobs.tables import (
    EXTRA_FORMATS, ClassifiedSources, classified_table_files, read_probability_table,
)
from gpal.cli import main
from gpal.files import file_sha256
from gpal.runs.output_dir import OutputInUse, _signed
from conftest import TINY_ESTIMATOR

#: A folder gpal 0.3.0 wrote (its README says how), not one rearranged to look like it.
WRITTEN_BY_0_3 = Path(__file__).resolve().parents[1] / "fixtures" / "classify_v0_3" / "run"

#: Where gpal 0.3.0 kept what this gpal keeps in a folder (``ls`` of a 0.3.0 run folder): written out here, apart
#: from the layout module, so the test does not read the rule it checks.
GPAL_0_3_MOVES = {"model/estimator": "model", "model/error_blind": "model_error_blind",
                  "model/training.json": "training.json", "records/metrics.json": "metrics.json",
                  "records/ood.json": "ood.json"}


def _as_gpal_0_3(folder):
    """Rearrange a main-job folder of this gpal into the flat one gpal 0.3.0 wrote: its training record naming the
    estimator's folder ``model`` (with that field's checksum), its run record as 0.3.0 signed it (no layout in the
    identity)."""
    (folder / "records" / "timings.json").unlink()  # gpal 0.3.0 recorded no timings
    for new, old in GPAL_0_3_MOVES.items():
        (folder / new).rename(folder / (old + ".moving"))
    for entry in (folder / "lists").iterdir():
        entry.rename(folder / entry.name)
    for empty in ("lists", "records", "model"):
        (folder / empty).rmdir()
    for old in GPAL_0_3_MOVES.values():
        (folder / (old + ".moving")).rename(folder / old)
    training = json.loads((folder / "training.json").read_text())
    training["model"] = "model"
    training["field_sha256"]["model"] = hashlib.sha256(json.dumps("model").encode()).hexdigest()
    (folder / "training.json").write_text(json.dumps(training))
    record = json.loads((folder / "run.json").read_text())
    identity = {k: v for k, v in record["identity"].items() if k != "layout"}
    (folder / "run.json").write_text(json.dumps({**_signed(identity), "gpal_version": "0.3.0"}))


@pytest.fixture
def flat_run(main_job_run, tmp_path):
    folder = tmp_path / "flat"
    shutil.copytree(main_job_run, folder)
    _as_gpal_0_3(folder)
    return folder


def test_the_main_jobs_folder_shows_at_most_twelve_entries_at_its_top_with_every_format_asked(main_job_run):
    """What a person sees at the folder's top (``ls``: gpal's hidden inventory ``.gpal-written`` aside), with the
    classifications' optional formats (``--table-formats mrt,votable``) beside the default run's files."""
    table = read_probability_table(main_job_run / CLASSIFICATIONS_CSV)
    every_format = ClassifiedSources(table.frame, {**table.meta, "FORMATS": ",".join(EXTRA_FORMATS)})
    optional = classified_table_files(every_format, CLASSIFICATIONS_CSV, list(EXTRA_FORMATS))
    top = sorted({p.name for p in main_job_run.iterdir() if not p.name.startswith(".")}
                 | {name for name in optional if "/" not in name})
    assert any(name.endswith(".vot") for name in top) and any(name.endswith(".mrt") for name in top)
    assert len(top) <= 12, top
    assert not [name for name in top if name.startswith("candidates_")]  # every list in lists/


def test_a_flat_folder_is_recognised_and_each_path_found_where_gpal_0_3_kept_it(flat_run):
    assert folder_layout(flat_run) is FLAT_LAYOUT and is_classify_folder(flat_run)
    assert located(flat_run, METRICS_FILE) == flat_run / "metrics.json"
    assert located(flat_run, OOD_FILE) == flat_run / "ood.json"
    assert located(flat_run, f"{LISTS_DIR}/candidates_bll.csv") == flat_run / "candidates_bll.csv"
    assert located(flat_run, TRAINED_DIR) == flat_run
    assert sum(1 for _ in flat_run.iterdir()) > 12  # what the layout was changed for


def test_a_folder_of_a_later_layout_is_refused_with_both_layouts_named(main_job_run, tmp_path):
    folder = tmp_path / "later"
    shutil.copytree(main_job_run, folder)
    record = json.loads((folder / "run.json").read_text())
    written = record["identity"]["layout"] + 1
    (folder / "run.json").write_text(json.dumps({**_signed({**record["identity"], "layout": written}),
                                                 "gpal_version": "9.9.9"}))
    with pytest.raises(ValueError, match=rf"gpal 9\.9\.9 in its layout {written}; this gpal reads layouts up to "
                                         rf"{written - 1}"):
        folder_layout(folder)
    assert main(["report", str(folder)]) != 0


def test_a_run_record_not_as_gpal_signed_it_is_said_and_the_folder_read_from_its_files(main_job_run, tmp_path, capsys):
    """An edited ``run.json`` cannot say which layout wrote the folder (a later gpal's would go unrecognised): the
    folder is read from its files, saying so on the terminal."""
    from gpal.catalog_jobs.layout import UnsignedRunRecordWarning

    folder = tmp_path / "edited"
    shutil.copytree(main_job_run, folder)
    record = json.loads((folder / "run.json").read_text())
    record["identity"]["layout"] = 99  # a later layout, unsigned: not believed, and said
    (folder / "run.json").write_text(json.dumps(record))
    with pytest.warns(UnsignedRunRecordWarning, match=r"run\.json is not a run record as gpal signed it"):
        assert folder_layout(folder) is not FLAT_LAYOUT
    assert main(["report", str(folder)]) == 0
    assert capsys.readouterr().err.count("is not a run record as gpal signed it") == 1  # however many readers ask


def test_predict_reads_a_flat_folder_of_gpal_0_3_as_it_reads_this_gpals(main_job_run, flat_run, small_catalog):
    """The model, its record and the saved "none of these" score found in the flat folder: the same table."""
    trained = load_trained(flat_run)
    assert trained.record_file == flat_run / "training.json" and trained.model_dir == flat_run / "model"
    now = predict_catalog(main_job_run, str(small_catalog), DEFAULT_SELECT, progress=False, information=False)
    flat = predict_catalog(flat_run, str(small_catalog), DEFAULT_SELECT, progress=False, information=False)
    assert flat.frame["ood_score"].notna().all()  # ood.json read at the top
    pd.testing.assert_frame_equal(flat.frame, now.frame)


def test_report_rebuilds_a_flat_folder_in_its_own_layout(main_job_run, flat_run):
    """``gpal report`` on a folder of gpal 0.3 rewrites its files where they are and links them there: no second
    copy of a list in lists/, no metrics.json in records/."""
    before = sorted(p.relative_to(flat_run).as_posix() for p in flat_run.rglob("*") if p.name != ".gpal-written")
    assert main(["report", str(flat_run)]) == 0
    after = sorted(p.relative_to(flat_run).as_posix() for p in flat_run.rglob("*") if p.name != ".gpal-written")
    assert after == before
    assert (flat_run / "metrics.json").read_bytes() == (main_job_run / METRICS_FILE).read_bytes()
    for name in ("candidates_bll.csv", "most_informative.reg"):
        assert (flat_run / name).read_bytes() == (main_job_run / LISTS_DIR / name).read_bytes()
    text = (flat_run / "report.md").read_text()
    for link in ("](candidates_bll.csv)", "](most_informative.reg)", "](metrics.json)", "](training.json)"):
        assert link in text, link
    assert "](lists/" not in text and "](records/" not in text
    assert "lists/" not in text and "(candidates_bll.csv," in text  # the tables' captions name the lists there too


def test_a_folder_gpal_0_3_wrote_is_reported_in_its_layout_and_predicts_what_it_classified(tmp_path, small_catalog):
    """``gpal report`` rebuilds the report and figures of a folder gpal 0.3.0 wrote where that folder keeps its
    files, and ``gpal predict`` with its model gives, for the same catalog, the probabilities 0.3.0 wrote."""
    folder = tmp_path / "run"
    shutil.copytree(WRITTEN_BY_0_3, folder)
    run = json.loads((folder / "run.json").read_text())
    assert run["gpal_version"] == "0.3.0" and run["identity"]["catalog"]["sha256"] == file_sha256(small_catalog)
    assert folder_layout(folder) is FLAT_LAYOUT
    written = read_probability_table(folder / CLASSIFICATIONS_CSV).frame
    assert main(["report", str(folder)]) == 0
    assert (folder / "figures" / "reliability.png").is_file() and not (folder / LISTS_DIR).exists()
    assert "](candidates_bll.csv)" in (folder / "report.md").read_text()
    now = predict_catalog(folder, str(small_catalog), DEFAULT_SELECT, progress=False, information=False).frame
    now = pd.read_csv(io.StringIO(now.to_csv(index=False)))  # as gpal writes it: the decimals 0.3.0 wrote
    both = written.merge(now, on="Source_Name", suffixes=("_0_3", ""))
    assert len(both) == len(written) == len(now) > 0
    for column in ("p_bll", "p_fsrq", "p_other", "p_pulsar"):
        np.testing.assert_array_equal(both[f"{column}_0_3"], both[column])


def test_classify_refuses_to_write_into_a_flat_folder_naming_the_gpal_that_wrote_it(flat_run, small_catalog, capsys):
    options = [f"--{name.replace('_', '-')}={value}" for name, value in TINY_ESTIMATOR.items()]
    before = sorted(p.name for p in flat_run.iterdir())
    assert main(["classify", "--catalog", str(small_catalog), *options, "--no-progress", "--out", str(flat_run)]) == 2
    err = capsys.readouterr().err
    assert "gpal 0.3.0 wrote it in the flat layout of gpal <= 0.3" in err and "--force" in err
    assert sorted(p.name for p in flat_run.iterdir()) == before


def test_refusing_a_flat_folder_leaves_other_folders_alone(flat_run, tmp_path):
    from gpal.catalog_jobs.layout import refuse_flat

    with pytest.raises(OutputInUse, match="gpal 0.3.0"):
        refuse_flat(flat_run, force=False)
    refuse_flat(flat_run, force=True)  # --force replaces it
    refuse_flat(tmp_path / "new", force=False)  # nothing there yet
