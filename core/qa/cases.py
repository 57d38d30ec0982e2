"""The QA case vocabulary, pure (Q1-Q2): the fields of a case, their validation, JSONL lines, and the
judgement of one answer against a case's expectation. No I/O; ``core.qa.suites`` stores what passes here."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from core.base.errors import UserError
from core.channels import conversations
from core.channels.turn import UNCOVERED
from core.knowledge import sources as sources_mod
from core.qa.content import CONTENT_FIELDS, check_content, clean_content
from core.tenancy.context import SUPPORT_CHANNELS, AuthError, TenantContext

EXPECTATIONS = ("answered", "partial", "abstains", "handoff", "card")
#: the agent's status each expectation asks for (``card`` has none yet). ``abstains`` means the agent said the
#: material does not cover the question; a partial answer (the topic covered, not the point asked: it says what is
#: missing, then the closest cited facts) is not an abstention and passes only ``partial``.
EXPECTED_STATUS = {"answered": "answered", "partial": "partial", "abstains": "abstained", "handoff": "handoff"}
#: the expectations whose answer is checked against ``cite`` (a partial answer cites its closest facts)
CITING = ("answered", "partial")
FIELDS = ("question", "prefix", "channel", "expect", "cite", "facts", "forbidden", "card", "note")
MAX_NAME_CHARS = 80
MAX_NOTE_CHARS = 500
MAX_PREFIX = conversations.MAX_HISTORY_TURNS - 1  # every earlier message still reaches the model
MAX_IMPORT_LINES = 2000
CARDS_NOT_BUILT = "cards are not built yet: the agent cannot propose card '{card}' until the cards issue lands"


class QaError(UserError):
    """Bad input for a suite, a case or a run; the message says what was wrong and what to do."""


class QaImportError(QaError):
    """A JSONL import with bad lines; nothing was imported. ``errors`` holds one message per bad line."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        shown = "\n".join(self.errors[:20]) + (f"\n… and {len(self.errors) - 20} more" if len(self.errors) > 20 else "")
        super().__init__(f"Nothing was imported: {len(self.errors)} bad line(s). Fix them and import again.\n{shown}")


@dataclass(frozen=True)
class Suite:
    id: int
    name: str
    created_at: str
    updated_at: str
    created_by: str
    cases: int = 0
    last_run: dict | None = None  # {id, finished_at, total, passed}


@dataclass(frozen=True)
class Case:
    id: int
    suite_id: int
    position: int
    question: str
    prefix: tuple[str, ...] = ()
    channel: str = "web"
    expect: str = "answered"
    cite: str = ""
    card: str = ""
    note: str = ""
    facts: tuple[str, ...] = ()  # texts the answer must contain (core.qa.content)
    forbidden: tuple[str, ...] = ()  # texts it must not contain

    @property
    def number(self) -> int:
        """The case's number in its suite (1, 2, …; never reused). ``id`` stays the global key runs compare by."""
        return self.position

    def line(self) -> dict:
        """The case as one JSONL object (defaults left out, so a file stays short)."""
        return case_line(asdict(self))

    @property
    def expectation(self) -> str:
        return describe(self.line())


@dataclass
class ImportReport:
    suite: Suite
    created: bool
    added: int
    skipped: int  # identical to a case already in the suite (or earlier in the file)
    removed: int  # with replace=True: the cases the import replaced

    def as_dict(self) -> dict:
        return {"suite": self.suite.name, "suite_id": self.suite.id, "created": self.created, "added": self.added,
                "skipped": self.skipped, "removed": self.removed}


# -- validation (pure) -------------------------------------------------------------------------------------
def require_qa(ctx: TenantContext) -> None:
    if not ctx.can("qa"):
        raise AuthError(f"Only the qa role (or an admin) can change QA suites; {ctx.actor} is {ctx.role} "
                        f"of '{ctx.tenant_slug}'.")


def clean_suite_name(raw: str) -> str:
    name = " ".join(str(raw or "").split())
    if not name:
        raise QaError("A suite needs a name, e.g. 'smoke' or 'returns and shipping'.")
    if len(name) > MAX_NAME_CHARS:
        raise QaError(f"The suite name has {len(name)} characters; the limit is {MAX_NAME_CHARS}.")
    if name.isdigit():
        raise QaError(f"A suite name cannot be only digits ({name!r}): digits name a suite by its id.")
    return name


def _text(data: dict, key: str) -> str:
    value = data.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise QaError(f"'{key}' must be a string, not {type(value).__name__}.")
    return value.strip()


