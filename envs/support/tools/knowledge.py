"""Help-centre tools: full-text search over the articles (SQLite FTS5) and reading one."""

from __future__ import annotations

import re

from envs.support import models as m
from envs.support.types import ArticleId, Limit, Query
from envs.support.views import load
from servers.tools import ToolContext, tool

__all__ = ["search_kb", "get_kb_article"]

_WORD = re.compile(r"[A-Za-z0-9]+")


def match_expression(query: str) -> str | None:
    """The words of ``query`` as an FTS5 expression matching any of them (each quoted: never FTS syntax)."""
    words = _WORD.findall(query)[:12]
    return " OR ".join(f'"{word}"' for word in words) or None


@tool(title="Search help centre")
async def search_kb(ctx: ToolContext, query: Query, limit: Limit = 5) -> m.ArticleHits:
    """Search the help-centre articles (the policy explained for customers) by words, best match first."""
    expression = match_expression(query)
    if expression is None:
        return m.ArticleHits(articles=[])
    rows = ctx.world.query(
        "SELECT a.article_id, a.title, a.category, snippet(kb_search, 1, '', '', '…', 16) AS snippet FROM kb_search "
        "JOIN kb_articles a ON a.doc = kb_search.rowid WHERE kb_search MATCH ? ORDER BY bm25(kb_search), a.article_id LIMIT ?",
        (expression, limit))
    return m.ArticleHits(articles=[m.ArticleHit(**row) for row in rows])


@tool(title="Get help-centre article")
async def get_kb_article(ctx: ToolContext, article_id: ArticleId) -> m.Article:
    """One help-centre article in full (find its id with search_kb): the policy as explained to customers."""
    row = load(ctx.world, "kb_articles", "article_id", article_id, "article", "find articles with search_kb")
    return m.Article(**{k: row[k] for k in ("article_id", "title", "category", "body")})
