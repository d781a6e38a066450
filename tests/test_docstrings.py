"""The public API documents itself: an example per class that runs, a Returns section per result.

Public means exported: the ``__all__`` of ``gpal`` and of its packages, plus the executors
(`PUBLIC_MODULES`).  Every public class has an ``Examples`` section whose doctest runs here
(as does any public function's), on its own (no names but the builtins: an example imports
what it uses, so it can be pasted as it stands).  Every public function, and every public method of a public class (defined in
gpal, inherited ones included), whose return annotation is something other than None says
what it returns in a numpy-style ``Returns`` section (``Yields`` for an iterator).  Properties
are documented as attributes, without one.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import re

import pytest

PUBLIC_MODULES = (
    "gpal",
    "gpal.data",
    "gpal.catalogs",
    "gpal.models",
    "gpal.models.likelihoods",
    "gpal.estimators",
    "gpal.evaluation.shift",
    "gpal.active",
    "gpal.workflows",
    "gpal.runs.executors",
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
_SECTION = r"^\s*{}\s*\n\s*-{{3,}}\s*$"


def _public() -> dict[str, object]:
    """Qualified name -> object for every exported class and function, each object once (first export)."""
    found: dict[str, object] = {}
    seen: set[int] = set()
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and id(obj) not in seen:
                seen.add(id(obj))
                found[f"{name}.{attr}"] = obj
    return found


PUBLIC = _public()
CLASSES = {name: obj for name, obj in PUBLIC.items() if inspect.isclass(obj)}


def _has_section(doc: str | None, title: str) -> bool:
    return bool(doc) and re.search(_SECTION.format(title), inspect.cleandoc(doc), re.MULTILINE) is not None


def _returns_something(fn: object) -> bool:
    try:
        annotation = inspect.signature(fn).return_annotation
    except (TypeError, ValueError):
        return False
    return annotation not in (inspect.Signature.empty, None, "None")


def _callables() -> dict[str, tuple[object, str | None]]:
    """Public functions, and the public methods of public classes that gpal defines, each once, with their docs.

    A method that overrides one without a docstring of its own has the overridden method's
    (``inspect.getdoc``), as help() shows it.
    """
    out: dict[str, tuple[object, str | None]] = {}
    seen: set[int] = set()

    def add(name: str, fn: object, doc: str | None) -> None:
        if id(fn) not in seen:
            seen.add(id(fn))
            out[name] = (fn, doc)

    for name, obj in PUBLIC.items():
        if not inspect.isclass(obj):
            add(name, obj, obj.__doc__)
            continue
        for attr in sorted(dir(obj)):
            if attr.startswith("_"):
                continue
            owner = next((c for c in obj.__mro__ if attr in vars(c)), None)
            if owner is None or not owner.__module__.startswith("gpal"):
                continue
            raw = vars(owner)[attr]
            if isinstance(raw, (staticmethod, classmethod)):
                raw = raw.__func__
            if inspect.isfunction(raw):
                add(f"{owner.__module__}.{owner.__qualname__}.{attr}", raw, inspect.getdoc(getattr(owner, attr)))
    return out


def _examples(obj: object) -> list[doctest.DocTest]:
    """The doctest of the docstring of a class or function, with no globals but the builtins."""
    return [t for t in doctest.DocTestFinder(recurse=False).find(obj, obj.__qualname__, globs={}) if t.examples]


#: Every public class, and every public function whose docstring shows an example.
WITH_EXAMPLES = {name: obj for name, obj in PUBLIC.items() if inspect.isclass(obj) or _examples(obj)}


def test_every_public_class_has_a_runnable_example():
    missing = []
    for name, cls in CLASSES.items():
        tests = _examples(cls)
        runnable = [e for t in tests for e in t.examples if not e.options.get(doctest.SKIP)]
        if not _has_section(cls.__doc__, "Examples") or not runnable:
            missing.append(name)
    assert not missing, f"public classes without a runnable Examples section: {missing}"


def test_every_public_function_that_returns_something_has_a_returns_section():
    missing = [
        name for name, (fn, doc) in _callables().items()
        if _returns_something(fn) and not (_has_section(doc, "Returns") or _has_section(doc, "Yields"))
    ]
    assert not missing, f"public functions and methods without a Returns section: {missing}"


def test_the_checks_can_fail():
    """The section test sees a missing section, and a function without a Returns section is caught."""

    def documented() -> int:
        """One.

        Returns
        -------
        int
            1.
        """
        return 1

    def undocumented() -> int:
        """One, without saying so in a section."""
        return 1

    assert _has_section(documented.__doc__, "Returns") and not _has_section(undocumented.__doc__, "Returns")
    assert _returns_something(undocumented) and not _returns_something(test_the_checks_can_fail)


@pytest.mark.parametrize("name", sorted(WITH_EXAMPLES))
def test_example_runs(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes files writes them here
    monkeypatch.setenv("MPLBACKEND", "Agg")
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in _examples(WITH_EXAMPLES[name]):
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


#: A type numpydoc may show in a Parameters entry: a list of quoted choices (``"svi" | "cavi"``) or a type
#: expression (``int``, ``sequence of str, optional``, ``Catalog or path``). A sentence there is prose numpydoc
#: renders as a type, in bold italics: it ends as a sentence does, is cut inside a parenthesis, or has words no
#: type expression has.
_CHOICES = re.compile(r'^"[^"]*"(?: \| "[^"]*")*$')
_PROSE_WORDS = {"a", "an", "the", "per", "for", "with", "is", "are", "to", "by", "from", "in", "on", "at", "each",
                "every", "its", "their", "when", "where", "which"}


def _prose(kind: str, described: bool) -> bool:
    words = re.findall(r"[\w.-]+", re.sub(r'"[^"]*"', "", kind))
    return bool(kind) and not _CHOICES.match(kind) and (
        kind.endswith((".", ",", ":")) or ";" in kind or kind.count("(") != kind.count(")")
        or bool(_PROSE_WORDS & set(words)) or len(words) > 8
        or not described and len(words) > 2)


def _misread_parameters(doc: str) -> list[str]:
    """The entries of the Parameters sections of ``doc`` that numpydoc reads otherwise than meant: a sentence
    taken for a name (a paragraph inside the section) or for a type (``name : a sentence.``)."""
    from numpydoc.docscrape import NumpyDocString

    misread = []
    for section in ("Parameters", "Other Parameters"):
        for entry in NumpyDocString(doc)[section]:
            if not re.fullmatch(r"\*{0,2}\w+(?:, \*{0,2}\w+)*", entry.name) or _prose(entry.type.strip(),
                                                                                    bool(entry.desc)):
                misread.append(f"{entry.name} : {entry.type.strip()}")
    return misread


def test_the_misread_parameter_check_sees_prose_types_and_paragraphs():
    meant = ('Title.\n\nParameters\n----------\nepochs : int\n    Passes.\nmode : "a" | "b"\n    Which.\nrate\n    Step.\n'
             "names : sequence of Catalog or str, optional\n    Releases.\nkeep : path or pandas.DataFrame or None\n    K.\n")
    prose = "Title.\n\nParameters\n----------\nepochs : passes over the training rows.\n\nFitted attributes: x_.\n"
    assert _misread_parameters(meant) == []
    assert _misread_parameters(prose) == ["epochs : passes over the training rows.", "Fitted attributes: x_. : "]


#: The docstrings the API pages are made of: the public classes', functions' and methods'.
_API_DOCS = {**{name: inspect.getdoc(cls) for name, cls in CLASSES.items()},
             **{name: inspect.cleandoc(doc) for name, (_, doc) in _callables().items() if doc}}


@pytest.mark.parametrize("name", sorted(_API_DOCS))
def test_parameters_sections_are_read_as_meant(name):
    """The API pages render each parameter's name, type and description from these entries."""
    misread = _misread_parameters(_API_DOCS[name] or "")
    assert not misread, f"Parameters entries numpydoc misreads (write 'name', then the description indented): {misread}"


