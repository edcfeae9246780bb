/**
 * What each runnable README/docs block prints: exactly, or a pattern where it prints a
 * generated token or port. A new runnable block needs an entry here (the key test names
 * it); the local model answers of no-network.mjs explain the "2+3 = 5 and 40+2 = 42." lines.
 */
export const EXPECTED_STDOUT: Record<string, string | RegExp> = {
  'README.md › A first agent': '2 + 3 = 5\nc1 5\n',
  'README.md › Tools': '1\n',
  'README.md › Approvals': 'Refunded A123.\n',
  // The user's image and the tool's screenshot keep their parts; `content` is the text projection.
  'README.md › Images and files (content parts)':
    'user text+image "Compare the screen with this:\\n[image: image/png, 70 bytes]"\ntool text+image "The screen:\\n[image: image/png, 70 bytes]"\n',
  'README.md › Reasoning and provider metadata': 'It is noon (signature sent back: sig-1).\n',
  // The question answered with one of its options, the refund approved with edited (smaller) arguments.
  'README.md › Approvals #3': 'ask_human A1\nrefund refunded 5000\n',
  // The steer was withdrawn before the model read it: only the follow-up is injected.
  'README.md › Steering, follow-ups, input and concurrency': 'follow_up Now book the museum.\nBooked. stop\n',
  // The 'TODO' reply was retried (turn 2), the JSON reply is turn 3; the card number never reached the model.
  'README.md › Hooks, structured output and guardrails': "{ city: 'Rome', celsius: 24 } 3\n{\"city\":\"Rome\",\"celsius\":24,\"card\":\"[card]\"}\n",
  // Turn 4's request (three 12,008-char pages, about 9,210 tokens) is over 8,000: p1 and p2 are offloaded, p3 (the newest) is kept.
  'README.md › Long runs: context compaction (`contextPolicy`)':
    "4 threshold [ 'offload' ] [ 'p1', 'p2' ] 9210 -> 3532\n[Result of fetch_page offloaded to save context: 12008 chars. Its first 500 chars:]\n12008 12008\n",
  'README.md › Multi-agent: handoffs and agents as tools': [
    'Triage transfer_to_travel_specialist',
    'Travel specialist ask_research',
    'Travel specialist > Research weather',
    'Travel specialist > Research flights',
    'Travel specialist book_hotel',
    'Booked.',
    '',
  ].join('\n'),
  'README.md › Models': '',
  'README.md › Live inspector and HTTP API': /^http:\/\/127\.0\.0\.1:\d+\/#token=([\w-]+) \1\n$/,
  'README.md › Tracing (OpenTelemetry)': "[\n  'chat scripted',\n  'execute_tool weather',\n  'chat scripted',\n  'invoke_agent Guide'\n]\n",
  'README.md › Real models, MCP servers and built-in tools': '2+3 = 5 and 40+2 = 42.\n',
  'README.md › Durable runs and sessions': 'Refunded A123. completed\n',
  'README.md › Durable runs and sessions #2': "[ 'refund-A1:1.0' ] suspended\nA1 is refunded.\n",
  'docs/models-and-mcp.md › A local OpenAI-compatible server (Ollama, vLLM, llama.cpp)':
    '2+3 = 5 and 40+2 = 42.{ inputTokens: 100, outputTokens: 32, totalTokens: 132, requests: 2 }\n',
  'docs/models-and-mcp.md › Errors and retries': 'local-qwen\n',
  // Two asks from one tool body (ids …:1.0:ask.0 and ask.1), then the tool's result.
  'docs/human-in-the-loop.md › Asking from inside a tool\'s body': /^\S+:1\.0:ask\.0 Book a trip\? undefined\n\S+:1\.0:ask\.1 Trip \[ 'city', 'note' \]\nbooked Rome\n$/,
  'docs/models-and-mcp.md › Tools from raw JSON Schema: `rawTool`': '',
  'docs/models-and-mcp.md › Workspace tools': '(empty directory)\n',
  // askHuman's question on stdout, then the answer read from stdin ("Rome").
  'docs/models-and-mcp.md › `askHuman`': 'Which city?\n> Planning Rome.\n',
};
