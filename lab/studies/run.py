#!/usr/bin/env python
"""Run a declared study: its commands in order, from the repository's top.

A study is declared in ``lab/studies/<NAME>.yaml`` (the format: ``lab/studies/README.md``), so a number
on a docs page cites the study by name and record, and anyone can remake it::

    python lab/studies/run.py open_sky             # run its commands
    python lab/studies/run.py open_sky --dry-run   # print them only
    python lab/studies/run.py error_bars --rebuild --check   # its records against what its kept outputs make

Each command is printed before it runs, through the shell (a command may set variables first:
``OMP_NUM_THREADS=1 python ...``); the first that fails stops the study with its exit status.  A study whose
outputs are kept in the repository declares ``rebuild``: the commands that write its records from those outputs in
seconds; ``--rebuild --check`` runs them with `result_records.CHECK_VARIABLE` set, so each record is compared with
what the outputs make instead of written.  Raw per-unit outputs are not kept in git (``.gitignore``); a rebuild
that reads some declares them in ``rebuild_reads`` and, while they are missing, is refused with the command that
remakes them (the study itself).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

#: The repository's top: where every command of a declaration runs and every path in it starts.
ROOT = Path(__file__).resolve().parents[2]
STUDIES = Path(__file__).resolve().parent

#: Every field of a declaration and its type (``needs``: ``runs``, a list of folders, and ``cost``, a sentence).
FIELDS = {"study": str, "title": str, "commands": list, "records": list, "pages": list, "needs": dict}
#: What a declaration runs, exactly one of: ``script``, a study script, or ``workflow``, the `gpal workflow` file
#: whose runs made the records (a record of a workflow run has no script, but a reader needs its cost all the same).
RUNS = ("script", "workflow")
#: The optional fields: ``rebuild``, the commands that rebuild the study's records from its kept outputs (a list of
#: command lines), and ``rebuild_reads``, the outputs those commands read that git does not keep (paths from the
#: repository's top, a folder ending in ``/``): running the study remakes them.
OPTIONAL = {"rebuild": list, "rebuild_reads": list}
#: The records' format, which states `CHECK_VARIABLE` (a plain module of the page generators, loaded by its path).
RECORD_FORMAT = ROOT / "lab" / "pages" / "result_records.py"
#: Where the records a declaration lists live, from the repository's top (`record_files`: which files count).
#: Where the shipped workflow files are, from the repository's top (a command runs one by its name below it).
SHIPPED = "gpal/workflows/files/"
RECORD_HOMES = ("lab/pages/records", "lab/studies/records")


def read_study(path: Path, root: Path = ROOT) -> dict[str, Any]:
    """A study declaration, checked: every field of `FIELDS` present with its type, ``study`` the file's name, and
    its script or workflow, records and pages existing under ``root``, the repository's top (a ValueError names the
    file and field)."""
    try:
        study = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: not a readable YAML study declaration ({exc})") from None
    if not isinstance(study, dict):
        raise ValueError(f"{path}: expected a mapping with the fields {sorted(FIELDS)}, got {type(study).__name__}")
    for field, kind in FIELDS.items():
        if not isinstance(study.get(field), kind):
            raise ValueError(f"{path}: field {field!r} must be a {kind.__name__}, got {study.get(field)!r}")
    for field, kind in OPTIONAL.items():
        if field in study and not (isinstance(study[field], kind) and study[field]
                                   and all(isinstance(c, str) and c.strip() for c in study[field])):
            raise ValueError(f"{path}: field {field!r}, if given, must list at least one command line or path, "
                             f"got {study[field]!r}")
    if "rebuild_reads" in study and "rebuild" not in study:
        raise ValueError(f"{path}: field 'rebuild_reads' names what the 'rebuild' commands read, but there are none")
    runs = [field for field in RUNS if field in study]
    if len(runs) != 1 or not isinstance(study[runs[0]], str):
        raise ValueError(f"{path}: a declaration names exactly one of the fields {list(RUNS)} (a study script, or "
                         f"the gpal workflow file its commands run) as a path, got {runs or 'neither'}")
    unknown = sorted(set(study) - set(FIELDS) - set(OPTIONAL) - set(RUNS))
    if unknown:
        raise ValueError(f"{path}: unknown fields {unknown}; a declaration has {sorted(FIELDS)}, one of "
                         f"{list(RUNS)} and optionally {sorted(OPTIONAL)}")
    if study["study"] != Path(path).stem:
        raise ValueError(f"{path}: field 'study' is {study['study']!r}, expected the file's name {Path(path).stem!r}")
    if not study["commands"] or not all(isinstance(c, str) and c.strip() for c in study["commands"]):
        raise ValueError(f"{path}: field 'commands' must list at least one command line")
    if not isinstance(study["needs"].get("runs"), list) or not isinstance(study["needs"].get("cost"), str):
        raise ValueError(f"{path}: field 'needs' must hold 'runs' (a list of folders) and 'cost' (a sentence)")
    for field in (runs[0], "records", "pages"):
        for name in [study[field]] if field in RUNS else study[field]:
            if not (root / str(name)).exists():
                raise ValueError(f"{path}: field {field!r} names {name!r}, which does not exist under {root}")
    return study


def record_files(root: Path = ROOT) -> list[str]:
    """Every record a declaration must name, from ``root``: the JSON records of the pages (beside them, ``<name>.md``
    is a record's explanation and ``claims/`` the papers page's claims, both written by hand) and every file a
    study keeps in ``lab/studies/records/``."""
    pages = (root / RECORD_HOMES[0]).rglob("*.json")
    kept = (p for p in (root / RECORD_HOMES[1]).rglob("*") if p.is_file())
    return sorted(p.relative_to(root).as_posix() for p in (*pages, *kept))


def lists_record(study: dict[str, Any], record: str) -> bool:
    """Whether a declaration's ``records`` names ``record`` (from the repository's top): the file itself, or a folder
    (ending in ``/``) that holds it."""
    return any(record == r or (str(r).endswith("/") and record.startswith(str(r))) for r in study["records"])


def _runs_workflow(study: dict[str, Any], path: Path, root: Path, workflow: str) -> bool:
    """Whether a record's ``workflow`` field fits its declaration: the declaration itself, its ``workflow`` file, or
    a workflow one of its commands runs, by path or by its shipped name (a papers record names it by stem:
    ``000_fig_4``, run as ``gpal workflow papers/000_fig_4``)."""
    if workflow in (path.relative_to(root).as_posix(), study.get("workflow")):
        return True
    names = {workflow, f"papers/{workflow}", workflow.removeprefix(SHIPPED).removesuffix(".yaml")}
    return any(names & set(c.split()) for c in study["commands"])


def check_records(root: Path = ROOT) -> dict[str, str]:
    """Each record under `RECORD_HOMES` mapped to the one declaration that lists it, so every record's commands and
    cost can be found; a ValueError names every record with no declaration, or with two, or whose ``workflow``
    field its declaration does not run, and any declaration naming a record that does not exist."""
    owners: dict[str, list[str]] = {}
    problems = []
    records = record_files(root)
    for path in sorted((root / "lab" / "studies").glob("*.yaml")):
        study = read_study(path, root)
        for record in records:
            if lists_record(study, record):
                owners.setdefault(record, []).append(path.relative_to(root).as_posix())
                if record.startswith(RECORD_HOMES[0]):
                    workflow = _record_workflow(root / record)
                    if workflow is not None and not _runs_workflow(study, path, root, workflow):
                        problems.append(f"{record}: its field 'workflow' is {workflow!r}, which its declaration "
                                        f"{path.relative_to(root)} neither is nor runs")
    for record in records:
        declared = owners.get(record, [])
        if not declared:
            problems.append(f"{record}: a workflow record without its workflow: no declaration in "
                            "lab/studies/ lists it in 'records'; declare the study or workflow run that made "
                            "it (its commands and cost), or retire it")
        elif len(declared) > 1:
            problems.append(f"{record}: listed by {len(declared)} declarations {declared}; a record has one")
    if problems:
        raise ValueError("\n".join(problems))
    return {record: declared[0] for record, declared in owners.items()}


def _record_workflow(path: Path) -> str | None:
    """The ``workflow`` field of a page's JSON record, if it has one."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable JSON record ({exc})") from None
    workflow = record.get("workflow") if isinstance(record, dict) else None
    return workflow if isinstance(workflow, str) else None


