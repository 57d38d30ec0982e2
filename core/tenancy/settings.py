"""Tenant settings (S2): the name, the agent's instructions and guardrails, languages, enabled channels,
the handoff-reason and section catalogs, the kill switch, which provider and model answer, and how long the
private conversation logs are kept (``log_retention_days``: :mod:`core.tenancy.retention` purges them).

One row per tenant in ``tenant_settings`` (JSON over the defaults, with who changed it and when); the
name lives in ``tenants.name`` (read and written through :mod:`core.tenancy.tenants`) and retention in
``tenants.retention_days`` (set by :class:`core.gaps.backlog.Backlog` through the same module, not here). Only
an admin changes settings; anyone acting for the tenant reads them (the agent reads them on every turn). API keys
are never settings: they come from the process environment only, and any value that looks like a key is
refused so none reaches the database.
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit

from core.base.config import DEFAULT_ANTHROPIC_MODEL, ConfigError, Settings, check_provider_settings
from core.base.errors import UserError
from core.base.language import DETECTABLE
from core.base.store import Store
from core.tenancy import site_keys, tenants
from core.tenancy.context import CHANNELS, AuthError, TenantContext
from core.tenancy.key_shapes import SECRET_FIELD, looks_like_secret

#: Languages a tenant may serve (what the detector recognises) and the default set.
LANGUAGES = DETECTABLE
DEFAULT_LANGUAGES = ("es", "pt", "en")
#: Providers a tenant may pick; "" means the process default (``COBERTURA_PROVIDER``).
PROVIDERS = ("offline", "anthropic", "openai")
MAX_TEXT = 4000
MAX_NAME = 200
MAX_DESCRIPTION = 500
MAX_CATALOG = 100
#: Built-in handoff reasons (H1), used by the agent itself; tenants add their own and may reword these.
REASONS = {
    "not_covered_twice": "Two questions in a row that the knowledge base does not cover",
    "customer_request": "The customer asked for a person",
    "out_of_scope": "The request is outside what the agent may handle",
}
MAX_URL = 500
#: Days the private logs (turns, the question log, handoff transcripts) are kept, and the range allowed.
DEFAULT_LOG_RETENTION_DAYS = 90
RETENTION_RANGE = (1, 3650)
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$")


class TenantSettingsError(UserError):
    """A setting has a value that cannot be used; the message says which and what to do."""


class ChannelDisabled(UserError):
    """The tenant has not enabled the channel a question arrived on."""


def refuse_disabled(settings: TenantSettings, channel: str) -> None:
    """Raise ChannelDisabled when ``channel`` is not enabled in ``settings`` (S2)."""
    if channel not in settings.channels_enabled:
        enabled = ", ".join(settings.channels_enabled) or "none"
        raise ChannelDisabled(f"The channel '{channel}' is not enabled for this tenant (enabled: {enabled}); "
                              "an admin can enable it in Settings → Channels.")


@dataclass(frozen=True)
class TenantSettings:
    name: str
    instructions: str = ""
    guardrails: str = ""
    languages: tuple[str, ...] = DEFAULT_LANGUAGES
    channels_enabled: tuple[str, ...] = CHANNELS
    handoff_reasons: Mapping[str, str] = field(default_factory=lambda: dict(REASONS))
    sections: Mapping[str, str] = field(default_factory=dict)
    kill_switch: bool = False
    provider: str = ""  # "" = the process default
    model: str = ""  # "" = the provider's default model from the environment
    handoff_webhook_url: str = ""  # called (POST, signed with the tenant's secret) on every new handoff
    log_retention_days: int = DEFAULT_LOG_RETENTION_DAYS  # raw turns, logged questions, handoff transcripts
    updated_at: str | None = None
    updated_by: str | None = None

    def as_dict(self) -> dict:
        return {f.name: (dict(v) if isinstance(v := getattr(self, f.name), Mapping) else
                         list(v) if isinstance(v, tuple) else v) for f in dataclasses.fields(self)}


#: Fields ``update`` accepts (the name goes to ``tenants.name``, the rest to ``tenant_settings``).
EDITABLE = ("name", "instructions", "guardrails", "languages", "channels_enabled", "handoff_reasons", "sections",
            "kill_switch", "provider", "model", "handoff_webhook_url", "log_retention_days")
_STORED = EDITABLE[1:]


# -- reading ----------------------------------------------------------------------------------------------
def get(ctx: TenantContext, store: Store) -> TenantSettings:
    """The tenant's settings (the defaults for whatever was never set)."""
    name = tenants.tenant_name(ctx, store)
    if name is None:
        return TenantSettings(name=ctx.tenant_slug)
    rows = store.query("SELECT settings, updated_at, updated_by FROM tenant_settings WHERE tenant_id = ?",
                       [ctx.tenant_id])
    if not rows:  # never saved: the defaults
        return _parsed(name, None, None, None)
    row = rows[0]
    return _parsed(name, row["settings"], row["updated_at"], row["updated_by"])


