"""The paper's Table 4 beside ours: per system, the judge's mean score (1-10), the number of citations, the citation
density and the duplication rate, averaged over topics."""

from __future__ import annotations

from typing import Any

# Table 4 of the paper (gpt-4o-mini writing, gpt-4.1-mini judging, AutoSurvey's paper database). The paper gives the
# duplication rate without a unit; its values read as percentages.
PAPER_TABLE4 = {
    "autosurvey": {"judge mean score": 6.75, "citations": 113, "citation density": 1.00, "duplication rate %": 2.41},
    "extagents": {"judge mean score": 7.63, "citations": 191, "citation density": 1.09, "duplication rate %": 1.80},
}
TABLE4_COLUMNS = list(PAPER_TABLE4["extagents"])


def table4(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows (one per topic and system, as `Survey.row()` with the judge's summary merged in as "judge ...") averaged
    per system, beside the paper's numbers."""
    out = []
    for system, paper in PAPER_TABLE4.items():
        mine = [r for r in rows if r["system"] == system]
        ours: dict[str, Any] = {"system": system, "source": f"ours ({len(mine)} topic{'s' * (len(mine) != 1)})"}
        for column in TABLE4_COLUMNS:
            values = [r[column] for r in mine if r.get(column) is not None]
            ours[column] = round(sum(values) / len(values), 2) if values else None
        out += [ours, {"system": system, "source": "paper (gpt-4o-mini)", **paper}]
    return out


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of dict rows (the union of their keys, in first-seen order)."""
    columns = list(dict.fromkeys(k for r in rows for k in r))

    def cell(value: Any) -> str:
        if value is None:
            return ""
        return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines)
