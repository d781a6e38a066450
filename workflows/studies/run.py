#!/usr/bin/env python
"""Run a declared study: its commands in order, from the repository's top.

A study is declared in ``workflows/studies/<NAME>.yaml`` (the format: ``workflows/studies/README.md``), so a number
on a docs page cites the study by name and record, and anyone can remake it::

    python workflows/studies/run.py open_sky             # run its commands
    python workflows/studies/run.py open_sky --dry-run   # print them only
    python workflows/studies/run.py error_bars --rebuild --check   # its records against what its kept outputs make

Each command is printed before it runs, through the shell (a command may set variables first:
``OMP_NUM_THREADS=1 python ...``); the first that fails stops the study with its exit status.  A study whose
outputs are kept in the repository declares ``rebuild``: the commands that write its records from those outputs in
seconds; ``--rebuild --check`` runs them with `result_records.CHECK_VARIABLE` set, so each record is compared with
what the outputs make instead of written.
"""

from __future__ import annotations

import argparse
import importlib.util
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
FIELDS = {"study": str, "title": str, "script": str, "commands": list, "records": list, "pages": list, "needs": dict}
#: The optional field: the commands that rebuild the study's records from its kept outputs (a list of command lines).
OPTIONAL = {"rebuild": list}
#: The records' format, which states `CHECK_VARIABLE` (a plain module of the page generators, loaded by its path).
RECORD_FORMAT = ROOT / "workflows" / "pages" / "result_records.py"


def read_study(path: Path) -> dict[str, Any]:
    """A study declaration, checked: every field of `FIELDS` present with its type, ``study`` the file's name, and
    its script, records and pages existing under the repository's top (a ValueError names the file and field)."""
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
            raise ValueError(f"{path}: field {field!r}, if given, must list at least one command line, "
                             f"got {study[field]!r}")
    unknown = sorted(set(study) - set(FIELDS) - set(OPTIONAL))
    if unknown:
        raise ValueError(f"{path}: unknown fields {unknown}; a declaration has {sorted(FIELDS)} "
                         f"and optionally {sorted(OPTIONAL)}")
    if study["study"] != Path(path).stem:
        raise ValueError(f"{path}: field 'study' is {study['study']!r}, expected the file's name {Path(path).stem!r}")
    if not study["commands"] or not all(isinstance(c, str) and c.strip() for c in study["commands"]):
        raise ValueError(f"{path}: field 'commands' must list at least one command line")
    if not isinstance(study["needs"].get("runs"), list) or not isinstance(study["needs"].get("cost"), str):
        raise ValueError(f"{path}: field 'needs' must hold 'runs' (a list of folders) and 'cost' (a sentence)")
    for field in ("script", "records", "pages"):
        for name in [study[field]] if field == "script" else study[field]:
            if not (ROOT / str(name)).exists():
                raise ValueError(f"{path}: field {field!r} names {name!r}, which does not exist under {ROOT}")
    return study


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
    parser = argparse.ArgumentParser(prog="python workflows/studies/run.py", description=__doc__.split("\n")[0])
    parser.add_argument("name", help="the study: a declaration workflows/studies/NAME.yaml")
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
    return run(study, args.dry_run, args.rebuild, args.check)


if __name__ == "__main__":
    sys.exit(main())
