"""A paper's headline numbers side by side: the paper's published value, gpal's on the same setting, the authors'
code's where it ran, the differences.

Declared in the paper's claims file (``lab/pages/records/papers/claims/<NNN>.yaml``) under ``headline``::

    headline:
      - quantity: "magic, GPC-I accuracy"            # what the row shows, in words
        workflow: 000_tables_3_4                     # gpal's mean ± SE (repeats) and the paper's number: the record's row
        setting: magic
        method: svgp-step
        metric: accuracy
        differences: "M 100 of the paper's 300"      # how gpal's setting differs, in words
      - quantity: "Fermi-LAT, NIMGP NLL"
        record: results/published                    # a results record's table (records/results/<name>.json) or a
        table: 0                                     # study's (records/papers/tables/<name>.json): the cells
        row: NIMGP                                   # "gpal <metric>" and "paper <metric>" of the row whose first
        metric: NLL                                  # cell is ``row``
        cite: "Table 9"                              # where the paper prints the record's "paper" column
      - quantity: "digits, augmented model NLL"
        record: tables/paper004_nll_repeats
        table: 0
        row: ls-cavi
        metric: NLL
        paper: {value: "figure only", source: "Fig. 3"}   # the paper's number, typed once with where it is printed
      - quantity: "german, vi-JJ accuracy"
        record: tables/paper002_gplib                # a table with "authors' code <metric>" beside "gpal <metric>":
        table: "german, 800 training rows"           # the authors' code run on the same splits, read from the row
        row: vi-jj
        metric: accuracy
        authors: {record: tables/paper002_gplib, table: "magic, 15216 training rows", row: vi-jj-full}
                                                     # or from another table's row (then the differences say how
                                                     # its setting differs from gpal's); beside a workflow's
                                                     # number, {study_record: <a study's record of the authors'
                                                     # code's fits>, method: NIMGP}: their mean ± SE

gpal's value is never typed: it is read from the record.  The paper's comes from the record where the workflow's
published numbers hold it (``published/<workflow>.yaml``, typed there once, with the table it is from); ``paper`` gives it where no record holds
it (a paper that prints only figures says so).  The authors' code's number, like gpal's, is only read from a table
a study recorded; a paper whose table holds one gets the column "the authors' code".  Where gpal's column is another
run than the authors' code's (gpal's workflow on its own data, the authors' code on theirs), a table's column
"gpal, the authors' rows <metric>" holds gpal on the authors' rows and splits, shown in the authors' cell beside
theirs.  A row naming a field, record,
table or row that does not exist is refused naming the claims file and the row.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

__all__ = ["headline_markdown", "headline_rows", "parse_headline"]

_KEYS = {"quantity", "differences", "workflow", "setting", "method", "record", "table", "row", "metric", "paper",
         "cite", "authors"}
#: A table's column of the authors' code's number, as "gpal <metric>" is gpal's.
AUTHORS = "authors' code"
#: A table's column of gpal's number on the rows and splits the authors' code ran on, where gpal's own column is
#: another run (the authors' data not the workflow's): shown in the authors' cell, so the pair on the same rows is read
#: together.
SAME_ROWS = "gpal, the authors' rows"


def _text(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where} must be a non-empty text; got {value!r}")
    return " ".join(value.split())


def parse_headline(where: str, block: Any) -> list[dict]:
    """The ``headline`` rows of a claims file, checked (ValueError naming ``where`` and the row)."""
    if block is None:
        return []
    if not isinstance(block, list):
        raise ValueError(f"{where} must be a list of rows; got {block!r}")
    rows = []
    for i, entry in enumerate(block):
        at = f"{where}[{i}]"
        if not isinstance(entry, Mapping) or set(entry) - _KEYS or "quantity" not in entry or "metric" not in entry:
            raise ValueError(f"{at} must be a mapping with 'quantity', 'metric' and keys among {sorted(_KEYS)}; "
                             f"got {entry!r}")
        if "workflow" in entry:
            need, other = {"setting", "method"}, {"record", "table", "row"}
        elif "record" in entry:
            need, other = {"table", "row"}, {"workflow", "setting", "method"}
        else:
            raise ValueError(f"{at} names gpal's number by 'workflow' (with 'setting', 'method') or by 'record' "
                             f"(with 'table', 'row'); got keys {sorted(entry)}")
        if need - set(entry) or other & set(entry):
            raise ValueError(f"{at}: with {'workflow' if 'workflow' in entry else 'record'} give {sorted(need)} and "
                             f"none of {sorted(other)}; got keys {sorted(entry)}")
        paper = entry.get("paper")
        if paper is not None and (not isinstance(paper, Mapping) or set(paper) != {"value", "source"}):
            raise ValueError(f"{at}.paper must be {{value: the paper's number, source: its table or figure}}; "
                             f"got {paper!r}")
        authors = entry.get("authors")
        shapes = ({"record", "table", "row"}, {"study_record", "method"})
        if authors is not None and (not isinstance(authors, Mapping) or set(authors) not in shapes):
            raise ValueError(f"{at}.authors must be {{record, table, row}}: where the authors' code's "
                             f"'{AUTHORS} <metric>' is, or {{study_record, method}}: a study's record of the "
                             f"authors' code's fits (side 'authors'); got {authors!r}")
        rows.append({**entry, "quantity": _text(f"{at}.quantity", entry["quantity"]),
                     "differences": _text(f"{at}.differences", entry["differences"]) if "differences" in entry
                     else "–",
                     "paper": None if paper is None else {k: _text(f"{at}.paper.{k}", str(v)) for k, v in paper.items()}})
    return rows


def _from_workflow(entry: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]], where: str) -> tuple[str, str | None]:
    name = entry["workflow"]
    if name not in records:
        raise ValueError(f"{where}.workflow: no record {name!r}; recorded are {sorted(records)}")
    key = (str(entry["setting"]), str(entry["method"]), str(entry["metric"]))
    found = [r for r in records[name]["rows"] if (r["setting"], r["method"], r["metric"]) == key]
    if not found:
        held = sorted({(r["setting"], r["method"]) for r in records[name]["rows"] if r["metric"] == key[2]})
        raise ValueError(f"{where}: the record of {name} has no {key[2]!r} of {key[1]!r} in setting {key[0]!r}; "
                         f"it holds (setting, method) {held}")
    row = found[0]
    if not row.get("n") or row.get("gpal_mean") is None:
        raise ValueError(f"{where}: {name} {'/'.join(key)} was not run; a headline row shows a measured number")
    se = row.get("gpal_se")
    gpal = f"{row['gpal_mean']:.3f}" + ("" if se is None else f" ± {se:.3f}") + f" ({row['n']})"
    # a record of the orderings a paper states in words holds no published number (its source says "orderings")
    ordering = "ordering" in str(records[name]["source"].get("table", "")).lower() or row.get("paper_mean") is None
    paper = None if ordering else f"{row['paper_mean']:g} ({records[name]['source']['table']})"
    return gpal, paper


def _cells(entry: Mapping[str, Any], others: Mapping[str, Mapping[str, Any]], where: str) -> dict[str, Any]:
    """The cells of row ``entry["row"]`` of table ``entry["table"]`` of results record ``entry["record"]``."""
    name, table = entry["record"], entry["table"]
    if name not in others:
        raise ValueError(f"{where}.record: no record {name!r}; known are {sorted(others)}")
    tables = others[name].get("tables") or []
    found = (tables[table] if isinstance(table, int) and 0 <= table < len(tables)
             else next((t for t in tables if t.get("caption") == table), None))
    if found is None:
        raise ValueError(f"{where}.table: {name} has no table {table!r}; it holds {len(tables)} "
                         f"(captions {[t.get('caption') for t in tables]})")
    cells = next((dict(zip(found["columns"], r)) for r in found["rows"] if str(r[0]) == str(entry["row"])), None)
    if cells is None:
        raise ValueError(f"{where}.row: table {table!r} of {name} has no row {entry['row']!r}; its rows are "
                         f"{[r[0] for r in found['rows']]}")
    return cells


def _authors_fits(entry: Mapping[str, Any], where: str) -> str:
    """The authors' code's number from a study's record of its fits (units of side "authors"): the mean ± SE over
    the fits of ``entry["authors"]["method"]``, with their number, as gpal's workflow cell."""
    import json

    from generated_page import ROOT
    from gpal.evaluation.metrics import format_mean_se, mean_se

    path = ROOT / entry["authors"]["study_record"]
    if not path.is_file():
        raise ValueError(f"{where}.authors.study_record: no record {entry['authors']['study_record']!r}")
    units = json.loads(path.read_text(encoding="utf-8"))["units"]
    values = [u[entry["metric"]] for u in units if u["side"] == "authors" and u["method"] == entry["authors"]["method"]]
    if len(values) < 2:
        raise ValueError(f"{where}.authors: {entry['authors']['study_record']} holds {len(values)} fit(s) of "
                         f"{entry['authors']['method']!r} by the authors' code; a mean ± SE needs two or more")
    return f"{format_mean_se(*mean_se(values))} ({len(values)})"


