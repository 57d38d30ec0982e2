"""The examples empty form fields show: neutral, or in the tenant's own language; never the demo tenant's content
(a tenant that sells insurance must not be shown ``politicas/envios`` or a question about shipping to Canarias)."""
from __future__ import annotations

from core.runtime import Runtime
from core.tenancy import settings as tenant_settings
from core.tenancy.context import TenantContext

#: a question field's example, in the tenant's first language (the agent's languages, Settings)
QUESTIONS = {"es": "La pregunta, tal como la escribiría un cliente",
             "pt": "A pergunta, tal como um cliente a escreveria",
             "en": "The question, as a customer would write it"}
SOURCE_PATH = "folder/document"  # a path in the tree: a document, or a folder (anything below it)
FACTS = "One per line: a figure, a term, a name the answer must say"
FORBIDDEN = "One per line: a text the answer must never say"


def language(rt: Runtime, ctx: TenantContext) -> str:
    """The tenant's first language that has an example; English otherwise."""
    return next((code for code in tenant_settings.get(ctx, rt.store).languages if code in QUESTIONS), "en")


def question(rt: Runtime, ctx: TenantContext) -> str:
    return QUESTIONS[language(rt, ctx)]
