"""Calls MCP tools with the official Python SDK (`mcp` on PyPI) and prints what an agent reads.

Input (stdin, JSON): {"transport": "http", "url": ..., "token": ...} or
{"transport": "stdio", "command": ..., "args": [...], "env": {...}}, and "calls": [{"name", "arguments"}].
Output (stdout, JSON): one entry per call, {"isError": bool, "text": str} for a tool result or
{"rpcError": code, "message": str} for a JSON-RPC error; or a single {"connectError": code,
"message": str} when the session could not be opened. Used by test/integration/mcp-python-client.test.ts.
"""

import json
import sys

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


def first_mcp_error(err: BaseException) -> "MCPError | None":
    if isinstance(err, MCPError):
        return err
    for sub in getattr(err, "exceptions", []):
        found = first_mcp_error(sub)
        if found is not None:
            return found
    return None


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main() -> None:
    spec = json.load(sys.stdin)
    if spec["transport"] == "http":
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {spec['token']}"})
        server = streamable_http_client(spec["url"], http_client=http)
    else:
        server = StdioServerParameters(command=spec["command"], args=spec["args"], env=spec["env"])
    out = []
    try:
        async with Client(server) as client:
            for call in spec["calls"]:
                try:
                    result = await client.call_tool(call["name"], call["arguments"])
                    out.append({"isError": bool(result.is_error), "text": text_of(result)})
                except MCPError as e:
                    out.append({"rpcError": e.code, "message": e.message})
    except BaseException as e:  # the session did not open: what the SDK says about it
        found = first_mcp_error(e)
        if found is None:
            out = [{"connectError": type(e).__name__, "message": repr(e)[:500]}]
        else:
            out = [{"connectError": found.code, "message": found.message}]
    print(json.dumps(out))


anyio.run(main)
