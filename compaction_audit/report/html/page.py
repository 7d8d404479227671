"""One self-contained HTML page: escaping, the inlined scripts, the Content-Security-Policy.

Every string from a log reaches the page through :func:`esc` (control characters made
visible, then HTML-escaped) or inside the JSON block, which :func:`script_json` makes
inert (``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\uXXXX`` escapes, so no ``</script>``
can close it).  The policy lets nothing be fetched (``default-src 'none'``); the two
scripts run by their SHA-256 hashes; ``style-src 'unsafe-inline'`` is for the styles
Vega and its tooltip set on the elements they draw; images only from ``data:``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from functools import cache
from importlib import resources
from typing import Any

import orjson

from compaction_audit import __version__
from compaction_audit.report.safe import MAX_TEXT, clip_tree, json_safe, printable

_JSON_ESCAPES = {b"<": b"\\u003c", b">": b"\\u003e", b"&": b"\\u0026",
                 b"#": b"\\u0023",
                 "\u2028".encode(): b"\\u2028", "\u2029".encode(): b"\\u2029"}
"""What the page's JSON writes as a string escape.  ``#`` too: the output's CI-command
breaker writes a ``#`` of ``##[``/``##vso[`` as ``&#35;`` (:data:`~compaction_audit.report.
safe.XML`), which a script element does not decode, so the page showed "&#35;#" (adv100
#8); JSON has no ``#`` outside its strings."""


def esc(text: object, newlines: bool = False, limit: int = MAX_TEXT) -> str:
    """Untrusted text for an HTML element or attribute: controls made visible
    (:func:`~compaction_audit.report.safe.printable`; also U+2028/U+2029, which it
    leaves), cut past ``limit`` characters to a prefix and a hash, then ``&<>"'``
    escaped."""
    shown = printable("" if text is None else text, newlines, limit)
    shown = shown.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return html.escape(shown, quote=True)


def script_json(data: Any) -> str:
    """``data`` as JSON safe inside ``<script type="application/json">``: strings clipped
    (:func:`~compaction_audit.report.safe.clip_tree`), invisible and
    control characters as ``\\uXXXX`` (:func:`~compaction_audit.report.safe.json_safe`),
    so the page source shows them as the rendered page does."""
    raw = json_safe(orjson.dumps(clip_tree(data),
                                 option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SORT_KEYS))
    for bad, good in _JSON_ESCAPES.items():
        raw = raw.replace(bad, good)
    return raw.decode()


@cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script, from ``vl-convert-python`` (which
    ships them with no network access), for the Vega-Lite version Altair writes."""
    import altair as alt
    import vl_convert

    version = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    snippet = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"
    bundle: str = vl_convert.javascript_bundle(snippet, vl_version=version)
    return bundle.replace("</script", "<\\/script")


@cache
def glue_script() -> str:
    """The page's own script (``page.js`` beside this module)."""
    return resources.files(__package__).joinpath("page.js").read_text(encoding="utf-8")


def _hash(script: str) -> str:
    digest = hashlib.sha256(script.encode()).digest()
    return "'sha256-" + base64.b64encode(digest).decode() + "'"


def csp(scripts: list[str]) -> str:
    """The Content-Security-Policy of a page whose scripts are ``scripts``."""
    hashes = " ".join(_hash(s) for s in scripts)
    return ("default-src 'none'; script-src " + hashes + "; style-src 'unsafe-inline'; "
            "img-src data:; font-src 'none'; connect-src 'none'; base-uri 'none'; "
            "form-action 'none'")


STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;
background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:20px;margin:8px 0 4px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
h1,h2,h3,.verdict,p,li,table.kv td{overflow-wrap:anywhere}
@media (max-width:600px){main{padding:12px 10px 32px}
table.stack,table.stack tbody,table.stack tr,table.stack td{display:block}
table.stack thead{display:none}table.stack tr{border-bottom:1px solid #ccc;padding:4px 0}
table.stack td{border:0;padding:1px 4px;text-align:left;overflow-wrap:anywhere}
table.stack td::before{content:attr(data-label) ": ";font-weight:600;color:#555}
table.stack td:empty{display:none}}
table{border-collapse:collapse;margin:6px 0;font-size:13px;display:block;max-width:100%;
overflow-x:auto}
th,td{border-bottom:1px solid #e4e4e4;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{font-weight:600;padding:6px 10px;border-radius:4px;display:inline-block;margin:6px 0}
.FAIL,.sev-error{color:#b00020}.WARN,.sev-warning{color:#a36200}.PASS{color:#1b7f2a}
.sev-info{color:#0b6f8a}.dim{color:#666}.mono{font-family:ui-monospace,monospace}
td.unit{min-width:16em;max-width:28em;overflow-wrap:anywhere}td.msg{min-width:20em}
.chart{background:#fff;border:1px solid #e4e4e4;border-radius:4px;padding:8px;
margin:6px 0;overflow-x:auto}
div.chart{display:block;max-width:100%;box-sizing:border-box}
.panel{position:sticky;top:0;background:#fffbe6;border:1px solid #e6d88a;border-radius:4px;
padding:8px 12px;margin:10px 0;z-index:2;max-height:40vh;overflow:auto}
.panel form{display:inline}.panel input{width:7em}
details{margin:4px 0}summary{cursor:pointer}
pre{white-space:pre-wrap;word-break:break-word;background:#fff;border:1px solid #e4e4e4;
padding:8px;font-size:12px;max-height:60vh;overflow:auto}
.asked{color:#a36200;font-weight:600}.nb{white-space:nowrap}
.values span{display:inline-block;margin:0 16px 2px 0;font-variant-numeric:tabular-nums}
.panel h3{margin:6px 0}.panel ul{margin:4px 0;padding-left:20px}
"""


BREAK_EVERY = 40
"""Characters of a run without white space after which the page offers a line break
(``<wbr>``): a long token of log text (a base64 blob, a minified line, a URL) no longer
sets the width of its table's column (adv60: one 3,000-character word made every table
of the page 9,000 to 18,000 px wide); copied text is unchanged."""

_TEXT_RUN = re.compile(r">([^<]+)<")
_CHAR = re.compile(r"&#?\w+;|.", re.S)
_JOINS = re.compile("[\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u0610-\u061a"
                    "\u064b-\u065f\u0900-\u0903\u093a-\u094f\u0951-\u0957"
                    "\u0962\u0963\u0981-\u0983\u09bc-\u09cd\u1160-\u11ff"
                    "\u1ab0-\u1aff\u1dc0-\u1dff\u200c\u200d\u20d0-\u20ff"
                    "\ufe00-\ufe0f\ufe20-\ufe2f\U0001f3fb-\U0001f3ff"
                    "\U000e0020-\U000e007f\U000e0100-\U000e01ef]")
"""Characters that join the one before them into one grapheme (combining marks,
Hangul vowel and final jamo, joiners, variation selectors, skin tones, tag
characters): no break is offered before one (adv61: a mark or a jamo alone at the
start of a line); a character a break may follow comes after them."""


def _break_run(run: re.Match[str]) -> str:
    chars = _CHAR.findall(run.group())  # an escaped character (``&amp;``) is one
    out, since = [], 0
    for i, ch in enumerate(chars):
        if since >= BREAK_EVERY and not _JOINS.match(ch) and not (
                i and chars[i - 1] == "\u200d"):  # nor after a joiner
            out.append("<wbr>")
            since = 0
        out.append(ch)
        since += 1
    return "".join(out)


NOWRAP_MAX = 30
"""Characters of a word that starts with a hyphen (a command-line flag, after any
quote, bracket or backtick) that the page keeps on one line (``<span class="nb">``): a
browser may break a line after a hyphen, which split the flag of "do NOT run the
migration with --force" into "-" and "-force" (usertest31 #4).  A hyphen inside a word
("salience-inversion") may still end a line, as in print; a longer word may break, so
that it never sets its column's width."""

_FLAG = re.compile(r"(?<![^ \t\n\r\f])(?:&#?\w+;|[^\w\s<>-])*-[^ \t\n\r\f<>]*")
"""A word that starts with a hyphen, after any escaped character, quote, bracket or
backtick (``--force``, ``&quot;-n&quot;``, ``(--dry-run)``)."""

_LONG_RUN = re.compile(rf"[^ \t\n\r\f<>]{{{BREAK_EVERY + 1},}}")
"""A run without a space a browser breaks at: no-break spaces (U+00A0, U+202F) are
in the run (adv61: runs joined by them widened the table again)."""


def _flag(word: re.Match[str]) -> str:
    text = word.group()
    return f'<span class="nb">{text}</span>' if 1 < len(text) <= NOWRAP_MAX else text


def _text(run: str) -> str:
    """One run of text between tags with its flags kept whole and its long runs given
    breaks (a flag is never a long run: its tags hold a space)."""
    return _LONG_RUN.sub(_break_run, _FLAG.sub(_flag, run) if "-" in run else run)


def breakable(body: str) -> str:
    """``body`` (escaped HTML) with ``<wbr>`` after every :data:`BREAK_EVERY` characters
    of each longer run without a breaking space in its text, never inside a tag, an
    escaped character or a grapheme (:data:`_JOINS`), and each shorter word that starts
    with a hyphen (at most :data:`NOWRAP_MAX` characters) kept on one line."""
    return _TEXT_RUN.sub(lambda m: ">" + _text(m.group(1)) + "<", body)


def page(title: str, body: str, data: dict[str, Any]) -> bytes:
    """The whole document: ``body`` (already escaped HTML), ``data`` (the charts'
    specs and the round panels' lookup tables) as inert JSON, the scripts inlined."""
    scripts = [vega_bundle(), glue_script()]
    head = (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{csp(scripts)}">\n'
            f'<meta name="referrer" content="no-referrer">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="compaction-audit {esc(__version__)}">\n'
            f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n")
    tail = (f'<script type="application/json" id="ca-data">{script_json(data)}</script>\n'
            + "".join(f"<script>{s}</script>\n" for s in scripts))
    return (head + f"<body>\n<main>\n{breakable(body)}\n</main>\n{tail}</body>\n</html>\n"
            ).encode()
