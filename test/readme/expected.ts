/**
 * What each runnable README/docs block prints: exactly, or a pattern where it prints a
 * generated token or port. A new runnable block needs an entry here (the key test names
 * it); the local model answers of no-network.mjs explain the "2+3 = 5 and 40+2 = 42." lines.
 */
export const EXPECTED_STDOUT: Record<string, string | RegExp> = {
  // Turn 1 runs add; turn 2's refund waits for the approval the loop gives, then runs.
  'README.md › A first agent': "c1 6000\napprove? refund { orderId: 'A123', cents: 6000 }\nc2 refunded 6000 cents on A123\nRefunded $60 on order A123.\n",
  'docs/approvals-and-waits.md › Waiting for an event or a time (`waitForEvent`, `waitUntil`)':
    // The payment event is signalled as soon as its wait opens; the timer ends 100 ms later.
    'event false\n{"amount":4200}\ntimer false\nPaid.\n',
  'docs/tools.md › Policies': '1\n',
  'docs/approvals-and-waits.md › Approvals': 'Refunded A123.\n',
  // The user's image and the tool's screenshot keep their parts; `content` is the text projection.
  'docs/tools.md › Images and files (content parts)':
    'user text+image "Compare the screen with this:\\n[image: image/png, 70 bytes]"\ntool text+image "The screen:\\n[image: image/png, 70 bytes]"\n',
  'docs/models.md › Reasoning and provider metadata': 'It is noon (signature sent back: sig-1).\n',
  // The question answered with one of its options, the refund approved with edited (smaller) arguments.
  'docs/approvals-and-waits.md › Asking a person (`askHuman`)': 'ask_human A1\nrefund refunded 5000\n',
  // The steer was withdrawn before the model read it: only the follow-up is injected.
  'docs/agents-and-runs.md › Steering, follow-ups, input and concurrency': 'follow_up Now book the museum.\nBooked. stop\n',
  // The 'TODO' reply was retried (turn 2), the JSON reply is turn 3; the card number never reached the model.
  'docs/agents-and-runs.md › Hooks, structured output and guardrails': "{ city: 'Rome', celsius: 24 } 3\n{\"city\":\"Rome\",\"celsius\":24,\"card\":\"[card]\"}\n",
  // Turn 4's request (three 12,008-char pages, about 9,210 tokens) is over 8,000: p1 and p2 are offloaded, p3 (the newest) is kept.
  'docs/context.md › Long runs: context compaction (`contextPolicy`)':
    "4 threshold [ 'offload' ] [ 'p1', 'p2' ] 9210 -> 3532\n[Result of fetch_page offloaded to save context: 12008 chars. Its first 500 chars:]\n12008 12008\n",
  'docs/multi-agent.md › Multi-agent: handoffs and agents as tools': [
    'Triage transfer_to_travel_specialist',
    'Travel specialist ask_research',
    'Travel specialist > Research weather',
    'Travel specialist > Research flights',
    'Travel specialist book_hotel',
    'Booked.',
    '',
  ].join('\n'),
  'docs/models.md › Writing your own model: the `Model` interface and `ScriptedModel`': '',
  'docs/server.md › Starting a server': /^http:\/\/127\.0\.0\.1:\d+\/#token=([\w-]+) \1\n$/,
  'docs/tracing.md › Tracing (OpenTelemetry)': "[\n  'chat scripted',\n  'execute_tool weather',\n  'chat scripted',\n  'invoke_agent Guide'\n]\n",
  'docs/durable-runs.md › A durable run and a session': 'Refunded A123. completed\n',
  'docs/approvals-and-waits.md › Suspend, decide, resume': "[ 'refund-A1:1.0' ] suspended\nA1 is refunded.\n",
  'docs/models.md › A local OpenAI-compatible server (Ollama, vLLM, llama.cpp)':
    '2+3 = 5 and 40+2 = 42.{ inputTokens: 100, outputTokens: 32, totalTokens: 132, requests: 2 }\n',
  'docs/models.md › Errors and retries': 'local-qwen\n',
  'docs/mcp.md › Tools from raw JSON Schema: `rawTool`': '',
  'docs/mcp.md › Workspace tools': '(empty directory)\n',
  // askHuman's question on stdout, then the answer read from stdin ("Rome").
  'docs/approvals-and-waits.md › Your own channel: `askHuman(channel)`': 'Which city?\n> Planning Rome.\n',
};
