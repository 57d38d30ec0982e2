"""The public endpoint: an ASGI app (FastAPI + sse-starlette) sharing ``core``. Start it with ``python -m api``."""
from api.app import create_app

__all__ = ["create_app"]
