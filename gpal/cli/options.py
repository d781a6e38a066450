"""Options generated from what the library declares, and read back: a `gpal.catalog_jobs.settings.Setting` (an
estimator's parameter or a job's own setting) becomes an option whose form its constraint gives, and the options
given on a command line become the keywords the library takes.

Only the form of a value is checked here; the library checks the value itself.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:
    from gpal.constraints import Constraint

#: The prefixes of the ``dest`` of generated options, the estimator's and the job's, apart from the verb's own.
ESTIMATOR, JOB = "estimator:", "job:"


def given(args: argparse.Namespace, prefix: str) -> dict[str, Any]:
    """The generated options of ``prefix`` given on the command line (one not given keeps the library's default).

    Returns
    -------
    dict
        Setting name -> the value given.
    """
    return {dest[len(prefix):]: value for dest, value in vars(args).items() if dest.startswith(prefix)}


def _yaml_value(text: str) -> Any:
    """Lists and mappings as YAML: --hidden-sizes "[50, 50]", --likelihood-options "{num_samples: 50}" (read as
    workflow files are: no anchors or aliases, which could stand for billions of values)."""
    from gpal.workflows.schema import parse_value

    return parse_value(text, "the value")


def _parse_text(constraint: Constraint) -> Callable[[str], Any]:
    """How the text of an option becomes the value ``constraint`` is about: a number, None, a list, or YAML."""
    from gpal.constraints import Integer, ListOf, Optional, Real

    if isinstance(constraint, Optional):
        inner = _parse_text(constraint.inner)
        return lambda text: None if text.lower() in ("none", "null") else inner(text)
    if isinstance(constraint, Integer):
        return int
    if isinstance(constraint, Real):
        return float
    if isinstance(constraint, ListOf):  # also comma-separated: --baselines logistic,random_forest_isotonic
        item = _parse_text(constraint.item)
        return lambda text: _yaml_value(text) if text.lstrip().startswith("[") else [
            item(t.strip()) for t in text.split(",") if t.strip()]
    return _yaml_value


def _option(name: str, constraint: Constraint) -> dict[str, Any]:
    """The argparse keywords of a setting: its choices, an --x / --no-x pair, or a type read as its constraint says.

    Only the form is checked here; the library checks the value (its range, how it goes with the others)
    and refuses it as every bad input is refused: ``gpal: error: ...``, exit code 2.
    """
    from gpal.constraints import Boolean

    choices = constraint.choices()
    if choices:
        return {"choices": choices}
    if isinstance(constraint, Boolean):
        return {"action": argparse.BooleanOptionalAction}
    parse = _parse_text(constraint)

    def value(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            shown = repr(text) if len(text) <= 80 else repr(text[:77]) + "..."
            why = f" ({str(exc).removeprefix('the value: ')})" if str(exc).startswith("the value") else ""
            raise argparse.ArgumentTypeError(f"{name} must be {constraint.expected}; got {shown}{why}") from None

    return {"type": value, "metavar": name.upper()}


def add_settings(group: Any, settings: Mapping[str, Any], prefix: str, flags: Mapping[str, str] | None = None) -> None:
    """An option per `gpal.catalog_jobs.settings.Setting`, its default the library's; ``flags`` renames some."""
    for name, setting in settings.items():
        flag = (flags or {}).get(name, "--" + name.replace("_", "-"))
        default = list(setting.default) if isinstance(setting.default, tuple) else setting.default
        words = (setting.doc or name.replace("_", " ")) + ("" if default is None else f"; default {default}")
        group.add_argument(flag, dest=prefix + name, default=argparse.SUPPRESS, help=words.replace("%", "%%"),
                           **_option(name, setting.constraint))


def add_estimator(parser: argparse.ArgumentParser, estimator: Any, seed_help: str,
                   flags: Mapping[str, str] | None = None) -> None:
    """An option per parameter ``estimator`` declares, its value there the default; and --seed.

    ``estimator`` may also be the parameters an estimator class declares (name -> constraint): the same options,
    without help texts or defaults, for a parse that prints no help and need not import the estimator.
    """
    from gpal.estimators.settings import JOB_OWNED, Setting, estimator_settings

    if isinstance(estimator, Mapping):
        title, settings = "estimator settings", {
            name: Setting(constraint, None, "") for name, constraint in estimator.items() if name not in JOB_OWNED}
    else:
        title, settings = f"{type(estimator).__name__} settings", estimator_settings(estimator)
    group = parser.add_argument_group(
        title, "every parameter the estimator declares (docs/methods.md); an option not given keeps the default shown")
    add_settings(group, settings, ESTIMATOR, flags)
    group.add_argument("--seed", type=int, default=0, help=f"{seed_help} (default 0)")

