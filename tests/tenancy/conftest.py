"""Fixtures of the tenancy tests: the site keys of the two tenants (``ctx`` and ``other_ctx``)."""
from __future__ import annotations

import pytest

from core.tenancy import site_keys


@pytest.fixture
def keys(ctx, rt):
    return site_keys.ensure(ctx, rt.store)


@pytest.fixture
def other_keys(other_ctx, rt):
    return site_keys.ensure(other_ctx, rt.store)