def _authors(entry: Mapping[str, Any], cells: Mapping[str, Any], others: Mapping[str, Mapping[str, Any]],
             where: str) -> str | None:
    """The authors' code's number: from ``entry["authors"]``'s table row if given (refused without it), else from
    gpal's row if its table has the column."""
    column = f"{AUTHORS} {entry['metric']}"
    if entry.get("authors") is None:
        if column not in cells:
            return None
        same = cells.get(f"{SAME_ROWS} {entry['metric']}")
        return str(cells[column]) + ("" if same in (None, "not run") else f"; gpal on the same rows {same}")
    theirs = _cells({**entry["authors"], "metric": entry["metric"]}, others, f"{where}.authors")
    if column not in theirs:
        raise ValueError(f"{where}.authors: table {entry['authors']['table']!r} of {entry['authors']['record']} has "
                         f"no column {column!r}; its row is {sorted(theirs)}")
    return str(theirs[column])


def _from_table(entry: Mapping[str, Any], others: Mapping[str, Mapping[str, Any]], where: str
                ) -> tuple[str, str | None, str | None]:
    name, table = entry["record"], entry["table"]
    cells = _cells(entry, others, where)
    column = f"gpal {entry['metric']}"
    if column not in cells:
        raise ValueError(f"{where}.metric: table {table!r} of {name} has no column {column!r}; its columns are "
                         f"{sorted(cells)}")
    paper = cells.get(f"paper {entry['metric']}")
    source = others[name].get("source")
    cite = entry.get("cite") or (source.get("table") if isinstance(source, Mapping) else None)
    return (_with_repeats(str(cells[column]), others[name], table),
            None if paper is None else f"{paper}" + (f" ({cite})" if cite else ""), _authors(entry, cells, others, where))


