"""Chart text in the HTML reports is text, never markup.

Plotly reads a few HTML tags in every text it draws (titles, legend names, hover text:
`<a href>` becomes a live link, `<b>` bold). Run names, model names and metric keys come
from users and their reward code, so every string the reports hand to plotly goes
through `text_only`, which follows the rules of the app's own charts
(frontend/src/lib/plotly.ts `textOnly`): both are tested against one table of cases,
frontend/src/lib/plotly-text-cases.json.
"""

from __future__ import annotations

from html import escape
from typing import Any

import plotly.io as pio

# Written by us, with plotly's %{...} placeholders and <extra> tags meant as markup.
TEMPLATE_KEYS = frozenset({"hovertemplate", "texttemplate"})


def text_only(value: Any) -> Any:
    """`value` with every string escaped (&, <, >) so plotly draws it as text: inside
    lists and dicts too, except the values of our own templates; numbers and the rest
    unchanged."""
    if isinstance(value, str):
        return escape(value, quote=False)
    if isinstance(value, list | tuple):
        return [text_only(item) for item in value]
    if isinstance(value, dict):
        return {
            key: item if key in TEMPLATE_KEYS else text_only(item) for key, item in value.items()
        }
    return value


def chart_html(figure: dict[str, Any], *, include_plotlyjs: bool) -> str:
    """One chart of a report: `figure` (plotly's data and layout) with its text made
    text only, as an HTML fragment; plotly.js is embedded where `include_plotlyjs`."""
    return pio.to_html(
        text_only(figure),
        full_html=False,
        include_plotlyjs=include_plotlyjs,
        validate=False,
        config={"displaylogo": False, "responsive": True},
    )