@lru_cache(maxsize=256)
def _parsed(tenant_name: str, settings_json: str | None, updated_at: str | None,
            updated_by: str | None) -> TenantSettings:
    """The stored row as settings, validated (cached by the row's content: every turn reads the settings
    several times, the row changes only when an admin saves)."""
    stored = json.loads(settings_json) if settings_json else {}
    defaults = TenantSettings(name=tenant_name)
    values: dict[str, Any] = {}
    for name in _STORED:
        if name not in stored:
            continue
        value = stored[name]
        # what a newer release changed stays usable: built-in reasons join, retired codes drop out
        if name == "handoff_reasons" and isinstance(value, dict):
            value = {**REASONS, **value}
        elif name in ("languages", "channels_enabled") and isinstance(value, list):
            value = [code for code in value if code in (LANGUAGES if name == "languages" else CHANNELS)]
        try:  # a value that still does not validate falls back to its default
            values[name] = _clean(name, value)
        except TenantSettingsError:
            continue
    settings = dataclasses.replace(defaults, **values, updated_at=updated_at, updated_by=updated_by)
    # shared by every caller from now on: the catalogs are handed out read-only
    return dataclasses.replace(settings, handoff_reasons=MappingProxyType(dict(settings.handoff_reasons)),
                               sections=MappingProxyType(dict(settings.sections)))


def handoff_reasons(ctx: TenantContext, store: Store) -> dict[str, str]:
    """The tenant's closed catalog of handoff reasons (H1): the built-in ones plus its own."""
    return dict(get(ctx, store).handoff_reasons)


def sections(ctx: TenantContext, store: Store) -> dict[str, str]:
    """The tenant's closed catalog of page sections the agent may point at (H2)."""
    return dict(get(ctx, store).sections)


# -- providers ---------------------------------------------------------------------------------------------
def available_providers(process: Settings) -> dict[str, str]:
    """The providers this process can build from its environment, each with its default model ("" = none
    set). Never includes a key; the offline responder is always available."""
    out = {"offline": ""}
    if process.anthropic_api_key:
        out["anthropic"] = process.anthropic_model or DEFAULT_ANTHROPIC_MODEL
    if process.openai_base_url:
        out["openai"] = process.openai_model
    return out


def provider_settings(process: Settings, provider: str, model: str = "") -> Settings:
    """The process settings narrowed to the tenant's provider and model ("" keeps the process default).
    Keys stay the environment's; raises ConfigError when the environment cannot build that provider."""
    if not provider:
        return process
    if provider not in PROVIDERS:
        raise ConfigError(f"Provider {provider!r} is not known; use one of {', '.join(PROVIDERS)}.")
    narrowed = dataclasses.replace(
        process, provider=provider,
        anthropic_model=(model or process.anthropic_model) if provider == "anthropic" else process.anthropic_model,
        openai_model=(model or process.openai_model) if provider == "openai" else process.openai_model)
    try:
        check_provider_settings(narrowed)
    except ConfigError as exc:
        raise ConfigError(f"This tenant's settings choose {provider}, which this process cannot run: {exc} "
                          "Or choose another provider in Settings → Provider.") from None
    return narrowed


