"""The lists of a finished main job cut again (``gpal report FOLDER`` with list options): no training, no prediction."""

import shutil

import pandas as pd
import pytest

import gpal.files
from gpal.catalog_jobs.layout import CLASSIFICATIONS_CSV, REPORT_FILE, list_path
from gpal.catalog_jobs.report.recut import recut_lists
from gpal.catalog_jobs.visibility import declination_range
from gpal.cli import main
from gpal.runs.output_dir import recorded_identity


@pytest.fixture
def run(main_job_run, tmp_path):
    """A copy of the session's finished main job, to cut again."""
    return shutil.copytree(main_job_run, tmp_path / "run")


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".gpal-written"}


def _listed(folder):
    return {p.name: pd.read_csv(p) for p in sorted((folder / "lists").glob("candidates_*.csv"))}


def test_a_narrower_sky_keeps_only_its_rows_and_cutting_back_restores_every_file(run, main_job_run):
    before = _files(run)
    south, north = declination_range("Parkes")
    recut_lists(run, candidate_visible_from="Parkes")
    for name, rows in _listed(run).items():
        assert rows["DEC"].between(south, north).all(), name
    assert (run / CLASSIFICATIONS_CSV).read_bytes() == before[CLASSIFICATIONS_CSV]  # the run's rows and values
    after = _files(run)
    assert after[list_path("candidates_pulsar.csv")] != before[list_path("candidates_pulsar.csv")]
    assert b"visible from Parkes" in after[REPORT_FILE]
    assert recorded_identity(run)["candidate_visible_from"] == "Parkes"  # a rerun with the option reuses the folder
    # the figures are the run's, read and written back unchanged
    assert all(after[name] == data for name, data in before.items() if name.startswith("figures/"))

    recut_lists(run, candidate_visible_from=None)
    after = _files(run)
    # report.md names the folder it was written for: the session's run, which this is a copy of
    assert after.pop(REPORT_FILE) == before.pop(REPORT_FILE).replace(str(main_job_run).encode(), str(run).encode())
    assert after == before  # every list, table, keyword and record as the run wrote them


def test_a_plain_rebuild_after_a_recut_keeps_its_cuts(run):
    recut_lists(run, candidate_declination=[-30.0, 30.0], follow_up_significance=6.0)
    cut = _files(run)
    assert main(["report", str(run)]) == 0  # the keywords of the classifications carry the cuts
    assert {name: data for name, data in _files(run).items() if name.startswith("lists/")} == {
        name: data for name, data in cut.items() if name.startswith("lists/")}
    assert (pd.read_csv(run / list_path("most_informative.csv"))["Signif_Avg"] >= 6.0).all()


def test_the_order_is_a_list_option_the_header_and_report_state(run):
    """``gpal report FOLDER --order new_first``: the same rows, in the rule's order, which the header names."""
    from gpal.catalog_jobs.candidates import ORDERS, ranked

    before = pd.read_csv(run / list_path("candidates_pulsar.csv"))
    assert main(["report", str(run), "--order", "new_first"]) == 0
    after = pd.read_csv(run / list_path("candidates_pulsar.csv"))
    assert sorted(after["Source_Name"]) == sorted(before["Source_Name"])
    assert after["Source_Name"].tolist() == ranked(before.drop(columns="rank"), "pulsar", "new_first")["Source_Name"].tolist()
    twin = (run / list_path("candidates_pulsar.ecsv")).read_text()
    assert "LISTORD: new_first" in twin and ORDERS["new_first"][:40] in twin
    assert ORDERS["new_first"][:40] in (run / REPORT_FILE).read_text()
    assert recorded_identity(run)["order"] == "new_first"


def test_formats_asked_are_written_and_formats_dropped_are_removed(run):
    recut_lists(run, table_formats=["votable"])
    assert (run / "classifications.vot").is_file() and (run / list_path("candidates_pulsar.vot")).is_file()
    recut_lists(run, table_formats=[])
    assert not list(run.rglob("*.vot"))