def _with_repeats(value: str, record: Mapping[str, Any], table: Any) -> str:
    """A study table's cell with its repeats, as a workflow's: from the record's ``settings.splits`` (one number,
    or one per table caption) where the cell does not say them."""
    splits = (record.get("settings") or {}).get("splits")
    n = splits.get(table) if isinstance(splits, Mapping) else splits
    return value if value.endswith(")") or not isinstance(n, int) else f"{value} ({n})"


def headline_rows(declared: Sequence[Mapping[str, Any]], records: Mapping[str, Mapping[str, Any]],
                  others: Mapping[str, Mapping[str, Any]], source: str) -> list[dict]:
    """Each headline row with its numbers: {quantity, paper, gpal, authors (None: not run), differences}."""
    out = []
    for i, entry in enumerate(declared):
        where = f"{source}: headline[{i}]"
        if "workflow" in entry:
            if entry.get("authors") is not None and "study_record" not in entry["authors"]:
                raise ValueError(f"{where}.authors: a workflow's record holds no authors' code; name it by "
                                 "{study_record, method}, a study's record of the authors' code's fits")
            (gpal, paper) = _from_workflow(entry, records, where)
            authors = None if entry.get("authors") is None else _authors_fits(entry, where)
        else:
            gpal, paper, authors = _from_table(entry, others, where)
        if entry["paper"] is not None:
            if paper is not None:
                raise ValueError(f"{where}.paper: the record already holds the paper's number ({paper}); "
                                 "a paper's number is typed once, where the record takes it from")
            paper = f"{entry['paper']['value']} ({entry['paper']['source']})"
        if paper is None:
            raise ValueError(f"{where}: the record holds no published number here; give the paper's as "
                             "paper: {value: ..., source: its table or figure}")
        out.append({"quantity": entry["quantity"], "paper": paper, "gpal": gpal, "authors": authors,
                    "differences": entry["differences"]})
    return out


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def headline_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The headline table of one paper: quantity, the paper's value, gpal's (repeats), the authors' code's where a
    row has it (the column only on a paper whose code ran), the setting differences."""
    if not rows:
        return ""
    ran = any(r.get("authors") is not None for r in rows)
    head = ["quantity", "the paper", "gpal, mean ± SE (repeats)"] + ([f"the {AUTHORS}, mean ± SE (repeats)"] if ran
                                                                     else []) + ["setting differences"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["quantity"], r["paper"], r["gpal"]] + ([r.get("authors") or "–"] if ran else []) + [r["differences"]]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"
