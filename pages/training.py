"""Training from the admin app: one progress bar, and a clear word when another process is training the tenant."""
from __future__ import annotations

import streamlit as st

from core.knowledge.training import TrainingBusy, TrainReport
from core.runtime import Runtime
from core.tenancy.context import TenantContext


def train_with_progress(rt: Runtime, ctx: TenantContext, slot=None) -> TrainReport | None:
    """Train what changed under a progress bar (in ``slot`` if given); None (and a warning) when a training of
    the tenant is already running elsewhere (another browser session, the CLI, another process)."""
    bar = (slot or st).progress(0.0, text="Training…")

    def progress(done: int, total: int, path: str) -> None:
        bar.progress(done / total if total else 1.0, text=f"Training {done}/{total} source(s) {path}".strip())

    try:
        return rt.index.train(ctx, progress=progress)
    except TrainingBusy as busy:
        bar.empty()
        st.warning(str(busy), icon=":material/hourglass_top:")
        return None
