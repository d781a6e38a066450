"""Shared test data: a small 4FGL-DR4 FITS file cut from the shipped catalog."""

import gc
import os
import warnings

import numpy as np
import pytest

# As the command's process does (gpal.cli.main): TensorFlow's import loads tf_keras, not Keras 3, in every worker.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

#: TensorFlow's environment variables for the sizes of its thread pools.
TF_POOLS = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


def _share_the_cores_among_workers():
    """Under pytest-xdist, size each worker's TensorFlow pools to its share of the cores, not to the whole machine:
    two workers on two cores, each with pools of two, spend a tenth of the suite's CPU on threads waiting for a core.
    Variables set by whoever runs the suite win.  Returns the names of those it set."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))  # set by xdist before a worker loads this file
    if workers <= 1:
        return ()
    ours = tuple(v for v in TF_POOLS if v not in os.environ)
    os.environ.update({v: str(max(1, (os.cpu_count() or 1) // workers)) for v in ours})
    return ours


#: The pool sizes this file set (and the Dask cluster's workers do not inherit).
POOLS_SET_HERE = _share_the_cores_among_workers()

# What TensorFlow prints on import / first op on a machine without GPU (absl pre-init, CUDA probing, CPU flags).
TF_NOISE = ("absl", "cuda", "cuInit", "I0000", "E0000", "W0000", "cpu_feature_guard", "oneDNN")

# A few hundred DR4 rows keep every test fast: labelled sources of the four classes, sources to classify and radio
# galaxies, a population no class of the main job holds (left to "none of these").
SMALL = {"bll": 70, "fsrq": 50, "psr": 25, "msp": 25, "": 60, "bcu": 30, "snr": 12, "spp": 3, "rdg": 8}


def three_class(n, seed, noise=0.3):
    """Three angular sectors of the plane, labels flipped near the borders by input jitter."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    angle = np.arctan2(X[:, 1] + noise * rng.normal(size=n), X[:, 0] + noise * rng.normal(size=n))
    return X, ((angle + np.pi) // (2 * np.pi / 3)).astype(int) % 3


def write_small_catalog(path, drop_column=None):
    """A DR4 FITS file with the rows of SMALL (first n of each CLASS1 code), optionally without one column (a name)
    or several (a tuple of names)."""
    from astropy.io import fits
    from astropy.table import Table

    from gpal.catalogs.catalog import CATALOG_DIR, HDU_NAME, RELEASES

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fits.open(CATALOG_DIR / RELEASES["4FGL-DR4"].file) as hdul:
            header = hdul[HDU_NAME].header
            table = Table.read(hdul[HDU_NAME])
            keys = {k: header[k] for k in ("CDS-NAME", "VERSION", "DataRelease") if k in header}
    codes = np.char.lower(np.char.strip(np.asarray(table["CLASS1"]).astype(str)))
    rows = np.concatenate([np.nonzero(codes == code)[0][:n] for code, n in SMALL.items()])
    small = table[np.sort(rows)]
    if drop_column is not None:
        small.remove_columns([drop_column] if isinstance(drop_column, str) else list(drop_column))
    hdu = fits.table_to_hdu(small)
    hdu.name = HDU_NAME
    hdu.header.update(keys)
    primary = fits.PrimaryHDU()
    primary.header.update(keys)
    fits.HDUList([primary, hdu]).writeto(path)
    return path


def pytest_configure(config):
    # With -n (pytest-xdist), tests that share a module-scoped fixture or one of SHARED_RUNS go to one worker
    # (pytest_collection_modifyitems), so the fixture (a fitted model, a finished run, a Dask cluster) is made once,
    # not once per worker; those groups are sent first (xdist orders them by size), and the other tests are spread
    # one at a time as under --dist load.
    if config.getoption("dist", "no") == "load":
        config.option.dist = "loadgroup"
    if getattr(config, "workerinput", {}).get("loadgroup"):  # a worker re-parses the command line: told by the node hook
        config.option.loadgroup = True


#: The test directories whose modules import gpflow themselves, before gpal.models has turned check_shapes' docstring
#: rewriting off (gpal/models/__init__.py); otherwise each GPflow docstring is parsed at import, about 2 s a process.
GPFLOW_TEST_DIRS = ("models", "estimators")


def pytest_pycollect_makemodule(module_path, parent):
    # Turned off just before such a module is imported, not at start-up: check_shapes imports TensorFlow, which a run
    # of other tests need not load.  (A conftest in those directories would shadow this one's `from conftest import`.)
    if module_path.parent.name in GPFLOW_TEST_DIRS:
        import check_shapes

        check_shapes.set_rewrite_docstrings(None)


def pytest_unconfigure(config):
    # The tests are done: Python's exit would otherwise run one last collection over every object the process
    # holds (TensorFlow's and the suite's traces, millions), 3-10 s a worker before pytest-xdist can report.
    # Frozen objects are left out of it; exit handlers and the modules' teardown still run.  (gpal.cli.main does
    # the same after a command.)
    gc.freeze()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    node.workerinput["loadgroup"] = node.config.getoption("dist") == "loadgroup"


#: Session-scoped fixtures that cost a run (or a Dask cluster) of their own: the tests that read one go to one worker,
#: with them.
SHARED_RUNS = ("main_job_run", "two_class_model", "dask_cluster")


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the marks
def pytest_collection_modifyitems(config, items):
    if not getattr(config.option, "loadgroup", False):  # what xdist sets on its workers under --dist loadgroup
        return
    # A test's group keys: its module where it reads a module-scoped fixture, each shared run it reads.  Keys that
    # one test holds together are one group (union-find), so no fixture is made on two workers.
    keys, parent = {}, {}

    def root(key):
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    for item in items:
        fixtures = getattr(item, "_fixtureinfo", None)
        defs = fixtures.name2fixturedefs if fixtures else {}
        held = [item.nodeid.split("::")[0]] if any(d[-1].scope == "module" for d in defs.values()) else []
        held += [name for name in SHARED_RUNS if name in defs]
        for key in held[1:]:
            parent[root(key)] = root(held[0])
        keys[item] = held
    for item, held in keys.items():
        if held:
            item.add_marker(pytest.mark.xdist_group(root(held[0])))
    # xdist sends the groups first, then single tests in collection order: slow single tests go first among those,
    # so that no worker ends on a 10 s test while the other waits.  Only tests of no group move, so no module's
    # fixture is made twice.
    items.sort(key=lambda item: bool(keys[item]) or item.get_closest_marker("slow") is None)


#: The session's Dask executor while tests still need it, and the node ids of the tests still to use it.
_DASK = {"users": set()}


def pytest_collection_finish(session):
    _DASK["users"] = {item.nodeid for item in session.items if "dask_cluster" in item.fixturenames}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    # The cluster closes after its last test, not at the session's end: idle, it costs about 0.1 CPU s a second.
    _DASK["users"].discard(item.nodeid)
    if not _DASK["users"]:
        _close_dask()


def _close_dask():
    _DASK.pop("warm", None)
    executor = _DASK.pop("executor", None)
    if executor is not None:
        executor.close()


@pytest.fixture(scope="session")
def dask_cluster():
    """One local Dask cluster (2 worker processes, loopback) for the session: its workers import TensorFlow once."""
    import importlib

    pytest.importorskip("distributed", reason='dask.distributed is not installed (pip install -e ".[dask]")')
    from gpal.runs.executors import make_executor

    # The cluster's workers size TensorFlow's pools themselves (what test_workers_limit_tensorflow_threads checks):
    # they start without the variables this process set for itself.
    ours = {v: os.environ.pop(v) for v in POOLS_SET_HERE}
    try:
        executor = _DASK["executor"] = make_executor("local-dask", n_workers=2)
    finally:
        os.environ.update(ours)
    # the workers import TensorFlow while the driver goes on (the futures are kept so the imports are not cancelled)
    _DASK["warm"] = [executor.client.submit(importlib.import_module, "gpal.models.svgp", workers=[w], pure=False)
                     for w in executor.client.scheduler_info()["workers"]]
    yield executor
    _close_dask()


@pytest.fixture(scope="session")
def small_catalog(tmp_path_factory):
    return write_small_catalog(tmp_path_factory.mktemp("catalog") / "small_dr4.fits")


#: The smallest main-job estimator the tests of a finished run need (their assertions do not read the fit's quality).
TINY_ESTIMATOR = dict(epochs=3, num_inducing=5, batch_size=64, input_noise="first_order")


@pytest.fixture(scope="session")
def main_job_run(small_catalog, tmp_path_factory):
    """A finished ``gpal classify`` of the small catalog with TINY_ESTIMATOR, read by the tests of several modules:
    one that changes the folder works on a copy (``shutil.copytree`` into its ``tmp_path``).  Returns the folder."""
    from gpal.cli import main

    out = tmp_path_factory.mktemp("main_job") / "run"
    options = [f"--{name.replace('_', '-')}={value}" for name, value in TINY_ESTIMATOR.items()]
    assert main(["classify", "--catalog", str(small_catalog), *options, "--no-progress", "--out", str(out)]) == 0
    return out


#: ~300 bytes of YAML standing for 9**9 values through nested aliases (refused at once).
BILLION_LAUGHS = "workflow: toy_1d\na: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


@pytest.fixture(scope="session")
def two_class_model(small_catalog, tmp_path_factory):
    """A ``gpal train`` folder of the main job's estimator (NIMGP) on bll and fsrq, one epoch, 3 inducing points,
    in a folder whose name is not ASCII (issue 33), read by the tests of several modules (damaged on copies).
    Returns the folder."""
    from gpal.cli import main

    out = tmp_path_factory.mktemp("two_classes") / "résultats"
    assert main(["train", "--catalog", str(small_catalog), "--classes", "bll,fsrq", "--epochs", "1",
                 "--num-inducing", "3", "--no-progress", "--out", str(out)]) == 0
    return out
