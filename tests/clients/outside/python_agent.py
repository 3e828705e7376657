"""An ordinary external agent: a Python MCP client (the ``mcp`` 1.x SDK) in a virtual environment of its own.

Usage, as the README's ``cmd:`` example: ``python python_agent.py --mcp-config FILE --prompt-file FILE``. It
reads the server's URL from the Claude-style MCP config, connects over streamable HTTP, and solves the toy
tasks from their prompt: pay a debt back, or report a balance. It imports nothing of toolgym.
"""

import argparse
import json
import re
import sys

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


def data(result):
    """A tool result's structured content, else its first text block as JSON."""
    if result.structuredContent is not None:
        return result.structuredContent
    return json.loads(result.content[0].text)


async def solve(session, prompt):
    debt = re.search(r"Account (acc-\d{3}) owes ([\d.]+) USD to (acc-\d{3})", prompt)
    if debt:
        payer, amount, payee = debt.groups()
        await session.call_tool("transfer", {"from_account": payer, "to_account": payee, "amount": amount})
        await session.call_tool("submit_answer", {"text": f"paid {amount} USD"})
        return
    account = re.search(r"acc-\d{3}", prompt).group(0)
    found = data(await session.call_tool("get_account", {"account_id": account}))
    await session.call_tool("submit_answer", {"text": str(found.get("balance", found.get("result")))})


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mcp-config", required=True)
    parser.add_argument("--prompt-file", required=True)
    args = parser.parse_args()
    with open(args.mcp_config) as handle:
        url = json.load(handle)["mcpServers"]["toolgym"]["url"]
    with open(args.prompt_file) as handle:
        prompt = handle.read()
    async with streamablehttp_client(url) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert "submit_answer" in tools, tools
            await solve(session, prompt)
    print(f"python agent: done with mcp from {sys.prefix}")


anyio.run(main)
