"""One agent's session with company-data's MCP tools, through the official MCP Python SDK (`mcp` from PyPI).

Usage:
  session.py stdio COMMAND ARG...        the server started as a subprocess speaking MCP on stdio
  session.py http URL KEY                 Streamable HTTP at URL, the key as `Authorization: Bearer`
  session.py refused URL KEY              expects the server to refuse the key before any tool runs
  session.py concurrent URL KEY N PAGE    N calls of get_companies on PAGE at once, live

It lists the tools and checks their schemas are valid JSON Schema (2020-12), calls each tool against the
server's origin (the captured pages), and a tool with bad arguments; the SDK itself validates every structured
result against the tool's output schema. It prints one JSON object: what it saw, for the Rust test to check
(billing is read from the database by that test). Any failed expectation raises, and the exit code is 1.
"""

import asyncio
import json
import sys

from jsonschema import Draft202012Validator
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

GOOGLE = "https://www.linkedin.com/company/google"
AUDIENSE = "https://www.linkedin.com/company/audiense"


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def session(streams):
    read, write = streams[0], streams[1]
    seen = {}
    async with ClientSession(read, write) as client:
        info = await client.initialize()
        seen["protocol_version"] = info.protocol_version
        tools = (await client.list_tools()).tools
        seen["tools"] = [tool.name for tool in tools]
        for tool in tools:
            Draft202012Validator.check_schema(tool.input_schema)
            # Every tool but delete_watch (whose route answers 204, no body) has one.
            assert (tool.output_schema is None) == (tool.name == "delete_watch"), tool.name
            if tool.output_schema is not None:
                Draft202012Validator.check_schema(tool.output_schema)
            description = tool.description or ""
            assert "credit" in description or description.endswith("Free."), f"{tool.name} states no price"

        live = await client.call_tool("get_companies", {"liUrls": [GOOGLE, AUDIENSE], "maxAgeHours": 0})
        assert not live.is_error, text_of(live)
        names = [r["company_name"] for r in live.structured_content["results"]]
        assert names == ["Google", "Audiense"], names
        seen["live_text"] = text_of(live)

        stored = await client.call_tool("get_companies", {"liUrls": [GOOGLE, AUDIENSE], "maxAgeHours": 24})
        assert not stored.is_error, text_of(stored)
        sources = [r["source"] for r in stored.structured_content["results"]]
        assert sources == ["stored", "stored"], sources
        seen["stored_text"] = text_of(stored)

        resolved = await client.call_tool("resolve_companies", {"queries": [{"name": "Audiense"}]})
        assert not resolved.is_error, text_of(resolved)
        pages = [r["li_url"] for r in resolved.structured_content["results"]]
        assert pages == [AUDIENSE], pages
        seen["resolve_text"] = text_of(resolved)

        # A retried call under one `_meta.idempotencyKey` is answered once and charged once.
        retry = {"idempotencyKey": "agent-retry-1"}
        first = await client.call_tool("get_companies", {"liUrls": [GOOGLE], "maxAgeHours": 24}, meta=retry)
        again = await client.call_tool("get_companies", {"liUrls": [GOOGLE], "maxAgeHours": 24}, meta=retry)
        assert not first.is_error and not again.is_error, (text_of(first), text_of(again))
        assert first.structured_content == again.structured_content
        seen["retry_texts"] = [text_of(first), text_of(again)]

        history = await client.call_tool("get_company_history", {"liUrl": GOOGLE})
        assert not history.is_error, text_of(history)
        points = history.structured_content["points"]
        assert len(points) >= 1, history.structured_content
        seen["history_text"] = text_of(history)

        found = await client.call_tool("search_companies", {"q": "google", "limit": 5})
        assert not found.is_error, text_of(found)
        assert [r["final_li_url"] for r in found.structured_content["results"]] == [GOOGLE], found.structured_content
        seen["search_text"] = text_of(found)

        created = await client.call_tool(
            "create_watch",
            {"liUrls": [AUDIENSE], "everyHours": 24, "webhookUrl": "https://hooks.example.com/company-data"},
        )
        assert not created.is_error, text_of(created)
        watch_id = created.structured_content["watches"][0]["id"]
        listed = await client.call_tool("list_watches", {"limit": 10})
        assert not listed.is_error, text_of(listed)
        assert [w["id"] for w in listed.structured_content["watches"]] == [watch_id], listed.structured_content
        deleted = await client.call_tool("delete_watch", {"id": str(watch_id)})
        assert not deleted.is_error, text_of(deleted)
        gone = await client.call_tool("delete_watch", {"id": str(watch_id)})
        assert gone.is_error and gone.structured_content["error"] == "watch_not_found", gone
        seen["watch_texts"] = [text_of(created), text_of(listed), text_of(deleted)]

        bad = await client.call_tool("get_companies", {"liUrls": "https://www.linkedin.com/company/google"})
        assert bad.is_error, "a bad argument must be a tool error"
        assert bad.structured_content["error"] == "invalid_request", bad.structured_content
        seen["bad_text"] = text_of(bad)

        account = await client.call_tool("get_account", {})
        assert not account.is_error, text_of(account)
        seen["balance"] = account.structured_content["balance"]
        seen["account_text"] = text_of(account)
    return seen


def http_client(key):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return create_mcp_http_client(headers=headers)


async def concurrent(streams, calls, page):
    read, write = streams[0], streams[1]
    async with ClientSession(read, write) as client:
        await client.initialize()
        await client.list_tools()
        results = await asyncio.gather(
            *[client.call_tool("get_companies", {"liUrls": [page], "maxAgeHours": 0}) for _ in range(calls)]
        )
    errors = [r.structured_content.get("error") for r in results if r.is_error]
    return {"succeeded": sum(1 for r in results if not r.is_error), "errors": errors}


async def main(argv):
    transport = argv[1]
    if transport == "stdio":
        parameters = StdioServerParameters(command=argv[2], args=argv[3:])
        async with stdio_client(parameters) as streams:
            seen = await session(streams)
    elif transport == "http":
        async with http_client(argv[3]) as client, streamable_http_client(argv[2], http_client=client) as streams:
            seen = await session(streams)
    elif transport == "concurrent":
        async with http_client(argv[3]) as client, streamable_http_client(argv[2], http_client=client) as streams:
            seen = await concurrent(streams, int(argv[4]), argv[5])
    elif transport == "refused":
        try:
            async with http_client(argv[3]) as client, streamable_http_client(argv[2], http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as session_:
                    await session_.initialize()
                    await session_.list_tools()
            seen = {"refused": False}
        except BaseException as error:  # the SDK raises an exception group from its task group
            seen = {"refused": True, "error": repr(error)[:2000]}
    else:
        raise SystemExit(f"unknown transport {transport}")
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv))
