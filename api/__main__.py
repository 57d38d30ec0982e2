"""``python -m api``: serve the public endpoint with uvicorn on COBERTURA_API_HOST:COBERTURA_API_PORT."""
from __future__ import annotations

import sys

import uvicorn

from api.app import create_app
from core.base.config import ConfigError, load_settings


def main() -> int:
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Cobertura public endpoint on http://{settings.api_host}:{settings.api_port}  "
          "(demo: /demo, API schema: /openapi.json)", file=sys.stderr)
    uvicorn.run(create_app(settings), host=settings.api_host, port=settings.api_port, log_level="info",
                timeout_graceful_shutdown=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
