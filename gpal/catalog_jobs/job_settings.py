"""A catalog job's own settings, declared once: what the checks, the run's identity and the table header derive.

A job (``gpal classify``, ``gpal active``) declares each of its settings as a `JobSetting`: the
constraint, default and meaning every `gpal.estimators.settings.Setting` has (the command line
and the workflow files are generated from them), how the run's identity records it, and the
keyword that carries it in the header of the tables it writes (its comment is the table
schema's, `gpal.catalog_jobs.table_formats.KEYWORDS`).  From the declaration alone:

- `check_settings`: the values a caller gave, each checked, the others their defaults;
- `recorded_settings`: what the run's identity (``run.json``) holds of them;
- `header_of` / `settings_from_header`: the keywords a table records them in, and the values read
  back from a table (what ``gpal report`` rebuilds the lists from).

A job reads its values through `SettingValues`, which remembers what was read: a setting
declared but read by no step of the job (`SettingValues.unread`) is refused before any work,
so a declaration without a consumer fails a test, not a user.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from gpal.constraints import Integer, ListOf, Optional, Real, check_values
from gpal.estimators.settings import Setting

__all__ = ["ALWAYS", "NEVER", "WHEN_CHANGED", "JobSetting", "SettingValues", "check_settings", "header_of",
           "recorded_settings", "settings_from_header"]

#: How a run's identity records a setting: always; only when it differs from its default (a setting added after
#: runs were made: a run at the default is recorded as an earlier gpal recorded it, so its folder is reused); never
#: (the setting does not change what the run computes, or another record holds it).
ALWAYS, WHEN_CHANGED, NEVER = "always", "when_changed", "never"


@dataclass(frozen=True)
class JobSetting(Setting):
    """A job's setting: a `Setting`, how the run's identity records it, and its table keyword (None: not in the
    header).  ``unordered``: a set of values (flag numbers), recorded sorted and without repeats."""

    record: str = ALWAYS
    keyword: str | None = None
    unordered: bool = False

    def __post_init__(self) -> None:
        if self.record not in (ALWAYS, WHEN_CHANGED, NEVER):
            raise ValueError(f"record must be one of {ALWAYS!r}, {WHEN_CHANGED!r}, {NEVER!r}; got {self.record!r}")

    def plain(self, value: Any) -> Any:
        """The value as a record holds it: a sequence as a list (sorted, without repeats where ``unordered``)."""
        if isinstance(value, (list, tuple)):
            return sorted(set(value)) if self.unordered else list(value)
        return value


class SettingValues(Mapping[str, Any]):
    """A job's checked setting values, remembering which a step has read (`unread`)."""

    def __init__(self, values: Mapping[str, Any]):
        self._values = dict(values)
        self._read: set[str] = set()

    def __getitem__(self, name: str) -> Any:
        value = self._values[name]
        self._read.add(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def peek(self, name: str) -> Any:
        """The value of ``name`` without counting it as read (what the records derived from every setting use)."""
        return self._values[name]

    def as_dict(self) -> dict[str, Any]:
        """Every value, none counted as read."""
        return dict(self._values)

    def unread(self) -> list[str]:
        """The settings no step has read yet."""
        return [name for name in self._values if name not in self._read]

    def require_all_read(self, job: str) -> None:
        """Refuse a declaration that no step of ``job`` consumes: the setting would be offered and do nothing."""
        unread = self.unread()
        if unread:
            raise RuntimeError(f"{job} declares the settings {unread} but no step of it reads them; a declared "
                               "setting must reach the step it is for")


def check_settings(declared: Mapping[str, Setting], given: Mapping[str, Any], job: str) -> SettingValues:
    """Every declared setting's value: the ``given`` ones checked against their constraints, the others their
    defaults.  A name that is not declared is a TypeError naming the declared ones (a caller's mistake in Python)."""
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise TypeError(f"{job} got unknown settings {unknown}; valid ones: {list(declared)}")
    values = {name: given.get(name, setting.default) for name, setting in declared.items()}
    values = {name: list(v) if isinstance(v, tuple) else v for name, v in values.items()}
    return SettingValues(check_values({name: setting.constraint for name, setting in declared.items()}, values))


def _peek(values: Mapping[str, Any], name: str) -> Any:
    return values.peek(name) if isinstance(values, SettingValues) else values[name]


def _as_job_setting(setting: Setting) -> JobSetting:
    return setting if isinstance(setting, JobSetting) else JobSetting(setting.constraint, setting.default, setting.doc)


def recorded_settings(declared: Mapping[str, Setting], values: Mapping[str, Any]) -> dict[str, Any]:
    """What the run's identity records of ``values`` (one per declared setting), as each declaration says."""
    out = {}
    for name, setting in declared.items():
        setting = _as_job_setting(setting)
        value = setting.plain(_peek(values, name))
        if setting.record == ALWAYS or setting.record == WHEN_CHANGED and value != setting.plain(setting.default):
            out[name] = value
    return out


def header_of(declared: Mapping[str, Setting], values: Mapping[str, Any]) -> dict[str, Any]:
    """The table keywords recording ``values``: a list comma-separated, None as an empty string.  A setting with a
    keyword is read there (the lists and the report take it from the table)."""
    out = {}
    for name, setting in declared.items():
        setting = _as_job_setting(setting)
        if setting.keyword is None:
            continue
        value = setting.plain(values[name])  # read: the lists and the report take it from the header
        out[setting.keyword] = ("" if value is None else ",".join(map(str, value)) if isinstance(value, list)
                                else value)
    return out


def settings_from_header(declared: Mapping[str, Setting], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The values of the settings with a keyword, read back from a table's ``meta`` (one it lacks, as a table of an
    earlier gpal: the default), each checked against its constraint."""
    values = {}
    for name, setting in declared.items():
        setting = _as_job_setting(setting)
        if setting.keyword is None:
            continue
        values[name] = setting.default if setting.keyword not in meta else _parse(setting.constraint,
                                                                                  meta[setting.keyword])
    return {name: setting.plain(value) for (name, value), setting in
            zip(check_values({n: declared[n].constraint for n in values}, values).items(),
                (_as_job_setting(declared[n]) for n in values))}


def _parse(constraint: Any, text: Any) -> Any:
    """A header value in the form ``constraint`` is about (headers keep numbers as numbers, lists as text)."""
    if isinstance(constraint, Optional):
        return None if text in ("", None) else _parse(constraint.inner, text)
    if isinstance(constraint, ListOf):
        return [_parse(constraint.item, part.strip()) for part in str(text).split(",") if part.strip()]
    if isinstance(constraint, Integer):
        return int(text)
    if isinstance(constraint, Real):
        return float(text)
    return text