# -- writing -----------------------------------------------------------------------------------------------
def update(ctx: TenantContext, store: Store, *, process: Settings | None = None, **changes: Any) -> TenantSettings:
    """Change some settings (admin only); every value is checked first and nothing is written on an error.

    ``process`` is the process's settings (the environment), against which a provider choice is checked;
    it defaults to ``core.config.load_settings()``."""
    if not ctx.can("admin"):
        raise AuthError(f"Only an admin can change the tenant's settings; '{ctx.actor}' is {ctx.role}.")
    for name in changes:
        if name not in EDITABLE and SECRET_FIELD.search(name):
            raise TenantSettingsError(
                f"'{name}' cannot be a setting: API keys are read from the environment only (ANTHROPIC_API_KEY, "
                "COBERTURA_OPENAI_KEY) and are never stored in the database.")
        if name not in EDITABLE:
            raise TenantSettingsError(f"Unknown setting {name!r}; the settings are {', '.join(EDITABLE)}.")
    current = get(ctx, store)
    clean = {name: _clean(name, value) for name, value in changes.items()}
    if "provider" in clean and clean["provider"] != current.provider and "model" not in clean:
        clean["model"] = ""  # a model belongs to its provider
    merged = dataclasses.replace(current, **clean)
    if "provider" in clean or "model" in clean:
        if process is None:
            from core.base.config import load_settings

            process = load_settings()
        _check_provider(merged.provider, merged.model, process)
    for name, value in clean.items():
        # a webhook URL often carries its own token (Slack, Zapier): it is the setting
        if name != "handoff_webhook_url":
            _refuse_secrets(name, value, process)
    payload = json.dumps({name: value for name, value in merged.as_dict().items() if name in _STORED},
                         ensure_ascii=False)
    with store.write() as db:
        db.execute(
            "INSERT INTO tenant_settings (tenant_id, settings, updated_at, updated_by) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant_id) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at, "
            "updated_by = excluded.updated_by",
            [ctx.tenant_id, payload, store.clock.stamp(), ctx.actor])
        if "name" in clean:
            tenants.rename_tenant(ctx, store, clean["name"])
    if clean.get("handoff_webhook_url"):  # webhook calls are signed with the tenant's secret: make sure it exists
        site_keys.ensure(ctx, store)
    return get(ctx, store)


def set_kill_switch(ctx: TenantContext, store: Store, on: bool) -> TenantSettings:
    """Switch the assistant off (every turn answers a fixed message, nothing else runs) or back on."""
    return update(ctx, store, kill_switch=bool(on))


# -- validation --------------------------------------------------------------------------------------------
def _clean(name: str, value: Any) -> Any:
    """The value normalised, or TenantSettingsError saying what is wrong with it."""
    if name == "name":
        text = _text(name, value, MAX_NAME).strip()
        if not text:
            raise TenantSettingsError("The tenant name cannot be empty; "
                                      "write the business's name as customers know it.")
        return text
    if name in ("instructions", "guardrails"):
        return _text(name, value, MAX_TEXT).strip()
    if name == "languages":
        chosen = _codes(name, value)
        unknown = [c for c in chosen if c not in LANGUAGES]
        if unknown:
            raise TenantSettingsError(f"Unknown language {', '.join(map(repr, unknown))}; use codes among "
                                      f"{', '.join(LANGUAGES)}.")
        if not chosen:
            raise TenantSettingsError("Choose at least one language the agent serves.")
        return chosen
    if name == "channels_enabled":
        chosen = _codes(name, value)
        unknown = [c for c in chosen if c not in CHANNELS]
        if unknown:
            raise TenantSettingsError(f"Unknown channel {', '.join(map(repr, unknown))}; use channels among "
                                      f"{', '.join(CHANNELS)}.")
        if not chosen:
            raise TenantSettingsError("Enable at least one channel; to stop every answer use the kill switch instead.")
        return tuple(c for c in CHANNELS if c in chosen)
    if name in ("handoff_reasons", "sections"):
        catalog = _catalog(name, value)
        if name == "handoff_reasons":
            missing = [r for r in REASONS if r not in catalog]
            if missing:
                raise TenantSettingsError(
                    f"The built-in handoff reason {', '.join(map(repr, missing))} is used by the agent itself; keep it "
                    "(you may reword its description).")
        return catalog
    if name == "kill_switch":
        if not isinstance(value, bool):
            raise TenantSettingsError(f"kill_switch is on or off (true/false), not {value!r}.")
        return value
    if name == "provider":
        provider = _text(name, value, 40).strip().lower()
        if provider and provider not in PROVIDERS:
            raise TenantSettingsError(f"Provider {provider!r} is not known; use one of {', '.join(PROVIDERS)}, "
                                      "or leave it empty for the process default.")
        return provider
    if name == "model":
        model = _text(name, value, 200).strip()
        if model and not _MODEL.match(model):
            raise TenantSettingsError(f"Model {model!r} is not a model name (letters, digits and . _ : / @ + -).")
        return model
    if name == "handoff_webhook_url":
        return _webhook_url(value)
    if name == "log_retention_days":
        return retention_days(value, "The private logs")
    raise TenantSettingsError(f"Unknown setting {name!r}; the settings are {', '.join(EDITABLE)}.")


