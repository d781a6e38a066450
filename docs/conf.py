"""Sphinx configuration of gpal's documentation site (``python -m sphinx -W --keep-going docs docs/_build/html``).

The pages are MyST Markdown (myst-nb reads them, and executes the tutorials, which are notebooks in
MyST text form); the API reference is generated from the docstrings, which are numpy-style.
Nothing is fetched from the network while building: no intersphinx.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("MPLBACKEND", "Agg")
# the tutorials' kernels are processes of their own: TensorFlow's start-up lines would reach the build's terminal
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The tutorials run the `gpal` command: the one installed beside the Python that builds the docs.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])

import gpal  # noqa: E402
import myst_nb.core.render as myst_nb_render  # noqa: E402

project = "gpal"
author = "the gpal developers"
copyright = "the gpal developers, BSD-3-Clause"
release = gpal.__version__
version = release

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

# _generated/ holds the tables cli.md includes.  The records results.md and papers.md are generated from (and their
# explanations) live beside their generators, in lab/pages/records/, not in the site.
exclude_patterns = ["_build", "_generated", "_facts", "Thumbs.db", ".DS_Store", "jupyter_execute"]
templates_path = ["_templates"]
root_doc = "index"

# ---------------------------------------------------------------- MyST and notebook execution
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist", "substitution"]
# The measured numbers hand-written pages show inside sentences ({{ name }}), generated from the records by
# lab/pages/page_facts.py, so that no page retypes one.
myst_substitutions = json.loads((HERE / "_facts" / "substitutions.json").read_text(encoding="utf-8"))
myst_heading_anchors = 4
nb_execution_mode = "force"          # every tutorial runs at every build: an example that broke fails the build
nb_execution_timeout = 900       # a guard against a hung cell, not a speed check: a busy machine slows the main-job cell several-fold
nb_execution_in_temp = True       # the tutorials write their run folders in a temporary folder, not in docs/
nb_execution_raise_on_error = True   # a cell that raises fails the build and names the notebook
nb_execution_show_tb = True
nb_merge_streams = True
nb_output_stderr = "remove"          # TensorFlow's start-up lines and library warnings are not what a tutorial teaches
nb_number_source_lines = False
suppress_warnings = ["mystnb.unknown_mime_type"]


def _join_stream_chunks(outputs):
    """Each stream's outputs joined as written, then handed to myst-nb's own merge (ordering, carriage returns).

    A ``%%bash`` cell reaches the notebook in 100-byte chunks (IPython reads its pipes that way), and myst-nb's
    merge ends every chunk with a newline: a terminal line longer than 100 characters, or one a chunk boundary
    falls in, would show broken in two. Joining the chunks of one stream first, as nbclient's own
    ``coalesce_streams`` does, keeps each line as the command printed it."""
    joined: list = []
    by_name: dict = {}
    for output in outputs:
        if output["output_type"] == "stream" and output["name"] in by_name:
            by_name[output["name"]]["text"] += output["text"]
        else:
            if output["output_type"] == "stream":
                by_name[output["name"]] = output
            joined.append(output)
    return _myst_nb_merge(joined)


_myst_nb_merge = myst_nb_render.coalesce_streams
myst_nb_render.coalesce_streams = _join_stream_chunks

# ---------------------------------------------------------------- API reference
autosummary_generate = True
autosummary_ignore_module_all = False
autodoc_default_options = {"members": True}
autodoc_typehints = "none"           # numpydoc's Parameters sections carry the types
autodoc_member_order = "bysource"
autodoc_preserve_defaults = True   # a default shows as written, not as the repr of the object it names
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()

# Every internal reference must resolve; names from other projects are left plain (no intersphinx offline).
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|tensorflow|tf|gpflow|astropy|pandas|pd|sklearn|matplotlib|dask|distributed"
               r"|pathlib|collections|typing|abc|concurrent|enum|builtins)(\..*)?"),
    (r"py:.*", r"(str|int|float|bool|dict|list|tuple|set|None|object|callable|bytes|type|Path|Any|Mapping"
               r"|Sequence|Iterable|Iterator|Callable|ndarray|array|array-like|array_like|optional|default)"),
]

# ---------------------------------------------------------------- theme
html_theme = "pydata_sphinx_theme"
html_title = f"gpal {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "header_links_before_dropdown": 6,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# Pages without sub-pages need no section navigation beside them.
html_sidebars = {page: [] for page in ("index", "getting_started", "results", "papers", "performance", "changelog")}


# ---------------------------------------------------------------- the API index, from the packages' __all__
#: The public packages, in the order their pages appear; an object exported by several is documented once,
#: under the first package listed here that exports it (``gpal`` itself last: it re-exports the others).
PUBLIC_PACKAGES = ("gpal.data", "gpal.catalogs", "gpal.estimators", "gpal.estimators.model_selection",
                   "gpal.evaluation.shift", "gpal.models", "gpal.models.likelihoods", "gpal.active",
                   "gpal.active.modal", "gpal.workflows", "gpal.runs.executors", "gpal")


def _write_api_index() -> None:
    """Write api/index.rst: one autosummary table per public package, each class or function once."""
    seen: set[int] = set()
    out = ["API reference", "=============", "",
           "Every class and function that gpal's packages export (their ``__all__``), generated from the",
           "docstrings. The estimators are also importable from ``gpal`` itself.", ""]
    for name in PUBLIC_PACKAGES:
        module = importlib.import_module(name)
        members = []
        for attr in module.__all__:
            obj = getattr(module, attr)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and id(obj) not in seen:
                seen.add(id(obj))
                members.append(attr)
        if not members:
            continue
        first = (inspect.getdoc(module) or "").split("\n\n")[0].replace("\n", " ")
        title = f"``{name}``"
        out += [title, "-" * len(title), "", first, "", f".. currentmodule:: {name}", "",
                ".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
        out += [f"   {attr}" for attr in sorted(members, key=lambda a: (not inspect.isclass(getattr(module, a)), a))]
        out.append("")
    (HERE / "api").mkdir(exist_ok=True)
    text = "\n".join(out)
    path = HERE / "api" / "index.rst"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _cell(text: str) -> str:
    """Text as a Markdown table cell: a pipe escaped, angle brackets as entities (not HTML tags)."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _write_table_reference() -> None:
    """Write _generated/table_columns.md and table_keywords.md, which cli.md includes: the columns and header
    keywords of gpal's tables as the tables themselves describe them (`gpal.catalog_jobs.tables.COLUMNS`,
    `KEYWORDS`), so the reference cannot drift from the files."""
    from gpal.catalog_jobs.tables import COLUMNS, KEYWORDS

    columns = ["| column | unit | content | MRT format | VOTable UCD |", "|---|---|---|---|---|",
               *(f"| `{name}` | {info.unit or ''} | {_cell(info.description)} | {info.mrt or ''} | {info.ucd or ''} |"
                 for name, info in COLUMNS.items())]
    keywords = ["| keyword | what it records |", "|---|---|",
                *(f"| `{name}` | {_cell(text)} |" for name, text in KEYWORDS.items())]
    (HERE / "_generated").mkdir(exist_ok=True)
    for name, lines in (("table_columns.md", columns), ("table_keywords.md", keywords)):
        path, text = HERE / "_generated" / name, "\n".join(lines) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def _api_index_for_this_site(app, config) -> None:
    """Write the API index and the table reference when this folder is the site being built, before Sphinx lists
    the source files.  A site that borrows this configuration (lab/tests/test_docs_build.py's small ones) has no API
    pages: it then imports none of the packages, so none of TensorFlow either."""
    if Path(app.srcdir).resolve() == HERE.resolve():
        _write_api_index()
        _write_table_reference()


def _skip_foreign(app, what, name, obj, skip, options):
    """Leave out members another library put on gpal's classes (scikit-learn's ``set_*_request``)."""
    module = getattr(getattr(obj, "__func__", obj), "__module__", None) or ""
    if callable(obj) and module and not module.startswith("gpal"):
        return True
    return None


def setup(app):
    app.connect("config-inited", _api_index_for_this_site)
    app.connect("autodoc-skip-member", _skip_foreign)