def test_the_command_recuts_without_loading_a_model(run, capsys, monkeypatch):
    import gpal.catalog_jobs.model_folders as folders

    monkeypatch.setattr(folders, "loaded_estimator", lambda *a, **k: pytest.fail("a re-cut loaded the model"))
    assert main(["report", str(run), "--candidate-visible-from", "GBT", "--candidate-significance", "8"]) == 0
    assert f"report: {run / REPORT_FILE}" in capsys.readouterr().out
    for name, rows in _listed(run).items():
        assert (rows["Signif_Avg"] >= 8).all(), name
    assert main(["report", str(run), "--candidate-visible-from", "none"]) == 0  # the telescope's cut lifted
    assert "candidate_visible_from" not in recorded_identity(run)


@pytest.mark.parametrize("make, says", [
    (lambda run: (run / CLASSIFICATIONS_CSV).unlink(), "is not a finished gpal classify folder: classifications.csv missing"),
    (lambda run: shutil.rmtree(run / "model"), "is not a finished gpal classify folder: model/training.json missing"),
])
def test_a_folder_that_is_no_finished_run_is_named_with_what_it_lacks(run, capsys, make, says):
    make(run)
    assert main(["report", str(run), "--candidate-significance", "6"]) == 2
    err = capsys.readouterr().err
    assert str(run) in err and says in err


def test_an_unknown_telescope_gets_the_known_ones_and_the_way_to_give_another(run, capsys):
    before = _files(run)
    with pytest.raises(SystemExit) as done:  # refused while the command line is read, before the folder is
        main(["report", str(run), "--candidate-visible-from", "Arecibo"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "unknown telescope 'Arecibo'; known: FAST, GBT, Parkes, MeerKAT" in err
    assert "--candidate-declination=MIN,MAX" in err and "latitude" in err and "elevation" in err
    assert _files(run) == before


def test_an_interruption_while_writing_leaves_the_earlier_lists_intact(run, monkeypatch):
    before = _files(run)
    made = []
    real = gpal.files._temporary_beside

    def interrupted_at_the_tenth(path):
        if len(made) == 9:
            raise KeyboardInterrupt
        made.append(path)
        return real(path)

    monkeypatch.setattr(gpal.files, "_temporary_beside", interrupted_at_the_tenth)
    with pytest.raises(KeyboardInterrupt):
        recut_lists(run, candidate_visible_from="FAST")
    assert len(made) == 9
    assert _files(run) == before  # no file replaced, no temporary left behind


def test_a_list_length_keeps_each_lists_first_rows_and_says_so(run):
    before = _listed(run)
    assert main(["report", str(run), "--candidate-rows", "3"]) == 0
    after = _listed(run)
    assert after.keys() == before.keys()
    for name, rows in after.items():  # the first three in the list's own order, ranked as before
        pd.testing.assert_frame_equal(rows, before[name].head(3), check_dtype=False)
    assert any(len(rows) > 3 for rows in before.values())  # the length cut something
    twin = (run / list_path("candidates_pulsar.csv")).with_suffix(".ecsv").read_text()
    assert "CROWS" in twin and "the first 3 in the list's order" in (run / REPORT_FILE).read_text()
    assert recorded_identity(run)["candidate_rows"] == 3


@pytest.mark.parametrize("value, says", [("0", "candidate_rows must be"), ("-2", "candidate_rows must be"),
                                         ("2.5", "candidate_rows must be"), ("ten", "candidate_rows must be")])
def test_a_list_length_that_is_not_a_positive_integer_is_refused(run, capsys, value, says):
    before = _files(run)
    code = None
    try:
        code = main(["report", str(run), f"--candidate-rows={value}"])
    except SystemExit as exc:  # a value of the wrong form is refused by the parser
        code = exc.code
    assert code == 2
    assert says in capsys.readouterr().err
    assert _files(run) == before


def test_cutting_again_says_nothing_of_fits_cards(run):
    """The FITS twins get the keywords as the main job writes them (HIERARCH for a keyword over 8 characters, CONTINUE
    for a long value), without astropy's notes of either on the user's terminal."""
    import warnings

    from astropy.io.fits.verify import VerifyWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        recut_lists(run, candidate_visible_from="FAST")
    assert not [w for w in caught if issubclass(w.category, VerifyWarning)]
