"""`gpal.runs.background.alongside`: work beside the main thread ends, fails and stops as it says."""

import sys
import threading
import time

import numpy as np
import pytest

from gpal.runs.background import Abandoned, abandon_if, alongside


def test_work_runs_in_another_thread_while_the_block_runs():
    started, seen = threading.Event(), {}

    def work(stop):
        seen["thread"] = threading.current_thread().name
        started.set()

    with alongside(work) as wait:
        assert started.wait(5), "the work did not start while the block ran"
        wait()
    assert seen["thread"] != threading.current_thread().name


def test_wait_raises_what_the_work_raised():
    def work(stop):
        raise ValueError("bad baseline")

    with pytest.raises(ValueError, match="bad baseline"):
        with alongside(work) as wait:
            wait()


def test_a_failure_is_heard_even_when_the_block_never_waited():
    def work(stop):
        raise ValueError("lost otherwise")

    with pytest.raises(ValueError, match="lost otherwise"):
        with alongside(work):
            pass


def test_a_failing_block_stops_the_work_before_it_writes(tmp_path):
    out = tmp_path / "written"
    ended = {}

    def work(stop):
        try:
            for _ in range(500):  # a training loop that checks between epochs
                abandon_if(stop)
                time.sleep(0.01)
            out.write_text("finished")
        except Abandoned:
            ended["abandoned"] = True
            raise

    with pytest.raises(KeyboardInterrupt):
        with alongside(work):
            time.sleep(0.05)
            raise KeyboardInterrupt
    assert ended == {"abandoned": True}  # the block's exit waited for the work to end
    assert not out.exists()


def test_a_gp_fit_stopped_from_outside_raises_abandoned():
    """The twin's training honours ``stop`` at the end of an epoch: the callback route the main job uses."""
    from gpal import NoisyGPClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    stop = threading.Event()
    stop.set()
    clf = NoisyGPClassifier(input_noise="none", epochs=3, num_inducing=5, progress=False)
    with pytest.raises(Abandoned):
        clf.fit(X, y, callback=lambda epoch, loss: abandon_if(stop))


def test_no_work_gives_a_wait_that_does_nothing():
    with alongside(None) as wait:
        assert wait() is None


