"""Outputs: one module per format, each turning a result into text.

A check's report: `text`, `json`, `sarif`, `github` (workflow commands),
`markdown_report`; the dependency graph: `graph`; an upgrade plan: `markdown`;
resolved pins: `pinned` and `pylock`; a component of the database: `component`.
"""