def missing_outputs(study: dict[str, Any], root: Path = ROOT) -> list[str]:
    """The paths of ``rebuild_reads`` that are not here (a folder counts as missing while it holds no file)."""
    def present(name: str) -> bool:
        path = root / name
        return path.is_file() or (path.is_dir() and any(p.is_file() for p in path.rglob("*")))

    return [name for name in study.get("rebuild_reads", []) if not present(name)]


def gpal_problem(root: Path = ROOT) -> str | None:
    """Why the ``python`` the commands run cannot run the lab, or None: the lab is not installed with gpal and runs
    against the gpal of its own clone (an installed gpal of another version may lack what the lab calls)."""
    import tomllib

    wanted = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    install = f"from the repository's top ({root}), install this clone's gpal: python -m pip install -e '.[test]'"
    try:
        found = subprocess.run(["python", "-c", "import gpal; print(gpal.__version__); print(gpal.__file__)"],
                               capture_output=True, text=True, cwd=root, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the studies' commands run `python`, which does not start here ({exc}); {install}"
    if found.returncode:
        return f"the studies' commands run `python`, which cannot import gpal; {install}, or activate its environment"
    version, where = found.stdout.split()[:2]
    if version != wanted:
        return (f"the studies' commands run `python` with gpal {version} ({where}), but this clone's lab is for gpal "
                f"{wanted}; {install}")
    return None


def study_file(name: str) -> Path:
    """The declaration of study ``name``; a name with none raises ValueError listing the declared studies."""
    path = STUDIES / f"{name}.yaml"
    if not path.is_file():
        declared = sorted(p.stem for p in STUDIES.glob("*.yaml"))
        raise ValueError(f"no study {name!r}: the declared studies are {declared}")
    return path


def check_variable() -> str:
    """`result_records.CHECK_VARIABLE`, read where it is stated; imported only for ``--check``, as the records' format
    imports gpal and printing or running a study needs none of it."""
    spec = importlib.util.spec_from_file_location("result_records", RECORD_FORMAT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CHECK_VARIABLE


def run(study: dict[str, Any], dry_run: bool = False, rebuild: bool = False, check: bool = False) -> int:
    """Run (or with ``dry_run`` only print) the study's commands, or with ``rebuild`` its rebuild commands (with
    ``check``: comparing the records instead of writing them), in order; the first failing one's exit status."""
    if rebuild and "rebuild" not in study:
        print(f"error: study {study['study']!r} declares no 'rebuild' commands: its records are remade only by "
              "running it", file=sys.stderr)
        return 2
    missing = missing_outputs(study) if rebuild and not dry_run else []
    if missing:
        print(f"error: study {study['study']!r} rebuilds its records from outputs git does not keep, and these are "
              f"missing: {', '.join(missing)}; remake them by running the study: python lab/studies/run.py "
              f"{study['study']} (its cost: {study['needs']['cost']}), then rebuild", file=sys.stderr)
        return 2
    environment = {**os.environ, check_variable(): "1"} if check else None
    for command in study["rebuild" if rebuild else "commands"]:
        print(f"$ {command}", flush=True)
        if not dry_run:
            status = subprocess.run(command, shell=True, cwd=ROOT, env=environment).returncode
            if status:
                print(f"error: the command above exited with status {status}; the study stops here", file=sys.stderr)
                return status
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python lab/studies/run.py", description=__doc__.split("\n")[0])
    parser.add_argument("name", help="the study: a declaration lab/studies/NAME.yaml")
    parser.add_argument("--dry-run", action="store_true", help="print the commands without running them")
    parser.add_argument("--rebuild", action="store_true",
                        help="run the study's 'rebuild' commands: its records from its kept outputs")
    parser.add_argument("--check", action="store_true",
                        help="with --rebuild: compare each record with what the outputs make, writing nothing")
    args = parser.parse_args(argv)
    if args.check and not args.rebuild:
        parser.error("--check goes with --rebuild")
    try:
        study = read_study(study_file(args.name))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    problem = None if args.dry_run else gpal_problem()
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    return run(study, args.dry_run, args.rebuild, args.check)


if __name__ == "__main__":
    sys.exit(main())