def retention_days(value: Any, what: str) -> int:
    """A number of days to keep something, within RETENTION_RANGE (a bool or a fraction is no number of days)."""
    low, high = RETENTION_RANGE
    if isinstance(value, bool) or not isinstance(value, (int, float, str)) or not str(value).strip().isdigit():
        raise TenantSettingsError(f"{what}' retention is a whole number of days ({low}-{high}), not {value!r}.")
    if not low <= int(value) <= high:
        raise TenantSettingsError(f"{what}' retention must be between {low} and {high} days; got {int(value)}.")
    return int(value)


def _webhook_url(value: Any) -> str:
    url = _text("The handoff webhook URL", value, MAX_URL).strip()
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TenantSettingsError(f"The handoff webhook URL {url!r} is not an http(s) URL; write it in full, e.g. "
                                  "https://example.com/hooks/cobertura.")
    return url


def _text(name: str, value: Any, limit: int) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise TenantSettingsError(f"{name} must be text, not {type(value).__name__}.")
    if len(value) > limit:
        raise TenantSettingsError(f"{name} has {len(value):,} characters; the limit is {limit:,}. Shorten it.")
    return value


def _codes(name: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TenantSettingsError(f"{name} is a list of codes, e.g. ['es', 'en'].")
    out: list[str] = []
    for item in value:
        code = str(item).strip().lower()
        if code and code not in out:
            out.append(code)
    return tuple(out)


def _catalog(name: str, value: Any) -> dict[str, str]:
    label = "handoff reason" if name == "handoff_reasons" else "section"
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, Iterable) and not isinstance(value, str):
        pairs = list(value)
    else:
        raise TenantSettingsError(f"The {label} catalog is a table of id → description.")
    if len(pairs) > MAX_CATALOG:
        raise TenantSettingsError(f"The {label} catalog has {len(pairs)} entries; the limit is {MAX_CATALOG}.")
    out: dict[str, str] = {}
    for pair in pairs:
        try:
            raw_id, raw_description = pair
        except (TypeError, ValueError):
            raise TenantSettingsError(f"Each {label} is an id and a description.") from None
        ident = str(raw_id or "").strip()
        description = _text(f"The description of {label} '{ident}'", raw_description, MAX_DESCRIPTION).strip()
        if not _ID.match(ident):
            raise TenantSettingsError(
                f"The {label} id {ident!r} is not valid: use 1-64 lowercase letters, digits, '_' or '-', "
                "starting with a letter or digit, e.g. 'billing_question'.")
        if ident in out:
            raise TenantSettingsError(f"The {label} id '{ident}' appears twice; each id names one entry.")
        if not description:
            raise TenantSettingsError(f"The {label} '{ident}' needs a description (what it means, for the team and "
                                      "the agent).")
        out[ident] = description
    return out


def _check_provider(provider: str, model: str, process: Settings) -> None:
    available = available_providers(process)
    if provider and provider not in available:
        need = "ANTHROPIC_API_KEY" if provider == "anthropic" else "COBERTURA_OPENAI_BASE_URL"
        raise TenantSettingsError(
            f"This process cannot use {provider}: {need} is not set in its environment. Keys and endpoints "
            f"come from the environment only; available here: {', '.join(available)}.")
    if model and provider not in ("anthropic", "openai"):
        raise TenantSettingsError("A model can only be chosen with the anthropic or openai provider; choose one first "
                                  "(the offline responder and the process default have no model to pick).")
    if provider == "openai" and not model and not available["openai"]:
        raise TenantSettingsError("COBERTURA_OPENAI_MODEL is not set in this process's environment: give the model "
                                  "name the endpoint serves.")


def _refuse_secrets(name: str, value: Any, process: Settings | None) -> None:
    if isinstance(value, Mapping):
        texts = [f"{k} {v}" for k, v in value.items()]
    elif isinstance(value, tuple):
        texts = list(value)
    else:
        texts = [value] if isinstance(value, str) else []
    for text in texts:
        why = looks_like_secret(text, process)
        if why:
            raise TenantSettingsError(
                f"{name} looks like it holds an API key ({why}). Keys are read from the environment only "
                "(ANTHROPIC_API_KEY, COBERTURA_OPENAI_KEY) and never stored in the database; remove it.")
