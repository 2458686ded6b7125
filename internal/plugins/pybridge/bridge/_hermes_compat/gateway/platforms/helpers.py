"""`gateway.platforms.helpers`: small asyncio helpers adapters use."""

import asyncio
import contextlib


async def cancel_task(task):
    """Cancel task (None is fine) and wait for it to end, swallowing its cancellation."""
    if task is None or task.done():
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
