"""What a rule forbids: the act ("run", "use", "add", ...) and the object of a
prohibition (issue 12, point 4; rule ``lost-rule-violated``, which looks for the object
in later tool calls: :mod:`compaction_audit.recall.violations`).

For "run", "execute", "call", "invoke", "use", "enable", "pass", "push" the act is a
command, for "add", "include", "put", "write", "insert", "append", "commit" a write; a
flag an act is done with is a command's ("commit with --no-verify"), "force-push" and
"push -f" are "push --force", and "avoid" names a command with no verb ("avoid git
reset --hard").  The object is the first code span after the verb; else the first
identifier-like word (a character of ``-_./:@=``, a digit, or a capital inside); else
two or more plain words (matched as a phrase; three and a flag after them, "npm audit
fix --force", are the long flag); a single plain word only for a run verb,
and then only at the start of a command ("never use sudo" against ``sudo rm ...``).
Code spans and identifier-like words listed right after it with "or", "nor" or commas
are objects too (:func:`forbidden_all`: "Do NOT use --no-verify or --force").  The text
is read without markdown emphasis and with a flag an editor's smart punctuation typed as
one dash written "--" (:func:`_plain`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["Rule", "forbidden", "forbidden_all"]


class Rule(NamedTuple):
    """What a prohibition forbids: ``object`` (the text a call must hold), ``act``
    ("command" or "write"), ``at_start`` (a single plain word, matched only at a
    command's start) and ``scope``: words of which a call must also hold one (any
    case), for a flag forbidden only on the act's own object: its identifier-like words,
    else its words ("do NOT run the prod migration 0047 with --force": ``--force``,
    scope ``("0047",)``, so ``git push --force`` breaks nothing: adv146 F3); empty for
    none."""

    object: str
    act: str
    at_start: bool
    scope: tuple[str, ...] = ()

_RUN = ("run", "running", "execute", "executing", "call", "calling", "invoke", "invoking",
        "use", "using", "enable", "enabling", "pass", "passing", "push", "pushing")
_WRITE = ("add", "adding", "include", "including", "put", "putting", "write", "writing",
          "insert", "inserting", "append", "appending", "commit", "committing")
_RULE_RE = re.compile(
    r"(?i)\b(?:(?:do\s+not|don['\u2019]t|never|must\s+not|mustn['\u2019]t|should\s+not"
    r"|shouldn['\u2019]t)"
    r"(?:[\s,]+(?:ever|again|even|actually|really|please))*[\s,]+"
    r"|(?:cannot|can['\u2019]t|avoid|not|no)\s+(?:ever\s+)?)"
    rf"({'|'.join(_RUN + _WRITE)})\b\s*(.*)", re.DOTALL)
"""A prohibition and its act: after an imperative negation, adverbs and commas ("Never,
ever run", "Do not even run", "Never again use": adv106 #1); after "cannot", "avoid"
or a bare "not" or "no", only "ever" ("not just running ...", "did not even run ...",
"No, just run ...", "I cannot even run `make test`" forbid nothing: adv105 #5, adv107
#3; nor "simply", which contrasts: "Don't simply run `pytest`; run `pytest -x`", adv106
#7)."""
_EMPHASIS_RES = (
    re.compile(r"(?<![\w*])(\*{1,3})(\w(?:[^*\n]*?\w)?)\1(?![\w*])"),
    re.compile(r"(?<!\w)(_)([^\W_](?:[^_\n]*?[^\W_])?)_(?!\w)"),
    re.compile(r"(~~)(\w(?:[^~\n]*?\w)?)~~"))
"""Markdown emphasis around words, as a pair, stars first ("do **not** run", "*never*
use", "**_ever_**"), then single underscores ("_ever_") and tildes ("~~ever~~"): read
without it outside code spans (adv104 #1: a rule restated with it forbade nothing;
adv105 #6, adv106 #2, adv107 #4: a lone ``*`` or ``_`` is the name's own,
``tests/*_slow.py``, ``_reset_all_tenants``, a dunder ``__init__.py`` keeps its
underscores, and two globs are no pair, "*.pyc or build/*")."""
_SPLIT_CODE_RE = re.compile(r"(`[^`\n]*`)")


_DASHED = r"([\u201c\u2018\"'(]?)[\u2010\u2011\u2013\u2014\u2212]{1,2}"
"""An opening quote (group 2 of the two regexes below), then one or two dashes of
smart punctuation: em, en, minus sign, Unicode hyphens."""
_SMART_DASH_RE = re.compile(
    r"(?i)(\b(?:" + "|".join(_RUN + _WRITE) + r"|the|a|an|any|or|nor|and)[ \t]+|,[ \t]*)"
    + _DASHED + r"(?=[A-Za-z][\w-]{2})"
    r"(?![A-Za-z][\w-]*[\u2013\u2014](?:\s|$))")  # "any \u2014global\u2014 state": an aside
"""A flag's "--" that an editor's smart punctuation made one dash, two en dashes, a
minus sign or Unicode hyphens ("Do NOT use \u2014force", adv116 B5; "\u2212force",
"\u2010\u2010force", adv120 #5): a dash opening a word of three characters or more
right after the act's verb, an article, "or", "nor", "and" or a comma (an opening
quote between), where a prose dash after other words is an aside ("Don't use the
debug build \u2014verbose logs fill the disk" forbids no --verbose: adv120 #4), and so
is a word between two dashes ("any \u2014global\u2014 state": adv121 #8)."""
_SMART_DASH_END_RE = re.compile(
    r"(?i)([\w.-][ \t]+)" + _DASHED
    + r"(?=[A-Za-z][\w-]{2,}[\u201d\u2019\"')]?(?:[ \t]*(?:$|[.,;:!?])|[ \t]+(?:on|in|to|for"
    r"|when|unless|without|with|into|from|at|by|again|anymore|here|there|or|nor|and"
    r"|because|since|before|after|if|instead)\b))")
"""Such a dash after any other word where the word it opens ends the object: at the end,
before punctuation or a word that starts a clause ("Don't run git push \u2014force",
"Never run pytest \u2014runslow on CI", "Do NOT pass the flag \u2014force": adv121 #1),
not before more words of the sentence ("the debug build \u2014verbose logs fill the
disk")."""
_FLAG_END_RE = re.compile(r"(--[A-Za-z][\w-]*)[\u2013\u2014]")
"""A flag an en or em dash ends ("\u2014force\u2014it rewrites"): the flag alone is the
object (:func:`_flag_cut`)."""
_DASH_WORD_RE = re.compile(r"(?<!\S)[\u2010\u2011\u2013\u2014\u2212]{1,2}"
                           r"(?=[A-Za-z][\w-]{2,}(?![\w\u2013\u2014-]))")
"""A dash of smart punctuation opening a word of three characters or more, where it
opens a flag of the command written before it (:func:`_command_flags`)."""
_QUOTES = ".,;!?()\"'\u201c\u201d\u2018\u2019"
"""What a word of a prohibition's object is stripped of (curly quotes too: adv120 #5)."""


def _plain(text: str) -> str:
    """``text`` with :data:`_EMPHASIS_RES` removed outside its code spans, and a flag
    typed with a dash (:data:`_SMART_DASH_RE`) written with "--"."""
    parts = _SPLIT_CODE_RE.split(text)
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        for pattern in _EMPHASIS_RES:
            parts[i] = pattern.sub(r"\2", parts[i])
        if not parts[i].isascii():
            parts[i] = _SMART_DASH_END_RE.sub(r"\1\2--",
                                              _SMART_DASH_RE.sub(r"\1\2--", parts[i]))
    return "".join(parts)


def _command_flags(words: str) -> str:
    """``words``, a command named as a prohibition's object (a code span, or the plain
    words after the act's verb up to a dashed word), with each smart dash that opens a
    word written "--": "git push \u2014force" is ``git push --force``, as an editor
    turns a pasted command line whole, its arguments after the flag included (adv122
    #6).  The words before it stay part of the object, so only a call that runs that
    command with that flag matches: "the debug build \u2014verbose" is the phrase
    ``debug build --verbose``, never ``--verbose`` alone (adv120 #4)."""
    return _DASH_WORD_RE.sub("--", words)


def _flag_cut(word: str) -> str:
    """``word`` up to the en or em dash that ends a flag in it (:data:`_FLAG_END_RE`)."""
    m = _FLAG_END_RE.match(word) if word.startswith("--") else None
    return m.group(1) if m else word
_CODE_RE = re.compile(r"`([^`\n]{2,120})`")
_STOP = frozenset({"in", "on", "to", "for", "when", "unless", "without", "with", "into",
                   "from", "at", "by", "again", "anymore", "here", "there", "and", "or",
                   "because", "since", "before", "after", "if", "this", "that"})
_ARTICLES = frozenset({"a", "an", "the", "any"})
_IDENT_RE = re.compile(r"[-_./:@=\d]|.[A-Z]")
_FLAG_WORD_RE = re.compile(r"--?[A-Za-z][\w-]*$")


_FORCE_PUSH_RE = re.compile(r"(?i)\bforce[- ]?push(?:ing)?\b|\bpush\s+-f\b")
"""The verb form of ``git push --force`` and its short flag ("don't force-push main",
"never push -f to main"; adv123 #4), read as "push --force"."""
_WITH_FLAG_RE = re.compile(r"(?i)^\s*with\s+(--?[A-Za-z][\w-]+)")
"""A flag the act is done with ("Do NOT commit with --no-verify": adv123 #4)."""
_LATER_FLAG_RE = re.compile(r"(?i)^([^.;:,!?\n`]{0,80}?)\bwith\s+(--?[A-Za-z][\w-]+)")
"""A flag the act is done with, later in the clause than the three words an object
reads ("do NOT run the prod migration 0047 with --force": the safe form, without the
flag, broke the rule at '0047': usertest76 F1); no comma between (", use it with
--prod only" is another clause: adv146 F3)."""
_EXCEPT_RE = re.compile(r"(?i)\b(?:except|unless|only|other\s+than|but|instead|rather|"
                        r"apart\s+from|save)\b")
"""Between the object and a later "with --flag": the flag is what is allowed ("Do not
run the nightly benchmark suite except with --quick": adv146 F3)."""
_AVOID_RE = re.compile(r"(?i)(?<!\bto )\bavoid\s+(?:ever\s+)?(.*)", re.DOTALL)
""""Avoid" and what it forbids, with no act verb between ("Avoid git reset --hard"); not
"to avoid", a purpose ("we rebased to avoid --force")."""


def forbidden(text: str) -> Rule | None:
    """``(object, act, phrase_only_at_start)`` of a prohibition, None when ``text``
    forbids no act on a matchable object.  ``act`` is "command" or "write"; the third
    value is true for a single plain word (matched only at a command's start).  A flag
    the act is done with is a command's ("commit with --no-verify"); "force-push" is
    "push --force"; "avoid" forbids a command or code span it names with no verb, an
    identifier-like word in it (adv123 #4: each forbade nothing)."""
    plain = _FORCE_PUSH_RE.sub("push --force", _plain(text))
    m = _RULE_RE.search(plain)
    if m is None:
        avoid = _AVOID_RE.search(plain)
        found = _object(avoid.group(1), "command") if avoid else None
        named = found is not None and not found[2] and bool(
            _IDENT_RE.search(found[0])
            or (avoid is not None and avoid.group(1).lstrip().startswith("`")))
        return found if named else None
    act = "command" if m.group(1).lower() in _RUN else "write"
    flag = _WITH_FLAG_RE.match(m.group(2))
    if flag:
        return Rule(flag.group(1), "command", False)
    return _object(m.group(2), act)


def _object(rest: str, act: str) -> Rule | None:
    """The object of a prohibition whose act (``act``) opens ``rest``: a code span, an
    identifier-like word, a phrase of plain words (:func:`forbidden`)."""
    code = _CODE_RE.match(rest.lstrip()) or _CODE_RE.match(
        re.sub(r"(?i)^\s*(?:a|an|the|any)\s+", "", rest))
    if code:
        return Rule(_command_flags(code.group(1).strip().rstrip(":")), act, False)
    words: list[str] = []
    raws = re.split(r"\s+", rest.strip())
    for n, raw in enumerate(raws):
        word = _flag_cut(raw.strip(_QUOTES))
        if not word or (not words and word.lower() in _ARTICLES):
            continue
        after = raws[n + 1].strip(_QUOTES) if n + 1 < len(raws) else ""
        if word.lower() in _STOP or raw != raw.rstrip(".,;!?"):
            if word.lower() == "with" and _FLAG_WORD_RE.match(after):
                # "terraform apply with --auto-approve", on a call naming terraform
                return Rule(after, act, False, _scope(words))
            if word.lower() not in _STOP:
                words.append(word)
            break
        words.append(word)
        if len(words) == 3:
            if (after.startswith("--") and _FLAG_WORD_RE.match(after)
                    and not any(_IDENT_RE.search(w) for w in words)):
                # "npm audit fix --force": the flag, as "git push --force" is read (adv123
                # b23: "npm audit fix" alone was broken by the safe form; adv125 #3: as a
                # phrase, "npm audit fix --legacy-peer-deps --force" broke nothing); a
                # short flag stays with its command ("docker compose down -v": "-v"
                # alone is every other command's too)
                return Rule(after, act, False)
            later = _LATER_FLAG_RE.match(" ".join(raws[n + 1:]))
            if later and not _EXCEPT_RE.search(later.group(1)):
                # "run the prod migration 0047 with --force": the flag is what is
                # forbidden (usertest76 F1), on a call that names the object (adv146 F3)
                return Rule(later.group(2), act, False, _scope(words))
            break
    for k, word in enumerate(words):
        if k and _DASH_WORD_RE.match(word):  # "git push \u2014force origin main"
            return Rule(_command_flags(" ".join(words[:k + 1])).lower(), act, False)
        if _IDENT_RE.search(word) and len(word) >= 3:
            return Rule(word.rstrip(":"), act, False)
    if len(words) >= 2:
        return Rule(" ".join(words).lower(), act, False)
    if words and act == "command" and len(words[0]) >= 3:
        return Rule(words[0].lower(), act, True)
    return None


def _scope(words: list[str]) -> tuple[str, ...]:
    """The :attr:`Rule.scope` of a flag done with the object ``words``: its
    identifier-like words ("0047"), else its words, lower case, of 3 characters or
    more."""
    named = [w for w in words if _IDENT_RE.search(w)]
    return tuple(dict.fromkeys(w.lower() for w in named or words if len(w) >= 3))


ALTERNATIVES_MAX = 4
"""Most objects a rule names besides its first ("--no-verify or --force")."""
_ALT_RE = re.compile(
    # ", ", " or ", ", or ", " nor ", " and/or " and an article, then a code span or a
    # word (an identifier-like one is kept: :data:`_IDENT_RE`)
    r"(?i)[ \t]*(?:,[ \t]*(?P<or1>(?:or|nor)[ \t]+)?|[ \t]+(?P<or2>or|nor|and/or)[ \t]+)"
    r"(?:(?:a|an|the|any)[ \t]+)?(?:`([^`\n]{2,120})`|([^\s`,;!?()\"'\u201c\u201d\u2018\u2019]+))")
_LIST_GOES_ON_RE = re.compile(
    r"(?i)[ \t]*(?:[,.;:!?)\n]|$|(?:or|nor|and|in|on|to|for|when|unless|with|without|"
    r"into|from|at|by|against|here|there|again|anymore|because|since|before|after|if"
    r"|instead)\b)")
"""After a plain word that ", or" lists: the list or the rule goes on, no verb of another
clause ("--force, or origin/main loses commits": adv115 #5)."""
_ALLOWED_RE = re.compile(r"(?i)[ \t]*(?:(?:is|are)[ \t]+(?:fine|ok|okay|allowed|permitted"
                         r"|acceptable|preferred|recommended|better)|works|instead(?![ \t]+of))\b")
"""After an alternative: it is allowed, not forbidden ("Don't use --force, --force-with-lease
is fine": adv113 #6; "... is preferred", "... works", "... instead": adv114 #4)."""


def forbidden_all(text: str) -> tuple[Rule, ...]:
    """Every ``(object, act, phrase_only_at_start)`` a prohibition names: the first
    (:func:`forbidden`), then the code spans or identifier-like words listed right after
    it with "or", "nor" or commas, up to the item an "or" or "nor" closes the list at ("Do
    NOT use --no-verify or --force", "Never use --force, --no-verify, or --amend"; adv112 #3:
    only the first was looked for, and a later ``git push --force`` broke the rule
    unseen), none said to be allowed ("--force-with-lease is fine"), at most
    :data:`ALTERNATIVES_MAX` more.  Empty when ``text`` forbids nothing."""
    first = forbidden(text)
    if first is None:
        return ()
    out = [first]
    plain = _command_flags(_plain(text))
    obj, act, at_start, _ = first
    at = plain.find(f"`{obj}`")
    end = at + len(obj) + 2 if at >= 0 else -1
    if end < 0 and not at_start and (at := plain.find(obj)) >= 0:
        end = at + len(obj)
    listed: list[Rule] = []  # the objects after the first
    closed = 0  # how many of them an "or" or "nor" closes the list at
    while end >= 0 and len(listed) < ALTERNATIVES_MAX:
        m = _ALT_RE.match(plain, end)
        if m is None:
            break
        item = _flag_cut((m.group(3) or m.group(4) or "").strip().rstrip(".:"))
        end = m.end()
        if item.startswith("-") and len(item) < 3:
            pass  # "-f", "-n": a short flag of every command, no object, the list goes on
        elif (len(item) < 2 if m.group(3) else len(item) < 3 or not _IDENT_RE.search(item)
              or (m.group("or1") and not _LIST_GOES_ON_RE.match(plain, end))):
            break  # ", or origin/main loses ..." is a clause of its own (adv115 #5); `dd`
            # is a command (adv115 #3)
        elif _ALLOWED_RE.match(plain, end):
            break
        else:
            listed.append(Rule(item, act, False))
        if m.group("or1") or m.group("or2"):
            closed = len(listed)
    # the list ends at its "or" or "nor" item: a comma alone goes on to another clause
    # ("--force, --force-with-lease is fine"; "--force or --no-verify, --force-with-lease
    # instead": adv113 #6, adv114 #4)
    return tuple(dict.fromkeys(out + listed[:closed]))
