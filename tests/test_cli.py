"""The gpal command line, through its entry point and in-process."""

import subprocess
import sys

from gpal.cli import main


def test_catalog_summary_prints_release_counts_and_preset(capsys):
    assert main(["catalog", "summary", "--catalog", "4FGL"]) == 0
    out = capsys.readouterr().out
    assert "4FGL (CDS-NAME 4FGL, version v20, data release 1)" in out
    assert "bll 1131" in out and "unassociated 1337" in out
    for feature in ["Flux1000", "log(Signif_Avg)", "log(LP_SigCurv)", "log(Pivot_Energy)", "LP_Index", "LP_beta"]:
        assert feature in out


def test_unknown_catalog_is_a_clear_error_with_exit_code_2(capsys):
    assert main(["catalog", "summary", "--catalog", "5FGL"]) == 2
    err = capsys.readouterr().err
    assert "unknown catalog release '5FGL'" in err and "4FGL-DR4" in err


def test_entry_point_runs_as_a_program():
    done = subprocess.run([sys.executable, "-m", "gpal.cli", "catalog", "summary"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "4FGL-DR4" in done.stdout and "msp 179" in done.stdout


def test_help_explains_options():
    done = subprocess.run([sys.executable, "-m", "gpal.cli", "catalog", "summary", "--help"], capture_output=True, text=True, timeout=120)
    assert "--catalog" in done.stdout and "gll_psc_v*.fit" in done.stdout
