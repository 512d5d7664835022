"""Calls that do not block the event loop; cancelling a task cancels its request."""
import asyncio

import libmcpc


async def main() -> None:
    async with await libmcpc.Client.stdio_async(["python3", "demo/server.py"]) as client:
        # Many calls in flight at once, on one connection.
        results = await asyncio.gather(*(client.call_async("add", {"a": i, "b": i}) for i in range(5)))
        print("sums:", [r.structured["sum"] for r in results])

        # asyncio's timeout cancels the call: the server is sent notifications/cancelled.
        try:
            await asyncio.wait_for(client.call_async("slow", {"ms": 60000}), timeout=0.2)
        except asyncio.TimeoutError:
            print("slow: cancelled")

        print("echo:", (await client.call_async("echo", {"text": "hi"})).text)


asyncio.run(main())