def validate_case(data: dict) -> dict:
    """The fields of a case (question, prefix, channel, expect, cite, facts, forbidden, card, note), checked and
    normalised.

    Raises QaError saying what is wrong. ``cite`` is a source path (or a folder: any source below it counts)
    and belongs only to ``answered`` and ``partial``, like ``facts`` (texts the answer must say);
    ``forbidden`` (texts it must not say) goes with any expectation; ``card`` names the card and belongs only
    to ``card``."""
    if not isinstance(data, dict):
        raise QaError("A case must be a JSON object such as {\"question\": \"…\", \"expect\": \"abstains\"}.")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise QaError(f"Unknown field(s) {', '.join(map(repr, unknown))}; a case has {', '.join(FIELDS)}.")
    if not isinstance(data.get("question"), str) or not data["question"].strip():
        raise QaError("'question' is missing or empty: write the customer's question.")
    try:
        question = conversations.check_message(data["question"])
        raw_prefix = data.get("prefix") or []
        if isinstance(raw_prefix, str) or not isinstance(raw_prefix, list):
            raise QaError("'prefix' must be a list of the customer's earlier messages, "
                          "e.g. [\"Hola\", \"¿Y a Canarias?\"].")
        if len(raw_prefix) > MAX_PREFIX:
            raise QaError(f"'prefix' has {len(raw_prefix)} messages; the limit is {MAX_PREFIX}.")
        if not all(isinstance(m, str) for m in raw_prefix):
            raise QaError("Every message of 'prefix' must be a string.")
        prefix = tuple(conversations.check_message(m) for m in raw_prefix)
    except conversations.ConversationError as exc:
        raise QaError(str(exc)) from exc
    channel = _text(data, "channel") or "web"
    if channel not in conversations.CHANNELS:
        raise QaError(f"Channel {channel!r} is not known; use one of {', '.join(conversations.CHANNELS)}.")
    expect = _text(data, "expect")
    if expect not in EXPECTATIONS:
        raise QaError(f"'expect' is {expect or 'missing'!r}; use one of {', '.join(EXPECTATIONS)}.")
    cite, card, note = _text(data, "cite"), _text(data, "card"), _text(data, "note")
    if cite and expect not in CITING:
        raise QaError(f"'cite' goes with expect 'answered' or 'partial' only (this case expects '{expect}').")
    if cite:
        try:
            cite = sources_mod.normalize_path(cite)
        except sources_mod.SourceError as exc:
            raise QaError(f"'cite': {exc}") from exc
    if expect == "card" and not card:
        raise QaError("expect 'card' needs 'card': the name of the card the agent should propose.")
    if card and expect != "card":
        raise QaError(f"'card' goes with expect 'card' only (this case expects '{expect}').")
    if len(note) > MAX_NOTE_CHARS:
        raise QaError(f"'note' has {len(note)} characters; the limit is {MAX_NOTE_CHARS}.")
    try:
        facts, forbidden = clean_content(data)
    except ValueError as exc:
        raise QaError(str(exc)) from exc
    if facts and expect not in CITING:
        raise QaError(f"'facts' go with expect 'answered' or 'partial' only (this case expects '{expect}'): "
                      "an answer that is not given says nothing to check.")
    return {"question": question, "prefix": prefix, "channel": channel, "expect": expect, "cite": cite, "card": card,
            "note": note, "facts": facts, "forbidden": forbidden}


def case_line(fields: dict) -> dict:
    """A case's fields as a JSONL object: question and expect always, the rest only when set."""
    line = {"question": fields["question"]}
    if fields.get("prefix"):
        line["prefix"] = list(fields["prefix"])
    if fields.get("channel", "web") != "web":
        line["channel"] = fields["channel"]
    line["expect"] = fields["expect"]
    for key in ("cite", "facts", "forbidden", "card", "note"):
        if fields.get(key):
            line[key] = list(fields[key]) if key in CONTENT_FIELDS else fields[key]
    return line


def describe(line: dict) -> str:
    """'answered citing politicas/envios', 'partial citing tienda', 'abstains', 'hands off', 'proposes card X';
    with what the answer must say and must not say: 'answered citing faq, saying “30 días”, never “gratis”'."""
    expect = line.get("expect", "")
    if expect in CITING:
        said = f"{expect} citing {line['cite']}" if line.get("cite") else expect
    elif expect == "handoff":
        said = "hands off"
    elif expect == "card":
        said = f"proposes card {line.get('card', '')}"
    else:
        said = expect
    if line.get("facts"):
        said += ", saying " + " and ".join(f"“{f}”" for f in line["facts"])
    if line.get("forbidden"):
        said += ", never " + " or ".join(f"“{f}”" for f in line["forbidden"])
    return said


