"""Declarative workflows: a YAML file names an experiment, ``run_workflow`` runs it resumably.

A workflow file has a ``workflow:`` kind (a name of `gpal.registry.WORKFLOWS`) and the
blocks that kind defines (see ``docs/workflows.md``)::

    workflow: repeated_splits
    title: 4FGL noisy-input reproduction
    seed: 0
    protocol: {splits: 100}
    training: {epochs: 750}

`load_workflow` parses it with ``yaml.safe_load``, applies ``KEY=VALUE``
overrides and checks every key and value before anything is written; an unknown
key or bad value is a `WorkflowError` naming the file, line, dotted key and the
valid choices.  `run_workflow` then claims the output folder for this run
(`gpal.runs.output_dir.claim_output_dir`: the same configuration resumes, another is
refused unless ``force``), sends the independent units to an executor
(`gpal.runs.executors.make_executor`) and writes results, figures and ``report.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from gpal.constraints import SEED, OneOf, Optional, Text
from gpal.files import write_json_atomic
from gpal.identity import source_commit
from gpal.registry import WORKFLOWS
from gpal.runs.executors import make_executor
from gpal.runs.output_dir import claim_output_dir
from gpal.workflows.schema import Field, WorkflowError, apply_overrides, fill_settings, identity, read_yaml, validate

__all__ = ["WORKFLOW_FILE", "Workflow", "WorkflowError", "load_workflow", "run_workflow"]

#: The workflow's complete configuration and source file, in the output folder of every kind that does not
#: claim its folder itself; the report of a rebuilt folder takes its title and description from it.
WORKFLOW_FILE = "workflow.json"


def _common() -> dict[str, Field]:
    return {
        "workflow": Field(OneOf(WORKFLOWS.names()), doc=f"the kind of workflow, one of {list(WORKFLOWS.names())}"),
        "title": Field(Optional(Text()), None, "report title (default: the file name)", part_of_run=False),
        "description": Field(Optional(Text()), None, "a paragraph for the report", part_of_run=False),
        "out": Field(Optional(Text()), None, "output folder (default runs/<file name>)", part_of_run=False),
        "seed": Field(SEED, 0, "seed of data, splits and estimators"),
    }


@dataclass(frozen=True)
class Workflow:
    """A validated workflow: its kind, its complete configuration and where it came from.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gpal.workflows import load_workflow
    >>> path = Path(tempfile.mkdtemp()) / "toy.yaml"
    >>> _ = path.write_text("workflow: toy_1d\\nseed: 3\\ntraining: {epochs: 5}\\n")
    >>> workflow = load_workflow(path, overrides=["training.epochs=7"])   # as gpal workflow --set does
    >>> workflow.kind, workflow.config["seed"], workflow.config["training"]["epochs"]
    ('toy_1d', 3, 7)
    >>> workflow.out, sorted(workflow.identity)           # default folder; what decides the results
    (PosixPath('runs/toy'), ['config', 'workflow'])
    """

    kind: str
    config: dict[str, Any]
    path: Path
    schema: dict[str, Any]

    @property
    def identity(self) -> dict[str, Any]:
        """What decides the results: the output folder is reused only for the same identity."""
        return {"workflow": self.kind, "config": identity(self.config, self.schema)}

    @property
    def out(self) -> Path:
        return Path(self.config["out"])


def load_workflow(path: str | os.PathLike, overrides: Sequence[str] = ()) -> Workflow:
    """Parse, override and validate a workflow file; raises `WorkflowError` before any file is written.

    Returns
    -------
    Workflow
        The kind, the complete configuration (defaults filled in) and the file it came from.
    """
    doc = read_yaml(path)
    common = _common()
    if "workflow" not in doc.data:
        raise WorkflowError(f"{doc.path}: missing required key 'workflow'; valid kinds are {list(WORKFLOWS.names())}")
    if any(str(o).split("=", 1)[0].strip() == "workflow" for o in overrides):
        raise WorkflowError("the workflow kind cannot be overridden; write another workflow file")
    try:
        kind = common["workflow"].constraint.check("workflow", doc.data["workflow"])
    except ValueError as exc:
        raise WorkflowError(f"{doc.where('workflow')}: {exc}") from None
    module = WORKFLOWS[kind]
    schema = {**common, **module.schema()}
    data = apply_overrides(doc.data, overrides, schema, str(doc.path))
    config = validate(data, schema, doc)
    if hasattr(module, "check"):
        try:
            module.check(config)
        except ValueError as exc:
            raise WorkflowError(f"{doc.path}: {exc}") from None
    if config["description"]:
        config["description"] = fill_settings(config["description"], config, doc.where("description"))
    config["title"] = config["title"] or doc.path.stem.replace("_", " ")
    config["out"] = config["out"] or str(Path("runs") / doc.path.stem)
    return Workflow(kind, config, doc.path, schema)


def run_workflow(
    path: str | os.PathLike,
    overrides: Sequence[str] = (),
    out: str | os.PathLike | None = None,
    scheduler: str | None = None,
    force: bool = False,
    progress: bool = True,
) -> Path:
    """Run (or resume) the workflow in ``path``.

    ``out`` replaces the file's ``out``; ``scheduler`` is None / "in-process",
    "local-dask" or "tcp://HOST:PORT"; ``force`` empties an output folder that holds
    a different run.  Units finished by an earlier run into the same folder are not
    recomputed.

    Returns
    -------
    pathlib.Path
        The output folder: results, figures and ``report.md``.
    """
    workflow = load_workflow(path, overrides)
    source_commit()  # the source that runs, read now: the measurements name it when they are written, at the end
    folder = Path(out) if out is not None else workflow.out
    config = {**workflow.config, "out": str(folder)}
    runner = WORKFLOWS[workflow.kind]
    with make_executor(scheduler) as executor:
        if getattr(runner, "CLAIMS_OUTPUT_DIR", False):  # the library function checks and claims the folder itself
            runner.run(config, folder, executor, progress, force=force)
            return folder
        claim_output_dir(folder, workflow.identity, force=force)
        write_json_atomic(folder / WORKFLOW_FILE, {"source": str(workflow.path), **config})
        # the command that ran, for its measurements (gpal.workflows.measurements); not part of the identity. A
        # shipped file goes by its name, which names the same file in any clone (a path would name this one's)
        from gpal.workflows.shipped import shipped_name

        source = shipped_name(workflow.path) or str(workflow.path)
        config["invocation"] = {"source": source, "overrides": [str(o) for o in overrides]}
        runner.run(config, folder, executor, progress)
    return folder
