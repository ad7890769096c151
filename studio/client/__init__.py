"""A thin Python client for the RL Studio REST API (requests only, no Django).

    from studio.client import Client

    studio = Client("http://127.0.0.1:8000", token="rls_...")  # or RLSTUDIO_URL / _TOKEN
    run = studio.create_run("demo", "first", preset="grpo-tiny-arith")

See docs/api.md for every common task.
"""

from studio.client.client import Client
from studio.client.transport import DEFAULT_URL, ApiError, ServerUnreachable

__all__ = ["DEFAULT_URL", "ApiError", "Client", "ServerUnreachable"]