def case_key(fields: dict) -> tuple:
    return (fields["question"], tuple(fields["prefix"]), fields["channel"], fields["expect"], fields["cite"],
            fields["card"], tuple(fields.get("facts") or ()), tuple(fields.get("forbidden") or ()))


def cites(path: str, cite: str) -> bool:
    """True when a cited source path is the expected one, or lies below the expected folder."""
    return path == cite or path.startswith(cite.rstrip("/") + "/")


def got(status: str, paths: list[str], trace: dict | None = None) -> str:
    """What the agent did, as a failure message says it: 'answered citing faq/x', 'partial: the material does not
    mention “Valencia” (the rest cites tienda/horarios)', 'abstained (the gate withheld an unsupported answer)'."""
    trace = trace or {}
    if status == "answered":
        return f"answered citing {', '.join(paths)}" if paths else "answered without citations"
    if status == "partial":
        words = [str(w) for w in trace.get("missing") or []]
        said = f"partial: the material does not mention {', '.join(f'“{w}”' for w in words) or 'the point asked'}"
        return said + (f" (the rest cites {', '.join(paths)})" if paths else "")
    if status == "error":
        return f"an error ({trace.get('fault') or 'no detail'})"
    if status == "abstained" and trace.get("abstained") == "withheld_unsupported":
        return "abstained (the gate withheld an unsupported answer)"
    return status


def _mismatch(line: dict, status: str, done: str) -> str:
    """Why a turn with the wrong status failed its case, with the hint that fixes the usual mistake."""
    detail = f"expected: {describe(line)}; got: {done}"
    expect, channel = line["expect"], line.get("channel", "web")
    if expect == "handoff" and channel not in SUPPORT_CHANNELS:
        detail += (f"; channel '{channel}' never hands off (only {', '.join(SUPPORT_CHANNELS)} do, "
                   "on the second uncovered question)")
    elif expect == "handoff" and status in UNCOVERED:
        detail += "; a handoff needs a second uncovered question in the conversation (put the first in 'prefix')"
    elif expect == "abstains" and status == "partial":
        detail += ("; a partial answer is not an abstention: expect 'partial' when the material covers the topic "
                   "but not this point")
    return detail + "."


def evaluate(case: Case | dict, status: str, citations: list[dict], trace: dict | None = None,
             answer: str = "") -> tuple[bool, str]:
    """Did the agent's last turn meet the case's expectation? (passed, why not). The status first, then the
    citation, then what the ``answer`` says (its facts and forbidden texts)."""
    line = case.line() if isinstance(case, Case) else case
    paths = list(dict.fromkeys(c["path"] for c in citations))
    done = got(status, paths, trace)
    if line["expect"] == "card":
        return False, f"{CARDS_NOT_BUILT.format(card=line.get('card', ''))} (the agent's turn: {done})."
    if status != EXPECTED_STATUS[line["expect"]]:
        return False, _mismatch(line, status, done)
    cite = line.get("cite", "")
    if cite and not any(cites(p, cite) for p in paths):
        return False, f"{status}, but cited {', '.join(paths) or 'nothing'}; expected a citation of {cite}."
    wrong = check_content(answer, line.get("facts") or (), line.get("forbidden") or ())
    if wrong:
        return False, f"{done}, but {wrong}"
    return True, ""


# -- JSONL ---------------------------------------------------------------------------------------------
def parse_jsonl(text: str) -> list[dict]:
    """Every case of a JSONL text, validated; raises QaImportError listing each bad line (blank lines skipped)."""
    cases, errors = [], []
    lines = (text or "").lstrip("\ufeff").splitlines()
    if len(lines) > MAX_IMPORT_LINES:
        raise QaImportError([f"the file has {len(lines)} lines; import at most {MAX_IMPORT_LINES} at a time"])
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"line {number}: not valid JSON ({exc.msg} at column {exc.colno}).")
            continue
        try:
            cases.append(validate_case(data))
        except QaError as exc:
            errors.append(f"line {number}: {exc}")
    if errors:
        raise QaImportError(errors)
    if not cases:
        raise QaImportError(["the file has no cases: write one JSON object per line, e.g. "
                             '{"question": "¿Puedo pagar a plazos?", "expect": "answered", "cite": "faq"}'])
    return cases
