"""Text as a person reads it (K2): the canonical text every import is stored as. Pure functions.

The canonical text is a small markdown subset, one *block* per blank-line-separated piece:

- a paragraph is one line (hard-wrapped lines joined);
- a heading is ``#`` .. ``######`` and its text (from markdown and HTML; in plain text a short line of its
  own is read as a heading by ``core.knowledge.units``, nothing is added to it);
- a list is one ``- item`` line per item;
- a code or command block is fenced with three backticks and kept verbatim;
- a table row is ``| cell | cell |``.

Markdown goes through markdown-it-py: links become their text (with the URL when it is absolute), emphasis
marks and images go, HTML blocks keep only their text, code stays verbatim. Plain text (also PDF text
and HTML turned to markdown by trafilatura) is joined into paragraphs; a block indented deeper than the
document's prose is code; a short line followed by deeper-indented lines is a definition (``term: text``).
"""
from __future__ import annotations

import html
import re
from collections import Counter

_BULLET = re.compile(r"^(?:[-*•+·]|\d{1,3}[.)]|[a-z][.)])\s+")
_TAG = re.compile(r"<[^>]+>")
_SPACES = re.compile(r"[ \t]+")
_FENCE = "```"
_RULE = re.compile(r"[-=~_*#]{8,}")
_ABSOLUTE = re.compile(r"^(?:https?|mailto|ftp)://|^mailto:", re.IGNORECASE)


# -- plain text ---------------------------------------------------------------------------------------------
def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blocks(text: str) -> list[list[str]]:
    out, current = [], []
    for line in text.expandtabs(8).replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.strip():
            current.append(line.rstrip())
        elif current:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def _prose_indent(blocks: list[list[str]]) -> int:
    """The indentation most prose lines of the document have (what paragraphs are written at)."""
    counts = Counter(_indent(line) for block in blocks for line in block if len(line.strip()) >= 40)
    return min(counts, key=lambda i: (-counts[i], i)) if counts else 0


def _join(lines: list[str]) -> str:
    """Hard-wrapped lines as one line: a word split by a hyphen at a line end ('exam-' 'ple') is rejoined."""
    out = ""
    for line in (ln.strip() for ln in lines):
        if out.endswith("-") and len(out) > 1 and out[-2].isalpha() and line[:1].islower():
            out = out[:-1] + line
        else:
            out = f"{out} {line}" if out else line
    return _SPACES.sub(" ", out)


def _code(lines: list[str]) -> str:
    cut = min(_indent(line) for line in lines)
    return "\n".join([_FENCE, *(line[cut:] for line in lines), _FENCE])


def _pieces(block: list[str], base: int) -> list[str]:
    """One blank-line block of plain text as canonical blocks (a block may hold a list, or prose then code)."""
    out, prose, items, code = [], [], [], []

    def flush_prose():
        if prose:
            out.append(_join(prose))
            prose.clear()

    def flush_items():
        if items:
            out.append("\n".join("- " + _join(item) for item in items))
            items.clear()

    def flush_code():
        if code:
            out.append(_code(code))
            code.clear()

    for n, line in enumerate(block):
        depth, body = _indent(line), line.strip()
        if _RULE.fullmatch(body):  # a separator line: it ends what came before, and is no text
            flush_prose(), flush_items(), flush_code()
            continue
        deeper = depth >= base + 4 and not items and not (prose and depth < base + 8 and _definition(prose))
        if deeper and not code and not _looks_like_code(_run(block, n, depth)):
            deeper = False
        if deeper:
            flush_prose()
            code.append(line)
            continue
        flush_code()
        if len(prose) == 1 and prose[0].strip().endswith("?") and len(prose[0].strip()) <= 200 and not out:
            flush_prose()  # a question on the first line of its block, its answer below it
        bullet = _BULLET.match(body)
        if bullet:
            flush_prose()
            items.append([body[bullet.end():]])
        elif items and depth > base:
            items[-1].append(body)
        else:
            flush_items()
            prose.append(line)
    flush_prose()
    flush_items()
    flush_code()
    return out


def _run(block: list[str], n: int, depth: int) -> list[str]:
    """The lines from ``n`` on that are indented at least ``depth``."""
    out = []
    for line in block[n:]:
        if _indent(line) < depth:
            break
        out.append(line)
    return out


