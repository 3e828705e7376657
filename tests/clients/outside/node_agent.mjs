#!/usr/bin/env node
// An ordinary external agent: a Node MCP client (the npm package @modelcontextprotocol/sdk).
// Usage: node_agent.mjs MCP_URL PROMPT_FILE. It solves the toy tasks from their prompt: pay a debt back, or
// report a balance. Tests copy it next to the node_modules folder npm installed the SDK into.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, promptFile] = process.argv.slice(2);
const prompt = readFileSync(promptFile, "utf8");
const client = new Client({ name: "toolgym-test-node-agent", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

function data(result) {
  return result.structuredContent ?? JSON.parse(result.content[0].text);
}

const debt = prompt.match(/Account (acc-\d{3}) owes ([\d.]+) USD to (acc-\d{3})/);
if (debt) {
  const [, payer, amount, payee] = debt;
  await client.callTool({ name: "transfer", arguments: { from_account: payer, to_account: payee, amount } });
  await client.callTool({ name: "submit_answer", arguments: { text: `paid ${amount} USD` } });
} else {
  const account = prompt.match(/acc-\d{3}/)[0];
  const found = data(await client.callTool({ name: "get_account", arguments: { account_id: account } }));
  await client.callTool({ name: "submit_answer", arguments: { text: String(found.balance ?? found.result) } });
}
await client.close();
console.log("node agent: done");
