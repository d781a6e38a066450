"""gpal.evaluation.reports tables and files, and gpal.evaluation.plots figures (written, laid out, atomic)."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from gpal.evaluation.calibration import class_reliability, top_label_reliability
from gpal.evaluation.metrics import confusion_matrix, mean_se
from gpal.evaluation.intervals import binomial_interval
from gpal.evaluation.plots import (
    SPARSE_BIN,
    plot_confusion_matrix,
    plot_confusion_summary,
    plot_learning_curves,
    plot_reliability,
    plot_sky_classes,
    plot_sky_values,
    save_figure,
)
from gpal.evaluation.reports import (
    column_normalize,
    confusion_matrix_summary,
    confusion_table,
    latex_table,
    markdown_table,
    metric_summary,
    metric_table,
    prediction_metrics,
    row_normalize,
    write_report,
    write_table,
)

CLASSES = ["bll", "fsrq", "psr"]


def random_matrices(k=6, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 20, size=(3, 3)) for _ in range(k)]


def learning_results(seed=0):
    rng = np.random.default_rng(seed)
    rows = [
        {"method": m, "strategy": s, "repetition": r, "n_labelled": n, "error": 0.4 / np.sqrt(n) + 0.02 * rng.random()}
        for m in ("MGP", "NIMGP")
        for s in ("entropy", "random")
        for r in range(4)
        for n in (10, 20, 30)
    ]
    return pd.DataFrame(rows)


def no_temp_files(folder):
    return not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


# ---------------------------------------------------------------- confusion
def test_confusion_summary_matches_numpy_on_stacked_matrices():
    mats = random_matrices()
    stack = np.stack(mats).astype(float)
    mean, std = confusion_matrix_summary(mats)
    np.testing.assert_allclose(mean, stack.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(std, stack.std(axis=0, ddof=1), rtol=1e-12)
    _, se = confusion_matrix_summary(mats, spread="se")
    np.testing.assert_allclose(se, stack.std(axis=0, ddof=1) / np.sqrt(len(mats)), rtol=1e-12)
    normed = stack / stack.sum(axis=2, keepdims=True)
    mean_n, std_n = confusion_matrix_summary(mats, normalize=True)
    np.testing.assert_allclose(mean_n, normed.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(std_n, normed.std(axis=0, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(mean_n.sum(axis=1), 1.0)


def test_row_normalised_summary_skips_splits_where_a_class_was_never_predicted():
    mats = random_matrices(4)
    mats[0][2] = 0  # split 0 never predicts psr
    mean, std = confusion_matrix_summary(mats, normalize=True)
    rows = np.stack([m[2] / m[2].sum() for m in mats[1:]])
    np.testing.assert_allclose(mean[2], rows.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(std[2], rows.std(axis=0, ddof=1), rtol=1e-12)
    assert np.isnan(row_normalize(mats[0])[2]).all()
    mean, std = confusion_matrix_summary([mats[0]], normalize=True)
    assert list(confusion_table({"MGP": (mean, std)}, CLASSES).iloc[2, 2:]) == ["n/a"] * 3


def test_single_matrix_has_nan_spread_and_confusion_from_metrics_works():
    y = np.array([0, 1, 2, 2, 1])
    pred = np.array([0, 2, 2, 2, 1])
    mean, std = confusion_matrix_summary([confusion_matrix(y, pred, 3)])
    assert mean[2, 1] == 1 and mean[2, 2] == 2  # rows predicted, columns true
    assert np.isnan(std).all()


def test_confusion_table_has_table_10_layout():
    mean = np.array([[17.66, 1.31, 0.01], [1.48, 15.16, 0.36], [0.0, 0.29, 9.73]])
    spread = np.array([[0.31, 0.14, 0.01], [0.13, 0.29, 0.056], [0.0, 0.054, 0.28]])
    table = confusion_table({"MGP": (mean, spread), "NIMGP": (mean + 1, spread)}, CLASSES)
    assert list(table.columns) == ["predicted", "method", "bll (true)", "fsrq (true)", "psr (true)"]
    assert list(table["predicted"]) == ["bll (pred.)"] * 2 + ["fsrq (pred.)"] * 2 + ["psr (pred.)"] * 2
    assert table.loc[0, "bll (true)"] == "17.66 ± 0.31"
    assert table.loc[1, "bll (true)"] == "18.66 ± 0.31"
    assert table.loc[5, "psr (true)"] == "10.73 ± 0.28"


def test_confusion_bad_inputs_raise():
    with pytest.raises(ValueError, match="at least one confusion matrix"):
        confusion_matrix_summary([])
    with pytest.raises(ValueError, match="square"):
        confusion_matrix_summary([np.zeros((3, 3)), np.zeros((2, 2))])
    with pytest.raises(ValueError, match="spread must be"):
        confusion_matrix_summary(random_matrices(), spread="var")
    with pytest.raises(ValueError, match="non-negative"):
        confusion_matrix_summary([-np.ones((2, 2))])
    with pytest.raises(ValueError, match="must be \\(3, 3\\)"):
        confusion_table({"MGP": (np.zeros((2, 2)), np.zeros((2, 2)))}, CLASSES)


# ------------------------------------------------------------------- metrics
def test_prediction_metrics_and_metric_summary():
    rng = np.random.default_rng(3)
    rows = []
    for method in ("MGP", "NIMGP"):
        for rep in range(5):
            p = rng.dirichlet(np.ones(3), size=60)
            rows.append({"method": method, "repetition": rep, **prediction_metrics(rng.integers(0, 3, 60), p, n_bins=5)})
    results = pd.DataFrame(rows)
    assert {"nll", "error", "brier", "ece", "mce", "classwise_ece"} <= set(results.columns)
    assert (results["mce"] >= results["ece"]).all()
    summary = metric_summary(results, ["nll", "ece"])
    mine = results[results["method"] == "NIMGP"]["ece"].to_numpy()
    assert summary.loc["NIMGP", "ece_mean"] == pytest.approx(mine.mean(), rel=1e-12)
    assert summary.loc["NIMGP", "ece_se"] == pytest.approx(mine.std(ddof=1) / np.sqrt(5), rel=1e-12)
    assert summary.loc["MGP", "n"] == 5
    table = metric_table(summary, ["nll", "ece"])
    assert list(table.columns) == ["method", "nll", "ece"]
    m, se = mean_se(mine)
    assert table.loc[1, "ece"] == f"{m:.3f} ± {se:.3f}"
    with pytest.raises(ValueError, match="lack column"):
        metric_summary(results, ["brier_score"])
    with pytest.raises(ValueError, match="lacks column"):
        metric_table(summary, ["brier"])


# -------------------------------------------------------------------- tables
def test_tables_round_trip(tmp_path):
    results = pd.DataFrame(
        {"method": ["MGP"] * 3 + ["NIMGP_NN"] * 3, "nll": [0.31, 0.35, 0.29, 0.25, 0.27, 0.26], "error": [0.1, 0.12, 0.09, 0.1, 0.1, 0.11]}
    )
    summary = metric_summary(results, ["nll", "error"])
    table = metric_table(summary, ["nll", "error"])
    paths = write_table(tmp_path / "metrics", table, data=summary, caption="Test NLL & error")
    assert set(paths) == {"csv", "md", "tex"} and all(p.exists() for p in paths.values())
    back = pd.read_csv(paths["csv"], index_col="method")
    pd.testing.assert_frame_equal(back, summary, check_exact=False, rtol=1e-14)
    md = paths["md"].read_text()
    assert md.splitlines()[0] == "| method | nll | error |"
    assert md.splitlines()[1] == "|---|---|---|"
    assert "| NIMGP_NN | 0.260 ± 0.006 |" in md
    tex = paths["tex"].read_text()
    assert r"\begin{tabular}{lll}" in tex and r"\end{tabular}" in tex
    assert r"NIMGP\_NN & 0.260 $\pm$ 0.006" in tex
    assert r"\caption{Test NLL \& error}" in tex
    assert no_temp_files(tmp_path)


def test_markdown_and_latex_escape_and_align_numbers():
    df = pd.DataFrame({"name": ["a|b", "50%"], "n": [1, 2]})
    md = markdown_table(df)
    assert "a\\|b" in md and md.splitlines()[1] == "|---|---:|"
    tex = latex_table(df)
    assert r"\begin{tabular}{lr}" in tex and r"50\%" in tex and r"\begin{table}" not in tex


def test_write_table_wants_a_path_without_suffix(tmp_path):
    with pytest.raises(ValueError, match="without a suffix"):
        write_table(tmp_path / "t.csv", pd.DataFrame({"a": [1]}))


# ------------------------------------------------------------------- figures
def all_figures():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=300)
    y = rng.integers(0, 3, size=300)
    mean, std = confusion_matrix_summary(random_matrices())
    mean_n, std_n = confusion_matrix_summary(random_matrices(), normalize=True)
    l, b = rng.uniform(0, 360, 200), rng.uniform(-90, 90, 200)
    return {
        "confusion": plot_confusion_matrix(mean, CLASSES, std),
        "confusion_normalised": plot_confusion_matrix(mean_n, CLASSES, std_n, normalized=True),
        "reliability": plot_reliability(top_label_reliability(y, p, 10)),
        "reliability_classes": plot_reliability({c: class_reliability(y, p, k, 10, "quantile") for k, c in enumerate(CLASSES)}),
        "learning": plot_learning_curves(learning_results()),
        "sky_classes": plot_sky_classes(l, b, rng.integers(0, 3, 200), CLASSES, projection="mollweide"),
        "sky_entropy": plot_sky_values(l, b, rng.random(200), vmax=np.log(3)),
    }


def test_figures_are_written_as_png_and_pdf(tmp_path):
    figures = all_figures()
    assert all(isinstance(f, Figure) for f in figures.values())
    for name, fig in figures.items():
        paths = save_figure(fig, tmp_path / name, dpi=60)
        assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and paths["png"].stat().st_size > 1000
        assert paths["pdf"].read_bytes()[:5] == b"%PDF-" and paths["pdf"].stat().st_size > 1000
    assert no_temp_files(tmp_path)
    report = write_report(
        tmp_path,
        "Example",
        figures={"Confusion": {"png": tmp_path / "confusion.png", "pdf": tmp_path / "confusion.pdf"}},
        tables={"Metrics": write_table(tmp_path / "t", pd.DataFrame({"method": ["MGP"], "nll": ["0.3 ± 0.1"]}))},
        text="Stand-in model.",
    )
    text = report.read_text()
    assert text.startswith("# Example") and "Stand-in model." in text
    assert "![Confusion](confusion.png)" in text and "[PDF](confusion.pdf)" in text
    assert "| MGP | 0.3 ± 0.1 |" in text and "[CSV](t.csv)" in text and "[TEX](t.tex)" in text


def test_save_figure_writes_nothing_if_one_format_fails(tmp_path, monkeypatch):
    fig = plot_reliability(top_label_reliability(np.array([0, 1]), np.array([[0.6, 0.4], [0.3, 0.7]]), 2))
    real = fig.savefig

    def failing(path, format, **kw):
        if format == "pdf":
            raise OSError("disk full")
        real(path, format=format, **kw)

    monkeypatch.setattr(fig, "savefig", failing)
    with pytest.raises(OSError, match="disk full"):
        save_figure(fig, tmp_path / "fig")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="without a suffix"):
        save_figure(fig, tmp_path / "fig.png")


def test_save_figure_lays_the_figure_out_once_for_all_formats(tmp_path, monkeypatch):
    """The layout computed while saving the PNG places the PDF too; the figure keeps its layout engine."""
    fig = plot_reliability(top_label_reliability(np.array([0, 1]), np.array([[0.6, 0.4], [0.3, 0.7]]), 2))
    engine = fig.get_layout_engine()
    runs, saves = [], []
    monkeypatch.setattr(type(engine), "execute", lambda self, f, real=type(engine).execute: runs.append(len(saves)) or real(self, f))
    real = fig.savefig
    monkeypatch.setattr(fig, "savefig", lambda path, format, **kw: saves.append(format) or real(path, format=format, **kw))
    save_figure(fig, tmp_path / "fig")
    assert saves == ["png", "pdf"] and runs and set(runs) == {1}  # every layout pass inside the PNG's save
    placed = [ax.get_position().bounds for ax in fig.axes]
    assert fig.get_layout_engine() is engine
    fig.savefig(tmp_path / "again.pdf", format="pdf")
    np.testing.assert_allclose([ax.get_position().bounds for ax in fig.axes], placed, atol=0.01)  # the PDF's own layout


def scatter_display_x(fig):
    ax = fig.axes[0]
    points = np.concatenate([c.get_offsets() for c in ax.collections])
    centre = ax.transData.transform([(0.0, 0.0)])[0, 0]
    return ax.transData.transform(points)[:, 0] - centre


@pytest.mark.parametrize("projection", ["aitoff", "mollweide"])
def test_sky_map_has_longitude_increasing_to_the_left(projection):
    # One source per class so the scatter order follows the input order.
    fig = plot_sky_classes(np.array([90.0, 270.0, 0.0]), np.zeros(3), np.array([0, 1, 2]), CLASSES, projection)
    x = scatter_display_x(fig)
    assert x[0] < -10  # l = +90 deg: left of centre
    assert x[1] > 10  # l = 270 deg = -90 deg: right of centre
    assert abs(x[2]) < 1e-6  # l = 0 at the centre
    assert x[0] == pytest.approx(-x[1])
    fig = plot_sky_values(np.array([1.0, 359.0]), np.zeros(2), np.array([0.0, 1.0]))
    x = scatter_display_x(fig)  # drawn in increasing value order
    assert x[0] < 0 < x[1] and abs(x[0]) < 0.1 * abs(scatter_display_x(plot_sky_values(np.array([179.0]), np.zeros(1), np.zeros(1)))[0])


@pytest.mark.parametrize("kind", ["classes", "entropy"])
def test_a_sky_maps_long_title_lies_inside_the_figure(kind):
    """The main job's titles name the counts and the selection; the entropy map's ran past the right edge."""
    drawn = "3615 of the 3621 classified unassociated + bcu sources (6 extended left out)"
    l, b = np.array([10.0, 200.0, 300.0]), np.array([5.0, -40.0, 60.0])
    if kind == "classes":
        fig = plot_sky_classes(l, b, np.array([0, 1, 2]), CLASSES, title=f"predicted class of {drawn}")
    else:
        fig = plot_sky_values(l, b, np.array([0.1, 0.5, 0.9]), title=f"predictive entropy (nats) of {drawn}")
    fig.canvas.draw()
    title = fig.axes[0].title
    extent = title.get_window_extent(fig.canvas.get_renderer())
    assert fig.bbox.x0 <= extent.x0 and extent.x1 <= fig.bbox.x1 and extent.y1 <= fig.bbox.y1, (extent, fig.bbox)
    assert " ".join(title.get_text().split()).endswith(drawn)  # wrapped, not cut


def test_sky_maps_label_longitude_0_to_360_off_the_plane_and_draw_high_entropy_last():
    fig = plot_sky_values(np.array([10.0, 20.0, 30.0]), np.zeros(3), np.array([0.9, 0.1, 0.5]))
    ax = fig.axes[0]
    labels = {t.get_text(): t.get_position() for t in ax.texts}
    assert set(labels) == {"0°", "60°", "120°", "240°", "300°"}  # no negative longitudes
    assert all(y < np.radians(-10) for _, y in labels.values())  # below the plane, not on it
    assert not any(t.get_text() for t in ax.get_xticklabels())
    values = ax.collections[0].get_array()
    np.testing.assert_array_equal(values, [0.1, 0.5, 0.9])  # the most uncertain drawn last, on top


def test_reliability_shows_binomial_intervals_counts_and_hollow_sparse_bins():
    rng = np.random.default_rng(0)
    confidence = np.r_[np.full(400, 0.95), np.full(2, 0.45)]
    correct = np.r_[rng.random(400) < 0.95, [False, False]]
    y = np.where(correct, 0, 1)
    proba = np.column_stack([confidence, 1 - confidence])
    bins = top_label_reliability(y, proba, n_bins=10)
    fig = plot_reliability(bins)
    top = fig.axes[0]
    bars = [c for c in top.collections if c.get_segments()]
    segments = np.concatenate([c.get_segments() for c in bars])
    filled = bins.counts > 0
    k = np.round(bins.accuracy[filled] * bins.counts[filled])
    low, high = binomial_interval(k, bins.counts[filled])
    np.testing.assert_allclose(sorted(s[:, 1].min() for s in segments), sorted(low), atol=1e-12)
    np.testing.assert_allclose(sorted(s[:, 1].max() for s in segments), sorted(high), atol=1e-12)
    assert high[np.argmin(bins.counts[filled])] - low[np.argmin(bins.counts[filled])] > 0.5  # 2 sources: wide
    texts = {t.get_text() for t in top.texts}
    assert {str(n) for n in bins.counts[filled]} <= texts
    hollow = [line for line in top.lines if line.get_markerfacecolor() == "white" and len(line.get_xdata())]
    assert len(hollow) == 1 and len(hollow[0].get_xdata()) == int((bins.counts[filled] < SPARSE_BIN).sum()) == 1


def test_confusion_summary_shows_counts_completeness_and_purity():
    counts = np.array([[280, 32, 0], [17, 130, 1], [1, 2, 63]])
    fig = plot_confusion_summary(counts, CLASSES)
    heat = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in heat] == ["counts", "completeness (columns sum to 1)", "purity (rows sum to 1)"]
    np.testing.assert_array_equal(heat[0].images[0].get_array(), counts)
    completeness = heat[1].images[0].get_array()
    np.testing.assert_allclose(completeness.sum(axis=0), 1.0)
    np.testing.assert_allclose(completeness[2, 2], 63 / 64)
    np.testing.assert_allclose(heat[2].images[0].get_array(), row_normalize(counts))
    np.testing.assert_allclose(column_normalize(counts), (counts / counts.sum(axis=0)))


def test_learning_curves_plot_the_mean_per_group():
    results = learning_results()
    fig = plot_learning_curves(results)
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"MGP / entropy", "MGP / random", "NIMGP / entropy", "NIMGP / random"}
    expected = results[(results.method == "NIMGP") & (results.strategy == "random")].groupby("n_labelled")["error"].mean()
    np.testing.assert_allclose(lines["NIMGP / random"].get_ydata(), expected.to_numpy())
    assert lines["NIMGP / random"].get_linestyle() != lines["NIMGP / entropy"].get_linestyle()
    assert lines["NIMGP / random"].get_color() == lines["NIMGP / entropy"].get_color()
    assert "4 repetitions" in ax.get_title()


def test_plot_bad_inputs_raise():
    with pytest.raises(ValueError, match="lack column"):
        plot_learning_curves(learning_results().drop(columns="strategy"))
    with pytest.raises(ValueError, match="duplicate"):
        plot_learning_curves(pd.concat([learning_results(), learning_results().head(1)]))
    with pytest.raises(ValueError, match="must be \\(3, 3\\)"):
        plot_confusion_matrix(np.zeros((2, 2)), CLASSES)
    with pytest.raises(ValueError, match="glat must lie in \\[-90, 90\\]"):
        plot_sky_values(np.array([10.0]), np.array([95.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="labels must lie in \\[0, 3\\)"):
        plot_sky_classes(np.array([10.0]), np.array([5.0]), np.array([3]), CLASSES)
    with pytest.raises(ValueError, match="projection must be"):
        plot_sky_values(np.array([10.0]), np.array([5.0]), np.array([1.0]), projection="hammerx")
    with pytest.raises(TypeError, match="ReliabilityBins"):
        plot_reliability({})
