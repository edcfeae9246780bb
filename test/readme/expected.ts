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
  // The subscriber sees the call; the plugin closes before Runner.run resolves; the reminder is in request 2, never in the transcript.
  'docs/plugins.md › Plugins': 'todo_write 2 items\ntodo closed\nKeep your plan in todo_write. | <system-reminder>Todo: book; pay</system-reminder>\nfalse\n',
  // Both calls were resolved from the dispatcher to a hidden tool; the model was sent only the dispatcher.
  'docs/tools.md › Tool-call resolver and hidden tools (`resolveToolCall`, `exposeToModel`)': "c1 dispatch -> add 5\nc2 dispatch -> shout HI\n[ 'dispatch' ]\n",
  // The note reached the model rewritten as a user message; the UI event was dropped; the transcript keeps both.
  'docs/context.md › Custom message roles (`transformContext`, `convertToModel`)':
    "[\n  'user: Can I export to PDF?',\n  'user: [note] The user is on the free plan.'\n]\n[ 'user', 'note', 'ui_event', 'assistant' ]\n",
  // The second run starts with the first's extra; the third's option merges over it.
  'docs/durable-runs.md › `ctx.extra` across a session': '{"user":"ada","cities":["Rome"]}\n{"user":"bob","cities":["Rome"]}\n',
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
  'docs/server.md › Starting a server': /^(http:\/\/127\.0\.0\.1:\d+) \1\/#token=([\w-]+) \2\n$/,
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
  // Two asks from one tool body (ids …:1.0:ask.0 and ask.1), then the tool's result.
  'docs/human-in-the-loop.md › Asking from inside a tool\'s body': /^\S+:1\.0:ask\.0 Book a trip\? undefined\n\S+:1\.0:ask\.1 Trip \[ 'city', 'note' \]\nbooked Rome\n$/,
  // docs/testing-agents.md: the support desk explored (82 paths at three calls per run), linted, recorded and replayed.
  'docs/testing-agents.md › Explore every path': "82 paths, 0 failures, truncated: false\n#1 completed: Desk reply 1: text\n#2 completed: Desk reply 1: call transfer_to_refunds › Refunds reply 2: text\n#3 completed: Desk reply 1: call transfer_to_refunds › Refunds reply 2: call lookup_order › lookup_order Refunds_call_1: returns › Refunds reply 3: text\nDesk run_started\nDesk turn_started 1\nDesk message_completed calls transfer_to_refunds\nDesk tool_call_started transfer_to_refunds\nDesk tool_call_completed transfer_to_refunds ok\nDesk turn_ended 1\nRefunds handoff_occurred Desk -> Refunds\nRefunds turn_started 2\nRefunds message_completed calls lookup_order\nRefunds tool_call_started lookup_order\nRefunds tool_call_completed lookup_order ok\nRefunds turn_ended 2\nRefunds turn_started 3\nRefunds message_completed text\nRefunds turn_ended 3\nRefunds run_completed\n",
  'docs/testing-agents.md › What every path is checked for': "36 of 82 paths fail; the shortest:\nDesk reply 1: call transfer_to_refunds › Refunds reply 2: call refund › approve refund Refunds_call_1: approved › refund Refunds_call_1: cancel\n[\n  {\n    invariant: 'a refund follows a lookup',\n    message: 'refund ran before any lookup: transfer_to_refunds, refund'\n  }\n]\n",
  'docs/testing-agents.md › Scripted replies and tool outcomes': "approve refund c3: approved › refund c3: returns => Refunded A1.\napprove refund c3: denied => Tool error: approval denied for tool 'refund': denied by exploration\napprove refund c3: approved › refund c3: throws › refund c3 attempt 2: returns => Refunded A1.\napprove refund c3: approved › refund c3: throws › refund c3 attempt 2: throws => Tool error: payment gateway down\n",
  'docs/testing-agents.md › Coverage of the run chart': "run chart, 1 run: states 17/33 (52%), transitions 20/85 (24%)\nagent Desk:\n  tool transfer_to_refunds: 1 ok, 0 error\n  handoff to Refunds: 1\nagent Refunds:\n  tool lookup_order: 1 ok, 0 error\n  tool refund: 1 ok, 0 error\n  approvals: 1 approved, 0 denied\n{ id: 'run.turn.executing.approvalWait', count: 1 }\n",
  'docs/testing-agents.md › Budgets, timeouts and a cancel in every state': "14 paths, 0 failures\ncompleted: Refunds reply 1: text\ncancelled: Refunds in turn.model: cancel\ncompleted: Refunds reply 1: call lookup_order \u203a lookup_order Refunds_call_1: returns\ncancelled: Refunds reply 1: call lookup_order \u203a Refunds in turn.executing.draining: cancel\ncompleted: Refunds reply 1: call lookup_order \u203a lookup_order Refunds_call_1: throws \u203a lookup_order Refunds_call_1 attempt 2: returns\ncompleted: Refunds reply 1: call lookup_order \u203a lookup_order Refunds_call_1: throws \u203a lookup_order Refunds_call_1 attempt 2: throws\ncompleted: Refunds reply 1: call lookup_order \u203a lookup_order Refunds_call_1: throws \u203a lookup_order Refunds_call_1 attempt 2: times out\ncompleted: Refunds reply 1: call lookup_order \u203a lookup_order Refunds_call_1: times out \u203a lookup_order Refunds_call_1 attempt 2: returns\ncompleted: Refunds reply 1: call lookup_order \u203a lookup_order Refunds_call_1: times out \u203a lookup_order Refunds_call_1 attempt 2: throws\ncompleted: Refunds reply 1: call lookup_order \u203a lookup_order Refunds_call_1: times out \u203a lookup_order Refunds_call_1 attempt 2: times out\ncompleted: Refunds reply 1: call ask_policy \u203a Policy reply 1: text\ncancelled: Refunds reply 1: call ask_policy \u203a Refunds in turn.executing.draining: cancel\ncancelled: Refunds reply 1: call ask_policy \u203a Refunds > Policy (1.0) in turn.model: cancel\ncompleted: Refunds reply 1: call ask_policy \u203a Policy reply 1: over budget\nTool error: agent 'Policy' failed: total tokens 2001 exceeds budget 2000\n",
  'docs/testing-agents.md › On the inspector\'s chart': 'run chart, 82 runs: states 18/33 (55%), transitions 22/85 (26%)\n',
  'docs/testing-agents.md › Lint an agent system': "warning approval-without-decider: Tool 'refund' of agent 'Refunds' needs approval and the agent has no approvalHandler: a run nobody reads (Runner.run) denies every call of it. Give the agent an approvalHandler, or decide from the stream (approval_required, handle.approvals).\nwarning handoff-cycle: Handoffs loop: Desk → Refunds → Desk. Only the run's maxTurns (default 10) ends a conversation that bounces between them; give the agents a rule for when not to hand back, and a run maxTurns you accept.\n",
  'docs/testing-agents.md › Record and replay': "true A1 is refunded. 0\nreplay of run 'refund-A1', request 3 (agent 'Refunds') differs from the recorded one at message 5: recorded {\"role\":\"tool\",\"callId\":\"l1\",\"name\":\"lookup_order\",\"content\":\"{\\\"order\\\":\\\"A1\\\",\\\"cents\\\":4200}\",\"isError\":false}, now {\"role\":\"tool\",\"callId\":\"l1\",\"name\":\"lookup_order\",\"content\":\"{\\\"order\\\":\\\"A1\\\",\\\"cents\\\":999}\",\"isError\":false}.\n",
  'docs/testing-agents.md › Fork a stored run': "refund-A1~fork-4 -> Told the customer: Tool error: approval denied for tool 'refund'\n{\n  kind: 'input',\n  message: { role: 'user', content: 'Refund A1.' },\n  forkedFrom: { runId: 'refund-A1', atTurn: 4 }\n}\n",
};
