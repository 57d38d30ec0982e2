"""The built-in tools (A2, A6, H1, H2): search, browse and read the knowledge (``knowledge``), and clarify,
hand off and point at a page section (``ui``). Each is a :class:`~core.agent.registry.Tool`; each call leaves
its evidence: the ids it returned, whether they bear text."""
from __future__ import annotations

import re

from core.agent.injection import defuse
from core.agent.protocol import ToolSpec
from core.agent.registry import Tool, ToolEnv, ToolKind
from core.base.text import sentences
from core.knowledge.retrieval import Hit, SearchResult
from core.knowledge.variants import SURE

MAX_CLARIFY_QUESTIONS, MAX_CLARIFY_OPTIONS = 3, 4
MAX_TRACED_DROPPED = 20  # dropped candidates kept in a search call's trace, best first


SEARCH = ToolSpec(
    "search_knowledge",
    "Search the business's knowledge base. Returns the best matching passages, each with an id to cite as "
    "[[cite:ID]], its source path, title, type and training date. A Q&A passage may carry phrasings_agree "
    f"(0-1): how sure the business's own phrasings of that answer make it that this is the answer asked for; "
    f"under {SURE} it is not, however similar. Use the customer's words; one topic per call.",
    {"type": "object", "properties": {"query": {"type": "string", "description": "what to look for"}},
     "required": ["query"]},
)
BROWSE = ToolSpec(
    "browse",
    "List one level of the knowledge tree under a path ('' for the top): each child's name, description and size. "
    "Orientation only: browse results cannot be cited; read a document to get citable text.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": []},
)
READ = ToolSpec(
    "read",
    "Read a document (its text, split into passages with ids to cite) or a folder (the documents below it up to "
    "a limit, plus the paths of what was left out, to read separately).",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
CLARIFY = ToolSpec(
    "clarify",
    "Ask the customer to choose when the request is genuinely ambiguous (never for a simple factual question): "
    f"at most {MAX_CLARIFY_QUESTIONS} questions of at most {MAX_CLARIFY_OPTIONS} options each. Ends your turn.",
    {"type": "object", "properties": {"questions": {"type": "array", "items": {"type": "object", "properties": {
        "question": {"type": "string"}, "options": {"type": "array", "items": {"type": "string"}}},
        "required": ["question", "options"]}}}, "required": ["questions"]},
)

HANDOFF_NOTE = ("Hand the conversation to a person of the team, who will see it whole. Use it when the customer asks "
                "for a person, or when the request needs someone with authority; never instead of searching.")
SECTION_NOTE = ("Point the customer at a place on the page they are on (the widget scrolls to it and highlights it). "
                "Use it when a section of the page is where they can see or do what they asked.")


def handoff_spec(reasons: dict[str, str]) -> ToolSpec:
    """The handoff tool, with the tenant's closed catalog of reasons (H1)."""
    listing = "; ".join(f"{code}: {text}" for code, text in reasons.items())
    return ToolSpec("handoff", f"{HANDOFF_NOTE} Reasons: {listing}.", {"type": "object", "properties": {
        "reason": {"type": "string", "enum": list(reasons), "description": "one of the reasons listed"}},
        "required": ["reason"]})


def section_spec(sections: dict[str, str]) -> ToolSpec:
    """The show_section tool, with the tenant's closed catalog of page sections (H2), one per line."""
    listing = "\n".join(f"- {ident}: {text}" for ident, text in sections.items())
    return ToolSpec("show_section", f"{SECTION_NOTE} Sections:\n{listing}", {"type": "object", "properties": {
        "id": {"type": "string", "enum": list(sections), "description": "one of the section ids listed"}},
        "required": ["id"]})


def candidate(hit: Hit, selected: bool) -> dict:
    """One retrieved chunk as the trace keeps it (no text): scores, type, and why it was selected or dropped."""
    return {"id": hit.chunk_id, "path": hit.path, "title": hit.title, "type": hit.type, "starred": hit.starred,
            "language": hit.language,
            "score": round(hit.score, 4), "similarity": round(hit.similarity, 4), "bm25": round(hit.bm25, 3),
            "found_by": hit.found_by, "selected": selected, "reason": hit.reason,
            **({} if hit.sentence_similarity is None else {"sentence_similarity": round(hit.sentence_similarity, 4)}),
            **({} if hit.variant_agreement is None else {"phrasings_agree": round(hit.variant_agreement, 4)}),
            **({} if hit.code_match is None else {"code_match": hit.code_match})}


def search_trace(found: SearchResult) -> dict:
    """What a search call adds to its trace entry (A8): the rewritten query, the floor it applied, and every
    candidate, selected or dropped with retrieval's reason (the best MAX_TRACED_DROPPED dropped ones)."""
    return {"rewritten": found.rewritten, "language": found.language, "floor": round(found.floor, 4),
            "ms": round(found.seconds * 1000, 1),
            "candidates": [candidate(h, True) for h in found.hits]
            + [candidate(h, False) for h in found.dropped[:MAX_TRACED_DROPPED]],
            "dropped_total": len(found.dropped)}


def _defused(env: ToolEnv, text: str, qa: bool = False) -> str:
    """``text`` as the model may see it (A6): chunk texts, titles and folder descriptions all pass the guard
    (``qa``: a Q&A pair's text, its own question first)."""
    if not text:
        return text
    clean, removed = defuse(text, qa)
    if removed:
        env.evidence.calls.append({"tool": "injection_guard", "arguments": {}, "status": "removed", "ids": [],
                                   "removed": removed})
    return clean

#: a path segment long enough to spell out a sentence ('ignore-all-previous-instructions-…')
_SLUG_WORDS = re.compile(r"[^\W_]+(?:[-_][^\W_]+){3,}")
WITHHELD_NAME = "withheld-name"


def _quarantined_paths(env: ToolEnv, result: dict) -> dict:
    """The result with every path segment that spells an instruction (a file named 'ignore-all-previous-…')
    replaced by WITHHELD_NAME wherever the model would read it (A6); internal keys ('_ids', '_texts') keep it."""
    strings = list(_strings({k: v for k, v in result.items() if not k.startswith("_")}))
    slugs = {m.group(0) for text in strings for m in _SLUG_WORDS.finditer(text)}
    planted = {slug for slug in slugs if defuse(re.sub(r"[-_]", " ", slug))[1]}
    if not planted:
        return result
    env.evidence.calls.append({"tool": "injection_guard", "arguments": {}, "status": "removed", "ids": [],
                               "removed": len(planted)})
    pattern = re.compile("|".join(re.escape(slug) for slug in sorted(planted, key=len, reverse=True)))
    return {k: v if k.startswith("_") else _replaced(v, pattern) for k, v in result.items()}


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _replaced(value, pattern: re.Pattern):
    if isinstance(value, str):
        return pattern.sub(WITHHELD_NAME, value)
    if isinstance(value, dict):
        return {k: _replaced(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_replaced(v, pattern) for v in value]
    return value


def _kept_scores(original: str, shown: str, scores: tuple[float, ...]) -> list[float]:
    """The per-sentence similarities of ``original`` for the sentences of ``shown`` (the text after the guard cut
    planted sentences out): each kept sentence keeps its own score, in order; what the guard put in their place
    gets the passage's lowest, so it never ranks as the answer."""
    pending = list(zip(sentences(original), scores))
    out = []
    for sentence in sentences(shown):
        at = next((i for i, (said, _) in enumerate(pending) if said.strip() == sentence.strip()), None)
        out.append(round(pending[at][1] if at is not None else min(scores), 3))
        pending = pending[at + 1:] if at is not None else pending
    return out


def _search(env: ToolEnv, query: str) -> dict:
    if not query.strip():
        return {"status": "error",
                "message": "search_knowledge needs a non-empty 'query'. Pass the customer's question."}
    found = env.services.retriever.search(env.ctx, query, env.history)
    results, texts = [], {}
    for hit in found.hits:
        text = texts[hit.chunk_id] = _defused(env, hit.text, qa=hit.type == "qa")
        env.evidence.hits.append(candidate(hit, True))
        results.append({"id": hit.chunk_id, "source": hit.path, "title": _defused(env, hit.title), "type": hit.type,
                        "starred": hit.starred, "language": hit.language, "trained_at": hit.trained_at,
                        "similarity": round(hit.similarity, 3),
                        **({} if hit.sentence_similarity is None else
                           {"best_sentence_similarity": round(hit.sentence_similarity, 3)}),
                        **({} if hit.variant_agreement is None else
                           {"phrasings_agree": round(hit.variant_agreement, 3)}),
                        **({} if hit.code_match is None else {"code_match": hit.code_match}),
                        # per sentence of the text as the model sees it (as core.base.text splits it)
                        **({"sentence_similarities": _kept_scores(hit.text, text, hit.sentence_scores)}
                           if hit.sentence_scores else {}),
                        "match": hit.reason, "text": text})
    trace = search_trace(found)
    # what the material never mentions: a model should say so rather than answer around it
    unknown = {"unknown_words": words} if (words := env.services.index.keywords.unknown_words(
        env.ctx.tenant_id, query)) else {}
    if not results:
        return {"status": "empty", "query": found.rewritten, "_ids": [], "_trace": trace, **unknown, "message":
                "No trained source matches this well enough. Do not answer from memory: try other words, browse the "
                "tree, or tell the customer the material does not cover it."}
    # the question names a code no result carries: what was found is about other products (R2)
    missing = {"missing_codes": found.missing_codes, "message": f"No source mentions {', '.join(found.missing_codes)}"
               ": these results are about other codes. Say the material does not mention it; never give their "
               "figures as its own."} if found.missing_codes else {}
    return {"status": "found", "query": found.rewritten, "language": found.language, "results": results, **unknown,
            **missing,
            "_ids": [r["id"] for r in results], "_texts": texts, "_trace": trace}


def _browse(env: ToolEnv, path: str) -> dict:
    result = env.services.knowledge.browse(env.ctx, path)
    if not result.found:
        return {"status": "empty", "message": result.message, "paths_at_this_depth": result.suggestions, "_ids": []}
    ids = [c["path"] for c in result.children]
    env.evidence.other_ids.update(ids)
    return {"status": "found", "path": result.path, "kind": result.kind, "message": result.message,
            "children": [{k: _defused(env, c[k]) if k == "description" else c[k]
                          for k in ("name", "path", "kind", "description", "weight") if k in c}
                         for c in result.children],
            "citable": False, "_ids": ids}


def _read(env: ToolEnv, path: str) -> dict:
    if not path.strip():
        return {"status": "error", "message": "read needs a 'path'. Browse '' to see the top-level paths."}
    result = env.services.knowledge.read(env.ctx, path)
    if not result.found:
        return {"status": "empty", "message": result.message, "paths_at_this_depth": result.suggestions, "_ids": []}
    passages, texts = [], {}
    for doc in result.documents:
        title = _defused(env, doc["title"])
        for chunk in doc["chunks"]:
            text = texts[chunk["chunk_id"]] = _defused(env, chunk["text"], qa=doc["type"] == "qa")
            passages.append({"id": chunk["chunk_id"], "source": doc["path"], "title": title, "type": doc["type"],
                             "trained_at": doc["trained_at"], "text": text})
    env.evidence.other_ids.update(o["path"] for o in result.omitted)
    left_out = [{**o, "title": _defused(env, o["title"])} if o.get("title") else o for o in result.omitted]
    status = "found" if passages else "empty"
    return {"status": status, "path": result.path, "kind": result.kind, "passages": passages,
            "left_out": left_out, "message": result.message, "_ids": [p["id"] for p in passages],
            "_texts": texts}


def search(env: ToolEnv, query: str) -> dict:
    return _quarantined_paths(env, _search(env, query))


def browse(env: ToolEnv, path: str) -> dict:
    return _quarantined_paths(env, _browse(env, path))


def read(env: ToolEnv, path: str) -> dict:
    return _quarantined_paths(env, _read(env, path))


def clarify(env: ToolEnv, questions) -> dict:
    if not isinstance(questions, list) or not questions:
        return {"status": "error", "message": "clarify needs 'questions': a list of {question, options}."}
    if len(questions) > MAX_CLARIFY_QUESTIONS or any(
        not isinstance(q, dict) or not str(q.get("question", "")).strip() or not isinstance(q.get("options"), list)
        or not 2 <= len(q["options"]) <= MAX_CLARIFY_OPTIONS for q in questions
    ):
        return {"status": "error",
                "message": f"clarify takes at most {MAX_CLARIFY_QUESTIONS} questions, each with 2 to "
                f"{MAX_CLARIFY_OPTIONS} options. Shorten it, or answer directly if the question is simple."}
    env.evidence.clarify = [{"question": str(q["question"]).strip(), "options": [str(o) for o in q["options"]]}
                            for q in questions]
    return {"status": "found", "message": "The questions will be shown to the customer; your turn ends here."}

def handoff(env: ToolEnv, reason: str) -> dict:
    if reason not in env.reasons:
        return {"status": "error", "message": f"'{reason}' is not a handoff reason of this business. Use one of: "
                + ", ".join(env.reasons) + "."}
    env.evidence.handoff = reason
    return {"status": "found", "message": "A person of the team will take over and see the whole conversation. "
            "Tell the customer so in one short sentence; do not promise a time."}

def show_section(env: ToolEnv, ident: str) -> dict:
    if ident not in env.sections:
        return {"status": "error", "message": f"There is no section '{ident}' on this business's pages. The sections "
                "are: " + ", ".join(env.sections) + ". Use one of them, or do not point at the page."}
    if all(s["id"] != ident for s in env.evidence.sections):
        env.evidence.sections.append({"id": ident, "description": env.sections[ident]})
    return {"status": "found", "message": f"The page will scroll to '{ident}' and highlight it. You may mention it; "
            "it is not a source to cite."}


def _tool(spec: ToolSpec, kind: ToolKind, handler, **options) -> Tool:
    return Tool(spec.name, spec.description, spec.parameters, kind, handler, **options)


SEARCH_TOOL = _tool(SEARCH, ToolKind.KNOWLEDGE, lambda env, args: search(env, str(args.get("query", ""))))
BROWSE_TOOL = _tool(BROWSE, ToolKind.KNOWLEDGE, lambda env, args: browse(env, str(args.get("path", "") or "")))
READ_TOOL = _tool(READ, ToolKind.KNOWLEDGE, lambda env, args: read(env, str(args.get("path", ""))))
CLARIFY_TOOL = _tool(CLARIFY, ToolKind.UI, lambda env, args: clarify(env, args.get("questions")))
HANDOFF_TOOL = Tool("handoff", HANDOFF_NOTE, {}, ToolKind.UI,
                    lambda env, args: handoff(env, str(args.get("reason", ""))),
                    offered=lambda env: bool(env.reasons), tailored=lambda env: handoff_spec(env.reasons))
SECTION_TOOL = Tool("show_section", SECTION_NOTE, {}, ToolKind.UI,
                    lambda env, args: show_section(env, str(args.get("id", ""))),
                    offered=lambda env: bool(env.sections), tailored=lambda env: section_spec(env.sections))


def builtin_tools() -> list[Tool]:
    """The built-in tools in the order they are offered to the model."""
    return [SEARCH_TOOL, BROWSE_TOOL, READ_TOOL, CLARIFY_TOOL, HANDOFF_TOOL, SECTION_TOOL]
