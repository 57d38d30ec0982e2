"""Markup an answer may carry that must never become an element, an attribute or a live link in the widget: raw
HTML (script, event handlers, mutation-XSS shapes, comments and CDATA), scriptable URLs in every spelling markdown
accepts (entities, case, angle brackets, reference definitions, images, autolinks) and markup inside code.

Written for this project from the well-known families (OWASP's XSS filter evasion cheat sheet, the shapes HTML
sanitizers are tested with). The renderer's unit tests (tests/api/test_render.py) and the browser test
(tests/api/test_widget_markdown_browser.py) both run every one of them; the prompt-injection payloads of
tests/agent/test_injection.py are added there too (plain text that must stay plain text).
"""
from __future__ import annotations

#: Raw HTML: the whole payload must come out as the visible text, character for character.
HTML_PAYLOADS = [
    "<img src=x onerror=alert(1)>",
    '<img src="x" onerror="window.__pwned=1">',
    "<IMG SRC=JaVaScRiPt:alert(1)>",
    "<script>window.__pwned=1</script>",
    "<scr<script>ipt>alert(1)</script>",
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    "<body onload=alert(1)>",
    "<iframe src=\"javascript:alert(1)\"></iframe>",
    "<iframe srcdoc=\"<script>alert(1)</script>\"></iframe>",
    "<a href=\"javascript:alert(1)\">click</a>",
    "<a href=\"&#x6A;avascript:alert(1)\">click</a>",
    "<details open ontoggle=alert(1)>",
    "<input autofocus onfocus=alert(1)>",
    "<video><source onerror=alert(1)></video>",
    "<object data=\"javascript:alert(1)\"></object>",
    "<embed src=\"javascript:alert(1)\">",
    "<form action=javascript:alert(1)><button>go</button></form>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
    "<style>@import 'https://evil.test/x.css';</style>",
    "<link rel=stylesheet href=https://evil.test/x.css>",
    "<div style=\"background:url(javascript:alert(1))\">styled</div>",
    "<p onclick=alert(1)>tap</p>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">",
    "<!--<img src=x onerror=alert(1)>-->",
    "<template><img src=x onerror=alert(1)></template>",
    "\"><img src=x onerror=alert(1)>",
    "' onmouseover='alert(1)",
    "<base href=\"https://evil.test/\">",
]

#: Markdown that carries a scriptable or relative URL: the link must lose its markup (its text stays), and no URL
#: other than the absolute http(s) ones listed in SAFE_HREFS may end up in an href.
MARKDOWN_PAYLOADS = [
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](javascript&#58;alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](<javascript:alert(1)>)",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](file:///etc/passwd)",
    "[click](//evil.test/path)",
    "[click](../README.md#devoluciones)",
    "[click](/relative/path)",
    "[click](#anchor)",
    "[click]\n\n[click]: javascript:alert(1)",
    "[1]\n\n[1]: https://evil.test/",
    "<javascript:alert(1)>",
    "![pixel](javascript:alert(1))",
    "![pixel](https://evil.test/pixel.png)",
    "[![pixel](https://evil.test/pixel.png)](javascript:alert(1))",
    "[ok](https://shop.test/a \"t\\\" onmouseover=\\\"alert(1)\")",
    "[ok](https://shop.test/\"onmouseover=\"alert(1))",
    "[<img src=x onerror=alert(1)>](https://shop.test/)",
    "**<img src=x onerror=alert(1)>**",
    "- <img src=x onerror=alert(1)>\n- <script>alert(1)</script>",
    "`<img src=x onerror=alert(1)>`",
    "```html\n<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n```",
    "    <img src=x onerror=alert(1)>",
    "&lt;img src=x onerror=alert(1)&gt;",
    "&#60;script&#62;alert(1)&#60;/script&#62;",
]

#: The only hrefs the markdown payloads may produce (absolute https links the payloads themselves write).
SAFE_HREFS = {"https://shop.test/", "https://shop.test/a", "https://shop.test/%22onmouseover=%22alert(1)"}

ALL = HTML_PAYLOADS + MARKDOWN_PAYLOADS
