import pytest


@pytest.fixture
def anyio_backend() -> str:
    """The agent runtime runs on asyncio (the SDKs of the model providers do)."""
    return "asyncio"