def _definition(prose: list[str]) -> bool:
    """A one-line term ('-a, --all') whose description is indented below it: joined, not code."""
    return len(prose) == 1 and len(prose[0].strip()) <= 60


def _underlined(line: str, under: str) -> bool:
    """'Title' over '=====' (or '-----'): a heading, when the rule is about as long as the title."""
    title, rule = line.strip(), under.strip()
    return (bool(re.fullmatch(r"[=\-~^*]{3,}", rule)) and 0 < len(title) <= 100 and not title.endswith(".")
            and len(title) // 2 <= len(rule) <= len(title) * 3 // 2 + 3)


def _looks_like_code(lines: list[str]) -> bool:
    """Deeper-indented lines are code unless they are one line of plain words (a centred title, a quote)."""
    if len(lines) > 1:
        return True
    line = lines[0].strip()
    return bool(re.search(r"[{}()\[\];=<>$|/\\`@%*~]|\w[:,.]\w|(?:^|\s)--?\w|\w_\w|^\W", line)) or len(line.split()) < 3


def plain_text(text: str) -> str:
    """Hard-wrapped plain text as canonical text (see the module docstring)."""
    blocks = _blocks(text)
    base = _prose_indent(blocks)
    out = []
    for block in blocks:
        if len(block) >= 2 and _underlined(block[0], block[1]):
            out.append(("# " if block[1].strip()[0] == "=" else "## ") + block[0].strip())  # underlined heading
            block = block[2:]
            if not block:
                continue
        if len(block) >= 2 and _definition([block[0]]) and _indent(block[1]) >= _indent(block[0]) + 4 and all(
                _indent(line) >= _indent(block[0]) + 4 for line in block[1:]) and not _BULLET.match(block[0].strip()):
            term = block[0].strip()
            out.append(f"{term}: {_join(block[1:])}" if not term.endswith(":") else f"{term} {_join(block[1:])}")
            continue
        out.extend(_pieces(block, base))
    return "\n\n".join(p for p in out if p.strip())


# -- markdown -----------------------------------------------------------------------------------------------
def _inline(token) -> str:
    """An inline token's children as plain text: links as text (+ absolute URL), code kept, marks dropped."""
    out, link = [], None
    for child in token.children or []:
        kind = child.type
        if kind == "text":
            out.append(child.content)
        elif kind == "code_inline":
            out.append(f"`{child.content}`")
        elif kind in ("softbreak", "hardbreak"):
            out.append(" ")
        elif kind == "link_open":
            link = (len(out), child.attrs.get("href", ""))
        elif kind == "link_close" and link is not None:
            start, href = link
            label = "".join(out[start:]).strip()
            if href and _ABSOLUTE.match(href) and href.rstrip("/") not in (label, label.rstrip("/")):
                out.append(f" ({href.removeprefix('mailto:')})" if label else href)
            link = None
        elif kind == "html_inline":
            continue
    return _SPACES.sub(" ", "".join(out)).strip()


def _html_text(fragment: str) -> str:
    return _SPACES.sub(" ", html.unescape(_TAG.sub(" ", fragment))).strip()


def _cells(tokens, i: int) -> tuple[list[str], int]:
    cells = []
    while tokens[i].type != "tr_close":
        if tokens[i].type == "inline":
            cells.append(_inline(tokens[i]))
        i += 1
    return cells, i


def markdown(text: str) -> tuple[str, str]:
    """(title, canonical text) of a markdown document; the title is its first heading ('' if none)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    out, title, items, i = [], "", [], 0
    while i < len(tokens):
        token = tokens[i]
        kind = token.type
        if kind == "heading_open":
            heading = _inline(tokens[i + 1])
            if heading:
                title = title or heading
                out.append("#" * int(token.tag[1]) + " " + heading)
            i += 2
        elif kind == "paragraph_open":
            body = _inline(tokens[i + 1])
            if body:
                (items[-1] if items else out).append(body)
            i += 2
        elif kind == "list_item_open":
            _flush_item(items, out)  # a nested list: its parent item's text comes first
            items.append([])
        elif kind == "list_item_close":
            item = items.pop()
            if item:
                out.append("- " + " ".join(item))
        elif kind in ("fence", "code_block"):
            _flush_item(items, out)  # an item's sentence, then its command
            out.append("\n".join([_FENCE, token.content.rstrip("\n"), _FENCE]))
        elif kind == "html_block":
            body = _html_text(token.content)
            if body:
                out.append(body)
        elif kind == "tr_open":
            cells, i = _cells(tokens, i)
            if any(cells):
                out.append("| " + " | ".join(cells) + " |")
        i += 1
    return title, _merge_rows("\n\n".join(p for p in out if p.strip()))


def _flush_item(items: list[list[str]], out: list[str]) -> None:
    if items and items[-1]:
        out.append("- " + " ".join(items[-1]))
        items[-1].clear()


def _merge_rows(text: str) -> str:
    """Rows of one table, and items of one list, on consecutive lines (one block)."""
    text = re.sub(r"(?m)^(\|[^\n]*\|)\n\n(?=\|)", r"\1\n", text)
    return re.sub(r"(?m)^(- [^\n]*)\n\n(?=- )", r"\1\n", text)


# -- HTML (whole page) --------------------------------------------------------------------------------------
_SKIP = frozenset("script style noscript template nav form button svg iframe head".split())
_BLOCKS = frozenset("p div section article main header footer aside blockquote figure figcaption center body".split())


def _text_of(element) -> str:
    """An element's text as one line: links as text (+ absolute URL), code kept, marks dropped."""
    out = []

    def walk(node):
        if not isinstance(node.tag, str) or node.tag in _SKIP:
            out.append(node.tail or "")
            return
        out.append(node.text or "")
        for child in node:
            walk(child)
        if node.tag == "a":
            href = node.get("href", "")
            label = node.text_content().strip()
            if href and _ABSOLUTE.match(href) and href.rstrip("/") != label.rstrip("/"):
                out.append(f" ({href.removeprefix('mailto:')})")
        if node.tag == "br":
            out.append(" ")
        if node is not element:
            out.append(node.tail or "")

    walk(element)
    return _SPACES.sub(" ", " ".join("".join(out).split())).strip()


def _html_blocks(element, out: list[str]) -> None:
    """Block elements in document order as canonical blocks; loose text inside a block is a paragraph."""
    loose = [element.text or ""]

    def flush():
        text = " ".join("".join(loose).split())
        if text:
            out.append(text)
        loose.clear()

    for child in element:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in _SKIP or not tag:
            loose.append(child.tail or "")
            continue
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6", "p", "pre", "ul", "ol", "dl", "table", "hr") or tag in _BLOCKS:
            flush()
            _html_block(child, tag, out)
        else:
            loose.append(_text_of(child))
        loose.append(child.tail or "")
    flush()


def _html_block(child, tag: str, out: list[str]) -> None:
    if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
        text = _text_of(child)
        if text:
            out.append("#" * int(tag[1]) + " " + text)
    elif tag == "p":
        text = _text_of(child)
        if text:
            out.append(text)
    elif tag == "pre":
        code = child.text_content().strip("\n")
        if code.strip():
            out.append("\n".join([_FENCE, code.rstrip(), _FENCE]))
    elif tag in ("ul", "ol"):
        items = ["- " + _text_of(li) for li in child.iter("li") if _text_of(li)]
        if items:
            out.append("\n".join(items))
    elif tag == "dl":
        for dt in child.iter("dt"):
            dd = dt.getnext()
            term, text = _text_of(dt), _text_of(dd) if dd is not None and dd.tag == "dd" else ""
            if term or text:
                out.append(f"{term}: {text}" if term and text else term or text)
    elif tag == "table":
        rows = ["| " + " | ".join(_text_of(cell) for cell in row if cell.tag in ("td", "th")) + " |"
                for row in child.iter("tr")]
        rows = [row for row in rows if row.strip("| ")]
        if rows:
            out.append("\n".join(rows))
    elif tag != "hr":
        _html_blocks(child, out)


def html_page(html_source: str) -> tuple[str, str]:
    """(title, canonical text) of a whole HTML page, structure kept: headings, paragraphs, ``<pre>`` verbatim,
    lists, definition lists (``term: text``) and tables. Scripts, styles, navigation and forms go."""
    import lxml.html

    document = lxml.html.fromstring(html_source)
    title = " ".join((document.findtext(".//title") or "").split())
    body = document.find(".//body")
    out: list[str] = []
    _html_blocks(body if body is not None else document, out)
    return title, "\n\n".join(out)
