"""The demo tenant: a small Spanish/English help centre (a bike shop) from ``data/sample/``."""
from __future__ import annotations

import json
from pathlib import Path

from core.actions import builtin, definitions
from core.booking.schedule import DEMO_SCHEDULE
from core.knowledge import sources as sources_mod
from core.knowledge.ingest import ImportReport, import_paths
from core.knowledge.training import TrainReport
from core.qa import suites as qa
from core.runtime import Runtime
from core.tenancy import settings as tenant_settings, site_keys
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant, list_tenants

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "data" / "sample"
DEMO_SLUG = "demo"
QA_SUITE = "demo"


def init_demo(rt: Runtime, train: bool = True, progress=None) -> tuple[ImportReport, TrainReport | None]:
    """Create the demo tenant (once), import the sample knowledge base, (once) the QA suite ``demo`` and the
    demo page's section catalog, give it site keys, train. Idempotent."""
    if not any(t["slug"] == DEMO_SLUG for t in list_tenants(rt.store)):
        create_tenant(rt.store, DEMO_SLUG, "Lumen Bicicletas (demo)")
    ctx = local_operator(rt.store, DEMO_SLUG, rt.settings.operator)
    report = ImportReport()
    for folder in sorted(p for p in (SAMPLE_DIR / "kb").iterdir()):
        if folder.is_dir():
            sub = import_paths(ctx, rt.store, [folder])
        else:
            sub = import_paths(ctx, rt.store, [folder])
        report.saved += sub.saved
        report.unchanged += sub.unchanged
        report.errors += sub.errors
    descriptions = json.loads((SAMPLE_DIR / "folders.json").read_text(encoding="utf-8"))
    for path, description in descriptions.items():
        sources_mod.set_folder_description(ctx, rt.store, path, description)
    if not tenant_settings.get(ctx, rt.store).sections:  # the demo page's sections (api/widget/demo.html)
        sections = json.loads((SAMPLE_DIR / "sections.json").read_text(encoding="utf-8"))
        tenant_settings.update(ctx, rt.store, process=rt.settings, sections=sections)
    site_keys.ensure(ctx, rt.store)
    _demo_actions(ctx, rt)
    if rt.booking.schedule(ctx) is None:  # the workshop's hours (Europe/Madrid): booking works from the first start
        rt.booking.save_schedule(ctx, DEMO_SCHEDULE, ctx.actor)
    if qa.get_suite(ctx, rt.store, QA_SUITE) is None:  # once: later edits of the suite are the tenant's own
        qa.import_jsonl(ctx, rt.store, QA_SUITE, (SAMPLE_DIR / "qa" / "demo.jsonl").read_text(encoding="utf-8"))
    trained = rt.index.train(ctx, progress=progress) if train else None
    return report, trained


#: the demo shop's customers (api/demo_shop.py has their orders); their profiles hold the e-mail the built-in changes
DEMO_CUSTOMERS = {"demo-customer-1": ("ana.garcia@example.com", "Ana García"),
                  "demo-customer-2": ("joao.silva@example.com", "João Silva")}


def _demo_actions(ctx, rt: Runtime) -> None:
    """Once: the demo shop's two HTTP actions (data/sample/actions.json) and its customers' profiles; later edits
    are the tenant's own."""
    if not definitions.http_actions(ctx, rt.store):
        definitions.import_actions(ctx, rt.store, (SAMPLE_DIR / "actions.json").read_text(encoding="utf-8"))
    for customer, (email, name) in DEMO_CUSTOMERS.items():
        if builtin.profile(ctx, rt.store, customer) is None:
            builtin.save_profile(ctx, rt.store, customer, email, name)