def test_the_api_pages_carry_no_commit_hash_or_load_average():
    """The API pages are user pages: what a number was measured at is the results page's record.  (The user pages'
    own check, lab/tests/test_user_pages.py, holds the other pages to the same two patterns.)"""
    COMMIT = re.compile(r"(?<![\w./#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
    LOAD = re.compile(r"\bload(?:avg| averages?)?(?: of| was| at| near| around| about)?\s*[~≈]?\s*\d", re.I)

    found = {name: [m[0] for pattern in (COMMIT, LOAD) for m in pattern.finditer(doc or "")]
             for name, doc in _API_DOCS.items()}
    assert not {name: tokens for name, tokens in found.items() if tokens}


def test_the_estimator_page_names_the_main_jobs_settings_where_they_differ_from_its_defaults():
    """The API page shows the signature's defaults (epochs=750); the docstring says what the main job uses."""
    from gpal import NoisyGPClassifier
    from gpal.catalog_jobs.settings import MAIN_JOB_ESTIMATOR

    doc = " ".join(inspect.getdoc(NoisyGPClassifier).split())
    stated = re.search(r"main_job_estimator\(\)``, which has the same (.+?) and replaces these: ``([^`]+)``", doc)
    assert stated, "NoisyGPClassifier's docstring no longer says which settings the main job replaces"
    replaced = eval(f"dict({stated[2]})")  # noqa: S307 - the docstring's own keywords
    assert {k: v for k, v in MAIN_JOB_ESTIMATOR.items() if k not in replaced} == {
        k: NoisyGPClassifier().get_params()[k] for k in MAIN_JOB_ESTIMATOR if k not in replaced}  # "the same"
    assert {k: MAIN_JOB_ESTIMATOR[k] for k in replaced} == replaced
    assert all(NoisyGPClassifier().get_params()[k] != v for k, v in replaced.items())
