"""Imports read as a person reads them: paragraphs joined, code kept, markdown and HTML to clean text."""
from __future__ import annotations

import pytest

from core.knowledge.extract import extract_file
from core.knowledge.normalize import markdown, plain_text

HARD_WRAPPED = """Why do long usernames get printed as numbers?

\tThe UNIX and POSIX standards require that user names and group names
\tbe printed as decimal integers when there is not enough room in the
\tcolumn.  The UNIX and POSIX way to change column width is to rename the column:

\t\tps -o pid,user=CumbersomeUserNames -o comm

\tThe easy way is to directly specify the desired width:

\t\tps -o pid,user:19,comm
"""


def test_hard_wrapped_lines_become_one_paragraph_and_deeper_indentation_is_code():
    text = plain_text(HARD_WRAPPED)
    assert text.split("\n\n") == [
        "Why do long usernames get printed as numbers?",
        "The UNIX and POSIX standards require that user names and group names be printed as decimal integers when "
        "there is not enough room in the column. The UNIX and POSIX way to change column width is to rename the "
        "column:",
        "```\nps -o pid,user=CumbersomeUserNames -o comm\n```",
        "The easy way is to directly specify the desired width:",
        "```\nps -o pid,user:19,comm\n```"]


@pytest.mark.parametrize("raw, expected", [
    ("Title\n=====\n\nBody text that is long enough to be prose, really it is.", "# Title\n\nBody text that is long "
     "enough to be prose, really it is."),
    ("- one item\n  that wraps\n- two", "- one item that wraps\n- two"),
    ("       -a, --all\n              do not ignore entries starting with .", "-a, --all: do not ignore entries "
     "starting with ."),
    ("A hyphen-\nated word at a line end is rejoined.", "A hyphenated word at a line end is rejoined."),
])
def test_plain_text_shapes(raw, expected):
    assert plain_text(raw) == expected


def test_markdown_links_emphasis_images_and_layout_html_become_clean_text():
    title, text = markdown(
        '<p align="center"><img src="logo.png"></p>\n\n# Zstandard\n\n**Disable it at build time.** Pass '
        "`--no_telemetry`; see the [API pages](../README.md#api) and [the site](https://facebook.github.io/zstd/)."
        "\n\n```\nzstd --train samples/* -o dict\n```\n\n| Level | Ratio |\n|---|---|\n| 1 | 2.8 |\n")
    assert title == "Zstandard"
    assert text == ("# Zstandard\n\nDisable it at build time. Pass `--no_telemetry`; see the API pages and the site "
                    "(https://facebook.github.io/zstd/).\n\n```\nzstd --train samples/* -o dict\n```\n\n"
                    "| Level | Ratio |\n| 1 | 2.8 |")


def test_titles_come_from_the_document_not_the_file_name():
    [md] = extract_file("readme-zstd.md", b"Intro line.\n\n# Zstandard\n\nA fast compressor.")
    [txt] = extract_file("notes.txt", b"Backup policy\n\nWe keep copies of every file for ninety days, nightly.")
    [bare] = extract_file("FAQ.txt", b"Why is it slow?\n\nBecause it checks every file.")
    assert (md.title, txt.title, bare.title) == ("Zstandard", "Backup policy", "Faq")


def test_an_uploaded_html_document_keeps_all_its_text_and_structure():
    page = b"""<html><head><title>zlib Usage Example</title><script>var x = 1;</script></head><body>
    <nav><a href="/">Home</a></nav>
    <h2>zlib Usage Example</h2>
    We often get questions about <code>deflate()</code>, see <a href="https://zlib.net/">the site</a>.
    <pre>#define CHUNK 16384
int main(void) { return 0; }</pre>
    <dl><dt>dialout</dt><dd>Full and direct access to serial ports.</dd></dl>
    <table><tr><th>Level</th><th>Ratio</th></tr><tr><td>1</td><td>2.8</td></tr></table>
    </body></html>"""
    [doc] = extract_file("ref-zlib-how.html", page)
    assert doc.title == "zlib Usage Example"
    assert doc.content.split("\n\n") == [
        "## zlib Usage Example",
        "We often get questions about deflate(), see the site (https://zlib.net/).",
        "```\n#define CHUNK 16384\nint main(void) { return 0; }\n```",
        "dialout: Full and direct access to serial ports.",
        "| Level | Ratio |\n| 1 | 2.8 |"]
