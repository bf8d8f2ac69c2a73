"""The conformance matrix: many reports side by side, clauses as rows, runs as columns.

``adaptertest matrix REPORT... --out DIR`` writes a self-contained HTML page (filter to
the rows that differ, a diff of two chosen runs, each cell's messages a click away), the
same table as Markdown for a CI job summary, and a JSON summary. ``adaptertest sweep``
runs a driver's real-CLI tier against the last releases of its CLI and feeds the matrix.
"""

from adaptertest.matrix._html import render_html
from adaptertest.matrix._markdown import render_markdown
from adaptertest.matrix._model import (
    Cell,
    Column,
    Matrix,
    MatrixError,
    Row,
    build,
    load,
    read_report,
    summary,
)

__all__ = [
    "Cell",
    "Column",
    "Matrix",
    "MatrixError",
    "Row",
    "build",
    "load",
    "read_report",
    "render_html",
    "render_markdown",
    "summary",
]
