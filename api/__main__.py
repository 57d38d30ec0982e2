"""``python -m api``: serve the public endpoint with uvicorn on COBERTURA_API_HOST:COBERTURA_API_PORT."""
from __future__ import annotations

import sys
from dataclasses import replace

import uvicorn

from api.app import create_app
from core.base.config import ConfigError, load_settings


def main() -> int:
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    listening = replace(settings, public_url="").endpoint_url
    public = settings.endpoint_url
    print(f"Cobertura public endpoint on {listening}" + (f", reached at {public}" if public != listening else "")
          + f"  (demo: {public}/demo, API schema: {public}/openapi.json)", file=sys.stderr)
    uvicorn.run(create_app(settings), host=settings.api_host, port=settings.api_port, log_level="info",
                timeout_graceful_shutdown=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
