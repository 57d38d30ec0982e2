"""A first draft of the article that closes a gap (G3): from the gap's masked samples.

With a provider configured, the model drafts the article from the samples, clearly marking every fact
the editor must supply (it has no source for the answer, so it must not invent one). With none, the
draft is a deterministic skeleton: the questions customers asked and a place for the answer. Either way
an editor writes the facts; nothing is published without them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from core.agent.protocol import Message, Provider, TransportError
from core.gaps.backlog import Gap
from core.gaps.labels import article_path
from core.gaps.matching import PLACEHOLDER_RE
from core.tenancy.context import TenantContext

if TYPE_CHECKING:
    from core.runtime import Runtime

MAX_SAMPLES = 12
FACT = "[[FALTA: …]]"

_SKELETON = {
    "es": ("Preguntas de clientes que este artículo debe responder:",
           "Respuesta (escríbela aquí con los datos exactos):"),
    "pt": ("Perguntas de clientes que este artigo deve responder:", "Resposta (escreva aqui com os dados exatos):"),
    "en": ("Customer questions this article must answer:", "Answer (write it here with the exact facts):"),
}

_SYSTEM = (
    "You draft help-center articles for a business's knowledge base. You are given questions customers asked "
    "that the knowledge base could not answer. Write a short article (title line, then 2-6 short paragraphs or a "
    "list) in the customers' language that would answer them. You do not know the business's facts: wherever a "
    f"fact is needed (a price, a term, a date, a yes/no policy, a place) write the placeholder {FACT} with what is "
    "missing inside, never a guessed value. Personal data in the questions is already masked as <EMAIL>, <PHONE>, "
    "etc.; never reproduce those placeholders."
)


def _language(gap: Gap) -> str:
    for code in ("es", "pt", "en"):
        if code in gap.languages:
            return code
    return "en"


def skeleton(gap: Gap, samples: list[str]) -> str:
    asked, answer = _SKELETON[_language(gap)]
    lines = [asked, *[f"- {s}" for s in samples[:MAX_SAMPLES]], "", answer, ""]
    return "\n".join(lines)


def draft_article(ctx: TenantContext, rt: Runtime, gap_id: int, provider: Provider | None = None) -> dict:
    """A draft ``{path, title, content, drafted_by}`` for the gap; an LLM draft when ``provider`` is given."""
    gap = rt.backlog.require(ctx, gap_id)
    samples = list(dict.fromkeys(s["sample"] for s in rt.backlog.samples(ctx, gap.id) if s["sample"]))
    path = article_path(gap.label, gap.id)  # the label and the path never carry a placeholder (core.gaps.labels)
    draft = {"path": path, "title": gap.label, "content": skeleton(gap, samples), "drafted_by": "template"}
    if provider is None or not samples:
        return draft
    prompt = "Customer questions:\n" + "\n".join(f"- {s}" for s in samples[:MAX_SAMPLES])
    try:
        reply = provider.complete(_SYSTEM, [Message("user", prompt)], [], max_tokens=900,
                                  timeout=rt.settings.llm_timeout)
    except TransportError:
        return draft  # the template still lets the editor start; the failure is not the editor's problem
    text = (reply.text or "").strip()
    if not text:
        return draft
    first, _, rest = text.partition("\n")
    title = " ".join(PLACEHOLDER_RE.sub(" ", first.strip("# ")).split()) or gap.label  # never "<EMAIL>"
    return {"path": article_path(title, gap.id), "title": title, "content": rest.strip() or text,
            "drafted_by": f"{reply.provider}:{reply.model}"}
