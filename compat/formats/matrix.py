"""A matrix for CI and for people: GitHub's ``fromJSON`` object, the JSON
report, the Markdown support table, and the excluded combinations as text."""

from __future__ import annotations

import json as _json
from collections import defaultdict

from ..engine.matrix import Exclusion, Matrix
from ._shared import code, escape

__all__ = ["github", "json", "markdown", "excluded_text", "summary", "uncoverable_text"]


def github(matrix: Matrix) -> str:
    """One line, ``{"include": [...]}``: what a job output must be for
    ``strategy.matrix: ${{ fromJSON(needs.<job>.outputs.matrix) }}``."""
    return _json.dumps(matrix.to_github(), ensure_ascii=False) + "\n"


def json(matrix: Matrix, *, explain: bool = False) -> str:
    """The whole result: each row with its warnings and resolved versions,
    the coverage of a covering array, and (`explain`) the excluded combinations."""
    return _json.dumps(matrix.to_dict(explain=explain), indent=2, ensure_ascii=False) + "\n"


def summary(matrix: Matrix) -> str:
    """One line for standard error: how much of the product works, and how it was found."""
    rows = f"{len(matrix.compatible):,} of {matrix.cells:,} combinations work"
    if matrix.coverage is not None:
        coverage = matrix.coverage
        rows += (f"; {len(matrix.rows):,} rows cover the {coverage.covered:,} {_tuples(coverage.strength)} they hold "
                 f"(of {coverage.tuples:,}; {coverage.tuples - coverage.covered:,} held by no compatible row)")
    how = f"{matrix.checked:,} checked one by one"
    if matrix.excluded:
        how += f", the rest excluded by {len(matrix.excluded):,} finding{'s' if len(matrix.excluded) != 1 else ''}"
    return f"{rows}; {how}"


def uncoverable_text(matrix: Matrix, limit: int = 10) -> str:
    """The tuples of a covering array's axes that no compatible row holds, the first `limit` of them."""
    coverage = matrix.coverage
    if coverage is None or not coverage.uncoverable:
        return ""
    axes = matrix.axes.axes
    shown = [" + ".join(f"{axes[a].name} {axes[a].values[v]}" for a, v in t) for t in coverage.uncoverable[:limit]]
    more = len(coverage.uncoverable) - len(shown)
    return (f"held by no compatible row: {'; '.join(shown)}"
            + (f"; and {more:,} more (--format json lists them all)" if more else "") + "\n")


def _tuples(strength: int) -> str:
    return {1: "values", 2: "pairs", 3: "triples"}.get(strength, f"{strength}-tuples")


def _values_text(exclusion: Exclusion) -> str:
    return ", ".join(f"{name} {' | '.join(values)}" for name, values in exclusion.values.items())


def _cells(count: int) -> str:
    return f"{count:,} cell{'s' if count != 1 else ''}"


def excluded_text(matrix: Matrix) -> str:
    """Each excluded combination, the cells it dropped, and the finding that excluded it."""
    return "".join(f"excluded: {_values_text(e)} ({_cells(e.cells)})\n  {e.finding.message} [{e.finding.id}]\n"
                   for e in matrix.excluded)


def markdown(matrix: Matrix, rows: str, columns: str | None = None, *, explain: bool = False) -> str:
    """The support table of two axes (of one, for a one-axis matrix), for a
    README: ✓ where every combination of the other axes works, ✓ n/m where
    some do, ✗ where none does, with the reasons as numbered notes under it."""
    axes = {axis.name: axis for axis in matrix.axes.axes}
    row_values = axes[rows].values
    column_values = axes[columns].values if columns is not None else ("",)

    def key(values: dict[str, str]) -> tuple[str, str]:
        return values[rows], values[columns] if columns is not None else ""

    per_pair = matrix.cells // (len(row_values) * len(column_values))
    works: dict[tuple[str, str], int] = defaultdict(int)
    for row in matrix.compatible:
        works[key(row.values)] += 1
    reasons: dict[tuple[str, str], set[int]] = defaultdict(set)
    notes: dict[str, int] = {}
    texts: list[str] = []
    for cell, exclusion in matrix.excluded_cells():
        finding = exclusion.finding
        if finding.id not in notes:
            notes[finding.id] = len(notes) + 1
            texts.append(f"{notes[finding.id]}. {escape(finding.message)} ({code(finding.id)})")
        reasons[key(cell)].add(notes[finding.id])
    title = f"{escape(rows)} \\ {escape(columns)}" if columns is not None else escape(rows)
    heads = [escape(c) for c in column_values] if columns is not None else ["works"]
    lines = [f"| {title} | " + " | ".join(heads) + " |", "|" + " --- |" * (len(column_values) + 1)]
    for r in row_values:
        marks = [_mark(works.get((r, c), 0), per_pair, reasons.get((r, c), set())) for c in column_values]
        lines.append(f"| {escape(r)} | " + " | ".join(marks) + " |")
    lines.append("")
    others = [a.name for a in matrix.axes.axes if a.name not in (rows, columns)]
    if others:
        lines.extend([f"✓: works with every {', '.join(escape(o) for o in others)} of the matrix; ✓ n/m: with n of the m combinations "
                      "of them; ✗: with none.", ""])
    lines.extend(texts)
    if matrix.coverage is not None:
        lines.extend(["", _rows_table(matrix)])
    if explain and matrix.excluded:
        lines.extend(["", "Excluded combinations:", ""])
        lines.extend(f"- {escape(_values_text(e))} ({_cells(e.cells)}): {escape(e.finding.message)} ({code(e.finding.id)})"
                     for e in matrix.excluded)
    return "\n".join(lines).rstrip("\n") + "\n"


def _mark(works: int, total: int, notes: set[int]) -> str:
    """✓, ✓ n/m or ✗, with the numbers of the notes that say why not."""
    refs = f"<sup>{', '.join(str(n) for n in sorted(notes))}</sup>" if notes else ""
    if works == total:
        return "✓"
    return f"✓ {works}/{total}{refs}" if works else f"✗{refs}"


def _rows_table(matrix: Matrix) -> str:
    """The rows a covering array keeps, one per line."""
    names = [a.name for a in matrix.axes.axes]
    lines = [f"Rows covering every compatible {_tuples(matrix.coverage.strength if matrix.coverage else 2)[:-1]} "
             f"({len(matrix.rows)}):", "", "| " + " | ".join(escape(n) for n in names) + " |", "|" + " --- |" * len(names)]
    for row in matrix.rows:
        lines.append("| " + " | ".join(escape(row.values[n]) for n in names) + " |")
    return "\n".join(lines)