def test_preload_imports_in_another_thread_and_the_main_thread_gets_the_module(tmp_path, monkeypatch):
    import sys

    from gpal.runs.background import preload

    (tmp_path / "gpal_preload_probe.py").write_text("import threading\nTHREAD = threading.current_thread().name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "gpal_preload_probe", raising=False)
    preload("gpal_preload_probe").join(30)
    import gpal_preload_probe

    assert gpal_preload_probe.THREAD == "gpal-preload" != threading.current_thread().name


def test_a_failed_preload_is_raised_by_the_main_threads_own_import(tmp_path, monkeypatch, capsys):
    import sys

    from gpal.runs.background import preload

    (tmp_path / "gpal_preload_broken.py").write_text("raise RuntimeError('half-installed extension')\n")
    (tmp_path / "gpal_preload_after.py").write_text("import threading\nTHREAD = threading.current_thread().name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("gpal_preload_broken", "gpal_preload_after"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    preload("gpal_preload_broken", "gpal_preload_after").join(30)
    assert "gpal_preload_broken" not in sys.modules
    assert sys.modules["gpal_preload_after"].THREAD == "gpal-preload"  # the modules after a failed one still load
    assert "half-installed" not in capsys.readouterr().err  # nothing printed from the thread
    with pytest.raises(RuntimeError, match="half-installed extension"):
        import gpal_preload_broken  # noqa: F401


_LIFELONG_PROBE = """
import gc, json, sys
sys.path.insert(0, sys.argv[1])
from gpal.runs.background import preload

def frozen(obj):  # a frozen object is in none of the collector's generations
    return not any(o is obj for o in gc.get_objects())

seen = {"frozen_before": gc.get_freeze_count()}
preload("probe_plain").join(30)  # not lifelong: the collector is left alone
import probe_plain
seen.update(plain_during=probe_plain.COLLECTING, plain_frozen=frozen(probe_plain.CYCLE))
preload("probe_broken", "probe_lifelong", lifelong=True).join(30)  # a failed import on the way changes nothing
import probe_lifelong
seen.update(during=probe_lifelong.COLLECTING, after=gc.isenabled(), frozen=frozen(probe_lifelong.CYCLE))
count = gc.get_freeze_count()
preload("probe_lifelong", lifelong=True).join(30)  # already imported: nothing to pause or freeze
seen.update(again_frozen_more=gc.get_freeze_count() - count)
print(json.dumps(seen))
"""


def test_a_lifelong_preload_pauses_the_collector_and_freezes_what_it_imported(tmp_path):
    """The command's preload: no full collection walks TensorFlow's objects during or after their import."""
    import json
    import subprocess
    import sys

    module = "import gc\nCOLLECTING = gc.isenabled()\nCYCLE = []\nCYCLE.append(CYCLE)\n"
    (tmp_path / "probe_plain.py").write_text(module)
    (tmp_path / "probe_lifelong.py").write_text(module)
    (tmp_path / "probe_broken.py").write_text("raise RuntimeError('half-installed extension')\n")
    done = subprocess.run([sys.executable, "-c", _LIFELONG_PROBE, str(tmp_path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["plain_during"] is True and seen["plain_frozen"] is False
    assert seen["during"] is False  # paused while importing, though a module before it failed
    assert seen["after"] is True  # and collecting again once the imports are done
    assert seen["frozen"] is True  # the imported module's objects are out of the collector's generations
    assert seen["again_frozen_more"] == 0


# ------------------------------------------------------------------ run_steps
def test_run_steps_runs_work_beside_its_span_and_hands_on_every_result():
    from gpal.runs.background import Beside, run_steps

    events = []
    started = threading.Event()

    def work(done, stop):
        started.set()
        events.append(("work sees", sorted(done)))
        return "drawn"

    def second(done):
        assert started.wait(5)  # the work runs while this step does
        events.append("second")
        return done["first"] + 1

    results = run_steps([("first", lambda done: 1), ("second", second), ("third", lambda done: done["work"])],
                        beside=[Beside("work", work, "second", "second")])
    assert results == {"first": 1, "second": 2, "work": "drawn", "third": "drawn"}
    assert events[0] == ("work sees", ["first"])  # the results of the steps before its span


def test_run_steps_stops_the_work_beside_a_step_that_fails():
    from gpal.runs.background import Abandoned, Beside, abandon_if, run_steps

    stopped = threading.Event()

    def work(done, stop):
        try:
            while True:
                abandon_if(stop)
                time.sleep(0.01)
        except Abandoned:
            stopped.set()
            raise

    def failing(done):
        raise RuntimeError("the fit diverged")

    with pytest.raises(RuntimeError, match="the fit diverged"):
        run_steps([("fit", failing), ("after", lambda done: None)], beside=[Beside("work", work, "fit", "after")])
    assert stopped.is_set()  # told to stop and waited for before the failure was raised
    with pytest.raises(ValueError, match=r"runs beside the steps 'after' to 'fit'"):
        run_steps([("fit", lambda done: 1), ("after", lambda done: 2)], beside=[Beside("w", None, "after", "fit")])


def test_run_steps_imports_the_named_modules_in_its_own_thread_before_any_work_starts(tmp_path, monkeypatch):
    from gpal.runs.background import Beside, run_steps

    (tmp_path / "gpal_probe_module.py").write_text("import threading\nIMPORTED_IN = threading.current_thread().name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "gpal_probe_module", raising=False)
    seen = {}

    def work(done, stop):
        seen["imported before the work"] = "gpal_probe_module" in sys.modules

    run_steps([("step", lambda done: None)], beside=[Beside("work", work, "step", "step")], imports=["gpal_probe_module"])
    assert seen["imported before the work"]
    assert sys.modules["gpal_probe_module"].IMPORTED_IN == threading.current_thread().name


def test_run_steps_times_each_step_and_each_work_beside_them():
    from gpal.runs.background import Beside, run_steps
    from gpal.runs.timings import StepTimes

    times = StepTimes()
    run_steps([("sleeps", lambda done: time.sleep(0.2)), ("spins", lambda done: sum(range(2_000_000)))],
              beside=[Beside("beside", lambda done, stop: time.sleep(0.1), "sleeps", "spins")], times=times)
    steps = {s["step"]: s for s in times.record()["steps"]}
    assert set(steps) == {"sleeps", "spins", "beside"}
    assert steps["sleeps"]["wall_s"] >= 0.2 and steps["sleeps"]["cpu_s"] < steps["sleeps"]["wall_s"]  # it waited
    assert steps["spins"]["cpu_s"] > 0  # it worked
    assert steps["beside"]["beside"] and not steps["spins"]["beside"]
