"""An answer's markdown as safe HTML for the widget: paragraphs, lists, emphasis, inline code, code blocks,
headings (shown as a bold paragraph) and absolute links, nothing else (an image shows as its alt text).

markdown-it-py does the parsing, with only those rules on: raw HTML is off, so ``<img onerror=…>`` in an answer is
escaped and shows as text; link reference definitions are off, so a citation marker ``[1]`` stays text for the
widget to turn into its source button. Every link is parsed, and only an absolute ``http``/``https`` URL or a
``mailto:`` address keeps its ``<a>``: a relative link (``../README.md#x``, which means nothing on the visitor's
page), ``javascript:``, ``data:`` and the rest become their bare text. The widget copies the result into the page
through an allowlist of these same tags, so the HTML it receives is never inserted as it came.
"""
from __future__ import annotations

from functools import lru_cache
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.token import Token

#: The markdown-it rules that run (every other one is off, raw HTML and images among them).
BLOCK_RULES = ("paragraph", "list", "fence", "code", "heading")
INLINE_RULES = ("text", "newline", "escape", "backticks", "emphasis", "link", "image", "autolink", "entity")
INLINE2_RULES = ("balance_pairs", "emphasis", "fragments_join")
#: The tags the output can hold; the widget's allowlist is the same set.
TAGS = ("p", "br", "strong", "em", "code", "pre", "ul", "ol", "li", "a")
LINK_ATTRS = {"rel": "nofollow noopener noreferrer", "target": "_blank"}


def safe_link(href: str) -> bool:
    """True for an absolute http(s) URL with a host, or a mailto: address; False for anything else."""
    if any(ch.isspace() or ord(ch) < 32 or ch in "\"'<>`\\" for ch in href):
        return False
    try:
        parts = urlsplit(href)
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        return bool(parts.hostname)
    return scheme == "mailto" and "@" in parts.path and not parts.netloc


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("zero", {"html": False, "breaks": True, "linkify": False, "typographer": False})
    md.enable([*BLOCK_RULES, *INLINE_RULES, *INLINE2_RULES])
    md.validateLink = lambda url: True  # every link parses (so it can lose its markup); _links() decides
    md.renderer.rules["heading_open"] = lambda tokens, idx, options, env: "<p><strong>"
    md.renderer.rules["heading_close"] = lambda tokens, idx, options, env: "</strong></p>\n"
    return md


def _links(children: list[Token]) -> list[Token]:
    """The inline tokens with every unsafe link's open and close dropped (its text stays), safe links marked, and
    every image as its alt text (an answer never loads a picture: no tracking pixel, no broken frame)."""
    out, dropping = [], []
    for token in children:
        if token.type == "image":
            md = _parser()
            alt = md.renderer.renderInlineAsText(token.children or [], md.options, {})
            out.append(Token("text", "", 0, content=alt))
            continue
        if token.type == "link_open":
            safe = safe_link(str(token.attrGet("href") or ""))
            dropping.append(not safe)
            if safe:
                token.attrs = {"href": token.attrGet("href"), **LINK_ATTRS}
                out.append(token)
            continue
        if token.type == "link_close":
            if not (dropping.pop() if dropping else True):
                out.append(token)
            continue
        out.append(token)
    return out


def render_answer(text: str) -> str:
    """``text`` (markdown) as HTML made only of TAGS; every character of the text that is not markup is escaped."""
    md = _parser()
    tokens = md.parse(text or "")
    for token in tokens:
        if token.type == "inline" and token.children:
            token.children = _links(token.children)
        elif token.type == "fence":
            token.info = ""  # no class="language-…" on the code: the widget keeps no attribute there
    return md.renderer.render(tokens, md.options, {})
